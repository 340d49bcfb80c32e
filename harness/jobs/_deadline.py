"""Time limits: a job's limit spent over its attempts and pauses, and the attempts' deadlines.

One concern: when a job's time is up. :class:`JobRun` keeps one job's limit and what it has
spent; :class:`Deadlines` cancels a running attempt when its share of the limit is reached, as
``asyncio.timeout`` would, with one timer for every attempt on the loop.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from harness.errors import JobTimeoutError

if TYPE_CHECKING:
    from harness.jobs._job import Job

__all__ = ["DEADLINE_SLACK", "Deadlines", "JobRun", "timeout_of"]

DEADLINE_SLACK: Final = 0.001
"""Seconds before a job's deadline at which a retryable failure counts as its timeout."""


def timeout_of(job: Job[Any]) -> JobTimeoutError:
    """The timeout of ``job``."""
    return JobTimeoutError(
        f"{job.describe()} did not finish within its timeout of {job.timeout:g} s",
        job_id=job.identity.job_id,
    )


class JobRun:
    """One job's running state, made once when the job is submitted: its task, its time limit
    spent on the dispatcher's clock over its attempts and pauses (admission does not count), and
    the running attempt's limit on the loop's clock (kept by :class:`Deadlines`: when it ends,
    whether it was reached, and how many cancellations the task carried when it started)."""

    __slots__ = (
        "_clock",
        "_since",
        "cancelling",
        "closing",
        "expired",
        "inline",
        "limit",
        "task",
        "used",
        "when",
    )

    task: asyncio.Task[Any]

    def __init__(self, limit: float | None, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.used = 0.0
        self._clock = clock
        self._since: float | None = None
        self.when = math.inf
        self.cancelling = 0
        self.expired = False
        self.inline = False
        """The job runs in the task that awaits it (:meth:`Dispatcher.run`), not its own."""
        self.closing = False
        """:meth:`Dispatcher.aclose` cancelled the task an inline job runs in."""

    def start(self) -> float:
        """Start spending (a pause begins); the time now."""
        now = self._clock()
        if self._since is None:
            self._since = now
        return now

    def stop(self) -> None:
        """Stop spending: add the time since :meth:`start`."""
        if self._since is not None:
            self.used += max(0.0, self._clock() - self._since)
            self._since = None

    def left(self) -> float | None:
        """Seconds left (spending included up to now), ``None`` without a limit."""
        if self.limit is None:
            return None
        running = 0.0 if self._since is None else max(0.0, self._clock() - self._since)
        return max(0.0, self.limit - self.used - running)


class Deadlines:
    """The time limits of the attempts running on one loop, kept by one timer for the earliest.

    What ``asyncio.timeout`` does per attempt (a timer pushed on the loop's heap and cancelled,
    two awaited context-manager steps), done with one timer for all: an attempt adds its limit
    (the timer moves only when the new limit is earlier than the one it waits for) and takes it
    away when it ends. When the timer fires, every limit reached is cancelled, as
    ``asyncio.timeout`` cancels its task, and the timer waits for the earliest left. The
    semantics are ``asyncio.timeout``'s (:meth:`stop` un-cancels as its exit does): only a
    cancellation the limit made becomes the job's timeout; one from outside stays one.
    """

    __slots__ = ("_limits", "_loop", "_timer", "_when")

    def __init__(self) -> None:
        self._limits: set[JobRun] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._when = math.inf

    def start(self, loop: asyncio.AbstractEventLoop, run: JobRun, left: float) -> None:
        """Limit ``run``'s attempt (running in its task) to ``left`` seconds from now."""
        if loop is not self._loop:  # a dispatcher used again under a new loop starts afresh
            if self._timer is not None:
                self._timer.cancel()
            self._loop = loop
            self._limits = set()
            self._timer = None
            self._when = math.inf
        run.when = when = loop.time() + left
        run.cancelling = run.task.cancelling()
        run.expired = False
        self._limits.add(run)
        if when < self._when:
            self._arm(loop, when)

    def stop(self, run: JobRun) -> bool:
        """The attempt ended: forget its limit; whether the limit's own cancellation (and no
        other) is what the task carries, so a ``CancelledError`` it ended with is its timeout."""
        self._limits.discard(run)
        return run.expired and run.task.uncancel() <= run.cancelling

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._when = when
        self._timer = loop.call_at(when, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop is not self._loop:  # a timer of a loop this dispatcher has left
            return
        reached = max(self._when, loop.time())  # the loop runs a timer within its resolution
        self._timer = None
        self._when = math.inf
        earliest = math.inf
        for limit in tuple(self._limits):
            if limit.when <= reached:
                self._limits.discard(limit)
                limit.expired = True
                limit.task.cancel()
            elif limit.when < earliest:
                earliest = limit.when
        if earliest < math.inf:
            self._arm(loop, earliest)
