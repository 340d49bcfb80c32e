"""The thinker contract's palette: notes split on ';', judged for 'alpha'."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.catalog import Catalog, CatalogEntry
from harness.decision import Answer, Choice, ChoiceAnswer, DecisionRequest, NoulAnswer
from harness.errors import InvalidInputError
from harness.jobs import JobContext
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool, Identifiable, tool_name

OBJECTIVE = "Judge every part of the note and keep the verdicts worth keeping"


@attrs.frozen
class Note(Artifact, alias="note"):
    text: str


@attrs.frozen
class Verdict(Artifact, alias="verdict"):
    note: str
    keep: bool


@tool_name("split_note")
class SplitNote(DecisionTool[Note, ListArtifact[Note]]):
    """Splits a note into its parts on ';'."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Note]:
        parts = [p.strip() for p in input.text.split(";") if p.strip()]
        if len(parts) < 2:
            raise InvalidInputError("note", input.text, "has no ';' to split on")
        return ListArtifact.of(Note, [Note(p) for p in parts])


@tool_name("judge_note")
class JudgeNote(DecisionTool[Note, ListArtifact[Verdict]]):
    """Judges a note: worth keeping when it mentions alpha."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        return ListArtifact.of(Verdict, [Verdict(input.text, "alpha" in input.text)])


@tool_name("triage")
class Triage(DecisionThinker[Note, Verdict]):
    """Triages a note into the verdicts worth keeping."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=(SplitNote,),
            objective=OBJECTIVE,
        )


def fake_catalog(max_concurrent: int = 4) -> Catalog:
    """A catalog whose pinned decision entry is answered by the fake model."""
    entry = CatalogEntry(
        id="fake",
        provider="fake",
        wire_model_id="fake-decider",
        max_context_tokens=100_000,
        max_concurrent=max_concurrent,
    )
    return Catalog([entry], {"decision": "fake"})


def pick(question: object, key: str) -> ChoiceAnswer:
    """A choice answer putting 0.9 on ``key`` and spreading the rest."""
    assert isinstance(question, Choice)
    keys = list(question.options)
    assert key in keys, f"{key!r} not offered among {keys}"
    rest = (0.1 / (len(keys) - 1)) if len(keys) > 1 else 0.0
    probabilities = {k: (0.9 if len(keys) > 1 else 1.0) if k == key else rest for k in keys}
    return ChoiceAnswer(key, probabilities, 0.9)


def selection_answers(request: DecisionRequest) -> dict[str, Answer]:
    """Answer every select_ question: keep a verdict whose JSON says keep is true.

    The verdict's words are read where the model reads them: its digest line in the state
    (the lean scheme asks by ref alone; the verbose one repeats the words in the question)."""
    answers: dict[str, Answer] = {}
    lines = state_of(request).get("artifacts")
    assert isinstance(lines, list)
    for qid in request.questions:
        if qid.startswith("select_"):
            ref = qid.removeprefix("select_")
            (line,) = [str(x) for x in lines if str(x).startswith(f"{ref} (")]
            answers[qid] = NoulAnswer(0.9 if '"keep":true' in line else 0.1)
    return answers


def triage_policy(request: DecisionRequest) -> Mapping[str, Answer]:
    """Split the whole note once, judge each part, then finish."""
    answers = selection_answers(request)
    questions = request.questions
    if "next" not in questions:
        return answers
    for qid, question in questions.items():
        if qid.endswith("_input"):
            assert isinstance(question, Choice)
            answers[qid] = pick(question, next(iter(question.options)))
    nxt = questions["next"]
    assert isinstance(nxt, Choice)
    split = questions.get("split_note_input")
    judge = questions.get("judge_note_input")
    if isinstance(split, Choice) and "note#1" in split.options:
        answers["next"] = pick(nxt, "split_note")
        answers["split_note_input"] = pick(split, "note#1")
    elif isinstance(judge, Choice) and any(r != "note#1" for r in judge.options):
        ref = next(r for r in judge.options if r != "note#1")
        answers["next"] = pick(nxt, "judge_note")
        answers["judge_note_input"] = pick(judge, ref)
    elif isinstance(judge, Choice) and "finish" not in nxt.options:
        answers["next"] = pick(nxt, "judge_note")
    else:
        answers["next"] = pick(nxt, "finish")
    return answers


def state_of(request: DecisionRequest) -> dict[str, object]:
    """The request's state as a dict (the thinker always sends an object)."""
    state = json.loads(json.dumps(request.state))
    assert isinstance(state, dict)
    return state


Policy = Callable[[DecisionRequest], Mapping[str, Answer]]
