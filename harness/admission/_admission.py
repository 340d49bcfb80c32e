"""Admission: what a call of a catalog entry must take before it goes on the wire.

A concurrency-bounded entry (``max_concurrent``) demands one permit on its gate, held for the
whole call; a window-bounded entry (``tpm``) demands its priced input tokens on its bucket, spent
once taken. :class:`Admission` keeps one gate or bucket per entry id, so every call of an entry
meets the same one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Final, Literal, Protocol, TypeVar

import attrs

from harness.admission._bucket import TokenBucket
from harness.admission._gate import AdmissionError, Gate
from harness.catalog import CatalogEntry, Reservation

__all__ = ["Admission", "Demand", "Permit"]


class Permit:
    """What a call holds once admitted; :meth:`release` (idempotent) returns a gate's permit.

    Use it as an async context manager to release it on every path. A bucket's tokens are spent
    when taken, so releasing a bucket permit returns nothing to the bucket.
    """

    __slots__ = ("_gate", "_released", "amount", "kind", "name")

    def __init__(
        self, kind: Literal["gate", "bucket"], name: str, amount: int, gate: Gate | None
    ) -> None:
        self.kind: Literal["gate", "bucket"] = kind
        self.name = name
        self.amount = amount
        self._gate = gate
        self._released = False

    @property
    def released(self) -> bool:
        """Whether :meth:`release` was called."""
        return self._released

    def release(self) -> None:
        """Give back what the permit holds; a second call does nothing."""
        if self._released:
            return
        self._released = True
        if self._gate is not None:
            self._gate.release()

    async def __aenter__(self) -> Permit:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        state = "released" if self._released else "held"
        return f"Permit({self.kind}, {self.name!r}, amount={self.amount}, {state})"


@attrs.frozen
class Demand:
    """What a call will take: ``amount`` permits on gate ``name``, or tokens on bucket ``name``."""

    kind: Literal["gate", "bucket"]
    name: str
    amount: int
    _gate: Gate | None = attrs.field(default=None, repr=False, eq=False)
    _bucket: TokenBucket | None = attrs.field(default=None, repr=False, eq=False)

    def would_wait(self) -> bool:
        """Whether :meth:`acquire` would wait if called now (for an "admission wait" event)."""
        if self._gate is not None:
            return self._gate.available < 1
        assert self._bucket is not None
        return self._bucket.would_wait(self.amount)

    def take_now(self) -> Permit | None:
        """The whole demand taken at once when it is there and nobody waits for it (a gate's
        free permit, a bucket's tokens); ``None``, holding nothing, when :meth:`acquire` would
        wait in line (or refuse the demand)."""
        gate = self._gate
        if gate is not None:
            return Permit(self.kind, self.name, self.amount, gate) if gate.take_now() else None
        bucket = self._bucket
        if bucket is not None and bucket.take_now(self.amount):
            return Permit(self.kind, self.name, self.amount, None)
        return None

    def take_gate_now(self) -> Gate | None:
        """:meth:`take_now` for a gate's demand, without a permit: the gate itself, one permit
        taken from it, when one is free and nobody waits (the caller gives it back with the
        gate's own ``release``, once); ``None``, holding nothing, for any other demand or when
        the gate's permits are out (then :meth:`take_now` answers)."""
        gate = self._gate
        if gate is not None and gate.take_now():
            return gate
        return None

    async def acquire(self) -> Permit:
        """Wait in line and take the whole demand; a cancelled wait holds nothing."""
        if self._gate is not None:
            await self._gate.acquire()
        else:
            assert self._bucket is not None
            await self._bucket.acquire(self.amount)
        return Permit(self.kind, self.name, self.amount, self._gate)


class Admission:
    """The gates and buckets of a process, one per catalog entry id.

    ``clock`` and ``sleep`` reach every bucket (inject fakes to run windows in no real time).
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._gates: dict[str, Gate] = {}
        self._buckets: dict[str, TokenBucket] = {}
        # A gate's demand, by entry id, with the entry it was made for: the same for every call
        # of that entry (a demand holds nothing), so made once; another entry object under the
        # same id is checked against its gate again.
        self._gate_demands: dict[str, tuple[CatalogEntry, Demand]] = {}

    def gate_for(self, entry: CatalogEntry) -> Gate:
        """The gate of a concurrency-bounded entry: named after it, capacity ``max_concurrent``."""
        return _one_per_entry(self._gates, entry, "max_concurrent", lambda cap: Gate(entry.id, cap))

    def bucket_for(self, entry: CatalogEntry) -> TokenBucket:
        """The bucket of a window-bounded entry: named after it, capacity ``tpm``, rpm if set."""

        def opened(capacity: int) -> TokenBucket:
            return TokenBucket(
                entry.id,
                capacity,
                requests_per_minute=entry.rpm,
                clock=self._clock,
                sleep=self._sleep,
            )

        return _one_per_entry(self._buckets, entry, "tpm", opened)

    def demand(self, entry: CatalogEntry, reservation: Reservation) -> Demand:
        """What a call of ``entry`` priced at ``reservation`` must take before it is sent."""
        made = self._gate_demands.get(entry.id)
        if made is not None and made[0] is entry:
            return made[1]
        if entry.max_concurrent is not None:
            demand = Demand("gate", entry.id, 1, gate=self.gate_for(entry))
            self._gate_demands[entry.id] = (entry, demand)
            return demand
        bucket = self.bucket_for(entry)
        return Demand("bucket", entry.id, fitting(entry, reservation), bucket=bucket)


class _Bounded(Protocol):
    @property
    def capacity(self) -> int: ...


_B = TypeVar("_B", bound=_Bounded)

_BOUNDS: Final[Mapping[str, tuple[str, str]]] = {
    "max_concurrent": ("max_concurrent", "gate"),
    "tpm": ("a quota window (tpm)", "bucket"),
}
"""Each bound of a catalog entry: how messages name it, and what admission opens for it."""


def _one_per_entry(
    opened: dict[str, _B],
    entry: CatalogEntry,
    bound: Literal["max_concurrent", "tpm"],
    open_one: Callable[[int], _B],
) -> _B:
    """The gate or bucket ``opened`` keeps for ``entry`` (opened with its ``bound`` the first
    time); refused when the entry has the other bound, or when its bound changed since."""
    capacity: int | None = getattr(entry, bound)
    said, kind = _BOUNDS[bound]
    if capacity is None:
        other_said, other_kind = next(v for k, v in _BOUNDS.items() if k != bound)
        raise AdmissionError(
            f"catalog entry {entry.id!r} is bounded by {other_said}, not by {said}: it has a "
            f"{other_kind}, not a {kind}"
        )
    found = opened.get(entry.id)
    if found is None:
        found = opened[entry.id] = open_one(capacity)
    elif found.capacity != capacity:
        raise AdmissionError(
            f"catalog entry {entry.id!r} now says {bound} = {capacity} but its {kind} was "
            f"opened with {found.capacity}: use a fresh Admission"
        )
    return found


def fitting(entry: CatalogEntry, reservation: Reservation) -> int:
    """The tokens a call of the window-bounded ``entry`` reserves, refused when they exceed its
    ``tpm`` (such a call could never be admitted)."""
    amount = reservation.total
    if entry.tpm is not None and amount > entry.tpm:
        raise AdmissionError(
            f"a call of catalog entry {entry.id!r} reserves {amount} tokens, more than its "
            f"tpm of {entry.tpm}, so it could never be admitted: shorten the request or "
            "raise the entry's tpm"
        )
    return amount
