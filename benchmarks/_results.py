"""What a benchmark writes with ``--json FILE``: its conditions, figures, targets and breakdown.

Every benchmark of the fixed cost of a call (``embedded.py``, ``dispatch.py``,
``batch_embedded.py``) and ``json_body.py`` writes one JSON object of this shape, so a test
(``tests/benchmarks/test_results.py``) can run each in a tiny size and compare the structure
with ``benchmarks/shapes/<name>.json``: a benchmark that stops measuring something fails it.

``targets`` holds each target as a ratio against its baseline measured in the same run, with
the direction it must go: one run's ratio (``dispatch.py``, ``batch_embedded.py``,
``json_body.py``; ``targets.py`` runs them again for an interval and a verdict), or the runs
summed up with their interval and verdict (``embedded.py``, ``_campaign.summed``). A single run
gives no verdict: whether a target is met is a question about the runs. ``conditions`` says what
the machine was doing (its load average before and after, so an idle and a loaded run can be
told apart).
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

__all__ = ["TINY", "Target", "conditions", "measured", "one_run", "target", "write"]

if TYPE_CHECKING:
    from _campaign import Machine

Target = dict[str, object]

_ONE = ["--processes", "1", "--values", "1", "--warmups", "1", "--quiet"]
"""pyperf in its least: one worker process a way, one warm-up and one value."""

TINY: dict[str, list[str]] = {
    "embedded": [
        "--runs",
        "2",
        "--rounds",
        "2",
        "--calls",
        "8",
        "--block",
        "4",
        "--breakdown-calls",
        "5",
    ],
    "dispatch": [*_ONE, "--loops", "1", "--calls", "12"],
    "batch_embedded": [*_ONE, "--loops", "1", "--runs", "4"],
    "json_body": [*_ONE, "--loops", "2", "--artifacts", "20"],
}
"""Each benchmark's tiny size: every part of it runs, briefly (seconds; the figures mean
nothing). The structure test (``tests/benchmarks/test_results.py``) and ``targets.py --quick``
both run it."""


def conditions(sizes: Mapping[str, object], load_before: float) -> dict[str, object]:
    """The machine and the run: CPUs, Python, load average before and after, the sizes."""
    return {
        "cpus": os.cpu_count() or 0,
        "python": platform.python_version(),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
        "sizes": dict(sizes),
    }


def measured(sizes: Mapping[str, object], machine: Machine) -> dict[str, object]:
    """The conditions of runs summed up: the machine's readings (``_campaign.Machine``)."""
    return {
        "cpus": os.cpu_count() or 0,
        "python": platform.python_version(),
        **machine.conditions(),
        "sizes": dict(sizes),
    }


def target(name: str, ratio: float, limit: float, direction: str, baseline: str) -> Target:
    """One run's ratio for a target: ``ratio`` must be ``direction`` (``">="`` or ``"<="``)
    ``limit``; no verdict (one run cannot give one)."""
    if direction not in (">=", "<="):
        raise ValueError(f"direction must be '>=' or '<=', got {direction!r}")
    return {
        "name": name,
        "ratio": round(ratio, 4),
        "limit": limit,
        "direction": direction,
        "baseline": baseline,
    }


def one_run(ratio: float, limit: float, direction: str) -> str:
    """How a single run's ratio is printed beside its target: the side it fell on, and where a
    verdict comes from."""
    side = "within" if (ratio >= limit if direction == ">=" else ratio <= limit) else "outside"
    return f"one run, {side} {direction} {limit}; a verdict: benchmarks/targets.py"


def write(
    path: str | None,
    benchmark: str,
    conditions: Mapping[str, object],
    figures: Mapping[str, object],
    targets: list[Target],
    breakdown: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The results as one object, written to ``path`` (``-``: standard output) when given."""
    results: dict[str, object] = {
        "benchmark": benchmark,
        "conditions": dict(conditions),
        "figures": dict(figures),
        "targets": targets,
        "breakdown": dict(breakdown) if breakdown is not None else None,
    }
    if path == "-":
        json.dump(results, sys.stdout, indent=2)
        print()
    elif path is not None:
        Path(path).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results
