"""record_run: the record reads the decision jobs' own records, leaves the caller's catalog as
it was, and a failed run still leaves its record."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from harness.catalog import Catalog, CatalogEntry, tokenizer
from harness.decision import Answer, DecisionRequest
from harness.errors import OverloadedError
from harness.providers import FakeDecisionModel, wire_body
from harness.record import RunFailedError, pinned_copy, record_run
from harness.testing import default_answers
from harness.tools import Workflow
from tests.cli.words import CrashingFinder, Sentence, WordFinder


def entry(entry_id: str) -> CatalogEntry:
    return CatalogEntry(
        id=entry_id,
        provider="fake",
        wire_model_id=f"{entry_id}-model",
        max_context_tokens=100_000,
        max_concurrent=2,
    )


def catalog() -> Catalog:
    return Catalog([entry("first"), entry("second")], {"decision": "first"})


async def test_pinning_an_entry_for_a_run_leaves_the_callers_catalog_as_it_was() -> None:
    given = catalog()
    model = FakeDecisionModel()
    run = await record_run(
        WordFinder(Workflow()),
        Sentence("alpha beta"),
        catalog=given,
        command="run",
        entry_id="second",
        clients={"second": model},
    )
    assert run.record.entry["id"] == "second"
    assert {e.id for e in model.entries} == {"second"}  # the run asked the pinned entry
    assert given.pins == {"decision": "first"}  # ... and the caller's pin is unchanged
    copy = pinned_copy(given, "second")
    assert (copy.pins, given.pins) == ({"decision": "second"}, {"decision": "first"})
    assert list(copy.entries) == list(given.entries)


async def test_each_call_is_its_decision_jobs_record_re_runs_included() -> None:
    asked = 0

    def busy_once(request: DecisionRequest) -> Mapping[str, Answer]:
        nonlocal asked
        asked += 1
        if asked == 1:
            raise OverloadedError("busy, try again", status=529, retry_after=0.0)
        return default_answers(request)

    model = FakeDecisionModel(busy_once, model="served-name")
    run = await record_run(
        WordFinder(Workflow()),
        Sentence("alpha beta"),
        catalog=catalog(),
        command="run",
        clients={"first": model},
        keep_bodies=True,
    )
    calls = run.record.calls
    assert len(calls) == len(model.requests) == asked  # the refused attempt is a call too
    refused, *answered = calls
    assert not refused.success
    assert refused.reason is not None
    assert "busy, try again" in refused.reason
    assert all(call.success for call in answered)
    counter = tokenizer(entry("first").tokenizer)
    for call, request, body in zip(calls, model.requests, model.bodies, strict=True):
        # The dispatcher's pricing of the request (the job's reservation): a concurrency-bounded
        # entry without a price is bounded by the body's byte length, never below the count.
        sent = wire_body(request, entry("first"))
        assert call.counted_input_tokens == len(sent) >= counter.count(sent)
        assert call.body == json.loads(body)
    for call, body in zip(answered, model.bodies[1:], strict=True):
        assert call.input_tokens == -(-len(body) // 4)  # what the fake model billed
        assert call.model == "served-name"
        assert call.latency >= 0.0
    assert run.record.model_seconds == sum(call.latency for call in calls)


async def test_a_failed_run_raises_with_its_partial_record() -> None:
    model = FakeDecisionModel()
    with pytest.raises(RunFailedError) as caught:
        await record_run(
            CrashingFinder(Workflow()),
            Sentence("alpha"),
            catalog=catalog(),
            command="run",
            clients={"first": model},
        )
    failed = caught.value
    assert isinstance(failed.error, ZeroDivisionError)
    assert failed.__cause__ is failed.error
    assert str(failed) == "ZeroDivisionError: the part has no words to divide by"
    record = failed.record
    assert record.failure == str(failed)
    assert [turn.tool for turn in record.turns] == ["take_part"]
    assert len(record.calls) == len(model.requests) == 2
    assert record.answer == ()
    assert list(record.artifacts) == ["sentence#1", "part#1"]
    assert json.loads(json.dumps(record.to_json()))["failure"] == record.failure
