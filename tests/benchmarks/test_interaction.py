"""``benchmarks/interaction.py`` measures what it says: the model timed inside harness's calls
(the wrapper it puts around the embedded client's model call sees every call, and is taken off
again), and the two code shapes warm and after the model."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "interaction.py"

sys.path.insert(0, str(SCRIPT.parent))

import interaction  # noqa: E402  # the benchmark script, from its folder


def test_a_chain_of_functions_runs_every_function_once() -> None:
    assert interaction.chain(3, 2)(0) == 3  # each of the three adds 0 and 1
    assert interaction.chain(1, 6)(0) == sum(range(6))
    assert interaction.chain(7, 5)(1) == 1 + 7 * sum(range(5))


def test_the_wrapper_around_the_model_is_taken_off_again() -> None:
    from harness.providers import _embedded

    real = _embedded._ask
    found = asyncio.run(interaction.model_inside(2, 3))  # raises unless every call was timed
    assert _embedded._ask is real
    assert all(math.isfinite(v) and v > 0 for v in found.values()), found


@pytest.mark.slow
def test_the_model_is_timed_inside_every_harness_call(tmp_path: Path) -> None:
    out = tmp_path / "interaction.json"
    command = [sys.executable, str(SCRIPT), "--rounds", "5", "--blocks", "3", "--block", "4"]
    command += ["--functions", "5", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text(encoding="utf-8"))["figures"]
    assert set(figures) == {
        "model_direct_us",
        "model_inside_awaited_us",
        "model_inside_submitted_us",
        "direct_whole_us",
        "awaited_whole_us",
        "submitted_whole_us",
        "chain_warm_us",
        "chain_after_model_us",
        "single_warm_us",
        "single_after_model_us",
        "path_after_back_to_back_us",
        "path_after_model_us",
        *(f"path_after_{mib}_mib_sweep_us" for mib in interaction.SWEEPS_MIB),
    }
    assert all(math.isfinite(v) and v > 0 for v in figures.values()), figures
    assert "inside harness's submitted calls" in done.stdout
