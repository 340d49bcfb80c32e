"""Admission: gates, buckets and demands (CONTRACT.md "Demand"; the admission property)."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.admission import Admission, AdmissionError, Gate, TokenBucket
from harness.catalog import CatalogEntry, Reservation


class FakeTime:
    """A clock that moves only when the test says; sleepers wake when it passes their time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + seconds, wake))
        await wake

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        for target, wake in list(self._sleepers):
            if target <= self.now + 1e-9:
                self._sleepers.remove((target, wake))
                if not wake.done():
                    wake.set_result(None)
        await _settle()


async def _settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


def _gate_entry(entry_id: str = "local", capacity: int = 2) -> CatalogEntry:
    return CatalogEntry(
        id=entry_id,
        provider="fake",
        wire_model_id="fake-1",
        max_context_tokens=10_000,
        max_concurrent=capacity,
    )


def _window_entry(entry_id: str = "remote", tpm: int = 600, rpm: int | None = None) -> CatalogEntry:
    return CatalogEntry(
        id=entry_id,
        provider="fake",
        wire_model_id="fake-1",
        max_context_tokens=10_000,
        tpm=tpm,
        rpm=rpm,
    )


# -- gate -----------------------------------------------------------------------------------


async def test_gate_capacity_is_never_exceeded_under_50_tasks() -> None:
    gate = Gate("local", 3)
    rng = random.Random(7)
    peak = 0
    done = 0

    async def call() -> None:
        nonlocal peak, done
        await gate.acquire()
        try:
            peak = max(peak, gate.in_use)
            assert gate.in_use <= gate.capacity
            for _ in range(rng.randint(0, 3)):
                await asyncio.sleep(0)
        finally:
            gate.release()
        done += 1

    await asyncio.gather(*(call() for _ in range(50)))
    assert done == 50
    assert peak == 3
    assert (gate.in_use, gate.waiting, gate.available) == (0, 0, 3)


async def test_gate_serves_waiters_first_come_first_served() -> None:
    gate = Gate("local", 1)
    await gate.acquire()
    order: list[int] = []

    async def waiter(n: int) -> None:
        await gate.acquire()
        order.append(n)

    tasks = [asyncio.create_task(waiter(n)) for n in range(5)]
    await _settle()
    assert gate.waiting == 5
    assert gate.available == 0
    for expected in range(5):
        gate.release()
        # A newcomer arriving as the permit changes hands queues behind the line.
        late = asyncio.create_task(waiter(100 + expected))
        await _settle()
        assert order[-1] == expected
        late.cancel()
        await asyncio.gather(late, return_exceptions=True)
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3, 4]
    gate.release()
    assert gate.in_use == 0


async def test_cancelled_waiter_holds_nothing() -> None:
    gate = Gate("local", 1)
    await gate.acquire()
    waiting = asyncio.create_task(gate.acquire())
    await _settle()
    assert gate.waiting == 1
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert (gate.in_use, gate.waiting) == (1, 0)
    gate.release()
    assert gate.in_use == 0
    await gate.acquire()  # the gate still works
    assert gate.in_use == 1


async def test_permit_handed_to_a_waiter_cancelled_at_that_moment_does_not_leak() -> None:
    gate = Gate("local", 1)
    await gate.acquire()
    first = asyncio.create_task(gate.acquire())
    second = asyncio.create_task(gate.acquire())
    await _settle()
    gate.release()  # handed to `first`, which has not run yet...
    first.cancel()  # ...and is cancelled in the same breath
    await asyncio.gather(first, return_exceptions=True)
    assert first.cancelled()
    await asyncio.wait_for(second, timeout=1)  # the permit went on to the next in line
    assert (gate.in_use, gate.waiting) == (1, 0)
    gate.release()
    assert gate.in_use == 0
    # With nobody behind, the permit returns to the gate.
    await gate.acquire()
    lone = asyncio.create_task(gate.acquire())
    await _settle()
    gate.release()
    lone.cancel()
    await asyncio.gather(lone, return_exceptions=True)
    assert (gate.in_use, gate.waiting, gate.available) == (0, 0, 1)


