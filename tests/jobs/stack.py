"""Shared pieces of the jobs tests: a request, a catalog, and pacing that records its pauses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import attrs

from harness.catalog import Catalog, CatalogEntry
from harness.decision import Choice, DecisionRequest, Noul
from harness.jobs import Pacing

__all__ = ["REQUEST", "FakeClock", "RecordedPacing", "catalog_of", "eventually"]

REQUEST = DecisionRequest(
    "The invoice is overdue by ten days.",
    {
        "act": Choice("What now?", {"remind": "send a reminder", "wait": None}),
        "late": Noul("Late?"),
    },
)


def catalog_of(*entries: CatalogEntry) -> Catalog:
    """A catalog of ``entries``, the first pinned as the decision seat."""
    return Catalog(entries, {"decision": entries[0].id})


class FakeClock:
    """A monotonic clock that only moves when told (``Dispatcher(clock=...)``)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.now += seconds


@attrs.frozen
class RecordedPacing(Pacing):
    """Real pacing arithmetic, but :meth:`sleep` records each pause and returns at once,
    moving ``clock`` (when given) forward by the pause as a real sleep would."""

    slept: list[float] = attrs.field(factory=list, eq=False)
    clock: FakeClock | None = attrs.field(default=None, eq=False)

    async def sleep(self, seconds: float) -> None:
        """Record ``seconds``; do not wait."""
        self.slept.append(seconds)
        if self.clock is not None:
            self.clock.advance(seconds)


async def eventually(condition: Callable[[], bool], *, within: float = 5.0) -> None:
    """Poll ``condition`` every 5 ms until it holds; fail after ``within`` seconds."""
    for _ in range(int(within / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"the condition did not hold within {within:g} s")
