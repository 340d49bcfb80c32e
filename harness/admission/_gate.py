"""A gate: a FIFO-fair bound on concurrent calls of one catalog entry (asyncio)."""

from __future__ import annotations

import asyncio
from collections import deque

from harness.errors import HarnessError

__all__ = ["AdmissionError", "Gate"]


class AdmissionError(HarnessError, ValueError):
    """A demand that admission can never serve, or a gate/bucket used against its entry's bound."""


class Gate:
    """At most ``capacity`` permits out at once; waiters are served first come, first served.

    A released permit is handed straight to the oldest waiter, so a newcomer never overtakes the
    line. A waiter cancelled while waiting holds nothing; one cancelled just as a permit was
    handed to it passes that permit on.
    """

    def __init__(self, name: str, capacity: int) -> None:
        if capacity < 1:
            raise AdmissionError(f"gate {name!r}: capacity must be >= 1, not {capacity}")
        self._name = name
        self._capacity = capacity
        self._in_use = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def name(self) -> str:
        """The gate's name (the catalog entry id)."""
        return self._name

    @property
    def capacity(self) -> int:
        """The most permits out at once."""
        return self._capacity

    @property
    def in_use(self) -> int:
        """Permits out now."""
        return self._in_use

    @property
    def bound(self) -> int:
        """The most permits out at once now: :attr:`capacity` here; a subclass may lower it
        (:class:`~harness.admission.AdaptiveAdmission`'s gate follows its adaptive limit)."""
        return self._capacity

    @property
    def available(self) -> int:
        """Permits that could be taken now without waiting."""
        return 0 if self._waiters else max(0, self.bound - self._in_use)

    @property
    def waiting(self) -> int:
        """Waiters in line."""
        return len(self._waiters)

    def take_now(self) -> bool:
        """Take one permit if one is free and nobody waits (the caller must :meth:`release`
        it); ``False``, holding nothing, when :meth:`acquire` would wait in line."""
        if not self._waiters and self._in_use < self.bound:
            self._in_use += 1
            return True
        return False

    async def acquire(self) -> None:
        """Take one permit, waiting in line for it; the caller must :meth:`release` it."""
        if not self._waiters and self._in_use < self.bound:
            self._in_use += 1
            return
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(ticket)
        try:
            await ticket
        except asyncio.CancelledError:
            if ticket.done() and not ticket.cancelled():
                self.release()  # handed a permit as we were cancelled: pass it on
            elif ticket in self._waiters:  # a release may already have dropped it
                self._waiters.remove(ticket)
            raise

    def release(self) -> None:
        """Return one permit: to the oldest waiter if any, else to the gate."""
        if self._in_use <= 0:
            raise AdmissionError(f"gate {self._name!r}: released more permits than were taken")
        while self._waiters:
            ticket = self._waiters.popleft()
            if not ticket.done():
                ticket.set_result(None)  # the permit changes hands; in_use stays
                return
        self._in_use -= 1

    def __repr__(self) -> str:
        return (
            f"Gate({self._name!r}, capacity={self._capacity}, in_use={self._in_use}, "
            f"waiting={len(self._waiters)})"
        )
