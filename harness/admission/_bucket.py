"""A token bucket: the quota window of one catalog entry, its level computed from a clock."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable

from harness.admission._gate import AdmissionError

__all__ = ["TokenBucket"]

_TOLERANCE = 1e-9


class _Level:
    """An amount refilled continuously up to a capacity; no task refills it, the clock does."""

    def __init__(self, capacity: int, per_minute: int, now: float) -> None:
        self.capacity = capacity
        self._per_second = per_minute / 60.0
        self._level = float(capacity)
        self._stamp = now

    def at(self, now: float) -> float:
        elapsed = max(0.0, now - self._stamp)
        return min(float(self.capacity), self._level + elapsed * self._per_second)

    def covers(self, amount: int, now: float) -> bool:
        return self.at(now) + _TOLERANCE >= amount

    def delay(self, amount: int, now: float) -> float:
        return max(0.0, amount - self.at(now)) / self._per_second

    def take(self, amount: int, now: float) -> None:
        self._level = max(0.0, self.at(now) - amount)
        self._stamp = now


class TokenBucket:
    """``tokens_per_minute`` tokens, refilled continuously at tpm/60 a second; optionally rpm.

    :meth:`acquire` takes a whole demand or nothing: a waiter holds nothing while it waits, and
    waiters are served first come, first served. ``clock`` and ``sleep`` are injectable so tests
    can run a window in no real time.
    """

    def __init__(
        self,
        name: str,
        tokens_per_minute: int,
        *,
        requests_per_minute: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if tokens_per_minute < 1:
            raise AdmissionError(f"bucket {name!r}: tokens_per_minute must be >= 1")
        if requests_per_minute is not None and requests_per_minute < 1:
            raise AdmissionError(f"bucket {name!r}: requests_per_minute must be >= 1")
        self._name = name
        self._clock = clock
        self._sleep = sleep
        now = clock()
        self._tokens = _Level(tokens_per_minute, tokens_per_minute, now)
        self._requests = (
            None
            if requests_per_minute is None
            else _Level(requests_per_minute, requests_per_minute, now)
        )
        self._line: deque[asyncio.Future[None]] = deque()

    @property
    def name(self) -> str:
        """The bucket's name (the catalog entry id)."""
        return self._name

    @property
    def capacity(self) -> int:
        """The most tokens the bucket holds (tokens per minute)."""
        return self._tokens.capacity

    @property
    def level(self) -> float:
        """Tokens available now."""
        return self._tokens.at(self._clock())

    @property
    def requests_level(self) -> float | None:
        """Requests available now, or None without an rpm bound."""
        return None if self._requests is None else self._requests.at(self._clock())

    @property
    def waiting(self) -> int:
        """Waiters in line."""
        return len(self._line)

    def would_wait(self, tokens: int) -> bool:
        """Whether :meth:`acquire` of ``tokens`` would wait now."""
        return bool(self._line) or not self._covers(tokens, self._clock())

    def _covers(self, tokens: int, now: float) -> bool:
        requests_ok = self._requests is None or self._requests.covers(1, now)
        return requests_ok and self._tokens.covers(tokens, now)

    def _try_take(self, tokens: int) -> bool:
        now = self._clock()
        if not self._covers(tokens, now):
            return False
        self._tokens.take(tokens, now)
        if self._requests is not None:
            self._requests.take(1, now)
        return True

    def _delay(self, tokens: int) -> float:
        now = self._clock()
        delay = self._tokens.delay(tokens, now)
        if self._requests is not None:
            delay = max(delay, self._requests.delay(1, now))
        return delay

    def take_now(self, tokens: int) -> bool:
        """Take ``tokens`` (and one request under rpm) if they are there and nobody waits;
        ``False``, taking nothing, when :meth:`acquire` would wait or refuse the demand."""
        return 0 <= tokens <= self._tokens.capacity and not self._line and self._try_take(tokens)

    async def acquire(self, tokens: int) -> None:
        """Take ``tokens`` (and one request under rpm) all at once, waiting until they are there.

        A demand larger than the capacity could never be served and is refused at once.
        """
        if tokens < 0:
            raise AdmissionError(f"bucket {self._name!r}: cannot take {tokens} tokens")
        if tokens > self._tokens.capacity:
            raise AdmissionError(
                f"bucket {self._name!r}: a demand of {tokens} tokens exceeds its capacity of "
                f"{self._tokens.capacity} tokens per minute, so it could never be served: "
                "shorten the request or raise the entry's tpm"
            )
        if not self._line and self._try_take(tokens):
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._line.append(turn)
        if len(self._line) == 1:
            turn.set_result(None)
        try:
            await turn  # our turn at the head of the line
            while not self._try_take(tokens):
                await self._sleep(self._delay(tokens))
        finally:
            self._leave(turn)

    def _leave(self, turn: asyncio.Future[None]) -> None:
        was_head = bool(self._line) and self._line[0] is turn
        if turn in self._line:
            self._line.remove(turn)
        if was_head and self._line and not self._line[0].done():
            self._line[0].set_result(None)

    def __repr__(self) -> str:
        return (
            f"TokenBucket({self._name!r}, capacity={self._tokens.capacity}, "
            f"level={self.level:.1f}, waiting={len(self._line)})"
        )
