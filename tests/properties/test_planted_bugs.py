"""The planted-bug suite: one broken thinker per invariant, each caught by ``check_thinker`` (or
``check_reproducible``) under the active hypothesis profile, with the violation's kind and a
message that says what broke; the unbroken thinker passes.

Each plant is a subclass of the thinker contract's ``Triage`` overriding one hook (or, for a
tool's own bug, naming another palette), defined at module level so ``check_reproducible`` can
send it to fresh interpreters.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import pickle
import random
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Never

import attrs
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from harness.artifacts import Artifact, ListArtifact
from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    RefusedAnswer,
)
from harness.jobs import JobContext
from harness.providers import choose, default_answers
from harness.testing import InvariantKind, InvariantViolation
from harness.testing.invariants import (
    RunBytes,
    check_reproducible,
    check_thinker,
    invariant_problems,
    report_run,
)
from harness.testing.strategies import RandomPolicy
from harness.thinker import FINISH, OBS_TURNS, DecisionThinker, DecisionTurn
from harness.thinker._turn import turns_json
from harness.thinker._world import RunWorld
from harness.tools import ClassToolProvider, DecisionTool, Identifiable, Workflow, tool_name

from ..thinker.notes import (
    OBJECTIVE,
    JudgeNote,
    Note,
    SplitNote,
    Triage,
    Verdict,
    triage_policy,
)

NOTES = st.lists(
    st.sampled_from(["alpha is due", "beta can wait", "gamma", "alpha"]), min_size=1, max_size=3
).map(lambda parts: Note("; ".join(parts)))

FAST = 1.0  # seconds: the wall-clock limit of the hang plants (a run takes milliseconds)


def active(**changes: object) -> settings:
    """The active profile (``ci`` in CI: 200 examples, derandomized), no example database."""
    return settings(settings(), database=None, **changes)  # type: ignore[arg-type]  # settings' keywords


def caught(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker class
    *,
    policies: st.SearchStrategy[object] | None = None,
    run_timeout: float = 30.0,
    inputs: st.SearchStrategy[Note] = NOTES,
    at_least: int = 0,
) -> InvariantViolation:
    """The violation ``check_thinker`` raises on ``factory``, over the active profile's examples
    or ``at_least`` examples, whichever is more (a bug that only some draws reach)."""
    examples = max(at_least, settings().max_examples)
    with pytest.raises(InvariantViolation) as raised:
        check_thinker(
            factory,
            inputs,
            policies=policies,  # type: ignore[arg-type]  # each is a Policy
            settings=active(max_examples=examples),
            run_timeout=run_timeout,
        )
    return raised.value


# -- the control ---------------------------------------------------------------------------


def test_the_unbroken_thinker_passes() -> None:
    check_thinker(Triage, NOTES, settings=active())


# -- termination ---------------------------------------------------------------------------


class ReasksOnFinish(Triage):
    """Broken: it asks again whenever the model answers finish, so it never stops on its own."""

    async def _decide(self, context: JobContext, request: DecisionRequest) -> DecisionResponse:
        while True:
            response = await super()._decide(context, request)
            if "next" not in request.questions or response.choice("next").choice != FINISH:
                return response


def finishes_when_it_can(request: DecisionRequest) -> Mapping[str, Answer]:
    """A custom policy: finish whenever finish is offered, else the first option."""
    answers = default_answers(request)
    question = request.questions.get("next")
    if isinstance(question, Choice) and FINISH in question.options:
        answers["next"] = choose(question, FINISH)
    return answers


def test_a_loop_that_never_stops_under_a_custom_policy_is_a_termination_violation() -> None:
    violation = caught(ReasksOnFinish, policies=st.just(finishes_when_it_can))
    assert violation.kind == InvariantKind.TERMINATION
    assert violation.report is not None
    budget = violation.report.thinker.max_turns
    assert len(violation.report.requests) == budget + 2  # the refused one is shown
    text = str(violation)
    assert f"asked for decision {budget + 2}, past max_turns + 1 = {budget + 1}" in text
    assert f"request {budget + 2}: (refused by the checker" in text  # the run so far
    assert "turn 1: " in text


class ReasksOnFinishWithinThree(ReasksOnFinish):
    """The same bug on a budget of 3 turns (each failing run stays short while it shrinks)."""

    def __init__(self, parent: Identifiable) -> None:
        DecisionThinker.__init__(
            self,
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=(SplitNote,),
            objective=OBJECTIVE,
            max_turns=3,
        )


def test_a_loop_that_never_stops_under_drawn_policies_is_a_termination_violation() -> None:
    violation = caught(ReasksOnFinishWithinThree)
    assert violation.kind == InvariantKind.TERMINATION
    text = str(violation)
    assert "past max_turns + 1 = 4" in text or "decisions exceed the legal pairs" in text, text


# -- hangs ---------------------------------------------------------------------------------


@tool_name("judge_slowly")
class JudgeSlowly(DecisionTool[Note, ListArtifact[Verdict]]):
    """Judges a note; blocks the event loop for an hour on a note mentioning gamma."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        if "gamma" in input.text:
            time.sleep(3600)  # noqa: ASYNC251 - the planted hang: blocking, so asyncio cannot cancel it
        return ListArtifact.of(Verdict, [Verdict(input.text, "alpha" in input.text)])


