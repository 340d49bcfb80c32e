"""CONTRACT.md "Properties": finish, the input never an answer, the answer exactly the selected
candidates in world order, and ``OBS_TURNS``."""

from __future__ import annotations

from hypothesis import example, given

from harness.decision import NoulAnswer, RefusedAnswer
from harness.testing._invariants import given_with
from harness.testing.strategies import (
    KindSpec,
    RandomPolicy,
    Scenario,
    ScenarioSpec,
    ToolSpec,
    TypeSpec,
    build_scenario,
    policies,
    scenarios,
    seeded_policy,
)
from harness.thinker import FINISH, parse_turns

from .runs import options, run, seen_world

# The input is of the output kind and a list of it: the input object, its items and the
# products are all of the output kind, and only the input itself is never a candidate.
NOTE_TO_NOTES = build_scenario(
    ScenarioSpec(
        kinds=(KindSpec("memo"),),
        palette=(),
        key_tool=ToolSpec("split", TypeSpec(0), TypeSpec(0, True), 0, shift=1),
        output_kind=0,
        input_type=TypeSpec(0),
        input_texts=("alpha beta gamma",),
        max_turns=3,
        threshold=0.0,
    )
)


@given(scenarios(), policies())
@example(NOTE_TO_NOTES, seeded_policy(1))
def test_finish_is_offered_exactly_when_an_output_candidate_exists(
    scenario: Scenario, policy: RandomPolicy
) -> None:
    report = run(scenario, policy)
    for request in report.requests:
        world = seen_world(report, request)
        given = given_with(scenario.input)
        candidates = [
            ref for ref, a in world if id(a) not in given and isinstance(a, scenario.output_type)
        ]
        if "next" in request.questions:
            assert (FINISH in options(request, "next")) == bool(candidates), report.render()
        selects = [q for q in request.questions if q.startswith("select_")]
        assert selects == [f"select_{ref}" for ref in candidates]


@given(scenarios(), policies())
@example(NOTE_TO_NOTES, seeded_policy(1))
def test_the_input_is_never_an_answer(scenario: Scenario, policy: RandomPolicy) -> None:
    report = run(scenario, policy)
    input_ref = report.world[0][0]
    assert report.world[0][1] is scenario.input
    assert all(f"select_{input_ref}" not in r.questions for r in report.requests)
    if report.answer is not None:
        assert all(item is not scenario.input for item in report.answer.iterands)


@given(scenarios(), policies())
def test_the_answer_is_exactly_the_selected_candidates_in_world_order(
    scenario: Scenario, policy: RandomPolicy
) -> None:
    report = run(scenario, policy)
    if report.answer is None:
        return  # a planted crash: no answer to check (test_termination checks the crash)
    refs = [ref for ref, a in report.world if a is report.answer]
    assert len(refs) == 1, "the answer is registered in the run's world, once"
    assert scenario.input is report.world[0][1]
    finish = report.turns[-1]
    if len(report.requests) == len(report.turns):
        given_answers = report.answers[-1]
        selection = {  # a refusal is recorded as 0 (the documented contract) ...
            qid.removeprefix("select_"): answer.probability
            if isinstance(answer, NoulAnswer)
            else 0.0
            for qid, answer in given_answers.items()
            if isinstance(answer, NoulAnswer | RefusedAnswer)
        }
        refused = {
            qid.removeprefix("select_")
            for qid, answer in given_answers.items()
            if isinstance(answer, RefusedAnswer)
        }
    else:
        selection, refused = {}, set()
    assert dict(finish.selection) == selection
    selection = {r: p for r, p in selection.items() if r not in refused}  # ... and never selected
    by_ref = dict(report.world)
    expected = [by_ref[r] for r, p in selection.items() if p >= scenario.threshold]
    assert len(report.answer.iterands) == len(expected), report.render()
    assert all(a is b for a, b in zip(report.answer.iterands, expected, strict=True))
    order = [ref for ref, a in report.world if any(a is item for item in report.answer.iterands)]
    assert [r for r, p in selection.items() if p >= scenario.threshold] == order
    assert report.answer.instruction == report.thinker.objective
    assert report.answer.iterand_type is scenario.output_type


@given(scenarios(), policies())
def test_obs_turns_parses_and_equals_the_turns(scenario: Scenario, policy: RandomPolicy) -> None:
    report = run(scenario, policy)
    if not report.turns:
        assert report.obs_turns is None
        return
    assert report.obs_turns is not None
    assert parse_turns(report.obs_turns) == report.turns
    assert parse_turns(report.obs_turns) == report.thinker.turns()
