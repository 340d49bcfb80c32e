"""Events: every kind published with a snapshot of its job; subscriptions with predicates."""

from __future__ import annotations

import asyncio
import logging
from typing import ClassVar

import pytest

from harness.catalog import CatalogEntry
from harness.errors import ExternalServiceError
from harness.jobs import Dispatcher, EventKind, Job, JobContext, JobEvent, JobTimeoutError
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .stack import REQUEST, RecordedPacing, catalog_of, eventually


class Counting(Job[int]):
    """A job that reports progress twice, changing its metadata in between."""

    kind: ClassVar[str] = "counting"

    async def run(self, context: JobContext) -> int:
        context.metadata["step"] = "one"
        context.progress("first step")
        context.metadata["step"] = "two"
        context.progress("second step")
        return 2


async def test_a_retried_call_publishes_scheduled_started_retry_completed() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.unavailable("model loading"))
        entry = server.entry()
        events: list[JobEvent] = []
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing(scale=0)) as dispatcher:
            dispatcher.subscribe(events.append)
            workflow = Workflow()
            call = DecisionCall(workflow, REQUEST)
            await dispatcher.run(call)
    assert [event.kind for event in events] == [
        EventKind.SCHEDULED,
        EventKind.STARTED,
        EventKind.RETRY,
        EventKind.COMPLETED,
    ]
    for event in events:
        assert event.job.job_id == call.identity.job_id
        assert event.job.parent_id == call.identity.parent_id
        assert event.job.workflow_id == workflow.identity.workflow_id
        assert event.job.job_class == "DecisionCall"
        assert event.job.tool_name is None
    retry = events[2]
    assert retry.attempt == 1
    assert retry.delay == 0.0
    assert retry.message is not None
    assert "HTTP 503" in retry.message
    assert "model loading" in retry.message
    assert events[-1].kind.terminal
    assert not events[1].kind.terminal


async def test_failed_timed_out_and_cancelled_are_published_with_their_error() -> None:
    async with FakeSystemOneServer() as server:
        entry = server.entry()
        events: list[JobEvent] = []
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            dispatcher.subscribe(events.append, lambda event: event.kind.terminal)
            server.fail_next(Fault.bad_request("bad questions", shape="detail"))
            failing = DecisionCall(Workflow(), REQUEST)
            with pytest.raises(ExternalServiceError) as failed:
                await dispatcher.run(failing)
            server.fail_next(Fault.hang())
            slow = DecisionCall(Workflow(), REQUEST, timeout=0.2)
            with pytest.raises(JobTimeoutError):
                await dispatcher.run(slow)
            server.fail_next(Fault.hang())
            doomed = DecisionCall(Workflow(), REQUEST)
            handle = dispatcher.submit(doomed)
            await eventually(lambda: server.requests == 3)
            handle.cancel()
            with pytest.raises(asyncio.CancelledError):
                await handle.result()
            gate = dispatcher.admission.gate_for(entry)
            assert (gate.in_use, gate.waiting) == (0, 0)
    by_job = {event.job.job_id: event for event in events}
    assert len(events) == 3
    failure = by_job[failing.identity.job_id]
    assert failure.kind is EventKind.FAILED
    assert failure.error is failed.value
    assert failure.message == str(failed.value)
    assert "bad questions" in (failure.message or "")
    timeout = by_job[slow.identity.job_id]
    assert timeout.kind is EventKind.TIMED_OUT
    assert isinstance(timeout.error, JobTimeoutError)
    assert by_job[doomed.identity.job_id].kind is EventKind.CANCELLED


async def test_admission_wait_names_the_gate() -> None:
    async with FakeSystemOneServer(service_time=0.05) as server:
        entry = server.entry(max_concurrent=1)
        waits: list[JobEvent] = []
        async with Dispatcher(catalog_of(entry)) as dispatcher:
            dispatcher.subscribe(waits.append, lambda e: e.kind is EventKind.ADMISSION_WAIT)
            calls = [DecisionCall(Workflow(), REQUEST) for _ in range(3)]
            await asyncio.gather(*(dispatcher.run(call) for call in calls))
    assert [event.job.job_id for event in waits] == [c.identity.job_id for c in calls[1:]]
    assert all(event.message == "waiting for 1 on the gate 'fake-systemone'" for event in waits)


async def test_progress_snapshots_copy_the_metadata_and_are_read_only() -> None:
    events: list[JobEvent] = []
    async with Dispatcher(catalog_of(_unused_entry())) as dispatcher:
        dispatcher.subscribe(events.append, lambda event: event.kind is EventKind.PROGRESS)
        job = Counting(Workflow())
        assert await dispatcher.run(job) == 2
    first, second = events
    assert (first.message, dict(first.job.metadata)) == ("first step", {"step": "one"})
    assert (second.message, dict(second.job.metadata)) == ("second step", {"step": "two"})
    assert first.job.job_class == "Counting"
    with pytest.raises(TypeError):
        first.job.metadata["step"] = "three"  # type: ignore[index]
    assert job.metadata == {"step": "two"}


async def test_a_cancelled_subscription_hears_nothing_more_and_a_broken_one_fails_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    heard: list[EventKind] = []

    def broken(event: JobEvent) -> None:
        raise RuntimeError("subscriber bug")

    async with Dispatcher(catalog_of(_unused_entry())) as dispatcher:
        subscription = dispatcher.subscribe(lambda event: heard.append(event.kind))
        dispatcher.subscribe(broken)
        with caplog.at_level(logging.ERROR, logger="harness"):
            assert await dispatcher.run(Counting(Workflow())) == 2
        count = len(heard)
        subscription.cancel()
        assert not subscription.active
        assert await dispatcher.run(Counting(Workflow())) == 2
    assert heard[:count] == [
        EventKind.SCHEDULED,
        EventKind.STARTED,
        EventKind.PROGRESS,
        EventKind.PROGRESS,
        EventKind.COMPLETED,
    ]
    assert len(heard) == count
    assert any("event subscriber failed" in r.getMessage() for r in caplog.records)


def _unused_entry() -> CatalogEntry:
    """An entry no job here calls (the dispatcher needs a catalog)."""
    return CatalogEntry(
        id="unused",
        provider="fake",
        wire_model_id="none",
        max_context_tokens=1000,
        max_concurrent=1,
    )
