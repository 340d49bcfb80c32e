"""The one-call run API: run_sync(Triage, note, model=...) and await run(Triage, ...)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import assert_type

import pytest

import harness
from examples.triage import JudgeNote, Note, SplitNote, Triage, TriageVerdict
from harness import (
    Budget,
    Catalog,
    CatalogEntry,
    DecisionThinker,
    Identifiable,
    ListArtifact,
    RunFailedError,
    RunResult,
    SyncRunInLoopError,
    Workflow,
    run,
    run_sync,
)
from harness.catalog import CatalogError
from harness.errors import UnauthorizedError
from harness.record import load_record
from harness.testing import FakeDecisionModel, FakeSystemOneServer, Fault

from .policies import triage_policy

TEXT = "alpha is due today; beta can wait"


@pytest.mark.parametrize("model", ["embedded", "fake"])
def test_run_sync_answers_with_typed_items_refs_turns_and_usage(model: str) -> None:
    chosen = FakeDecisionModel(triage_policy) if model == "fake" else "embedded"
    result = run_sync(Triage, Note(TEXT), model=chosen)
    assert_type(result, RunResult[TriageVerdict])
    assert_type(result.answer, ListArtifact[TriageVerdict])
    assert_type(result.items, tuple[TriageVerdict, ...])
    assert all(isinstance(item, TriageVerdict) for item in result.items)
    assert result.refs == tuple(result.ref(item) for item in result.items)
    assert all(ref.startswith("verdict#") for ref in result.refs)
    assert result.turns
    assert result.turns[-1].tool in ("finish", *[t.tool for t in result.turns])
    assert result.usage.decisions == len(result.calls) >= len(result.turns) - 1
    assert result.usage.counted_input_tokens > 0
    assert result.usage.cost is None  # neither entry has a price
    assert result.usage.wall_seconds >= result.usage.model_seconds > 0
    assert result.entry.id == ("embedded" if model == "embedded" else "client")
    if model == "fake":
        assert [v.note for v in result.items] == ["alpha is due today"]
        assert [t.tool for t in result.turns] == [
            "split_note",
            "judge_note",
            "judge_note",
            "finish",
        ]


async def test_await_run_in_async_code_and_run_sync_there_fails_by_name() -> None:
    result = await run(Triage, Note(TEXT), model=FakeDecisionModel(triage_policy))
    assert [v.note for v in result.items] == ["alpha is due today"]
    with pytest.raises(SyncRunInLoopError, match=r"await harness\.run\(Triage, \.\.\.\)"):
        run_sync(Triage, Note(TEXT), model=FakeDecisionModel(triage_policy))
    with pytest.raises(SyncRunInLoopError, match="running event loop"):
        harness.run_sync(Triage, Note(TEXT))


def test_module_functions_take_any_factory_with_the_parent_constructor() -> None:
    def factory(parent: Identifiable) -> DecisionThinker[Note, TriageVerdict]:
        return DecisionThinker[Note, TriageVerdict](
            parent,
            output_type=TriageVerdict,
            key_tool=JudgeNote,
            palette=(SplitNote,),
            objective="Judge every part of the note",
        )

    result = harness.run_sync(factory, Note(TEXT), model=FakeDecisionModel(triage_policy))
    assert_type(result, RunResult[TriageVerdict])
    assert [v.note for v in result.items] == ["alpha is due today"]


def test_the_same_thinker_class_runs_concurrently_each_run_its_own_result() -> None:
    async def both() -> list[RunResult[TriageVerdict]]:
        return list(
            await asyncio.gather(
                run(Triage, Note(TEXT), model=FakeDecisionModel(triage_policy)),
                run(
                    Triage,
                    Note("alpha ships; gamma; delta"),
                    model=FakeDecisionModel(triage_policy),
                ),
            )
        )

    first, second = asyncio.run(both())
    assert [v.note for v in first.items] == ["alpha is due today"]
    assert [v.note for v in second.items] == ["alpha ships"]
    assert len(second.turns) == len(first.turns) + 1


def test_an_entry_id_of_a_given_catalog_pins_it_and_the_catalog_is_unchanged() -> None:
    async def scenario() -> tuple[RunResult[TriageVerdict], int, Catalog]:
        async with FakeSystemOneServer(policy=triage_policy) as server:
            priced = server.entry(id="priced", input_price_per_million=2.0)
            catalog = Catalog([priced], {})
            result = await run(Triage, Note(TEXT), model="priced", catalog=catalog)
            return result, server.requests, catalog

    result, requests, catalog = asyncio.run(scenario())
    assert catalog.pins == {}
    assert result.entry.id == "priced"
    assert result.usage.decisions == requests == 4
    billed = result.usage.input_tokens
    assert billed is not None
    assert billed > 0
    assert result.usage.cost == pytest.approx(billed * 2.0 / 1_000_000)
    assert result.usage.cost_text.startswith("$")


def test_retries_are_counted_in_the_usage() -> None:
    async def scenario() -> tuple[RunResult[TriageVerdict], int]:
        async with FakeSystemOneServer(policy=triage_policy) as server:
            server.fail_next(Fault.rate_limited(retry_after=None, retry_after_ms=1))
            catalog = Catalog([server.entry()], {"decision": "fake-systemone"})
            result = await run(Triage, Note(TEXT), catalog=catalog)
            return result, server.requests

    result, requests = asyncio.run(scenario())
    assert result.usage.retries == 1
    assert result.usage.decisions == requests == 5
    assert [c.success for c in result.calls].count(False) == 1


def test_an_unknown_model_is_refused_naming_the_forms() -> None:
    with pytest.raises(
        CatalogError,
        match=r"unknown catalog entry id 'nope'.* 'systemone:<wire model>', 'openai:<model>', "
        r"'openai-chat:<model>\[@<base url>\]', 'openai-completions:<model>\[@<base url>\]'",
    ):
        run_sync(Triage, Note(TEXT), model="nope")
    with pytest.raises(CatalogError, match="names no model"):
        run_sync(Triage, Note(TEXT), model="systemone:")
    with pytest.raises(TypeError, match="model must be an entry id"):
        run_sync(Triage, Note(TEXT), model=42)  # type: ignore[arg-type]


def test_a_wrong_input_type_is_a_type_error_for_mypy_and_at_run_time() -> None:
    with pytest.raises(TypeError, match="takes a Note, not a TriageVerdict"):
        run_sync(Triage, TriageVerdict("x", True), model=FakeDecisionModel())  # type: ignore[arg-type]


def test_the_record_is_written_where_asked_and_reads_back(tmp_path: Path) -> None:
    result = run_sync(Triage, Note(TEXT), model=FakeDecisionModel(triage_policy))
    written = result.write_record(tmp_path / "run.json")
    assert written == tmp_path / "run.json"
    record = load_record(written)
    assert record.turns == result.turns
    assert [a.ref for a in record.answer] == list(result.refs)
    assert len(record.calls) == result.usage.decisions
    assert record.failure is None
    assert json.loads(written.read_text(encoding="utf-8"))["thinker"] == "triage"


def test_ref_of_an_artifact_the_run_never_saw_is_refused() -> None:
    result = run_sync(Triage, Note(TEXT), model=FakeDecisionModel(triage_policy))
    with pytest.raises(KeyError, match="not an artifact of this run"):
        result.ref(TriageVerdict("never", False))
    assert result.selection
    assert all(ref.startswith("verdict#") for ref in result.selection)
    assert next(iter(result.artifacts)) == "note#1"


def test_a_failed_run_raises_with_its_partial_result_and_record() -> None:
    async def scenario() -> RunFailedError:
        async with FakeSystemOneServer(policy=triage_policy, api_key="right") as server:
            catalog = Catalog([server.entry()], {"decision": "fake-systemone"})
            with pytest.raises(RunFailedError) as caught:
                await run(Triage, Note(TEXT), catalog=catalog)
            return caught.value

    failed = asyncio.run(scenario())
    assert isinstance(failed.error, harness.HarnessError)
    assert not failed.error.llm_readable
    assert failed.result.failure is not None
    assert failed.record.failure == failed.result.failure
    assert failed.result.items == ()
    assert len(failed.result.calls) == 1
    assert not failed.result.calls[0].success
    assert isinstance(failed.error, harness.errors.AuthenticationError)
    assert not isinstance(failed.error, UnauthorizedError)  # no key at all: 403


def test_a_thinkers_decisions_take_their_entrys_decision_timeout() -> None:
    """A slow model's entry sets how long its decisions may take; the thinker's calls obey it
    (here a server that never answers, and a limit of 0.3 s instead of the default 60 s)."""

    async def scenario() -> RunFailedError:
        async with FakeSystemOneServer(policy=triage_policy) as server:
            server.faults = lambda number: Fault.hang()
            catalog = Catalog(
                [server.entry(decision_timeout_s=0.3)], {"decision": "fake-systemone"}
            )
            with pytest.raises(RunFailedError) as caught:
                await asyncio.wait_for(run(Triage, Note(TEXT), catalog=catalog), 30)
            return caught.value

    failed = asyncio.run(scenario())
    assert isinstance(failed.error, harness.errors.JobTimeoutError)
    assert "within its timeout of 0.3 s" in str(failed.error)


def test_a_workflow_and_a_budget_are_passed_through() -> None:
    workflow = Workflow(user_id="ana", budget=Budget(max_decisions=100))
    result = run_sync(
        Triage,
        Note(TEXT),
        model=FakeDecisionModel(triage_policy),
        workflow=workflow,
        budget=Budget(),
    )
    assert workflow.account is not None
    assert workflow.account.decisions == result.usage.decisions == 4


def test_reprs_read_like_what_they_are() -> None:
    result = run_sync(Triage, Note(TEXT), model=FakeDecisionModel(triage_policy))
    shown = repr(result)
    assert shown.startswith("RunResult(triage on client: answer [verdict#")
    assert "4 decisions" in shown
    assert repr(Budget(max_cost=0.5)) == "Budget(max_cost=0.5)"
    assert "mappingproxy" not in repr(result.turns[0])
    assert repr(result.turns[0]).startswith("DecisionTurn(1: split_note on note#1 -> list#1")


def test_an_embedded_entry_is_reachable_from_any_catalog() -> None:
    entry = CatalogEntry(
        id="only", provider="fake", wire_model_id="x", max_context_tokens=100, max_concurrent=1
    )
    result = run_sync(Triage, Note(TEXT), model="embedded", catalog=Catalog([entry], {}))
    assert result.entry.id == "embedded"


def test_a_model_call_prints_like_a_call() -> None:
    result = run_sync(Triage, Note(TEXT), model=FakeDecisionModel(triage_policy))
    shown = repr(result.calls[0])
    assert shown.startswith("ModelCall(client: answered ")
    assert "mappingproxy" not in shown
    assert "input tokens counted" in shown
