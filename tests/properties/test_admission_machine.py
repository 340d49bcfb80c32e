"""CONTRACT.md "Properties", admission: calls arrive, succeed, fail, time out and are cancelled in
any order; a gate never exceeds its capacity, a bucket never goes below zero, nothing leaks,
waiters are served first come, first served."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
)

from harness.admission import Admission, AdmissionError, Permit, TokenBucket
from harness.catalog import CatalogEntry, Reservation

State = Literal["waiting", "holding", "done"]


class Call:
    """One call in the machine: its task, what it holds, and how the test ends it."""

    def __init__(self, index: int, loop: asyncio.AbstractEventLoop) -> None:
        self.index = index
        self.state: State = "waiting"
        self.outcome: asyncio.Future[None] = loop.create_future()
        self.scope: asyncio.Timeout | None = None
        self.permit: Permit | None = None
        self.task: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"call{self.index}"


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


class CallFailedError(RuntimeError):
    """The call's own failure, after admission."""


class GateMachine(RuleBasedStateMachine):
    """Calls of a concurrency-bounded entry through Admission, Demand and Permit."""

    calls = Bundle("calls")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.admission = Admission()
        self.entry = CatalogEntry(
            id="gated",
            provider="fake",
            wire_model_id="m",
            max_context_tokens=1000,
            max_concurrent=1,
        )
        self.all: list[Call] = []
        self.granted: list[int] = []

    def settle(self) -> None:
        self.loop.run_until_complete(_settle())

    @initialize(capacity=st.integers(1, 3))
    def open_gate(self, capacity: int) -> None:
        self.entry = CatalogEntry(
            id="gated",
            provider="fake",
            wire_model_id="m",
            max_context_tokens=1000,
            max_concurrent=capacity,
        )
        self.gate = self.admission.gate_for(self.entry)

    async def _call(self, call: Call) -> None:
        demand = self.admission.demand(self.entry, Reservation(10))
        try:
            async with asyncio.timeout(None) as scope:
                call.scope = scope
                call.permit = await demand.acquire()
                call.state = "holding"
                self.granted.append(call.index)
                async with call.permit:
                    await call.outcome
        except (asyncio.CancelledError, TimeoutError, CallFailedError):
            pass  # every way a call ends: the permit must come back whatever it was
        finally:
            call.state = "done"

    @rule(target=calls)
    def arrive(self) -> Call:
        call = Call(len(self.all), self.loop)
        self.all.append(call)
        call.task = self.loop.create_task(self._call(call))
        self.settle()
        return call

    @rule(call=consumes(calls))
    def succeed(self, call: Call) -> None:
        if not call.outcome.done():
            call.outcome.set_result(None)
        self.settle()

    @rule(call=consumes(calls))
    def fail(self, call: Call) -> None:
        if not call.outcome.done() and call.state != "done":
            call.outcome.set_exception(CallFailedError("the model call failed"))
            # A waiting call may be cancelled before it ever awaits its outcome: mark the
            # failure retrieved here so no "exception was never retrieved" is left behind
            # (the call still raises it when it does await the outcome).
            call.outcome.exception()
        self.settle()

    @rule(call=consumes(calls))
    def time_out(self, call: Call) -> None:
        if call.scope is not None and call.state != "done":
            self.loop.call_soon(call.scope.reschedule, self.loop.time())
        self.settle()

    @rule(call=consumes(calls))
    def cancel(self, call: Call) -> None:
        assert call.task is not None
        call.task.cancel()
        self.settle()

    @rule(call=consumes(calls))
    def release_and_cancel_the_next_waiter(self, call: Call) -> None:
        # The permit changes hands and its new holder is cancelled before it wakes: it must
        # pass the permit on, not keep it.
        if call.state == "holding" and call.permit is not None:
            call.permit.release()
            waiting = [c for c in self.all if c.state == "waiting"]
            if waiting and waiting[0].task is not None:
                waiting[0].task.cancel()
            call.outcome.set_result(None)
        self.settle()

    @invariant()
    def the_gate_never_exceeds_its_capacity(self) -> None:
        if hasattr(self, "gate"):
            assert 0 <= self.gate.in_use <= self.gate.capacity

    @invariant()
    def permits_out_are_exactly_the_holders(self) -> None:
        if hasattr(self, "gate"):
            assert self.gate.in_use == sum(1 for c in self.all if c.state == "holding")
            assert self.gate.waiting == sum(1 for c in self.all if c.state == "waiting")

    @invariant()
    def waiters_are_served_while_permits_are_free(self) -> None:
        if hasattr(self, "gate") and self.gate.in_use < self.gate.capacity:
            assert self.gate.waiting == 0

    @invariant()
    def first_come_first_served(self) -> None:
        assert self.granted == sorted(self.granted)

    def teardown(self) -> None:
        for call in self.all:
            if call.task is not None:
                call.task.cancel()
        self.settle()
        try:
            if hasattr(self, "gate"):
                assert (self.gate.in_use, self.gate.waiting) == (0, 0), "a permit leaked"
                assert all(c.task is not None and c.task.done() for c in self.all)
        finally:
            self.loop.close()


