"""Re-runs: what a failed attempt becomes under its retry policy, a pause or a failure.

One concern: applying a :class:`~harness.jobs.RetryPolicy` (which failures, how often, how long
a pause) to one failed attempt of one job, on the job's clock. The policy itself is
``_retry.py``; the pauses' lengths and sleeping are :class:`~harness.jobs.Pacing`'s.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING, Any

from harness.errors import (
    ExternalServiceError,
    OverloadedError,
    RateLimitedError,
    RetryableError,
    StatusError,
    UpstreamThrottleError,
)
from harness.jobs._deadline import JobRun, timeout_of
from harness.jobs._pacing import Pacing
from harness.jobs._retry import RetryPolicy

if TYPE_CHECKING:
    from harness.jobs._job import Job

__all__ = ["pause", "pause_for", "settle"]

_settled: weakref.WeakSet[StatusError] = weakref.WeakSet()
"""Failures a dispatcher already applied a retry policy to: a parent job never re-runs them."""


def settle(error: StatusError) -> None:
    """Mark ``error`` as settled: a job that ended with it had its policy applied, so a parent
    job that fails with it too never re-runs it."""
    _settled.add(error)


def _given_up(error: RetryableError, why: str) -> ExternalServiceError:
    """The failure a retryable error becomes when it is not re-run: throttling (429, 503, 529)
    as :class:`UpstreamThrottleError`, the rest as :class:`ExternalServiceError`."""
    kind = (
        UpstreamThrottleError
        if isinstance(error, RateLimitedError | OverloadedError)
        else ExternalServiceError
    )
    failure = kind(f"{error.message}; {why}", status=error.status, request_id=error.request_id)
    _settled.add(failure)
    return failure


def pause_for(
    pacing: Pacing,
    error: StatusError,
    attempt: int,
    budget: JobRun,
    policy: RetryPolicy,
) -> float:
    """The pause before re-running a job after ``error``, or the failure to raise instead
    (the error itself when no policy ever re-runs it, else a settled error naming why)."""
    if error in _settled or not policy.covers(error):
        if isinstance(error, RetryableError):
            raise _given_up(error, "the job's retry policy does not re-run it") from error
        raise error
    if attempt >= policy.max_retries:
        if isinstance(error, RetryableError):
            spent = f"gave up after the retry budget ({policy.max_retries}) was spent"
            raise _given_up(error, spent) from error
        _settled.add(error)
        raise error
    hint = error.retry_after if isinstance(error, RetryableError) else None
    if (
        isinstance(error, RetryableError)
        and hint is not None
        and policy.honour_hints
        and policy.max_hint is not None
        and hint > policy.max_hint
    ):
        raise _given_up(
            error,
            f"the server asked for a pause of {hint:g} s, longer than the retry policy's "
            f"max_hint of {policy.max_hint:g} s",
        ) from error
    wait = pacing.delay(attempt, hint, policy)
    left = budget.left()
    if left is not None and wait >= left:
        asked = hint if hint is not None and policy.honour_hints else wait
        failure = ExternalServiceError(
            f"{error.message}; a re-run was asked for after {asked:g} s, which would outlast "
            f"the {left:g} s left of the job's timeout",
            status=error.status,
            request_id=error.request_id,
        )
        _settled.add(failure)
        raise failure from error
    return wait


async def pause(pacing: Pacing, job: Job[Any], wait: float, budget: JobRun) -> None:
    """Wait ``wait`` seconds before a re-run, on the job's clock and never past its limit."""
    budget.start()
    try:
        async with asyncio.timeout(budget.left()) as scope:
            await pacing.sleep(wait)
    except TimeoutError as error:
        if scope.expired():
            raise timeout_of(job) from error
        raise
    finally:
        budget.stop()
    left = budget.left()
    if left is not None and left <= 0:
        raise timeout_of(job)
