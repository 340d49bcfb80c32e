"""The invariant checker: it passes the framework's thinker and catches planted broken ones."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.artifacts import Artifact
from harness.decision import DecisionResponse
from harness.testing.invariants import (
    InvariantKind,
    InvariantViolation,
    assert_invariants,
    check_thinker,
)
from harness.testing.strategies import (
    PlantedCrash,
    RandomPolicy,
    Scenario,
    policies,
    scenarios,
)
from harness.thinker import DecisionThinker
from harness.thinker._world import RunWorld
from harness.tools import Workflow

from ..thinker.notes import Note, Triage

In = TypeVar("In", bound=Artifact)
Out = TypeVar("Out", bound=Artifact)

NOTES = st.lists(st.sampled_from(["alpha is due", "beta can wait", "gamma", ""]), max_size=3).map(
    lambda parts: Note("; ".join(parts))
)


class OffersSpentPairs(DecisionThinker[In, Out]):
    """Broken on purpose: its move listing forgets which pairs already ran."""

    def _spend(self, world: RunWorld, tool: str, ref: str) -> None:
        pass  # the planted bug: the pair stays on offer


class AnswersWithTheInput(DecisionThinker[In, Out]):
    """Broken on purpose: the input is an output candidate like any other."""

    def _candidates(self, world: RunWorld) -> tuple[str, ...]:
        return tuple(ref for ref, a in world.registry.world() if isinstance(a, self.output_type))


class IgnoresTheThreshold(DecisionThinker[In, Out]):
    """Broken on purpose: every candidate the model saw is selected."""

    def _selection(self, response: DecisionResponse, candidates: Sequence[str]) -> dict[str, float]:
        return dict.fromkeys(candidates, 1.0)


@given(scenarios(), policies())
def test_the_thinker_keeps_every_invariant(scenario: Scenario, policy: RandomPolicy) -> None:
    report = asyncio.run(
        assert_invariants(
            scenario.thinker(Workflow()), scenario.input, policy, expected_errors=(PlantedCrash,)
        )
    )
    assert report.error is None or isinstance(report.error, PlantedCrash)


def test_check_thinker_passes_a_users_thinker() -> None:
    check_thinker(Triage, NOTES, settings=settings(max_examples=25, deadline=None))


def _catch(thinker_class: type[DecisionThinker[Any, Any]]) -> InvariantViolation:
    @settings(max_examples=300, deadline=None, database=None)
    @given(scenarios(), policies())
    def runs_keep_the_invariants(scenario: Scenario, policy: RandomPolicy) -> None:
        thinker = scenario.thinker(Workflow(), thinker_class=thinker_class)
        asyncio.run(
            assert_invariants(thinker, scenario.input, policy, expected_errors=(PlantedCrash,))
        )

    with pytest.raises(InvariantViolation) as caught:
        runs_keep_the_invariants()
    return caught.value


def test_a_thinker_offering_a_spent_pair_is_caught_with_a_readable_report() -> None:
    violation = _catch(OffersSpentPairs)
    assert violation.kind == InvariantKind.MOVES
    text = str(violation)
    assert "offers spent pairs again" in text
    assert "(the input)" in text  # the spent pair ran on the input, and the report says so
    assert "request 2:" in text
    assert "turn 1:" in text
    assert "world:" in text
    # Shrunk to the smallest run showing it: one move, then the request offering it again.
    assert violation.report is not None
    assert len(violation.report.requests) == 2, text


def test_a_thinker_answering_with_its_input_is_caught() -> None:
    violation = _catch(AnswersWithTheInput)
    assert any(
        "finish only once an output candidate exists" in p or "asks" in p
        for p in violation.problems
    ), str(violation)


def test_a_thinker_ignoring_the_threshold_is_caught() -> None:
    violation = _catch(IgnoresTheThreshold)
    assert violation.kinds & {InvariantKind.ANSWER, InvariantKind.RECORD}
    assert any("selected at >=" in p or "records selection" in p for p in violation.problems)


def test_check_thinker_catches_a_users_broken_thinker() -> None:
    class Careless(Triage):
        def _spend(self, world: RunWorld, tool: str, ref: str) -> None:
            pass  # the planted bug: the pair stays on offer

    with pytest.raises(InvariantViolation, match="offers spent pairs again"):
        check_thinker(
            Careless, NOTES, settings=settings(max_examples=100, deadline=None, database=None)
        )
