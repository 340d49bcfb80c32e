"""A real LLM, offline, the long runs: Gemma 3 270M behind llama-cpp-python's server on
loopback (``real_model.py``), read through both logprob providers. Collected only when
llama-cpp-python and the model are installed and ``HARNESS_REAL_MODEL=all`` is set
(``conftest.py``): about 10 minutes on an idle 2-core machine, 15 to 18 under load, so not in
every CI run. docs/llama.md, "A real model, offline", has the figures.

What it covers, and why not more:

* the ticket through completions (a sensible exact answer);
* the triage example's first decisions and the demo's first two turns through chat with an
  explicit ``mass_floor = 0`` (the model is Gemma's base model, not instruction-tuned: it puts
  well under 2 % of its probability on the labels);
* the triage example's first decision through completions (two prompts), and the demo's first
  turn, which needs no upstream call (its questions have one option each);
* the triage example through the thinker (``harness.run``) on chat, with the entry's
  ``decision_timeout_s`` raised: it runs turns on Gemma's answers and, where the model puts no
  probability on a choice's labels, stops with a refusal naming the share, never a timeout.

Most decisions are asked through the provider directly rather than through the thinker, to
bound the time: llama-cpp-python takes minutes a decision on 2 shared cores (chat: 65 s for
triage's second decision, nine calls; completions: about 1 s per echoed token, because it sorts
the whole 262,144-token vocabulary in Python for every echoed token).
The demo's second turn through completions alone is 37,671 echoed tokens: about 10 hours here."""

from __future__ import annotations

import math

import pytest

from harness import Catalog, RunFailedError, run
from harness.catalog import entry_for_model
from harness.decision import AnswerReadError, ChoiceAnswer
from harness.demo import triage

from .real_model import MODEL, TICKET, ask, check_read, demo_requests, entry, triage_requests

pytestmark = [pytest.mark.slow, pytest.mark.realmodel, pytest.mark.interop]


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


async def test_the_triage_example_runs_through_the_thinker_on_chat_with_a_raised_timeout(
    llama_server: str,
) -> None:
    """``harness.run`` of the triage example on Gemma through chat (``mass_floor = 0``,
    ``decision_timeout_s = 1800``): the thinker's decisions wait for the slow model instead of
    timing out at 60 s; it answers, or stops on a choice whose labels get no probability with a
    refusal that names the question and the share (measured: 4 turns, then such a refusal)."""
    chosen = entry(llama_server, "openai-chat", mass_floor=0.0, decision_timeout_s=1800.0)
    catalog = Catalog([chosen], {"decision": chosen.id})
    note = triage.Note("pay the invoice today; water the plants")
    error: Exception | None = None
    try:
        turns = (await run(triage.Triage, note, catalog=catalog)).record().turns
    except RunFailedError as failed:
        error, turns = failed.error, failed.record.turns
    if error is not None:
        assert isinstance(error, AnswerReadError), error
        assert "of the model's probability fell on the option labels" in str(error)
    assert len(turns) >= 1  # the model's answers moved the run at least one turn
    print(len(turns), "turns")


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
