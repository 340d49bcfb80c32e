"""CONTRACT.md "Properties": only legal moves are offered, and no pair runs twice."""

from __future__ import annotations

from hypothesis import given

from harness.artifacts import ListArtifact
from harness.testing.strategies import RandomPolicy, Scenario, policies, scenarios
from harness.thinker import FINISH
from harness.tools import runtime_class

from .runs import offered_tools, options, providers, run, seen_world, takes


@given(scenarios(), policies())
def test_no_tool_artifact_pair_runs_twice(scenario: Scenario, policy: RandomPolicy) -> None:
    report = run(scenario, policy)
    pairs = [(t.tool, t.artifact) for t in report.turns if t.tool != FINISH]
    assert len(pairs) == len(set(pairs)), report.render()


@given(scenarios(), policies())
def test_every_offered_move_is_legal_and_every_legal_move_offered(
    scenario: Scenario, policy: RandomPolicy
) -> None:
    report = run(scenario, policy)
    tools = providers(report)
    palette_order = list(tools)
    for number, request in enumerate(report.requests, 1):
        world = seen_world(report, request)
        refs = dict(world)
        spent = {(t.tool, t.artifact) for t in report.turns[: number - 1]}
        offered = offered_tools(request)
        assert offered == [n for n in palette_order if n in offered], "palette order"
        for name, provider in tools.items():
            legal = [r for r, a in world if (name, r) not in spent and takes(provider, a)]
            if name not in offered:
                # Not offered: nothing legal for it, or the budget is spent.
                assert not legal or "next" not in request.questions, report.render()
                continue
            candidates = options(request, f"{name}_input")
            assert candidates, f"{name} offered with no candidate"
            takes_list = issubclass(runtime_class(provider.input_type), ListArtifact)
            for ref in candidates:
                assert ref in refs, f"{ref} offered to {name} but not in the world"
                assert (name, ref) not in spent, f"spent pair ({name}, {ref}) offered again"
                assert takes(provider, refs[ref]), f"{ref} is not a {provider.input_type}"
                assert takes_list or not isinstance(refs[ref], ListArtifact)
            assert candidates == legal, report.render()


@given(scenarios(), policies())
def test_the_budget_ends_with_a_selection_only_request_numbered_max_turns_plus_one(
    scenario: Scenario, policy: RandomPolicy
) -> None:
    report = run(scenario, policy)
    for number, request in enumerate(report.requests, 1):
        assert (
            ("next" in request.questions)
            or number == scenario.max_turns + 1
            or not any(
                takes(p, a)
                and (p.name, r) not in {(t.tool, t.artifact) for t in report.turns[: number - 1]}
                for p in providers(report).values()
                for r, a in seen_world(report, request)
            )
        ), report.render()
        if number == scenario.max_turns + 1:
            assert "next" not in request.questions
            assert all(q.startswith("select_") for q in request.questions)
