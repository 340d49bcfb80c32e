"""Adaptive concurrency: an entry's effective cap drops on 429s and recovers on successes.

:class:`AdaptiveLimit` is additive increase, multiplicative decrease (AIMD), as TCP does it: a
throttle halves the limit (at most once per ``cooldown`` seconds, so one burst of 429s from the
same overload counts once), each success adds ``1 / limit`` (about one per limit's worth of
successes), never below 1 nor above the entry's ``max_concurrent`` (nor above the ceiling a
throttle taught, see :class:`AdaptiveLimit`). :class:`AdaptiveAdmission`
gives an ``adaptive = true`` entry a gate that admits no more than the limit's floor; it is told
of throttles and successes by :meth:`AdaptiveAdmission.throttled` and
:meth:`AdaptiveAdmission.succeeded` (``harness batch`` does that from its clients' answers).
The server's ``Retry-After`` is honoured by the dispatcher's pacing, as for any 429.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from harness.admission._admission import Admission, Demand
from harness.admission._gate import Gate
from harness.catalog import CatalogEntry, Reservation

__all__ = ["AdaptiveAdmission", "AdaptiveLimit", "LimitedGate"]


class AdaptiveLimit:
    """An AIMD limit between 1 and ``ceiling``, starting at ``ceiling``.

    A throttle that came with ``in_flight`` calls out also teaches a ceiling of ``in_flight - 1``
    (the server refused the next one): growth stops there, so the limit settles just under what
    the server takes instead of probing it again on every window. The learned ceiling rises by
    one after ``probe_after`` seconds without a throttle, so a server that got faster is found.
    """

    def __init__(
        self,
        ceiling: int,
        *,
        decrease: float = 0.5,
        cooldown: float = 0.5,
        probe_after: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ceiling = ceiling
        self.value = float(ceiling)
        self.learned = float(ceiling)
        self._decrease = decrease
        self._cooldown = cooldown
        self._probe_after = probe_after
        self._clock = clock
        self._last_cut = -float("inf")

    @property
    def allowed(self) -> int:
        """Calls that may be in flight now."""
        return max(1, int(self.value))

    def throttled(self, in_flight: int | None = None) -> None:
        """A 429 with ``in_flight`` calls out: cut the limit (once per cooldown) and learn."""
        now = self._clock()
        if in_flight is not None:
            self.learned = max(1.0, min(self.learned, float(in_flight - 1)))
        if now - self._last_cut < self._cooldown:
            self.value = min(self.value, self.learned)
            return
        self._last_cut = now
        self.value = max(1.0, min(self.value * self._decrease, self.learned))

    def succeeded(self) -> None:
        """A success: grow by one over a limit's worth of successes, up to what was learned."""
        if self._clock() - self._last_cut > self._probe_after:
            self.learned = min(float(self.ceiling), self.learned + 1.0)
            self._last_cut = self._clock()
        self.value = min(self.learned, self.value + 1.0 / self.value)


class LimitedGate(Gate):
    """A gate whose permits out at once are bounded by an :class:`AdaptiveLimit` as well."""

    def __init__(self, name: str, capacity: int, limit: AdaptiveLimit) -> None:
        super().__init__(name, capacity)
        self.limit = limit

    @property
    def bound(self) -> int:
        """The most permits out at once now: the adaptive limit's."""
        return self.limit.allowed

    def release(self) -> None:
        """Return one permit: to the oldest waiter while the limit allows, else to the gate."""
        if self._waiters and self._in_use > self.bound:
            self._in_use -= 1  # over the limit (it fell): the permit goes back, not on
            return
        super().release()

    def widen(self) -> None:
        """Admit waiters the limit now allows (after it grew)."""
        while self._waiters and self._in_use < self.bound:
            ticket = self._waiters.popleft()
            if not ticket.done():
                self._in_use += 1
                ticket.set_result(None)


class AdaptiveAdmission(Admission):
    """An :class:`Admission` whose ``adaptive = true`` entries get a :class:`LimitedGate`."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(clock=clock, sleep=sleep)
        self.limits: dict[str, AdaptiveLimit] = {}

    def limit_for(self, entry: CatalogEntry) -> AdaptiveLimit | None:
        """The adaptive limit of ``entry`` (None unless it declares ``adaptive = true``)."""
        if not entry.adaptive or entry.max_concurrent is None:
            return None
        limit = self.limits.get(entry.id)
        if limit is None:
            limit = self.limits[entry.id] = AdaptiveLimit(entry.max_concurrent)
        return limit

    def gate_for(self, entry: CatalogEntry) -> Gate:
        """The entry's gate: limited by its adaptive limit when it has one."""
        limit = self.limit_for(entry)
        if limit is None or entry.max_concurrent is None:
            return super().gate_for(entry)
        gate = self._gates.get(entry.id)
        if gate is None:
            gate = self._gates[entry.id] = LimitedGate(entry.id, entry.max_concurrent, limit)
        return gate

    def demand(self, entry: CatalogEntry, reservation: Reservation) -> Demand:
        """As :meth:`Admission.demand`, through the limited gate for adaptive entries."""
        if self.limit_for(entry) is not None:
            return Demand("gate", entry.id, 1, gate=self.gate_for(entry))
        return super().demand(entry, reservation)

    async def throttled(self, entry: CatalogEntry) -> None:
        """``entry`` answered 429 (with its gate's calls in flight, the refused one included)."""
        limit = self.limit_for(entry)
        if limit is not None:
            gate = self._gates.get(entry.id)
            limit.throttled(gate.in_use if gate is not None else None)

    async def succeeded(self, entry: CatalogEntry) -> None:
        """``entry`` answered."""
        limit = self.limit_for(entry)
        if limit is not None:
            limit.succeeded()
            gate = self._gates.get(entry.id)
            if isinstance(gate, LimitedGate):
                gate.widen()
