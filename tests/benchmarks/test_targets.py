"""``benchmarks/_campaign.py`` and ``benchmarks/targets.py`` sum up runs as they say."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "targets.py"

sys.path.insert(0, str(SCRIPT.parent))

import _campaign  # noqa: E402  # the benchmarks' own helper, from their folder
import targets  # noqa: E402  # the benchmark script, from its folder


def test_the_median_interval_is_the_pair_of_runs_the_binomial_picks() -> None:
    values = [0.9, 0.1, 0.8, 0.2, 0.7, 0.3, 0.6, 0.4, 0.5]  # nine runs
    assert _campaign.median_interval(values) == (0.2, 0.8)  # the 2nd and the 8th of nine
    assert _campaign.coverage(9) == pytest.approx(1 - 2 * 10 / 512)  # 96.1 %
    assert _campaign.median_interval([0.3, 0.1, 0.2, 0.6, 0.5, 0.4]) == (0.1, 0.6)  # 96.9 %
    assert _campaign.coverage(6) == pytest.approx(1 - 2 / 64)
    assert _campaign.median_interval([0.1, 0.2, 0.3, 0.4, 0.5]) is None  # 5 runs: < 95 %
    assert _campaign.coverage(5) is None
    twenty = [i / 20 for i in range(20)]
    low, high = _campaign.median_interval(twenty) or (0.0, 0.0)
    assert (low, high) == (twenty[5], twenty[14])  # the 6th and the 15th of twenty
    assert (_campaign.coverage(20) or 0) >= 0.95


@pytest.mark.parametrize(
    ("interval", "limit", "direction", "expected"),
    [
        ((0.10, 0.18), 0.2, "<=", "met"),
        ((0.21, 0.30), 0.2, "<=", "missed"),
        ((0.15, 0.25), 0.2, "<=", "cannot tell"),
        ((0.96, 1.10), 0.95, ">=", "met"),
        ((0.70, 0.90), 0.95, ">=", "missed"),
        ((0.90, 1.00), 0.95, ">=", "cannot tell"),
        (None, 0.95, ">=", "cannot tell: too few runs (< 6)"),
    ],
)
def test_a_verdict_needs_the_whole_interval_on_one_side(
    interval: tuple[float, float] | None, limit: float, direction: str, expected: str
) -> None:
    assert _campaign.verdict(interval, limit, direction) == expected


def test_a_loaded_machine_never_gives_met_but_still_gives_missed() -> None:
    assert _campaign.verdict((0.10, 0.18), 0.2, "<=", loaded=True) == "cannot tell: loaded"
    assert _campaign.verdict((0.96, 1.10), 0.95, ">=", loaded=True) == "cannot tell: loaded"
    assert _campaign.verdict((0.21, 0.30), 0.2, "<=", loaded=True) == "missed"


def _machine(before: float, after: float, seconds: float) -> _campaign.Machine:
    machine = _campaign.Machine(busy=1.0)
    machine.before, machine.after, machine.seconds = before, after, seconds
    return machine


def test_the_machine_is_idle_only_when_the_rest_of_it_was() -> None:
    alone = _machine(0.3, 0.95, 120.0)
    assert alone.own == pytest.approx(1 - math.exp(-2), rel=1e-9)  # 0.865
    assert alone.others_after == pytest.approx(0.95 - alone.own)
    assert not alone.loaded  # a run of its own drove the load average up, nothing else
    assert _machine(0.3, 2.2, 120.0).loaded  # a second process beside it for the whole run
    busy_before = _machine(1.4, 0.95, 120.0)
    assert busy_before.loaded
    assert "loaded: no figure is 'met'" in busy_before.line()


def test_a_load_is_restarted_when_it_ends_and_stopped_with_its_children() -> None:
    ends = targets.Load(f"{sys.executable} -c 'import time; time.sleep(0.2)'")
    ends.keep()
    assert ends.process is not None
    ends.process.wait(timeout=30)
    ends.started -= targets.LOAD_SHORTEST  # as if it had run its while
    ends.keep()  # it ended: started again
    assert ends.starts == 2
    ends.stop()
    lasting = targets.Load(f"{sys.executable} -c 'import time; time.sleep(60)'")
    lasting.keep()
    lasting.keep()  # running: not started twice
    assert lasting.starts == 1
    lasting.stop()
    assert lasting.process is not None
    assert lasting.process.returncode is not None  # stopped, not left behind


@pytest.mark.slow
def test_a_quick_campaign_sums_up_every_target_of_the_benchmarks_run(tmp_path: Path) -> None:
    out = tmp_path / "summary.json"
    command = [sys.executable, str(SCRIPT), "--quick", "--runs", "2", "--only", "json_body"]
    command += ["--tree", str(ROOT), "--json", str(out)]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(out.read_text(encoding="utf-8"))
    rows = found["targets"]
    assert {row["target"] for row in rows} == {
        "JSON encode + decode: harness (orjson) / the standard library's speed"
    }
    for row in rows:
        assert row["tree"] == str(ROOT)
        assert row["benchmark"] == "json_body"
        assert row["runs"] == 2
        assert len(row["ratios"]) == 2
        assert row["low"] <= row["median"] <= row["high"]
        assert row["interval_low"] is None  # two runs give no interval
        assert row["verdict"] == "cannot tell: too few runs (< 6)"
    assert isinstance(found["loaded"], bool)
    assert "run 2 of 2 done" in done.stdout


def test_an_unknown_benchmark_is_named_with_the_choices() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "embeded"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "unknown benchmark 'embeded': choose among dispatch, batch_embedded, json_body (--only)"
    ]


def test_a_load_that_ends_at_once_stops_the_campaign_with_its_exit_code() -> None:
    broken = targets.Load(f"{sys.executable} -c 'raise SystemExit(4)'")
    broken.keep()
    assert broken.process is not None
    broken.process.wait(timeout=30)
    with pytest.raises(SystemExit, match=r"the load command ended .* \(exit 4\): run it by hand"):
        broken.keep()
