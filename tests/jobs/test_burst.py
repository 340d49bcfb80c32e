"""Bursts: work done before admission never eats the time of jobs already admitted."""

from __future__ import annotations

import asyncio
import time

from harness.catalog import CatalogEntry
from harness.decision import Choice, DecisionRequest, Noul
from harness.errors import JobTimeoutError
from harness.jobs import DecisionBinding, Dispatcher, Job, JobContext, Requirements
from harness.jobs._intake import INTAKE_PER_SLICE
from harness.testing import FakeSystemOneServer
from harness.thinker import DecisionCall
from harness.tools import Identifiable, Workflow

from .stack import RecordedPacing, catalog_of

BURST = 10_000


def _request(number: int) -> DecisionRequest:
    """A distinct request of about 3 KB per call, so each one is encoded (and would be priced) on
    its own: counting one takes about 0.5 ms here, so pricing the burst before admission took
    seconds and the first 8 admitted calls timed out before sending (as the code before this
    test did, 8 of 10,000)."""
    return DecisionRequest(
        {"ticket": number, "text": f"Invoice {number} was charged twice this month. " * 70},
        {
            "team": Choice("Which team?", {"billing": "money", "tech": "bugs", "sales": None}),
            "urgent": Noul("Urgent?"),
        },
    )


async def test_ten_thousand_calls_submitted_at_once_at_cap_8_all_reach_the_server() -> None:
    async with FakeSystemOneServer() as server:
        entry = server.entry(max_concurrent=8)
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            calls = [
                DecisionCall(Workflow(), _request(n), upstream_retries=0, timeout=3)
                for n in range(BURST)
            ]
            handles = [dispatcher.submit(call) for call in calls]
            outcomes = await asyncio.gather(
                *(handle.result() for handle in handles), return_exceptions=True
            )
            gate = dispatcher.admission.gate_for(entry)
            assert (gate.in_use, gate.waiting) == (0, 0)
    failed = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    timed_out = sum(isinstance(outcome, JobTimeoutError) for outcome in failed)
    assert not failed, f"{len(failed)} of {BURST} failed ({timed_out} timed out): {failed[0]!r}"
    assert server.requests == server.answered == BURST
    assert server.peak_in_flight <= 8
    assert all(len(call.record) == 1 and call.record.calls[0].success for call in calls)
    # Nothing needed a count before admission: the record says the byte-length bound was used.
    assert {call.record.calls[0].counted_by for call in calls} == {"bytes"}


class _Turns:
    """Counts turns of the event loop (a callback that re-schedules itself each turn)."""

    def __init__(self) -> None:
        self.turn = 0
        self._running = True

    def start(self) -> None:
        asyncio.get_running_loop().call_soon(self._tick)

    def stop(self) -> None:
        self._running = False

    def _tick(self) -> None:
        if self._running:
            self.turn += 1
            asyncio.get_running_loop().call_soon(self._tick)


class _Priced(Job[int]):
    """A job whose pricing is slow (its requirements take ``cost`` seconds of CPU) and records
    the loop turn it was priced in."""

    def __init__(self, parent: Identifiable, turns: _Turns, seen: list[int], cost: float) -> None:
        super().__init__(parent, timeout=None)
        self._turns = turns
        self._seen = seen
        self._cost = cost

    def requirements(self) -> Requirements:
        self._seen.append(self._turns.turn)
        until = time.perf_counter() + self._cost
        while time.perf_counter() < until:
            pass
        return Requirements((DecisionBinding(flat_tokens=1),))

    async def run(self, context: JobContext) -> int:
        await asyncio.sleep(0)
        return context.attempt


async def test_pricing_of_a_burst_is_spread_over_loop_turns_while_admitted_jobs_go_on() -> None:
    turns = _Turns()
    seen: list[int] = []
    async with FakeSystemOneServer() as server:
        entry = server.entry(max_concurrent=4)
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            turns.start()
            jobs = [_Priced(Workflow(), turns, seen, 0.0002) for _ in range(400)]
            results = await asyncio.gather(*(dispatcher.run(job) for job in jobs))
            turns.stop()
    assert results == [0] * 400
    per_turn: dict[int, int] = {}
    for turn in seen:
        per_turn[turn] = per_turn.get(turn, 0) + 1
    assert max(per_turn.values()) <= INTAKE_PER_SLICE
    assert len(per_turn) >= 400 // INTAKE_PER_SLICE  # spread over many turns, not one


async def test_an_admitted_job_keeps_its_time_while_a_burst_waits_to_be_priced() -> None:
    turns = _Turns()
    seen: list[int] = []
    async with FakeSystemOneServer() as server:
        entry = server.entry(max_concurrent=1)
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            turns.start()
            first = dispatcher.submit(DecisionCall(Workflow(), _request(0), timeout=5))
            # 2,000 jobs of 2 ms pricing each: 4 s of work if it all ran in one turn.
            slow = [_Priced(Workflow(), turns, seen, 0.002) for _ in range(2000)]
            burst = [dispatcher.submit(job) for job in slow]
            answered = await first.result()  # its round trip needs several turns of the loop
            turns.stop()
            for handle in burst:
                handle.cancel()
    assert answered.success
    assert len(seen) < 2000  # the admitted call finished while most of the burst still waited


def test_a_dispatcher_used_under_two_loops_still_lets_every_job_through() -> None:
    async def burst(dispatcher: Dispatcher) -> list[int]:
        jobs = [_Priced(Workflow(), _Turns(), [], 0.0) for _ in range(3 * INTAKE_PER_SLICE)]
        return await asyncio.gather(*(dispatcher.run(job) for job in jobs))

    async def first(dispatcher: Dispatcher) -> list[int]:
        async with FakeSystemOneServer() as server:
            dispatcher.catalog = catalog_of(server.entry(max_concurrent=4))
            return await burst(dispatcher)

    dispatcher = Dispatcher(catalog_of(_entry_of_nowhere()), pacing=RecordedPacing())
    assert asyncio.run(first(dispatcher)) == [0] * 3 * INTAKE_PER_SLICE
    assert asyncio.run(asyncio.wait_for(burst(dispatcher), 30)) == [0] * 3 * INTAKE_PER_SLICE


def _entry_of_nowhere() -> CatalogEntry:
    return CatalogEntry(
        id="nowhere", provider="fake", wire_model_id="m", max_context_tokens=10, max_concurrent=4
    )
