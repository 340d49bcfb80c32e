"""The examples run as scripts, offline, on the embedded model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_example(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TYPESAFE_", "OPENAI_"))}
    env.pop("HARNESS_CATALOG", None)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )


def test_the_first_program_prints_the_answer_and_its_cost() -> None:
    done = run_example("examples/first.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "cost: no price"
    assert " decision" in lines[-2]
    assert "input tokens counted" in lines[-2]
    assert all(line.startswith("verdict#") for line in lines[:-2])


def test_the_triage_example_prints_its_turns_and_usage() -> None:
    done = run_example("examples/triage.py", "alpha is due today; beta can wait")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("DecisionTurn(1: ")
    assert any(line.startswith("DecisionTurn(") and ": finish" in line for line in lines)
    assert lines[-1].startswith("used: ")
