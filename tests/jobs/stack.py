"""Shared pieces of the jobs tests: a request, a catalog, and pacing that records its pauses."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import attrs

from harness.decision import Choice, DecisionRequest, Noul
from harness.jobs import Pacing
from harness.models import Catalog, CatalogEntry

__all__ = ["REQUEST", "RecordedPacing", "catalog_of", "eventually"]

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


@attrs.frozen
class RecordedPacing(Pacing):
    """Real pacing arithmetic, but :meth:`sleep` records each pause and returns at once."""

    slept: list[float] = attrs.field(factory=list, eq=False)

    async def sleep(self, seconds: float) -> None:
        """Record ``seconds``; do not wait."""
        self.slept.append(seconds)


async def eventually(condition: Callable[[], bool], *, within: float = 5.0) -> None:
    """Poll ``condition`` every 5 ms until it holds; fail after ``within`` seconds."""
    for _ in range(int(within / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"the condition did not hold within {within:g} s")