async def test_over_release_is_refused() -> None:
    gate = Gate("local", 1)
    with pytest.raises(AdmissionError, match="released more permits than were taken"):
        gate.release()
    with pytest.raises(AdmissionError, match="capacity must be >= 1"):
        Gate("local", 0)


# -- bucket ---------------------------------------------------------------------------------


async def test_bucket_level_follows_the_clock() -> None:
    time = FakeTime()
    bucket = TokenBucket("remote", 600, clock=time.clock, sleep=time.sleep)  # 10 tokens/s
    assert bucket.level == 600
    await bucket.acquire(600)
    assert bucket.level == 0
    time.now = 3.0
    assert bucket.level == pytest.approx(30)
    time.now = 1000.0
    assert bucket.level == 600  # never above capacity


async def test_bucket_takes_all_or_nothing_and_serves_fifo() -> None:
    time = FakeTime()
    bucket = TokenBucket("remote", 600, clock=time.clock, sleep=time.sleep)
    await bucket.acquire(550)
    served: list[str] = []

    async def take(label: str, tokens: int) -> None:
        await bucket.acquire(tokens)
        served.append(label)

    big = asyncio.create_task(take("big", 100))
    await _settle()
    small = asyncio.create_task(take("small", 10))  # would fit now, but the line comes first
    await _settle()
    assert served == []
    assert bucket.waiting == 2
    assert bucket.level == pytest.approx(50)  # a waiting job holds nothing
    assert time.sleeps == [pytest.approx(5.0)]
    await time.advance(4.9)
    assert served == []
    await time.advance(0.1)
    assert served == ["big"]
    await time.advance(1.0)
    await asyncio.gather(big, small)
    assert served == ["big", "small"]
    assert bucket.waiting == 0
    assert bucket.level == pytest.approx(0)


async def test_oversize_demand_is_refused_at_once() -> None:
    bucket = TokenBucket("remote", 100)
    with pytest.raises(AdmissionError, match="could never be served") as caught:
        await bucket.acquire(101)
    assert "'remote'" in str(caught.value)
    assert "101" in str(caught.value)
    assert bucket.level == 100
    with pytest.raises(AdmissionError, match="cannot take -1"):
        await bucket.acquire(-1)


async def test_cancelled_bucket_waiter_holds_nothing_and_the_line_moves_on() -> None:
    time = FakeTime()
    bucket = TokenBucket("remote", 600, clock=time.clock, sleep=time.sleep)
    await bucket.acquire(600)
    head = asyncio.create_task(bucket.acquire(300))
    await _settle()
    behind = asyncio.create_task(bucket.acquire(60))
    await _settle()
    head.cancel()
    await asyncio.gather(head, return_exceptions=True)
    await _settle()
    assert bucket.waiting == 1
    assert bucket.level == 0
    await time.advance(6.0)
    await behind
    assert bucket.waiting == 0
    assert bucket.level == pytest.approx(0)


async def test_requests_per_minute_bound() -> None:
    time = FakeTime()
    bucket = TokenBucket(
        "remote", 1_000_000, requests_per_minute=2, clock=time.clock, sleep=time.sleep
    )
    await bucket.acquire(1)
    await bucket.acquire(1)
    assert bucket.requests_level == 0
    third = asyncio.create_task(bucket.acquire(1))
    await _settle()
    assert not third.done()
    assert time.sleeps == [pytest.approx(30.0)]
    await time.advance(30.0)
    await third
    assert TokenBucket("x", 5).requests_level is None