class TriageWithAStallingTool(Triage):
    """Broken: its key tool blocks forever on some notes."""

    def __init__(self, parent: Identifiable) -> None:
        DecisionThinker.__init__(
            self,
            parent,
            output_type=Verdict,
            key_tool=JudgeSlowly,
            palette=(SplitNote,),
            objective=OBJECTIVE,
        )


def test_a_tool_blocking_forever_is_a_named_hang() -> None:
    started = time.monotonic()
    violation = caught(TriageWithAStallingTool, run_timeout=FAST)
    assert time.monotonic() - started < 60  # the guard cut it: no hang of the suite
    assert violation.kind == InvariantKind.HANG
    text = str(violation)
    assert "the run did not end within 1 s: tool judge_slowly on note#" in text, text
    assert "where it hung:" in text
    assert "time.sleep(3600)" in text  # the frame it was stuck in
    assert "in execute" in text


async def never_answers(request: DecisionRequest) -> Mapping[str, Answer]:
    """A custom policy that never finishes answering."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


def spins(request: DecisionRequest) -> Mapping[str, Answer]:
    """A custom policy that never returns and never yields to the event loop."""
    deadline = time.monotonic() + 3600
    while time.monotonic() < deadline:
        pass
    return default_answers(request)


@pytest.mark.parametrize("policy", [never_answers, spins], ids=["awaiting", "spinning"])
def test_a_policy_that_never_answers_is_a_named_hang(policy: object) -> None:
    violation = caught(Triage, policies=st.just(policy), run_timeout=FAST)
    assert violation.kind == InvariantKind.HANG
    text = str(violation)
    assert "the model's policy answering request 1 did not return" in text, text
    assert f"in {policy.__name__}" in text  # type: ignore[attr-defined]  # a function


class SpinsOnAList(Triage):
    """Broken: listing the moves never returns once the world holds a list."""

    def _moves(self, world: RunWorld) -> list[tuple[ClassToolProvider[Never, Artifact], list[str]]]:
        while any(isinstance(a, ListArtifact) for _, a in world.registry.world()):
            pass  # the planted hang: the thinker's own code, between decisions
        return super()._moves(world)


def test_a_thinker_spinning_between_decisions_is_a_named_hang() -> None:
    violation = caught(SpinsOnAList, run_timeout=FAST)
    assert violation.kind == InvariantKind.HANG
    text = str(violation)
    assert "the thinker between decisions (after request 1) did not return" in text, text
    assert "in _moves" in text


# -- reproducibility -----------------------------------------------------------------------


class StampsItsRecord(Triage):
    """Broken: every turn it publishes carries the time it was published."""

    def _publish(self, context: JobContext, turns: Sequence[DecisionTurn]) -> None:
        stamped = json.loads(turns_json(turns))
        for turn in stamped:
            turn["at"] = time.perf_counter_ns()
        context.metadata[OBS_TURNS] = json.dumps(stamped, separators=(",", ":"))


def test_a_timestamp_in_the_record_is_not_reproducible() -> None:
    violation = caught(StampsItsRecord)
    assert violation.kind == InvariantKind.REPRODUCIBILITY
    text = str(violation)
    assert "OBS_TURNS differs between run 1 and run 2 (first at byte" in text, text
    assert "with byte-identical requests" in text
    assert "OBS_TURNS differs first at byte" in violation.details
    assert '-    "at": ' in violation.details
    assert '+    "at": ' in violation.details


class TracesItsRequests(Triage):
    """Broken: its first question's instructions carry the thinker's id()."""

    def _request(
        self,
        world: RunWorld,
        done: Sequence[str],
        moves: Sequence[tuple[ClassToolProvider[Never, Artifact], Sequence[str]]],
        candidates: Sequence[str],
    ) -> DecisionRequest:
        request = super()._request(world, done, moves, candidates)
        questions = dict(request.questions)
        first = next(iter(questions))
        traced = f"{questions[first].instructions} (trace {id(self):x})"
        questions[first] = attrs.evolve(questions[first], instructions=traced)
        return DecisionRequest(request.state, questions)


def test_an_id_in_the_wire_body_is_not_reproducible() -> None:
    violation = caught(TracesItsRequests)
    assert violation.kind == InvariantKind.REPRODUCIBILITY
    text = str(violation)
    assert "request 1's wire body differs between run 1 and run 2 (first at byte" in text
    assert "the thinker's request is not a function of the run" in text
    details = violation.details
    assert "request 1 differs first at byte" in details
    assert "^" in details  # the caret under the first byte that differs
    assert "--- request 1, run 1" in details
    assert "+++ request 1, run 2" in details
    assert "(trace " in details


@tool_name("judge_note")
class JudgeAtRandom(DecisionTool[Note, ListArtifact[Verdict]]):
    """Judges a note, with an unseeded random in its verdict."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        score = random.random()  # the planted bug: not a function of the input
        return ListArtifact.of(Verdict, [Verdict(f"{input.text} ({score:.6f})", score > 0.5)])


