"""Exact time limits: a job's limit is spent on the monotonic clock over all its attempts and the
pauses between them (what really passed, not what was planned); a pause never reaches the limit;
a job never ends later than its limit plus one scheduling slice."""

from __future__ import annotations

import asyncio
import time

import attrs
import pytest

from harness.catalog import CatalogEntry
from harness.errors import ExternalServiceError, JobTimeoutError, TransientError
from harness.jobs import Dispatcher, EventKind, Job, JobContext, JobEvent, RetryPolicy
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Identifiable, Workflow

from .stack import REQUEST, FakeClock, RecordedPacing, catalog_of

NO_JITTER = RetryPolicy(max_retries=10, backoff_base=0.1, backoff_cap=10.0, jitter=0.0)


@attrs.frozen
class LatePacing(RecordedPacing):
    """A pause that wakes up ``late`` seconds after it was asked to (a busy loop)."""

    late: float = 0.0

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        assert self.clock is not None
        self.clock.advance(seconds + self.late)


class _Flaky(Job[str]):
    """Each attempt takes ``took`` seconds of the fake clock, then fails in a retryable way."""

    def __init__(self, parent: Identifiable, clock: FakeClock, took: float, **kw: object) -> None:
        super().__init__(parent, **kw)  # type: ignore[arg-type]  # timeout and retry only
        self.clock = clock
        self.took = took
        self.attempts = 0
        self.remaining: list[float | None] = []

    async def run(self, context: JobContext) -> str:
        self.attempts += 1
        self.remaining.append(context.remaining())
        self.clock.advance(self.took)
        raise TransientError("the upstream went away")


async def _run_flaky(job: _Flaky, pacing: RecordedPacing, clock: FakeClock) -> BaseException:
    async with Dispatcher(catalog_of(_entry()), pacing=pacing, clock=clock) as dispatcher:
        with pytest.raises(Exception) as caught:  # noqa: PT011 -- each test checks the kind
            await dispatcher.run(job)
    return caught.value


def _entry() -> CatalogEntry:
    return CatalogEntry(
        id="local", provider="fake", wire_model_id="m", max_context_tokens=100, max_concurrent=4
    )


async def test_the_limit_is_spent_by_what_really_passed_not_what_was_planned() -> None:
    clock = FakeClock()
    pacing = LatePacing(clock=clock, late=0.25)  # every pause overruns by 0.25 s
    job = _Flaky(Workflow(), clock, 0.3, timeout=1.0, retry=NO_JITTER)
    failure = await _run_flaky(job, pacing, clock)
    # 0.3 run + (0.1 + 0.25) pause + 0.3 run = 0.95 s spent: 0.05 s left, a 0.2 s pause would
    # outlast it. Counting the planned 0.1 s instead would have left 0.3 s and a third attempt.
    assert job.attempts == 2
    assert pacing.slept == [0.1]
    assert isinstance(failure, ExternalServiceError)
    assert "after 0.2 s" in failure.message
    assert "0.05 s left" in failure.message
    assert job.remaining == [pytest.approx(1.0), pytest.approx(0.35)]


async def test_a_pause_that_would_reach_the_limit_is_not_taken() -> None:
    clock = FakeClock()
    pacing = RecordedPacing(clock=clock)
    job = _Flaky(Workflow(), clock, 0.2, timeout=1.0, retry=NO_JITTER)
    failure = await _run_flaky(job, pacing, clock)
    # 0.2 + 0.1 + 0.2 + 0.2 + 0.2 = 0.9 spent, then a 0.4 s pause would pass the limit.
    assert pacing.slept == [0.1, 0.2]
    assert job.attempts == 3
    assert isinstance(failure, ExternalServiceError)
    assert "would outlast the 0.1 s left of the job's timeout" in failure.message
    assert isinstance(failure.__cause__, TransientError)


async def test_an_attempt_that_ends_past_the_limit_is_a_timeout_not_a_retry() -> None:
    clock = FakeClock()
    pacing = RecordedPacing(clock=clock)
    job = _Flaky(Workflow(), clock, 1.5, timeout=1.0, retry=NO_JITTER)
    failure = await _run_flaky(job, pacing, clock)
    assert isinstance(failure, JobTimeoutError)
    assert failure.job_id == job.identity.job_id
    assert (job.attempts, pacing.slept) == (1, [])


async def test_without_a_limit_nothing_is_cut() -> None:
    clock = FakeClock()
    pacing = RecordedPacing(clock=clock)
    policy = RetryPolicy(max_retries=3, backoff_base=100.0, backoff_cap=100.0, jitter=0.0)
    job = _Flaky(Workflow(), clock, 50.0, timeout=None, retry=policy)
    failure = await _run_flaky(job, pacing, clock)
    assert pacing.slept == [100.0, 100.0, 100.0]
    assert job.attempts == 4
    assert "retry budget (3)" in str(failure)


class _Ticker:
    """Measures the event loop's longest stall (the scheduling slice) while it runs."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.001)
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now

    def __enter__(self) -> _Ticker:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def test_on_the_real_clock_no_job_ends_later_than_its_limit_plus_one_slice() -> None:
    limit = 0.6
    started: dict[str, float] = {}
    ended: dict[str, float] = {}
    retries: dict[str, int] = {}

    def stamp(event: JobEvent) -> None:
        now = time.monotonic()
        if event.kind is EventKind.STARTED:
            started[event.job.job_id] = now
        elif event.kind is EventKind.RETRY:
            retries[event.job.job_id] = retries.get(event.job.job_id, 0) + 1
        elif event.kind.terminal:
            ended[event.job.job_id] = now

    def fault(number: int) -> Fault:
        # Three quick refusals with a short hint, then a server that never answers.
        if number % 4 == 0:
            return Fault.hang()
        return Fault.rate_limited(None, retry_after_ms=40 + 10 * (number % 7))

    policy = RetryPolicy(max_retries=50, backoff_base=0.02, jitter=0.5)
    async with FakeSystemOneServer() as server:
        server.faults = fault
        entry = server.entry(max_concurrent=64)  # nobody waits for admission
        async with Dispatcher(catalog_of(entry)) as dispatcher:
            dispatcher.subscribe(stamp)
            with _Ticker() as ticker:
                calls = [
                    DecisionCall(Workflow(), REQUEST, timeout=limit, retry=policy)
                    for _ in range(40)
                ]
                outcomes = await asyncio.gather(
                    *(dispatcher.run(call) for call in calls), return_exceptions=True
                )
    assert all(isinstance(o, JobTimeoutError | ExternalServiceError) for o in outcomes), outcomes
    assert sum(retries.values()) >= 40  # the pauses were really taken
    slice_ = ticker.longest
    for call in calls:
        job_id = call.identity.job_id
        ran = ended[job_id] - started[job_id]
        assert ran <= limit + 2 * slice_ + 0.02, (ran, slice_)
    # A job that timed out used its whole limit, measured on the same clock.
    timed_out = [c for c, o in zip(calls, outcomes, strict=True) if isinstance(o, JobTimeoutError)]
    assert timed_out
    for call in timed_out:
        job_id = call.identity.job_id
        assert ended[job_id] - started[job_id] >= limit