@given(
    steps=st.lists(
        st.tuples(st.integers(min_value=0, max_value=120), st.floats(min_value=0, max_value=5)),
        max_size=30,
    )
)
def test_bucket_never_goes_below_zero_or_over_capacity(steps: list[tuple[int, float]]) -> None:
    async def run() -> None:
        time = FakeTime()

        async def sleep(seconds: float) -> None:
            time.now += seconds
            await asyncio.sleep(0)

        bucket = TokenBucket("remote", 120, clock=time.clock, sleep=sleep)
        taken = 0
        for tokens, pause in steps:
            time.now += pause
            await bucket.acquire(tokens)
            taken += tokens
            assert 0 <= bucket.level <= 120
            # Never more than the capacity plus what the clock refilled since the start.
            assert taken <= 120 + 2.0 * time.now + 1e-6

    asyncio.run(run())


# -- admission ------------------------------------------------------------------------------


async def test_concurrency_entry_demands_one_permit_on_its_gate() -> None:
    admission = Admission()
    entry = _gate_entry("local", capacity=2)
    demand = admission.demand(entry, Reservation(5000))
    assert (demand.kind, demand.name, demand.amount) == ("gate", "local", 1)
    gate = admission.gate_for(entry)
    assert (gate.name, gate.capacity) == ("local", 2)
    assert admission.gate_for(entry) is gate
    assert admission.gate_for(_gate_entry("local", capacity=2)) is gate
    assert admission.gate_for(_gate_entry("other")) is not gate
    async with await demand.acquire() as permit:
        assert gate.in_use == 1
        assert (permit.kind, permit.name, permit.amount) == ("gate", "local", 1)
    assert permit.released
    assert gate.in_use == 0
    permit.release()  # idempotent
    assert gate.in_use == 0


async def test_permit_is_returned_on_failure() -> None:
    admission = Admission()
    entry = _gate_entry()
    gate = admission.gate_for(entry)

    async def failing_call() -> None:
        async with await admission.demand(entry, Reservation(1)).acquire():
            assert gate.in_use == 1
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await failing_call()
    assert gate.in_use == 0


async def test_demand_says_whether_it_would_wait() -> None:
    admission = Admission()
    entry = _gate_entry(capacity=1)
    demand = admission.demand(entry, Reservation(1))
    assert not demand.would_wait()
    permit = await demand.acquire()
    assert demand.would_wait()
    permit.release()
    time = FakeTime()
    windows = Admission(clock=time.clock, sleep=time.sleep)
    bucket_demand = windows.demand(_window_entry(tpm=600), Reservation(400))
    assert not bucket_demand.would_wait()
    await bucket_demand.acquire()
    assert bucket_demand.would_wait()


async def test_window_entry_demands_its_priced_tokens_on_its_bucket() -> None:
    time = FakeTime()
    admission = Admission(clock=time.clock, sleep=time.sleep)
    entry = _window_entry("remote", tpm=600, rpm=10)
    demand = admission.demand(entry, Reservation(input_tokens=250))
    assert (demand.kind, demand.name, demand.amount) == ("bucket", "remote", 250)
    bucket = admission.bucket_for(entry)
    assert admission.bucket_for(entry) is bucket
    assert (bucket.name, bucket.capacity) == ("remote", 600)
    async with await demand.acquire() as permit:
        assert bucket.level == 350
        assert bucket.requests_level == 9
    assert permit.released
    assert bucket.level == 350  # spent tokens are not returned


def test_asking_a_gate_of_a_window_entry_fails() -> None:
    admission = Admission()
    with pytest.raises(AdmissionError, match="'remote' is bounded by a quota window") as caught:
        admission.gate_for(_window_entry("remote"))
    assert "window" in str(caught.value)
    with pytest.raises(AdmissionError, match="'local' is bounded by max_concurrent"):
        admission.bucket_for(_gate_entry("local"))


def test_a_reservation_over_the_window_is_refused_at_demand() -> None:
    admission = Admission()
    with pytest.raises(AdmissionError, match="reserves 601 tokens, more than its tpm of 600"):
        admission.demand(_window_entry(tpm=600), Reservation(601))