class TriageWithARandomTool(Triage):
    """Broken: its key tool draws from the unseeded global random."""

    def __init__(self, parent: Identifiable) -> None:
        DecisionThinker.__init__(
            self,
            parent,
            output_type=Verdict,
            key_tool=JudgeAtRandom,
            palette=(SplitNote,),
            objective=OBJECTIVE,
        )


def test_an_unseeded_random_in_a_tool_is_named_as_a_nondeterministic_tool() -> None:
    violation = caught(TriageWithARandomTool)  # not hypothesis's FlakyStrategyDefinition
    assert violation.kind == InvariantKind.REPRODUCIBILITY
    text = str(violation)
    assert "wire body differs between run 1 and run 2" in text, text
    assert "tool judge_note on note#" in text
    assert "produced different artifacts from the same input" in text
    assert "the tool is not deterministic" in text


_BUILT = itertools.count()
_VERDICTS = [1]


@tool_name("judge_note")
class JudgeByTheExample(DecisionTool[Note, ListArtifact[Verdict]]):
    """Judges a note into as many verdicts as the process-wide state says."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        count = _VERDICTS[0]
        return ListArtifact.of(Verdict, [Verdict(f"{input.text} {i}", True) for i in range(count)])


class ChangesFromExampleToExample(Triage):
    """Broken: each pair of thinkers built sets how many verdicts its tool makes, so the two
    runs of one example agree but hypothesis's replays of an example do not."""

    def __init__(self, parent: Identifiable) -> None:
        _VERDICTS[0] = next(_BUILT) // 2 % 3 + 1
        DecisionThinker.__init__(
            self,
            parent,
            output_type=Verdict,
            key_tool=JudgeByTheExample,
            palette=(SplitNote,),
            objective=OBJECTIVE,
        )


def test_hypothesis_seeing_an_example_change_is_reported_as_not_reproducible() -> None:
    with pytest.raises(InvariantViolation) as raised:  # not hypothesis's own Flaky error
        check_thinker(
            ChangesFromExampleToExample,
            NOTES,
            settings=settings(max_examples=200, derandomize=True, deadline=None, database=None),
        )
    violation = raised.value
    assert violation.kind == InvariantKind.REPRODUCIBILITY
    text = str(violation)
    # Seen by hypothesis replaying an example, or (when hypothesis cut a run short, so one
    # thinker of a pair was built without its partner) by the two runs of one example.
    if "hypothesis replayed an example and the run took another path" in text:
        assert "FlakyStrategyDefinition" in text
    assert "wire body differs between run 1 and run " in text


