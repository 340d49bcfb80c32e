"""Pacing of re-runs: the server's hint when it gave one, else jittered exponential backoff."""

from __future__ import annotations

import asyncio
import random

import attrs

__all__ = ["Pacing"]


@attrs.frozen
class Pacing:
    """How long to pause before re-run ``attempt + 1``.

    The server's hint (``retry_after``) wins; without one the pause is ``base * 2**attempt``
    capped at ``cap``, times a jitter drawn in ``[1 - jitter, 1]``. ``scale`` multiplies every
    pause (``Pacing(scale=0)`` re-runs at once: for tests).
    """

    base: float = 0.5
    cap: float = 30.0
    jitter: float = 0.5
    scale: float = 1.0
    rng: random.Random = attrs.field(factory=random.Random, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.base < 0 or self.cap < 0 or self.scale < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("pacing needs base, cap, scale >= 0 and jitter in [0, 1]")

    @classmethod
    def immediate(cls) -> Pacing:
        """Re-run at once, hints included: for tests."""
        return cls(scale=0.0)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """The pause in seconds before the re-run that follows ``attempt`` (0-based)."""
        if retry_after is not None:
            return max(0.0, retry_after) * self.scale
        backoff = min(self.cap, self.base * (2.0**attempt))
        jitter: float = self.rng.uniform(1.0 - self.jitter, 1.0)
        return backoff * jitter * self.scale

    async def sleep(self, seconds: float) -> None:
        """Pause (a separate method so a test can replace the clock)."""
        if seconds > 0:
            await asyncio.sleep(seconds)
        else:
            await asyncio.sleep(0)
