"""Pacing of re-runs: how the dispatcher waits out the pauses its retry policies ask for."""

from __future__ import annotations

import asyncio
import random

import attrs

from harness.jobs._retry import RetryPolicy

__all__ = ["Pacing"]


@attrs.frozen
class Pacing:
    """How the dispatcher pauses before a re-run: the length comes from the job's
    :class:`RetryPolicy` (the server's hint when it honours one, else its jittered backoff).

    ``scale`` multiplies every pause (``Pacing.immediate()`` re-runs at once: for tests); ``rng``
    draws the jitter (seed it for reproducible pauses); :meth:`sleep` waits (override it to
    record pauses instead). ``base``, ``cap`` and ``jitter``, when given, replace the policy's
    ``backoff_base``, ``backoff_cap`` and ``jitter`` for every job of the dispatcher (one
    backoff for all; prefer a policy per entry or per call, which says it where it applies).
    """

    base: float | None = None
    cap: float | None = None
    jitter: float | None = None
    scale: float = 1.0
    rng: random.Random = attrs.field(factory=random.Random, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        bad = (
            (self.base is not None and self.base < 0)
            or (self.cap is not None and self.cap < 0)
            or self.scale < 0
            or (self.jitter is not None and not 0 <= self.jitter <= 1)
        )
        if bad:
            raise ValueError("pacing needs base, cap, scale >= 0 and jitter in [0, 1]")

    @classmethod
    def immediate(cls) -> Pacing:
        """Re-run at once, hints included: for tests."""
        return cls(scale=0.0)

    def policy(self, policy: RetryPolicy) -> RetryPolicy:
        """``policy`` with this pacing's backoff overrides applied."""
        if self.base is None and self.cap is None and self.jitter is None:
            return policy
        return attrs.evolve(
            policy,
            backoff_base=policy.backoff_base if self.base is None else self.base,
            backoff_cap=policy.backoff_cap if self.cap is None else self.cap,
            jitter=policy.jitter if self.jitter is None else self.jitter,
        )

    def delay(
        self, attempt: int, retry_after: float | None, policy: RetryPolicy | None = None
    ) -> float:
        """The pause in seconds before the re-run that follows ``attempt`` (0-based): the hint
        when ``policy`` (default: the SDK's) honours hints and there is one, else its backoff;
        times ``scale``."""
        applied = self.policy(policy if policy is not None else RetryPolicy())
        if retry_after is not None and applied.honour_hints:
            return max(0.0, retry_after) * self.scale
        return applied.backoff(attempt, self.rng) * self.scale

    async def sleep(self, seconds: float) -> None:
        """Pause (a separate method so a test can replace the clock)."""
        if seconds > 0:
            await asyncio.sleep(seconds)
        else:
            await asyncio.sleep(0)