class ListsToolsInASet(Triage):
    """Broken only across interpreters: a set's order (the hash seed's) in its instructions."""

    def _request(
        self,
        world: RunWorld,
        done: Sequence[str],
        moves: Sequence[tuple[ClassToolProvider[Never, Artifact], Sequence[str]]],
        candidates: Sequence[str],
    ) -> DecisionRequest:
        request = super()._request(world, done, moves, candidates)
        questions = dict(request.questions)
        first = next(iter(questions))
        words = {"split", "judge", "note", "alpha", "beta", "gamma", "delta", "verdict", "keep"}
        shown = f"{questions[first].instructions} ({' '.join(words)})"
        questions[first] = attrs.evolve(questions[first], instructions=shown)
        return DecisionRequest(request.state, questions)


NOTE = Note("alpha is due; beta can wait")


def test_a_hash_seed_dependence_passes_in_one_interpreter_and_is_caught_across_several() -> None:
    check_thinker(ListsToolsInASet, NOTES, settings=active(max_examples=10))
    with pytest.raises(InvariantViolation) as raised:
        check_reproducible(ListsToolsInASet, NOTE, hash_seeds=(1, 2, 3))
    violation = raised.value
    assert violation.kind == InvariantKind.REPRODUCIBILITY
    assert "request 1's wire body differs between this interpreter and PYTHONHASHSEED=" in str(
        violation
    )
    assert "differs first at byte" in violation.details


def test_the_unbroken_thinker_repeats_in_fresh_interpreters() -> None:
    repeated = check_reproducible(Triage, NOTE, hash_seeds=(0, 1))
    assert isinstance(repeated, RunBytes)
    assert len(repeated.bodies) >= 2
    assert repeated.outcome.startswith("answered")


def test_check_reproducible_says_what_does_not_pickle() -> None:
    class Local(Triage):
        pass

    with pytest.raises(TypeError, match="module-level thinker class"):
        check_reproducible(Local, NOTE)


# -- the record ----------------------------------------------------------------------------


def _one_hot(answer: Answer) -> Answer:
    if not isinstance(answer, ChoiceAnswer):
        return answer
    hot = {option: 1.0 if option == answer.choice else 0.0 for option in answer.probabilities}
    return ChoiceAnswer(choice=answer.choice, probabilities=hot, confidence=1.0)


class RecordsOneHot(Triage):
    """Broken: it records every choice as certain, whatever the model's distribution."""

    async def _decide(self, context: JobContext, request: DecisionRequest) -> DecisionResponse:
        response = await super()._decide(context, request)
        answers = {qid: _one_hot(answer) for qid, answer in response.answers.items()}
        return attrs.evolve(response, answers=answers)


def test_one_hot_probabilities_on_the_record_are_caught() -> None:
    violation = caught(RecordsOneHot)
    assert violation.kind == InvariantKind.RECORD
    text = str(violation)
    assert "records 'next' probabilities" in text, text
    assert "the model's response gave" in text


class MisreportsItsMoves(Triage):
    """Broken: its done lines leave out the ref a tool ran on."""

    async def _run_tool(
        self,
        context: JobContext,
        world: RunWorld,
        number: int,
        provider: ClassToolProvider[Never, Artifact],
        ref: str,
    ) -> tuple[DecisionTurn, str]:
        turn, line = await super()._run_tool(context, world, number, provider, ref)
        return turn, line.replace(f" on {ref}", "")


def test_done_lines_that_do_not_say_what_ran_are_caught() -> None:
    violation = caught(MisreportsItsMoves)
    assert violation.kind == InvariantKind.RECORD
    text = str(violation)
    assert "request 2: done line 1 is" in text, text
    assert "but turn 1 ran" in text
    assert "(the input)" in text  # turn 1 ran on the input, and says so
    assert "expected '" in text


class CountsItsTurns(Triage):
    """Broken: its state carries a key the documentation does not list."""

    def _request(
        self,
        world: RunWorld,
        done: Sequence[str],
        moves: Sequence[tuple[ClassToolProvider[Never, Artifact], Sequence[str]]],
        candidates: Sequence[str],
    ) -> DecisionRequest:
        request = super()._request(world, done, moves, candidates)
        assert isinstance(request.state, dict)
        return DecisionRequest({**request.state, "turns_so_far": len(done)}, request.questions)


def test_an_undocumented_state_key_is_caught() -> None:
    violation = caught(CountsItsTurns)
    assert violation.kind == InvariantKind.STATE
    assert "request 1: its state holds undocumented keys ['turns_so_far']" in str(violation)


# -- readable failures ---------------------------------------------------------------------


def _third_word(text: str) -> str:
    return text.split()[2]  # the planted bug: not every note has three words