class FakeTime:
    """A clock that moves when the machine says; sleepers wake once it passes their time."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + seconds, wake))
        await wake

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for target, wake in list(self._sleepers):
            if target <= self.now + 1e-9:
                self._sleepers.remove((target, wake))
                if not wake.done():
                    wake.set_result(None)


class BucketMachine(RuleBasedStateMachine):
    """Demands on a token bucket (tpm, optionally rpm) under a fake clock."""

    calls = Bundle("bucket_calls")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.time = FakeTime()
        self.bucket = TokenBucket("window", 60, clock=self.time.clock, sleep=self.time.sleep)
        self.rpm: int | None = None
        self.all: list[Call] = []
        self.demands: dict[int, int] = {}
        self.served: list[int] = []

    def settle(self) -> None:
        self.loop.run_until_complete(_settle())

    @initialize(tpm=st.integers(10, 120), rpm=st.none() | st.integers(1, 4))
    def open_bucket(self, tpm: int, rpm: int | None) -> None:
        self.rpm = rpm
        self.bucket = TokenBucket(
            "window", tpm, requests_per_minute=rpm, clock=self.time.clock, sleep=self.time.sleep
        )

    async def _call(self, call: Call, tokens: int) -> None:
        try:
            async with asyncio.timeout(None) as scope:
                call.scope = scope
                await self.bucket.acquire(tokens)
            call.state = "holding"
            self.served.append(call.index)
        except (asyncio.CancelledError, TimeoutError):
            call.state = "done"

    @rule(target=calls, tokens=st.integers(0, 120))
    def arrive(self, tokens: int) -> Call:
        call = Call(len(self.all), self.loop)
        if tokens > self.bucket.capacity:
            waiting = self.bucket.waiting
            with pytest.raises(AdmissionError, match="could never be served"):
                self.loop.run_until_complete(self.bucket.acquire(tokens))
            assert self.bucket.waiting == waiting
            call.state = "done"
            return call
        self.all.append(call)
        self.demands[call.index] = tokens
        call.task = self.loop.create_task(self._call(call, tokens))
        self.settle()
        return call

    @rule(seconds=st.sampled_from([0.25, 1.0, 5.0, 30.0]))
    def advance(self, seconds: float) -> None:
        self.time.advance(seconds)
        self.settle()

    @rule()
    def a_full_window_serves_the_head_of_the_line(self) -> None:
        before = len(self.served)
        had_waiters = self.bucket.waiting > 0
        self.time.advance(60.0)
        self.settle()
        assert not had_waiters or len(self.served) > before

    @rule(call=consumes(calls))
    def time_out(self, call: Call) -> None:
        if call.scope is not None and call.state == "waiting":
            self.loop.call_soon(call.scope.reschedule, self.loop.time())
        self.settle()

    @rule(call=consumes(calls))
    def cancel(self, call: Call) -> None:
        if call.task is not None:
            call.task.cancel()
        self.settle()

    @invariant()
    def the_bucket_never_goes_below_zero_nor_above_capacity(self) -> None:
        assert -1e-9 <= self.bucket.level <= self.bucket.capacity + 1e-9
        requests = self.bucket.requests_level
        assert requests is None or -1e-9 <= requests <= (self.rpm or 0) + 1e-9

    @invariant()
    def it_never_grants_more_than_its_window_refills(self) -> None:
        tpm = self.bucket.capacity
        granted = sum(self.demands[i] for i in self.served)
        assert granted <= tpm + self.time.now * tpm / 60 + 1e-6
        if self.rpm is not None:
            assert len(self.served) <= self.rpm + self.time.now * self.rpm / 60 + 1e-6

    @invariant()
    def the_line_is_exactly_the_waiting_calls_served_in_order(self) -> None:
        assert self.bucket.waiting == sum(1 for c in self.all if c.state == "waiting")
        assert self.served == sorted(self.served)

    def teardown(self) -> None:
        try:
            for _ in range(len(self.all) + 1):
                self.time.advance(60.0)
                self.settle()
            assert self.bucket.waiting == 0, "a waiter was never served"
            assert all(c.state != "waiting" for c in self.all)
        finally:
            for call in self.all:
                if call.task is not None:
                    call.task.cancel()
            self.settle()
            self.loop.close()


TestGate = GateMachine.TestCase
TestBucket = BucketMachine.TestCase
