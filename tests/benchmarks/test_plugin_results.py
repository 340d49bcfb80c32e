"""``benchmarks/plugin.py`` keeps measuring what it reports: every size and mode, both configs.

Runs the benchmark in its smoke size (one tiny code base, one run per figure: about a minute,
most of it mypy analysing harness cold) and checks the structure of the JSON it writes: each
mode present with plain and plugin times, ratios that were measured (finite, above zero) and
targets that say whether they are met. The times themselves are never compared: they belong to
the machine.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODES = ("cold", "warm", "dmypy first", "dmypy edit")


def _benchmark(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``benchmarks/plugin.py`` run with ``args`` from the repository's root."""
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "plugin.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.slow
def test_the_plugin_benchmark_reports_each_mode_by_size(tmp_path: Path) -> None:
    out = tmp_path / "plugin.json"
    done = _benchmark("--smoke", "--json", str(out))
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["benchmark"] == "plugin"
    conditions = results["conditions"]
    assert conditions["repeat"] == 1
    assert conditions["sizes"]["thinkers"] == [4]
    figures = results["figures"]
    assert sorted(figures) == ["4"]
    size = figures["4"]
    assert (size["thinkers"], size["tools"], size["modules"]) == (4, 32, 3)
    assert tuple(size["modes"]) == MODES
    for mode, summary in size["modes"].items():
        assert summary["repeats"] == 1, mode
        for kind in ("cpu", "wall"):
            part = summary[kind]
            assert len(part["plain_s"]) == len(part["plugin_s"]) == 1, (mode, kind)
            assert all(t > 0 for t in part["plain_s"] + part["plugin_s"]), (mode, kind)
            for ratio in (part["ratio_of_medians"], part["ratio_of_minimums"]):
                assert math.isfinite(ratio), (mode, kind)
                assert ratio > 0, (mode, kind)
            paired = part["paired_ratios"]
            assert paired["min"] <= paired["median"] <= paired["max"], (mode, kind)
            assert paired["interval_95"] is None, (mode, kind)  # one round: no interval
    targets = results["targets"]
    assert [t["name"].split(" at ")[0] for t in targets] == list(MODES)
    for target in targets:
        assert target["direction"] == "<="
        assert target["limit"] == 1.05
        assert target["verdict"] == "cannot tell: one round"  # a verdict needs an interval
        assert target["met"] is False
        assert "interval_95" in target
    printed = done.stdout
    for mode in MODES:
        assert f"  {mode}" in printed, mode


def test_the_interval_of_per_round_ratios_holds_their_geometric_mean() -> None:
    spec = importlib.util.spec_from_file_location(
        "plugin_benchmark", ROOT / "benchmarks" / "plugin.py"
    )
    assert spec is not None
    assert spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = benchmark  # its dataclasses look their module up
    try:
        spec.loader.exec_module(benchmark)
    finally:
        del sys.modules[spec.name]
    assert benchmark._interval([1.0]) is None
    middle, low, high = benchmark._interval([0.98, 1.02, 1.00, 1.04])
    assert low < middle < high
    assert middle == pytest.approx(math.exp(sum(map(math.log, [0.98, 1.02, 1.0, 1.04])) / 4))
    assert low < 0.99  # four rounds this spread: a wide interval
    assert high > 1.03
    same, low_same, high_same = benchmark._interval([1.01, 1.01, 1.01])
    assert low_same == pytest.approx(same) == pytest.approx(high_same)


def test_a_wrong_size_is_one_line_and_exit_2() -> None:
    done = _benchmark("--sizes", "forty", timeout=60)
    assert done.returncode == 2
    assert "not a list of sizes: 'forty', e.g. 40,160" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_by_default_it_measures_the_target_cold_over_enough_rounds(tmp_path: Path) -> None:
    out = tmp_path / "plugin.json"
    # --repeat 2 for time: the default's 120 rounds take an hour
    done = _benchmark("--sizes", "4", "--repeat", "2", "--json", str(out))
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["conditions"]["sizes"]["modes"] == ["cold"]
    assert list(results["figures"]["4"]["modes"]) == ["cold"]
    assert [t["name"].split(" at ")[0] for t in results["targets"]] == ["cold"]
    assert results["targets"][0]["interval_95"] is not None  # two rounds: an interval
    helped = _benchmark("--help", timeout=60)
    assert helped.returncode == 0, helped.stderr
    assert "rounds per figure (default 120)" in helped.stdout