@tool_name("third_word")
class ThirdWord(DecisionTool[Note, ListArtifact[Verdict]]):
    """Keeps a note's third word as a verdict."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        return ListArtifact.of(Verdict, [Verdict(_third_word(input.text), True)])


class TriageWithACrashingTool(Triage):
    """Broken: its key tool crashes (IndexError) on short notes."""

    def __init__(self, parent: Identifiable) -> None:
        DecisionThinker.__init__(
            self,
            parent,
            output_type=Verdict,
            key_tool=ThirdWord,
            palette=(SplitNote,),
            objective=OBJECTIVE,
        )


def test_a_crash_in_a_users_tool_shows_the_traceback_into_the_tool() -> None:
    violation = caught(TriageWithACrashingTool)
    assert violation.kind == InvariantKind.CRASH
    text = str(violation)
    assert "the run failed in tool third_word on note#1 (the input)" in text, text
    assert "IndexError: list index out of range" in text
    assert "test_planted_bugs.py" in violation.details
    assert "in _third_word" in violation.details
    assert "return text.split()[2]" in violation.details
    assert isinstance(violation.__cause__, IndexError)


class KeepParts(DecisionThinker[Note, Note]):
    """Splits a note and keeps the parts worth keeping."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Note,
            key_tool=SplitNote,
            palette=(JudgeNote,),
            objective="Keep the parts of the note worth keeping",
        )


class OffersTheInput(KeepParts):
    """Broken: the input counts as an output candidate."""

    def _candidates(self, world: RunWorld) -> tuple[str, ...]:
        return tuple(ref for ref, a in world.registry.world() if isinstance(a, Note))


def test_the_input_offered_as_a_candidate_is_named_as_the_input() -> None:
    violation = caught(OffersTheInput)
    assert violation.kind == InvariantKind.ANSWER
    assert "request 1: note#1 (the input) is offered as a candidate (select_note#1)" in str(
        violation
    )


def test_the_violation_has_a_public_import_path() -> None:
    violation = caught(CountsItsTurns)
    assert type(violation).__module__ == "harness.testing"
    assert repr(InvariantViolation) == "<class 'harness.testing.InvariantViolation'>"
    shown = traceback.format_exception_only(violation)[0]
    assert shown.startswith("harness.testing.InvariantViolation: the run broke")
    again = pickle.loads(pickle.dumps(violation))
    assert again.kind == InvariantKind.STATE
    assert again.problems == violation.problems
    assert all(problem.kind in InvariantKind for problem in violation.problems)


# -- what the checker re-derives instead of trusting the thinker -----------------------------

DISTINCT_PARTS = st.lists(
    st.sampled_from(["alpha is due", "beta can wait", "gamma"]), min_size=2, max_size=3, unique=True
).map(lambda parts: Note("; ".join(parts)))
"""Notes of two or three different parts: a tool run on one part is not a run on another."""

PART_BY_PART = st.just(triage_policy)
"""Split the note, then judge its parts first to last. The first part judged is neither the
newest note nor the last one offered, so each plant below runs a move on another artifact than
the model chose in every example, and the checker must catch it in every one: under drawn
policies the model reaches that path in some runs only, and a few dozen drawn examples may not
reach it at all."""


class RunsOnTheNewestNote(Triage):
    """Broken: it runs the chosen tool on the newest note, but records the ref the model
    chose (the turn and the done line name an artifact the tool never saw)."""

    async def _run_tool(
        self,
        context: JobContext,
        world: RunWorld,
        number: int,
        provider: ClassToolProvider[Never, Artifact],
        ref: str,
    ) -> tuple[DecisionTurn, str]:
        notes = [r for r, a in world.registry.world() if type(a) is Note]
        other = notes[-1]
        turn, line = await super()._run_tool(context, world, number, provider, other)
        return attrs.evolve(turn, artifact=ref), line.replace(f" on {other} ", f" on {ref} ", 1)


def test_a_tool_run_on_another_artifact_than_the_record_names_is_caught() -> None:
    violation = caught(RunsOnTheNewestNote, inputs=DISTINCT_PARTS, policies=PART_BY_PART)
    assert violation.kind == InvariantKind.MOVES
    assert "ran on another artifact than its record says" in violation.problems[0]
    text = str(violation)
    # the product (or the failure, also in the done line) is not what the tool makes of the
    # artifact the record names, run again
    assert "the outcome is not what the tool makes of the artifact the record names" in text or (
        "failed: expected" in text and "but run again on" in text
    ), text


