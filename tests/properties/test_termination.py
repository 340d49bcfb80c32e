"""CONTRACT.md "Properties": termination, over generated palettes, inputs and policies."""

from __future__ import annotations

from hypothesis import given

from harness.testing.strategies import PlantedCrash, RandomPolicy, Scenario, policies, scenarios
from harness.thinker import FINISH

from .runs import providers, run, takes


@given(scenarios(), policies())
def test_decisions_stay_within_the_legal_pairs_and_the_budget(
    scenario: Scenario, policy: RandomPolicy
) -> None:
    report = run(scenario, policy)
    tools = providers(report).values()
    # Over the world the decisions saw: the answer list is adopted after the last of them.
    seen = report.world_before_answer
    legal_pairs = sum(1 for p in tools for _, artifact in seen if takes(p, artifact))
    decisions = len(report.requests)
    assert decisions <= legal_pairs + 1
    assert decisions <= scenario.max_turns + 1
    assert policy.asked == decisions  # upstream retries 0: one answer per decision


@given(scenarios(), policies())
def test_one_decision_per_turn(scenario: Scenario, policy: RandomPolicy) -> None:
    report = run(scenario, policy)
    turns = report.turns
    assert [t.turn for t in turns] == list(range(1, len(turns) + 1))
    if report.error is not None:
        # Only a tool's unreadable failure ends a run early; its move leaves no turn.
        assert isinstance(report.error, PlantedCrash), report.render()
        assert len(turns) == len(report.requests) - 1
        assert all(t.tool != FINISH for t in turns)
        return
    assert [t.tool for t in turns].count(FINISH) == 1
    assert turns[-1].tool == FINISH
    if len(report.requests) == len(turns) - 1:
        # The last turn finished without asking: nothing was left to move on or select.
        assert turns[-1].next is None
        assert dict(turns[-1].selection) == {}
    else:
        assert len(report.requests) == len(turns), report.render()
