"""The invariant checker's own rules: the legal pairs are those of the world the decisions saw,
and check_thinker keeps each factory's saved examples apart."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

from harness.artifacts import Artifact, ListArtifact
from harness.decision import Answer, Choice, DecisionRequest
from harness.jobs import JobContext
from harness.providers import choose, yes
from harness.testing.invariants import (
    InvariantViolation,
    check_thinker,
    invariant_problems,
    report_run,
)
from harness.thinker import DecisionThinker
from harness.thinker._world import RunWorld
from harness.tools import DecisionTool, Identifiable, Workflow, tool_name

from ..thinker.notes import Note, Triage


@attrs.frozen
class Doc(Artifact, alias="doc"):
    text: str


@attrs.frozen
class Line(Artifact, alias="line"):
    text: str


@attrs.frozen
class Tally(Artifact, alias="tally"):
    count: int


@tool_name("split_lines")
class SplitLines(DecisionTool[Doc, ListArtifact[Line]]):
    """Splits a document into its lines."""

    async def execute(self, input: Doc, context: JobContext) -> ListArtifact[Line]:
        return ListArtifact.of(Line, [Line(t) for t in input.text.splitlines()])


@tool_name("tally_lines")
class TallyLines(DecisionTool[ListArtifact[Line], Tally]):
    """Counts a list of lines: it takes a list, so the answer list would be one more input."""

    async def execute(self, input: ListArtifact[Line], context: JobContext) -> Tally:
        return Tally(len(input.iterands))


@tool_name("find_lines")
class LineFinder(DecisionThinker[Doc, Line]):
    """Splits, tallies, then keeps every line."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Line,
            key_tool=SplitLines,
            palette=(TallyLines,),
            objective="Keep every line",
        )


def split_tally_finish(request: DecisionRequest) -> Mapping[str, Answer]:
    answers: dict[str, Answer] = {}
    for qid, question in request.questions.items():
        if isinstance(question, Choice):
            options = list(question.options)
            wanted = ("split_lines", "tally_lines", "finish") if qid == "next" else options
            answers[qid] = choose(question, next(o for o in wanted if o in options))
        else:
            answers[qid] = yes(1.0)
    return answers


async def test_legal_pairs_are_counted_before_the_answer_was_adopted() -> None:
    report = await report_run(LineFinder(Workflow()), Doc("one\ntwo"), split_tally_finish)
    assert invariant_problems(report) == []
    refs = [ref for ref, _ in report.world]
    assert refs[-1] == "list#2"  # the answer, adopted after the last decision
    assert [ref for ref, _ in report.world_before_answer] == refs[:-1]
    # Two legal pairs (split on doc#1, tally on list#1): at most three decisions. A fourth must
    # be caught, though tally on the answer list would make the final world's pairs three.
    assert len(report.requests) == 3
    padded = attrs.evolve(
        report,
        requests=(*report.requests, report.requests[-1]),
        answers=(*report.answers, report.answers[-1]),
    )
    problems = invariant_problems(padded)
    assert "4 decisions exceed the legal pairs + 1 = 3" in problems, problems


def thinker_class(module: str, careless: bool) -> type[Triage]:
    """A Triage subclass named ``Twin`` in ``module``; careless ones re-offer spent pairs."""

    def _spend(self: Triage, world: RunWorld, tool: str, ref: str) -> None:
        pass  # the planted bug: the pair stays on offer

    namespace: dict[str, object] = {"__module__": module, "__qualname__": "Twin"}
    if careless:
        namespace["_spend"] = _spend
    return type("Twin", (Triage,), namespace)


NOTES = st.sampled_from(["alpha is due", "beta can wait; gamma"]).map(Note)


def test_check_thinker_keeps_apart_factories_sharing_a_qualified_name() -> None:
    database = InMemoryExampleDatabase()
    keys: list[set[bytes]] = []
    for module in ("tests.first_place", "tests.second_place"):
        before = set(database.data)
        with pytest.raises(InvariantViolation):
            check_thinker(
                thinker_class(module, careless=True),
                NOTES,
                settings=settings(max_examples=100, deadline=None, database=database),
            )
        keys.append(set(database.data) - before)
    first, second = keys
    # Each saved its failing example under keys of its own.
    assert first
    assert second
    assert not first & second
