"""The dispatcher's time limits, kept by one timer for the earliest: each job still
ends at its own limit, whatever order the limits come in; a cancellation from outside stays a
cancellation; the limit's own cancellation is taken back as ``asyncio.timeout`` takes it back."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness.errors import JobTimeoutError
from harness.jobs import Dispatcher, EventKind, Job, JobContext, JobEvent
from harness.tools import Identifiable, Workflow

from .stack import catalog_of
from .test_time_limits import _entry


class _Sleeper(Job[str]):
    """Sleeps ``seconds`` on the loop, then answers ``"done"``; ``swallow`` catches a
    cancellation and answers ``"swallowed"`` instead (a job that outlives its limit)."""

    def __init__(
        self, parent: Identifiable, seconds: float, *, swallow: bool = False, **kw: object
    ) -> None:
        super().__init__(parent, **kw)  # type: ignore[arg-type]  # timeout only
        self.seconds = seconds
        self.swallow = swallow
        self.ended: float | None = None
        self.cancelling_after: int | None = None

    async def run(self, context: JobContext) -> str:
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            if not self.swallow:
                raise
            task = asyncio.current_task()
            assert task is not None
            await asyncio.sleep(0)  # the limit's cancellation is still on the task here
            self.cancelling_after = task.cancelling()
            return "swallowed"
        finally:
            self.ended = time.monotonic()
        return "done"


async def test_each_job_ends_at_its_own_limit_whatever_order_the_limits_come_in() -> None:
    workflow = Workflow()
    long_limit = _Sleeper(workflow, 30.0, timeout=0.4)  # first in, latest limit
    quick = _Sleeper(workflow, 0.01, timeout=5.0)  # ends well within its limit
    short_limit = _Sleeper(workflow, 30.0, timeout=0.1)  # earliest limit, comes in last
    unlimited = _Sleeper(workflow, 0.2, timeout=None)
    terminal: list[tuple[str, EventKind]] = []

    def ended(event: JobEvent) -> None:
        terminal.append((event.job.job_id, event.kind))

    async with Dispatcher(catalog_of(_entry())) as dispatcher:
        dispatcher.subscribe(ended, lambda event: event.kind.terminal)
        started = time.monotonic()
        outcomes = await asyncio.gather(
            *(dispatcher.run(job) for job in (long_limit, quick, short_limit, unlimited)),
            return_exceptions=True,
        )
    assert outcomes[1] == "done"
    assert outcomes[3] == "done"
    for job, outcome in ((long_limit, outcomes[0]), (short_limit, outcomes[2])):
        assert isinstance(outcome, JobTimeoutError), outcome
        assert outcome.job_id == job.identity.job_id
        assert job.ended is not None
        assert job.ended - started >= (job.timeout or 0.0)  # never before its limit
    assert short_limit.ended is not None
    assert long_limit.ended is not None
    assert short_limit.ended < long_limit.ended  # the later, shorter limit moved the timer
    kinds = dict(terminal)
    assert kinds[short_limit.identity.job_id] is EventKind.TIMED_OUT
    assert kinds[long_limit.identity.job_id] is EventKind.TIMED_OUT
    assert kinds[quick.identity.job_id] is EventKind.COMPLETED


async def test_a_cancel_from_outside_stays_a_cancellation_not_a_timeout() -> None:
    job = _Sleeper(Workflow(), 30.0, timeout=5.0)
    async with Dispatcher(catalog_of(_entry())) as dispatcher:
        kinds: list[EventKind] = []
        dispatcher.subscribe(lambda event: kinds.append(event.kind), kinds=[EventKind.CANCELLED])
        handle = dispatcher.submit(job)
        await asyncio.sleep(0.02)
        handle.cancel()
        with pytest.raises(asyncio.CancelledError):
            await handle.result()
        # The dispatcher goes on timing out other jobs after the cancelled one left.
        with pytest.raises(JobTimeoutError):
            await dispatcher.run(_Sleeper(Workflow(), 30.0, timeout=0.05))
    assert kinds == [EventKind.CANCELLED]


async def test_a_job_that_answers_despite_its_limit_answers_and_carries_no_cancellation() -> None:
    job = _Sleeper(Workflow(), 30.0, timeout=0.05, swallow=True)
    async with Dispatcher(catalog_of(_entry())) as dispatcher:
        task = dispatcher.submit(job).result()
        assert await task == "swallowed"  # as under asyncio.timeout
    assert job.cancelling_after == 1  # the limit did cancel it
    assert isinstance(task, asyncio.Task)
    assert task.cancelling() == 0  # and the dispatcher took its cancellation back


def test_a_dispatcher_used_again_under_a_new_loop_still_keeps_limits() -> None:
    dispatcher = Dispatcher(catalog_of(_entry()))

    async def timed_out() -> bool:
        try:
            await dispatcher.run(_Sleeper(Workflow(), 30.0, timeout=0.05))
        except JobTimeoutError:
            return True
        return False

    assert asyncio.run(asyncio.wait_for(timed_out(), 10))
    assert asyncio.run(asyncio.wait_for(timed_out(), 10))
    asyncio.run(dispatcher.aclose())
