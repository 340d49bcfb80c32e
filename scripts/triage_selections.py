"""The triage example's selections as labelled decisions: the requests the guide's thinker asks
when its moves are right, one ``select_<ref>`` question each.

A run of :class:`harness.demo.triage.Triage` ends with one request holding a ``select_<ref>``
question per verdict it made. How well a model answers those questions is what a thinker's eval
cannot show by itself, because the moves decide which verdicts exist to be selected (a model
whose moves never judge a part is never asked about one). Here the moves are scripted, the ones
the objective asks for (split the note, judge every part, finish), and each note's finishing
request is cut into one decision per verdict: the run's whole state and the question, labelled
``true`` when the part needs action (:func:`scripts.triage_notes.needs_action`, the
tool's own rule, which the verdict's ``urgent`` field shows), tagged with the note's split.

The requests are the thinker's own under its default question scheme, so
``selections-triage.jsonl`` changes when what the thinker asks changes (``python -m
scripts.shipped_data --check`` fails until it is written again). Any entry answers the
pack with ``harness eval pack``; ``python -m scripts.local_examples --domain triage`` fits a
local entry's examples and calibration on its ``dev`` split and reports on ``test``.
"""

from __future__ import annotations

import asyncio

# the stdlib's json: the lines as json writes them, like the other data files
import json
from collections.abc import Mapping

from harness.decision import Answer, Choice, DecisionRequest, NoulAnswer, systemone
from harness.providers import FakeDecisionModel, choose
from scripts.triage_notes import needs_action, triage_lines

__all__ = ["right_moves", "selection_lines"]

_VERDICT = " (verdict): "


def right_moves(request: DecisionRequest) -> Mapping[str, Answer]:
    """The moves the objective asks for: split the note (``note#1``) once, judge each part, then
    finish; every selection kept (the answers of the selections are not what the pack uses)."""
    questions = request.questions
    answers: dict[str, Answer] = {
        qid: NoulAnswer(0.9) for qid in questions if qid.startswith("select_")
    }
    nxt = questions.get("next")
    if not isinstance(nxt, Choice):
        return answers
    for qid, question in questions.items():
        if qid.endswith("_input") and isinstance(question, Choice):
            answers[qid] = choose(question, next(iter(question.options)))
    split = questions.get("split_note_input")
    judge = questions.get("judge_note_input")
    if isinstance(split, Choice) and "note#1" in split.options:
        answers["next"] = choose(nxt, "split_note")
        answers["split_note_input"] = choose(split, "note#1")
    elif isinstance(judge, Choice) and any(ref != "note#1" for ref in judge.options):
        answers["next"] = choose(nxt, "judge_note")
        answers["judge_note_input"] = choose(
            judge, next(ref for ref in judge.options if ref != "note#1")
        )
    else:
        answers["next"] = choose(nxt, "finish")
    return answers


async def _finishing_request(text: str) -> DecisionRequest:
    from harness.demo.triage import Note, Triage
    from harness.runs import run

    model = FakeDecisionModel(right_moves)
    await run(Triage, Note(text), model=model)
    asked = [r for r in model.requests if any(q.startswith("select_") for q in r.questions)]
    if not asked:
        raise AssertionError(f"the scripted run of {text!r} asked no selection")
    return asked[-1]


def _verdicts(request: DecisionRequest) -> dict[str, str]:
    """Each verdict's ref and the note it judged, from the state's digest lines."""
    state = request.state
    assert isinstance(state, Mapping)
    lines = state["artifacts"]
    assert isinstance(lines, list)
    found = {}
    for line in lines:
        ref, sep, words = str(line).partition(_VERDICT)
        if sep:
            found[ref] = str(json.loads(words)["note"])
    return found


def selection_lines(seed: int) -> list[dict[str, object]]:
    """The pack's lines: per labelled note (:func:`triage_lines`), a decision per verdict of
    its scripted run, in file order."""
    notes = triage_lines(seed)

    async def requests() -> list[DecisionRequest]:
        return [await _finishing_request(str(_text(case))) for case in notes]

    lines: list[dict[str, object]] = []
    for case, request in zip(notes, asyncio.run(requests()), strict=True):
        parts = [p.strip() for p in str(_text(case)).split(";")]
        verdicts = _verdicts(request)
        tags = case["tags"]
        assert isinstance(tags, list)
        for qid, question in request.questions.items():
            ref = qid.removeprefix("select_")
            if ref == qid:
                continue
            note = verdicts[ref]
            if note not in parts:  # the scripted moves judge parts only
                raise AssertionError(f"{ref} of {case['name']} judged {note!r}, not a part")
            one = DecisionRequest(request.state, {qid: question})
            lines.append(
                {
                    "name": f"{case['name']}/{ref}",
                    "tags": [*tags, "select"],
                    "request": systemone.encode_request(one, None),
                    "labels": {qid: needs_action(note)},
                }
            )
    return lines


def _text(case: Mapping[str, object]) -> object:
    given = case["input"]
    assert isinstance(given, Mapping)
    return given["text"]
