"""Runs of a benchmark summed up: an interval over the runs, a verdict from it, and whether the
machine was idle.

One run of a benchmark lands somewhere, the next elsewhere: the model's own speed and how
harness's path and the model share the CPU's caches move with the machine's load and with each
process's memory layout. Whether a target is met is a question about the runs, so every
reference benchmark runs its measurement in several fresh processes and sums them up here:

* the median of the runs' ratios and a 95 % interval of that median that assumes nothing of how
  the ratios spread (two of the sorted runs, chosen by the binomial distribution: with 10 runs
  the 2nd and the 9th, 97.9 %); fewer than :data:`LEAST_RUNS` runs give none;
* the verdict: ``met`` only when the interval's worse end meets the target, ``missed`` when its
  better end does not, ``cannot tell`` otherwise; a loaded machine never gives ``met``;
* whether the machine was idle: the load average (one minute) below :data:`IDLE` before the
  runs and after them, the benchmark's own processes taken out of the reading after. A process
  kept busy for ``t`` seconds adds ``1 - exp(-t / 60)`` to the one-minute load average (the
  kernel's moving average), so ``after`` less that, times the cores the benchmark keeps busy, is
  what the rest of the machine did. Without that correction every idle run of a minute or more
  would read as loaded; with it, a second process running beside shows.

Used by ``embedded.py`` (its own runs), ``targets.py`` (the pyperf benchmarks run again),
``fitted.py`` and ``plugin.py``.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Sequence

__all__ = [
    "IDLE",
    "LEAST_RUNS",
    "Machine",
    "coverage",
    "median_interval",
    "row_text",
    "spread",
    "summed",
    "verdict",
]

IDLE = 1.0
"""The load average at or above which a run is marked ``loaded`` (before, or after less the
benchmark's own processes)."""

LEAST_RUNS = 6
"""The fewest runs whose median gets an interval (below, the outermost runs cover < 95 %)."""


def _rank(n: int) -> tuple[int, float]:
    """The largest k with P(Binomial(n, 1/2) < k) <= 0.025, and that probability."""
    k, tail = 0, 0.0
    while tail + math.comb(n, k) / 2**n <= 0.025:
        tail += math.comb(n, k) / 2**n
        k += 1
    return k, tail


def median_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """A distribution-free interval of at least 95 % for the median of ``values``: the k-th
    smallest and the k-th largest (:func:`_rank`). None below :data:`LEAST_RUNS` values."""
    n = len(values)
    if n < LEAST_RUNS:
        return None
    ordered = sorted(values)
    k = _rank(n)[0]
    return ordered[k - 1], ordered[n - k]


def coverage(n: int) -> float | None:
    """What :func:`median_interval` covers for ``n`` runs (None below :data:`LEAST_RUNS`)."""
    return None if n < LEAST_RUNS else 1 - 2 * _rank(n)[1]


def _meets(value: float, limit: float, direction: str) -> bool:
    return value >= limit if direction == ">=" else value <= limit


def verdict(
    interval: tuple[float, float] | None, limit: float, direction: str, loaded: bool = False
) -> str:
    """``met``, ``missed`` or ``cannot tell`` for an interval against ``direction`` ``limit``;
    never ``met`` on a loaded machine."""
    if direction not in (">=", "<="):
        raise ValueError(f"direction must be '>=' or '<=', got {direction!r}")
    if interval is None:
        return f"cannot tell: too few runs (< {LEAST_RUNS})"
    low, high = interval
    worse, better = (low, high) if direction == ">=" else (high, low)
    if _meets(worse, limit, direction):
        return "cannot tell: loaded" if loaded else "met"
    if not _meets(better, limit, direction):
        return "missed"
    return "cannot tell"


class Machine:
    """The load average before a benchmark's runs and after them, and whether the machine was
    idle, with the benchmark's own busy processes (``busy``: how many cores it keeps busy while
    it runs) taken out of the reading after."""

    def __init__(self, busy: float = 1.0) -> None:
        self.busy = busy
        self.before = os.getloadavg()[0]
        self.started = time.monotonic()
        self.after: float | None = None
        self.seconds = 0.0

    def stop(self) -> None:
        """Read the load average after the runs."""
        self.after = os.getloadavg()[0]
        self.seconds = time.monotonic() - self.started

    @property
    def own(self) -> float:
        """What the benchmark's own processes added to the one-minute load average."""
        return self.busy * (1 - math.exp(-self.seconds / 60))

    @property
    def others_after(self) -> float:
        """The load average after the runs, less the benchmark's own processes."""
        if self.after is None:
            raise RuntimeError("Machine.stop() reads the load average after the runs")
        return max(0.0, self.after - self.own)

    @property
    def loaded(self) -> bool:
        """Whether something else ran: a load average of :data:`IDLE` or more before, or after
        less the benchmark's own processes."""
        return self.before >= IDLE or self.others_after >= IDLE

    def line(self) -> str:
        """The readings in one line, with the verdict on the machine."""
        state = "loaded: no figure is 'met'" if self.loaded else "idle"
        return (
            f"load average {self.before:.2f} before, {self.after:.2f} after "
            f"({self.others_after:.2f} without this benchmark's own {self.busy:g} busy "
            f"process(es) over {self.seconds:.0f} s; {os.cpu_count()} CPUs): {state}"
        )

    def conditions(self) -> dict[str, object]:
        """The readings as a results file keeps them."""
        return {
            "load_average_before": round(self.before, 2),
            "load_average_after": round(self.after or 0.0, 2),
            "load_average_after_others": round(self.others_after, 2),
            "seconds": round(self.seconds, 1),
            "loaded": self.loaded,
        }


def spread(name: str, ratios: Sequence[float]) -> dict[str, object]:
    """A ratio's runs summed up, with no target: median, range, interval, coverage."""
    interval = median_interval(ratios)
    covered = coverage(len(ratios))
    return {
        "name": name,
        "runs": len(ratios),
        "median": round(statistics.median(ratios), 4),
        "low": round(min(ratios), 4),
        "high": round(max(ratios), 4),
        "interval_low": None if interval is None else round(interval[0], 4),
        "interval_high": None if interval is None else round(interval[1], 4),
        "coverage": None if covered is None else round(covered, 4),
        "ratios": [round(r, 4) for r in ratios],
    }


def summed(
    name: str, ratios: Sequence[float], limit: float, direction: str, loaded: bool
) -> dict[str, object]:
    """One target's runs summed up (:func:`spread`) with its limit and the verdict."""
    interval = median_interval(ratios)
    found = spread(name, ratios)
    del found["name"]
    return {
        "target": name,
        "direction": direction,
        "limit": limit,
        **found,
        "verdict": verdict(interval, limit, direction, loaded),
    }


def row_text(row: dict[str, object], width: int = 46) -> str:
    """A summed-up target in one line: median, interval and coverage (or none), verdict."""
    median, low, high = row["median"], row["interval_low"], row["interval_high"]
    assert isinstance(median, float | int)
    if low is None or high is None:
        interval = "no interval"
    else:
        assert isinstance(low, float | int)
        assert isinstance(high, float | int)
        covered = row["coverage"]
        assert isinstance(covered, float | int)
        interval = f"[{low:.3f}, {high:.3f}] ({covered * 100:.1f} %)"
    return (
        f"{row['target']:<{width}} {median:.3f} {interval} over {row['runs']} runs "
        f"(target {row['direction']} {row['limit']}): {row['verdict']}"
    )
