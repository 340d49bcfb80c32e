"""The benchmarks of the fixed cost of a call keep measuring what they measure.

Each one runs here in a tiny size (seconds, not minutes) and writes its results as JSON; the
structure of what it wrote (every key, and the kind of every value) must be the one kept in
``benchmarks/shapes/<name>.json``, and its figures must be numbers that were measured (finite,
rates above zero). The times themselves are never compared: they belong to the machine. When a
benchmark gains or drops a figure on purpose, write its new shape with
``python tests/benchmarks/test_results.py <name> <results.json>``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHAPES = ROOT / "benchmarks" / "shapes"

sys.path.insert(0, str(ROOT / "benchmarks"))

from _results import TINY as SMOKE  # noqa: E402  # each benchmark's tiny size

SIZES: dict[str, dict[str, object]] = {
    "embedded": {"runs": 2, "rounds": 2, "calls": 8, "block": 4},
    "dispatch": {"calls": 12, "processes": 1, "values": 1, "loops": 1},
    "batch_embedded": {"runs": 4, "processes": 1, "values": 1, "loops": 1},
    "json_body": {"artifacts": 20, "processes": 1, "values": 1, "loops": 2},
}
"""What each benchmark must report it ran, so a size it ignored would show."""

BREAKDOWN = {name: ["--breakdown"] for name in ("embedded", "dispatch", "batch_embedded")}
"""The benchmarks that break their calls down by part (``json_body`` times two libraries)."""


def shape(value: object) -> object:
    """The structure of a JSON value: objects by key, lists by their items' shapes, and the kind
    of every leaf (``number``, ``string``, ``bool``, ``null``)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        return [shape(item) for item in value]
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def run_benchmark(name: str, out: Path) -> dict[str, object]:
    """Run ``benchmarks/<name>.py`` in its tiny size with a breakdown; its JSON results."""
    command = [sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), *SMOKE[name]]
    command += [*BREAKDOWN.get(name, []), "--json", str(out)]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    results: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return results


def _numbers(value: object) -> list[float]:
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [float(value)]
    return []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMOKE))
def test_a_benchmark_writes_the_results_it_always_wrote(name: str, tmp_path: Path) -> None:
    results = run_benchmark(name, tmp_path / f"{name}.json")
    expected = json.loads((SHAPES / f"{name}.json").read_text(encoding="utf-8"))
    assert shape(results) == expected, (
        f"benchmarks/{name}.py no longer writes the results it did: compare with "
        f"benchmarks/shapes/{name}.json"
    )
    assert results["benchmark"] == name
    conditions = results["conditions"]
    assert isinstance(conditions, dict)
    sizes = conditions["sizes"]
    assert isinstance(sizes, dict)
    assert {key: sizes[key] for key in SIZES[name]} == SIZES[name]
    figures = results["figures"]
    assert isinstance(figures, dict)
    assert all(math.isfinite(n) for n in _numbers(results))
    rates = [v for k, v in figures.items() if "_per_s" in k]
    assert rates, figures
    assert all(isinstance(r, int | float) and r > 0 for r in rates), figures
    targets = results["targets"]
    assert isinstance(targets, list)
    assert targets
    for target in targets:
        assert isinstance(target, dict)
        assert target["direction"] in (">=", "<=")
        assert isinstance(target["limit"], int | float)
        if "runs" in target:  # runs summed up: a verdict from their interval
            assert target["runs"] == sizes["runs"]
            assert target["low"] <= target["median"] <= target["high"]
            assert target["verdict"] == "cannot tell: too few runs (< 6)"
        else:  # one run: its ratio, never a verdict
            assert isinstance(target["ratio"], int | float)
            assert "met" not in target
            assert "verdict" not in target
    breakdown = results["breakdown"]
    if name in BREAKDOWN:
        assert isinstance(breakdown, dict)
        assert sum(_numbers(breakdown)) > 0  # the profile saw the calls


def test_the_shape_of_results_names_every_key_and_kind() -> None:
    results = {"figures": {"rate_per_s": 3.5, "name": "x"}, "targets": [{"low": True}], "b": None}
    assert shape(results) == {
        "b": "null",
        "figures": {"name": "string", "rate_per_s": "number"},
        "targets": [{"low": "bool"}],
    }
    assert shape({"figures": {}}) != shape({"figures": {"rate_per_s": 1}})


if __name__ == "__main__":  # write a benchmark's shape from a results file it wrote
    benchmark, source = sys.argv[1], Path(sys.argv[2])
    written = shape(json.loads(source.read_text(encoding="utf-8")))
    (SHAPES / f"{benchmark}.json").write_text(json.dumps(written, indent=2) + "\n")