def test_changed_limits_under_a_running_admission_are_refused() -> None:
    admission = Admission()
    admission.gate_for(_gate_entry("local", capacity=2))
    with pytest.raises(AdmissionError, match=r"max_concurrent = 3 .* opened with 2"):
        admission.gate_for(_gate_entry("local", capacity=3))
    admission.bucket_for(_window_entry("remote", tpm=600))
    with pytest.raises(AdmissionError, match=r"tpm = 700 .* opened with 600"):
        admission.bucket_for(_window_entry("remote", tpm=700))


async def test_a_gate_demand_is_taken_at_once_only_while_its_gate_has_room_and_no_line() -> None:
    admission = Admission()
    entry = _gate_entry(capacity=1)
    demand = admission.demand(entry, Reservation(1))
    assert admission.demand(entry, Reservation(5)) is demand  # one demand per entry
    permit = demand.take_now()
    assert permit is not None
    assert (permit.kind, permit.name, permit.amount, permit.released) == ("gate", "local", 1, False)
    assert demand.take_now() is None  # full: nothing taken
    waiter = asyncio.ensure_future(demand.acquire())
    await _settle()
    permit.release()
    await _settle()
    assert waiter.done()
    assert demand.take_now() is None  # the permit went to the waiter, not to a newcomer
    waited = waiter.result()
    waited.release()
    gate = admission.gate_for(entry)
    assert (gate.in_use, gate.waiting) == (0, 0)
    again = demand.take_now()
    assert again is not None
    again.release()


async def test_a_gate_demand_taken_without_a_permit_holds_its_gate_as_a_permit_would() -> None:
    admission = Admission()
    entry = _gate_entry(capacity=1)
    demand = admission.demand(entry, Reservation(1))
    gate = admission.gate_for(entry)
    assert demand.take_gate_now() is gate
    assert gate.in_use == 1
    assert demand.take_gate_now() is None  # full: nothing taken
    assert demand.take_now() is None
    waiter = asyncio.ensure_future(demand.acquire())
    await _settle()
    gate.release()  # the permit goes to the waiter, not to a newcomer
    await _settle()
    assert waiter.done()
    assert demand.take_gate_now() is None
    waiter.result().release()
    assert (gate.in_use, gate.waiting) == (0, 0)
    time = FakeTime()
    buckets = Admission(clock=time.clock, sleep=time.sleep)
    window = _window_entry(tpm=600, rpm=2)
    assert buckets.demand(window, Reservation(400)).take_gate_now() is None  # a bucket's: none
    assert buckets.bucket_for(window).level == 600  # nothing taken


async def test_a_bucket_demand_is_taken_at_once_only_while_its_tokens_are_there() -> None:
    time = FakeTime()
    admission = Admission(clock=time.clock, sleep=time.sleep)
    entry = _window_entry(tpm=600, rpm=2)
    permit = admission.demand(entry, Reservation(400)).take_now()
    assert permit is not None
    assert (permit.kind, permit.amount) == ("bucket", 400)
    bucket = admission.bucket_for(entry)
    assert bucket.level == 200
    assert admission.demand(entry, Reservation(300)).take_now() is None  # not there: nothing taken
    assert (bucket.level, bucket.requests_level) == (200, 1)
    waiter = asyncio.ensure_future(admission.demand(entry, Reservation(300)).acquire())
    await _settle()
    assert admission.demand(entry, Reservation(100)).take_now() is None  # one waits: no overtaking
    await time.advance(10.0)  # 100 tokens more: the waiter's turn
    assert waiter.done()
    assert admission.demand(entry, Reservation(1)).take_now() is None  # rpm spent


def test_a_changed_entry_under_the_same_id_is_checked_against_its_gate_again() -> None:
    admission = Admission()
    admission.demand(_gate_entry("local", capacity=2), Reservation(1))
    same = _gate_entry("local", capacity=2)  # an equal entry, another object: the same gate
    assert admission.demand(same, Reservation(1)).take_now() is not None
    assert admission.gate_for(same).in_use == 1
    with pytest.raises(AdmissionError, match=r"max_concurrent = 3 .* opened with 2"):
        admission.demand(_gate_entry("local", capacity=3), Reservation(1))
