"""benchmarks/llama.py keeps measuring what it says: run tiny (every part, briefly; the
figures mean nothing), its JSON holds each figure as a measured number and each target with its
ratio. Collected with the other Gemma tests (conftest.py)."""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.realmodel, pytest.mark.slow]

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_benchmark_runs_tiny_and_reports_every_figure(
    gemma_path: str, tmp_path: pathlib.Path
) -> None:
    out = tmp_path / "llama.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "llama.py"), "--tiny", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["benchmark"] == "llama"
    assert results["conditions"]["sizes"] == {
        "rounds": 1,
        "threads": None,
        "demo_turns": 1,
    }
    figures = results["figures"]
    own = figures["own_time"]
    assert own["decisions"] == 2
    for key in ("wall_s_total", "forward_s_total", "own_over_forward"):
        assert math.isfinite(own[key])
        assert own[key] > 0
    for mode in ("questions", "questions_long", "questions_batched"):
        asked = figures[mode]
        assert asked["questions"] == 8
        assert asked["state_tokens"] > 200
        assert asked["request_over_state"] > 1  # the questions cost something beyond the state
    assert figures["questions_long"]["state_tokens"] > 900
    for mode in ("questions", "questions_long"):  # the floor, measured beside the walk
        asked = figures[mode]
        assert asked["floor_tokens"] > asked["state_tokens"]
        for key in ("floor_s_median", "floor_over_state", "request_over_floor"):
            assert math.isfinite(asked[key])
            assert asked[key] > 0
    turn = figures["second_turn"]
    assert turn["evaluated_fresh"] == turn["tokens"]
    assert 0 < turn["evaluated_reused"] < turn["evaluated_fresh"]  # the first turn's tokens reused
    assert math.isfinite(turn["reused_over_fresh"])
    assert figures["triage_exit"] == 0, figures["triage_last_line"]
    assert figures["demo_exit"] == 0, figures["demo_last_line"]
    names = [t["name"] for t in results["targets"]]
    assert names == [
        "own / forward",
        "8 questions / state alone",
        "8 questions / state alone, the long state",
        "8 questions batched / state alone",
        "triage example, s",
        "demo, min",
    ]
    for found in results["targets"]:  # one run: each ratio against its limit, no verdict
        assert math.isfinite(found["ratio"])
        assert found["direction"] in ("<=", ">=")
        assert "met" not in found