async def test_a_move_whose_list_product_has_as_many_items_as_the_recorded_one_is_caught() -> None:
    """A list product is compared by what it holds, not by its digest words (its length): the
    plant judges the newest part where the model chose the first, a list of one verdict either
    way, and the run must still break the invariant."""
    report = await report_run(
        RunsOnTheNewestNote(Workflow()), Note("alpha is due; beta can wait"), triage_policy
    )
    problems = invariant_problems(report)
    assert problems, "the move on another artifact was not seen"
    assert "ran on another artifact than its record says" in problems[0], problems
    assert "judge_note makes of note#3" in problems[0], problems


class RunsOnTheNextOffered(Triage):
    """Broken: it runs the chosen tool on the artifact offered after the one the model chose
    (when there is one), and records the chosen ref."""

    async def _run_tool(
        self,
        context: JobContext,
        world: RunWorld,
        number: int,
        provider: ClassToolProvider[Never, Artifact],
        ref: str,
    ) -> tuple[DecisionTurn, str]:
        order = [r for r, _ in world.registry.world()]
        offered = next((refs for p, refs in world.moves() if p.name == provider.name), [])
        later = [r for r in offered if order.index(r) > order.index(ref)]
        if not later:
            return await super()._run_tool(context, world, number, provider, ref)
        other = later[0]
        turn, line = await super()._run_tool(context, world, number, provider, other)
        return attrs.evolve(turn, artifact=ref), line.replace(f" on {other} ", f" on {ref} ", 1)


def test_a_tool_run_on_the_next_offered_artifact_is_named_first() -> None:
    violation = caught(RunsOnTheNextOffered, inputs=DISTINCT_PARTS, policies=PART_BY_PART)
    first = violation.problems[0]
    assert "ran on another artifact than its record says" in first, str(violation)
    assert first.kind == InvariantKind.MOVES, str(violation)


class RewordsFailures(Triage):
    """Broken: a tool's readable failure is replaced by another sentence, in the turn and in
    the next request's done line alike (the two agree with each other, not with the tool)."""

    async def _run_tool(
        self,
        context: JobContext,
        world: RunWorld,
        number: int,
        provider: ClassToolProvider[Never, Artifact],
        ref: str,
    ) -> tuple[DecisionTurn, str]:
        turn, line = await super()._run_tool(context, world, number, provider, ref)
        if turn.failure is None:
            return turn, line
        said = "the tool is busy, try later"
        return attrs.evolve(turn, failure=said), f"{provider.name} on {ref} failed: {said}"


def test_a_reworded_failure_is_caught() -> None:
    violation = caught(RewordsFailures)
    assert violation.kind == InvariantKind.RECORD
    text = str(violation)
    assert "records the failure 'the tool is busy, try later' of split_note on" in text, text
    assert "split_note fails with \"invalid note '" in text  # its own words, run again


class DropsTheLastLine(Triage):
    """Broken: its state leaves out the world's last artifact line (an item of the newest
    list), so the model never reads it."""

    def _request(
        self,
        world: RunWorld,
        done: Sequence[str],
        moves: Sequence[tuple[ClassToolProvider[Never, Artifact], Sequence[str]]],
        candidates: Sequence[str],
    ) -> DecisionRequest:
        request = super()._request(world, done, moves, candidates)
        assert isinstance(request.state, dict)
        lines = request.state["artifacts"]
        assert isinstance(lines, list)
        if len(lines) < 2:
            return request
        return DecisionRequest({**request.state, "artifacts": lines[:-1]}, request.questions)


def test_a_state_dropping_its_last_lines_is_a_state_problem() -> None:
    violation = caught(DropsTheLastLine)
    assert violation.kind == InvariantKind.STATE
    text = str(violation)
    assert "its artifact lines are not the world's: it shows" in text, text
    assert "the turns before it made" in text
    assert "missing [" in text


class OffersTheNewestInputs(Triage):
    """Broken: under an entry's max_options it offers the newest refs, not the first ones."""

    def _moves(self, world: RunWorld) -> list[tuple[ClassToolProvider[Never, Artifact], list[str]]]:
        moves = super()._moves(world)
        if self._option_limit is None:
            return moves
        return [(provider, refs[::-1]) for provider, refs in moves]


