"""CONTRACT.md "Properties": the same scenario gives byte-identical wire bodies and ``OBS_TURNS``,
in this interpreter and in fresh ones under other ``PYTHONHASHSEED`` values."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
from hypothesis import given

from harness.testing.strategies import (
    KindSpec,
    ScenarioSpec,
    ToolSpec,
    TypeSpec,
    build_scenario,
    scenario_specs,
)

from .runs import run

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Fixed scenarios: subclasses, lists in and out, readable refusals, a list input.
FIXED = (
    ScenarioSpec(
        kinds=(KindSpec("memo"), KindSpec("remark", 0), KindSpec("figure")),
        palette=(
            ToolSpec("split", TypeSpec(0), TypeSpec(1, True), 1, shift=1, refuses="omega"),
            ToolSpec("merge", TypeSpec(0, True), TypeSpec(2), 2, shift=2),
        ),
        key_tool=ToolSpec("judge", TypeSpec(1), TypeSpec(2, True), 2, shift=3, refuses="gamma"),
        output_kind=2,
        input_type=TypeSpec(0),
        input_texts=("alpha beta",),
        max_turns=6,
        threshold=0.5,
        policy_seed=3,
    ),
    ScenarioSpec(
        kinds=(KindSpec("ticket"), KindSpec("clause", 0), KindSpec("entry", 1)),
        palette=(ToolSpec("expand", TypeSpec(0), TypeSpec(1, True), 2, shift=4),),
        key_tool=ToolSpec("rank", TypeSpec(1), TypeSpec(1, True), 1, shift=1, refuses="delta"),
        output_kind=1,
        input_type=TypeSpec(0, True),
        input_texts=("delta omega", "beta", ""),
        max_turns=8,
        threshold=0.25,
        policy_seed=0,
    ),
    ScenarioSpec(
        kinds=(KindSpec("memo"),),
        palette=(),
        key_tool=ToolSpec("tag", TypeSpec(0), TypeSpec(0, True), 0, shift=2),
        output_kind=0,
        input_type=TypeSpec(0),
        input_texts=("gamma",),
        max_turns=3,
        threshold=0.75,
        policy_seed=1,
    ),
)

# Reads spec JSON lines on stdin, prints each run's digest: what a fresh interpreter sees.
REPLAY = """
import asyncio, sys
from harness.testing.invariants import run_digest
from harness.testing.strategies import ScenarioSpec, build_scenario
from harness.tools import Workflow
for line in sys.stdin:
    scenario = build_scenario(ScenarioSpec.from_json(line))
    thinker = scenario.thinker(Workflow())
    print(asyncio.run(run_digest(thinker, scenario.input, scenario.policy())))
"""


def _digests_here() -> list[str]:
    return [run(s, s.policy()).digest() for s in map(build_scenario, FIXED)]


@given(scenario_specs())
def test_the_same_scenario_twice_is_byte_identical(spec: ScenarioSpec) -> None:
    first_scenario = build_scenario(spec)
    first = run(first_scenario, first_scenario.policy())
    again = run(first_scenario, first_scenario.policy())
    rebuilt_scenario = build_scenario(ScenarioSpec.from_json(spec.to_json()))
    rebuilt = run(rebuilt_scenario, rebuilt_scenario.policy())  # fresh classes, same spec
    for other in (again, rebuilt):
        assert other.bodies == first.bodies
        assert other.obs_turns == first.obs_turns
        assert other.digest() == first.digest()


def test_fixed_scenarios_run_several_turns() -> None:
    # The fixed scenarios are worth replaying: moves, lists and a refusal among them.
    reports = [run(s, s.policy()) for s in map(build_scenario, FIXED)]
    assert all(r.error is None and len(r.turns) >= 2 for r in reports)
    assert sum(len(r.requests) for r in reports) >= 8
    assert any(t.failure for r in reports for t in r.turns)


@pytest.mark.parametrize("hash_seed", ["0", "4242"])
def test_a_fresh_interpreter_under_another_hash_seed_gives_the_same_bytes(hash_seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", REPLAY],
        input="".join(spec.to_json() + "\n" for spec in FIXED),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == _digests_here()
