"""Admission of requests to a server: at most ``max_in_flight`` answered at once, at most
``queue_limit`` waiting for a slot, and a place held from the check on (see :class:`Capacity`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

__all__ = ["Capacity"]


class Capacity:
    """Admission for requests: at most ``max_in_flight`` answered at once (``None``: no bound)
    and at most ``queue_limit`` waiting for a slot; :meth:`admit` says whether one more may come
    in (else it gets 429). An admitted request holds its place until :meth:`leave`, so the bound
    holds exactly."""

    def __init__(self, max_in_flight: int | None, queue_limit: int) -> None:
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(
                f"max_in_flight must be >= 1 (or None for no bound), got {max_in_flight}"
            )
        if queue_limit < 0:
            raise ValueError(f"queue_limit must be >= 0, got {queue_limit}")
        self.max_in_flight = max_in_flight
        self.queue_limit = queue_limit
        self.admitted = 0
        """Requests past :meth:`admit`: being read, waiting for a slot or being answered."""
        self.in_flight = 0
        self.peak_in_flight = 0
        self.waiting = 0
        self.peak_waiting = 0
        self._slots = asyncio.Semaphore(max_in_flight) if max_in_flight else None
        self._idle = asyncio.Event()
        self._idle.set()

    def admit(self) -> bool:
        """Take a place if one is left (a slot or the queue); ``False`` means refuse (429)."""
        bound = self.max_in_flight
        if bound is not None and self.admitted >= bound + self.queue_limit:
            return False
        self.admitted += 1
        self._idle.clear()
        return True

    def leave(self) -> None:
        """Give back the place :meth:`admit` took."""
        self.admitted -= 1
        if not self.admitted:
            self._idle.set()

    async def enter(self) -> None:
        """Wait for a slot (in the queue when every slot is taken), then count it in flight."""
        slots = self._slots
        if slots is not None:
            if slots.locked():
                self.waiting += 1
                self.peak_waiting = max(self.peak_waiting, self.waiting)
                try:
                    await slots.acquire()
                finally:
                    self.waiting -= 1
            else:
                await slots.acquire()
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def exit(self) -> None:
        """Give back the slot :meth:`enter` took."""
        self.in_flight -= 1
        if self._slots is not None:
            self._slots.release()

    @contextlib.contextmanager
    def place(self) -> Iterator[bool]:
        """A place (:meth:`admit`) held for the block, given back after it; ``False`` when none
        was left (the request gets 429 and holds nothing)."""
        admitted = self.admit()
        try:
            yield admitted
        finally:
            if admitted:
                self.leave()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """A slot (:meth:`enter`, in the queue while every slot is taken) held for the block."""
        await self.enter()
        try:
            yield
        finally:
            self.exit()

    async def idle(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for every admitted request to leave."""
        if self.admitted:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), max(grace, 0.0))
