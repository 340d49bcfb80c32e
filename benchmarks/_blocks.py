"""Rates compared in interleaved blocks: how the throughput benchmarks time their ways.

The model's own speed on this kind of machine drifts by a third within a minute (the other
tenants of the host, the clock), so two ways timed one after the other in long passes compare
two different machines: one process of round 5 gave pass ratios from 0.58 to 1.14 for the same
build. Here each way runs ``block`` calls at a time, the ways in rotating order, ``blocks`` times
over: drift reaches every way nearly alike. A way's rate is its calls over its summed time, a
ratio is one rate over the baseline's (the first way), and its 95 % interval resamples the
rounds of blocks (a fixed seed), so it says how well this run pins the ratio down; the next
run, on a fresh process and its memory layout, moves more than that (docs/performance.md).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence

import attrs

__all__ = ["Blocks", "Way", "interleaved"]

Way = Callable[[int], Awaitable[None] | None]
"""One way of making ``n`` calls (a coroutine function, or a plain one for a plain loop)."""


@attrs.frozen
class Blocks:
    """Each way's block times, in the order the ways were given (the first is the baseline)."""

    names: tuple[str, ...]
    block: int
    times: tuple[tuple[float, ...], ...]  # times[way][round]

    def rate(self, way: int) -> float:
        """Calls a second over all of the way's blocks."""
        return self.block * len(self.times[way]) / sum(self.times[way])

    def ratio(self, way: int) -> float:
        """The way's rate over the baseline's."""
        return sum(self.times[0]) / sum(self.times[way])

    def block_ratios(self, way: int) -> list[float]:
        """Each round's own ratio (the baseline's block time over the way's)."""
        return [base / own for base, own in zip(self.times[0], self.times[way], strict=True)]

    def interval(self, way: int, resamples: int = 1000) -> tuple[float, float]:
        """A 95 % interval of :meth:`ratio`: the rounds resampled with replacement."""
        pick = random.Random(0).choices
        base, own = self.times[0], self.times[way]
        indices = range(len(base))
        ratios = []
        for _ in range(resamples):
            chosen = pick(indices, k=len(base))
            ratios.append(sum(base[i] for i in chosen) / sum(own[i] for i in chosen))
        ratios.sort()
        return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]

    def figures(self, way: int, prefix: str) -> dict[str, float]:
        """The way's figures for a benchmark's JSON: its ratio, interval and block ratios."""
        low, high = self.interval(way)
        each = self.block_ratios(way)
        return {
            f"{prefix}_ratio": round(self.ratio(way), 4),
            f"{prefix}_ratio_interval_low": round(low, 4),
            f"{prefix}_ratio_interval_high": round(high, 4),
            f"{prefix}_block_ratio_median": round(statistics.median(each), 4),
            f"{prefix}_block_ratio_low": round(min(each), 4),
            f"{prefix}_block_ratio_high": round(max(each), 4),
        }

    def describe(self, way: int) -> str:
        """One line: the ratio, its interval and the spread of the blocks' own ratios."""
        low, high = self.interval(way)
        each = self.block_ratios(way)
        return (
            f"{self.ratio(way):.3f} (95 % interval {low:.3f}-{high:.3f}; {len(each)} rounds of "
            f"{self.block} calls, each round's own ratio {min(each):.2f}-{max(each):.2f}, "
            f"median {statistics.median(each):.2f})"
        )


async def interleaved(ways: Sequence[tuple[str, Way]], calls: int, block: int) -> Blocks:
    """Time ``calls`` calls of each way in blocks of ``block``, the ways in rotating order; the
    first way is the baseline. ``calls`` is rounded down to whole blocks (one at least)."""
    if block < 1:
        raise ValueError("block must be >= 1")
    rounds = max(1, calls // block)
    times: list[list[float]] = [[] for _ in ways]
    for round_ in range(rounds):
        # the order rotates: no way always follows the same other (whose leftovers in the
        # caches and the allocator it would inherit)
        for offset in range(len(ways)):
            index = (round_ + offset) % len(ways)
            started = time.perf_counter()
            done = ways[index][1](block)
            if done is not None:
                await done
            times[index].append(time.perf_counter() - started)
    return Blocks(tuple(name for name, _ in ways), block, tuple(tuple(t) for t in times))
