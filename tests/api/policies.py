"""The fake model's policy for the example thinker: split, judge each part, keep alpha."""

from __future__ import annotations

from collections.abc import Mapping

from harness import Answer, Choice, DecisionRequest, NoulAnswer
from harness.testing import choose, digest_of


def triage_policy(request: DecisionRequest) -> Mapping[str, Answer]:
    """Split the note once, judge every part, then finish keeping the verdicts about alpha."""
    answers: dict[str, Answer] = {}
    for qid, question in request.questions.items():
        if qid.startswith("select_"):
            words = digest_of(request, qid.removeprefix("select_"))
            answers[qid] = NoulAnswer(0.9 if "alpha" in words else 0.1)
        elif isinstance(question, Choice) and qid != "next":
            answers[qid] = choose(question, next(iter(question.options)))
    move = request.questions.get("next")
    if isinstance(move, Choice):
        split = request.questions.get("split_note_input")
        judge = request.questions.get("judge_note_input")
        state = request.state
        fresh = isinstance(state, dict) and state.get("done") == ["nothing yet"]
        if fresh and "split_note" in move.options:
            # a one-option choice (split_note_input: note#1) is answered by the client itself
            answers["next"] = choose(move, "split_note")
            if isinstance(split, Choice):
                answers["split_note_input"] = choose(split, "note#1")
        elif isinstance(judge, Choice) and any(ref != "note#1" for ref in judge.options):
            ref = next(ref for ref in judge.options if ref != "note#1")
            answers["next"] = choose(move, "judge_note")
            answers["judge_note_input"] = choose(judge, ref)
        else:
            answers["next"] = choose(move, "finish" if "finish" in move.options else "judge_note")
    return answers
