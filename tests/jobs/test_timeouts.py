"""Timeouts: a call that never answers ends at its job's timeout; waiting in line is free."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import pytest

from harness.deciding import DecisionCall
from harness.decision import Answer, DecisionRequest
from harness.jobs import Dispatcher, EventKind, JobEvent, JobTimeoutError
from harness.testing import FakeSystemOneServer, Fault, default_answers
from harness.tools import Workflow

from .stack import REQUEST, RecordedPacing, catalog_of, eventually


async def test_a_server_that_never_answers_ends_at_the_timeout_and_the_permit_comes_back() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.hang())
        entry = server.entry(max_concurrent=1)
        pacing = RecordedPacing()
        events: list[JobEvent] = []
        async with Dispatcher(catalog_of(entry), pacing=pacing) as dispatcher:
            dispatcher.subscribe(events.append)
            call = DecisionCall(Workflow(), REQUEST, upstream_retries=3, timeout=0.3)
            started = time.monotonic()
            with pytest.raises(JobTimeoutError) as caught:
                await dispatcher.run(call)
            elapsed = time.monotonic() - started
            gate = dispatcher.admission.gate_for(entry)
            assert (gate.in_use, gate.waiting, gate.available) == (0, 0, 1)
            again = await dispatcher.run(DecisionCall(Workflow(), REQUEST, timeout=5))
        assert again.success
        assert server.requests == 2  # the timeout was not re-run
    assert 0.29 <= elapsed < 1.5
    assert "did not finish within its timeout of 0.3 s" in caught.value.message
    assert call.identity.job_id in caught.value.message
    assert pacing.slept == []
    (recorded,) = call.record.calls
    assert not recorded.success
    assert recorded.reason  # the round trip that was cut short, named
    mine = [event.kind for event in events if event.job.job_id == call.identity.job_id]
    assert mine == [EventKind.SCHEDULED, EventKind.STARTED, EventKind.TIMED_OUT]


async def test_many_hanging_calls_all_time_out_and_free_every_permit() -> None:
    async with FakeSystemOneServer() as server:
        server.faults = lambda number: Fault.hang()
        entry = server.entry(max_concurrent=3)
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            calls = [
                DecisionCall(Workflow(), REQUEST, upstream_retries=2, timeout=0.2) for _ in range(9)
            ]
            started = time.monotonic()
            outcomes = await asyncio.gather(
                *(dispatcher.run(call) for call in calls), return_exceptions=True
            )
            elapsed = time.monotonic() - started
            gate = dispatcher.admission.gate_for(entry)
            assert (gate.in_use, gate.waiting) == (0, 0)
    assert all(isinstance(outcome, JobTimeoutError) for outcome in outcomes), outcomes
    assert server.requests == 9
    assert 0.6 <= elapsed < 3.0  # three rounds of three through a gate of three


async def test_waiting_for_admission_does_not_run_the_jobs_clock() -> None:
    release = asyncio.Event()
    first = True

    async def slow_first(request: DecisionRequest) -> Mapping[str, Answer]:
        nonlocal first
        if first:
            first = False
            await release.wait()
        return default_answers(request)

    async with FakeSystemOneServer(policy=slow_first) as server:
        entry = server.entry(max_concurrent=1)
        events: list[JobEvent] = []
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            slow = dispatcher.submit(DecisionCall(Workflow(), REQUEST, timeout=10))
            await eventually(lambda: server.requests == 1)
            dispatcher.subscribe(events.append)
            patient = DecisionCall(Workflow(), REQUEST, upstream_retries=0, timeout=0.25)
            started = time.monotonic()
            handle = dispatcher.submit(patient)
            await asyncio.sleep(0.6)  # more than twice the patient call's timeout, in line
            assert not handle.done()
            release.set()
            answered = await handle.result()
            waited = time.monotonic() - started
            assert (await slow.result()).success
    assert answered.success
    assert waited > 0.6
    kinds = [event.kind for event in events if event.job.job_id == patient.identity.job_id]
    assert kinds == [
        EventKind.SCHEDULED,
        EventKind.ADMISSION_WAIT,
        EventKind.STARTED,
        EventKind.COMPLETED,
    ]
