"""Timeouts: a call that never answers ends at its job's timeout; waiting in line is free."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pytest

from harness.decision import Answer, DecisionRequest
from harness.jobs import Dispatcher, EventKind, JobEvent, JobTimeoutError
from harness.testing import FakeSystemOneServer, Fault, default_answers
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .stack import REQUEST, RecordedPacing, catalog_of, eventually

HANG_GUARD = 30.0
"""Seconds after which a broken timeout fails the test instead of hanging it (no speed bound)."""


async def test_a_server_that_never_answers_ends_at_the_timeout_and_the_permit_comes_back() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.hang())
        entry = server.entry(max_concurrent=1)
        pacing = RecordedPacing()
        events: list[JobEvent] = []
        async with Dispatcher(catalog_of(entry), pacing=pacing) as dispatcher:
            dispatcher.subscribe(events.append)
            call = DecisionCall(Workflow(), REQUEST, upstream_retries=3, timeout=0.3)
            with pytest.raises(JobTimeoutError) as caught:
                await asyncio.wait_for(dispatcher.run(call), HANG_GUARD)
            gate = dispatcher.admission.gate_for(entry)
            assert (gate.in_use, gate.waiting, gate.available) == (0, 0, 1)
            again = await dispatcher.run(DecisionCall(Workflow(), REQUEST, timeout=5))
        assert again.success
        assert server.requests == 2  # the timeout was not re-run
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
            events: list[JobEvent] = []
            dispatcher.subscribe(events.append)
            outcomes = await asyncio.wait_for(
                asyncio.gather(*(dispatcher.run(call) for call in calls), return_exceptions=True),
                HANG_GUARD,
            )
            gate = dispatcher.admission.gate_for(entry)
            assert (gate.in_use, gate.waiting) == (0, 0)
    assert all(isinstance(outcome, JobTimeoutError) for outcome in outcomes), outcomes
    assert server.requests == 9
    # Three waves of three through a gate of three: the six behind the first three each waited
    # in line for a permit, and never more than three ran at once.
    kinds = [event.kind for event in events]
    assert kinds.count(EventKind.ADMISSION_WAIT) == 6
    assert kinds.count(EventKind.STARTED) == kinds.count(EventKind.TIMED_OUT) == 9
    running = peak = 0
    for kind in kinds:
        running += {EventKind.STARTED: 1, EventKind.TIMED_OUT: -1}.get(kind, 0)
        peak = max(peak, running)
    assert peak == 3


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
            handle = dispatcher.submit(patient)
            await asyncio.sleep(0.6)  # more than twice the patient call's timeout, in line
            assert not handle.done()
            release.set()
            answered = await handle.result()
            assert (await slow.result()).success
    assert answered.success
    kinds = [event.kind for event in events if event.job.job_id == patient.identity.job_id]
    assert kinds == [
        EventKind.SCHEDULED,
        EventKind.ADMISSION_WAIT,
        EventKind.STARTED,
        EventKind.COMPLETED,
    ]


async def test_a_decision_left_without_a_timeout_takes_its_entrys_decision_timeout() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.hang())
        entry = server.entry(max_concurrent=1, decision_timeout_s=0.3)
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            call = DecisionCall(Workflow(), REQUEST, upstream_retries=0)
            assert call.timeout == 60.0  # the default until an entry says otherwise
            with pytest.raises(JobTimeoutError) as caught:
                await asyncio.wait_for(dispatcher.run(call), HANG_GUARD)
    assert "did not finish within its timeout of 0.3 s" in caught.value.message
    assert call.timeout == 0.3


async def test_a_calls_own_timeout_wins_over_its_entrys() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.hang())
        entry = server.entry(max_concurrent=1, decision_timeout_s=600.0)
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            call = DecisionCall(Workflow(), REQUEST, upstream_retries=0, timeout=0.2)
            with pytest.raises(JobTimeoutError) as caught:
                await asyncio.wait_for(dispatcher.run(call), HANG_GUARD)
            slow = DecisionCall(Workflow(), REQUEST)
            assert (await dispatcher.run(slow)).success
    assert "within its timeout of 0.2 s" in caught.value.message
    assert slow.timeout == 600.0