@pytest.mark.slow
def test_a_wrong_cut_at_max_options_is_caught() -> None:
    # only a run under a limited entry whose moves reach a long input choice shows the bug:
    # about one draw in ten, so 30 draws missed it now and then
    violation = caught(OffersTheNewestInputs, inputs=LONG_NOTES, at_least=100)
    assert violation.kind == InvariantKind.MOVES
    text = str(violation)
    assert "the entry's max_options" in text, text


class IgnoresMaxOptions(Triage):
    """Broken: it offers every legal input, whatever the entry's max_options."""

    @property
    def _option_limit(self) -> int | None:
        return None


LONG_NOTES = st.lists(st.sampled_from(["alpha", "beta", "gamma"]), min_size=4, max_size=5).map(
    lambda parts: Note("; ".join(parts))
)  # more parts than the least max_options a thinker of two tools can be served by (3)


@pytest.mark.slow
def test_ignoring_max_options_is_caught() -> None:
    violation = caught(IgnoresMaxOptions, inputs=LONG_NOTES)
    text = str(violation)
    assert "max_options" in text, text  # the entry refuses the request, naming its limit


class AlwaysRefusesSelections:
    """A policy drawing every answer, refusing each selection question."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, request: DecisionRequest) -> Mapping[str, Answer]:
        answers = dict(RandomPolicy(self.rng)(request))
        for qid in request.questions:
            if qid.startswith("select_"):
                answers[qid] = RefusedAnswer("drawn refusal")
        return answers


REFUSING = st.randoms(use_true_random=False).map(AlwaysRefusesSelections)


class TriageAtZero(Triage):
    """The unbroken thinker at selection_threshold=0: every answered candidate is selected."""

    def __init__(self, parent: Identifiable) -> None:
        DecisionThinker.__init__(
            self,
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=(SplitNote,),
            objective=OBJECTIVE,
            selection_threshold=0.0,
        )


@pytest.mark.parametrize("thinker", [Triage, TriageAtZero], ids=["default", "threshold_0"])
def test_a_correct_thinker_passes_under_a_refusing_policy(thinker: type[Triage]) -> None:
    check_thinker(thinker, NOTES, policies=REFUSING, settings=active())


class RefusalAsYes(Triage):
    """Broken: a refused selection counts as a certain yes."""

    def _selection(self, response: DecisionResponse, candidates: Sequence[str]) -> dict[str, float]:
        return {
            ref: 1.0
            if isinstance(response.answers.get(f"select_{ref}"), RefusedAnswer)
            else response.noul(f"select_{ref}").probability
            for ref in candidates
        }


def test_a_refusal_counted_as_yes_is_caught() -> None:
    violation = caught(RefusalAsYes, policies=REFUSING)
    assert violation.kind == InvariantKind.RECORD
    assert "the finish turn records selection" in str(violation)


class SelectsRefusalsAtZero(TriageAtZero):
    """Broken: at threshold 0 a refused selection (recorded as 0) is selected."""

    def _finish(
        self,
        context: JobContext,
        world: RunWorld,
        turns: list[DecisionTurn],
        number: int,
        next_: Mapping[str, float] | None,
        selection: dict[str, float],
        candidates: Sequence[str],
    ) -> ListArtifact[Verdict]:
        chosen = [
            artifact
            for ref in candidates
            if selection[ref] >= 0.0 and isinstance(artifact := world.get(ref), Verdict)
        ]
        answer = ListArtifact(Verdict, tuple(chosen), self.objective)
        world.adopt(answer)
        turns.append(DecisionTurn(number, next_, FINISH, selection=selection))
        self._publish(context, turns)
        return answer


def test_a_refused_selection_selected_at_threshold_0_is_caught() -> None:
    violation = caught(SelectsRefusalsAtZero, policies=REFUSING)
    assert violation.kind == InvariantKind.ANSWER
    assert "refused, so never selected" in str(violation)


class ZeroMeansUnset(TriageAtZero):
    """Broken: built with selection_threshold=0.0, it takes 0.0 for "not given" and answers
    (and reports its threshold) at 0.5; its own account agrees with what it did."""

    def _threshold_for(self, entry: object) -> float:
        return 0.5 if not self._given_threshold else float(self._given_threshold)


def test_a_threshold_of_0_taken_for_unset_is_caught() -> None:
    violation = caught(ZeroMeansUnset)
    assert violation.kind == InvariantKind.ANSWER, str(violation)
    assert "the candidates selected at >= 0.0" in str(violation)
