"""A small thinker and fake models for the eval tests: a note split into sentences, the answer
the sentences worth keeping (those about a refund). The artifacts and the splitter are the shipped
example's (:mod:`harness.evals.example`); the thinker keeps its own name and objective."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

from harness.artifacts import ListArtifact
from harness.decision import Answer, Choice, DecisionRequest, Noul
from harness.evals.example import Note as Note
from harness.evals.example import Sentence as Sentence
from harness.evals.example import SplitSentences as SplitSentences
from harness.jobs import JobContext
from harness.testing import choose, default_answers, digest_of, yes
from harness.thinker import FINISH, DecisionThinker
from harness.tools import DecisionTool, Identifiable, tool_name


@tool_name("keep_sentences")
class KeepSentences(DecisionThinker[Note, Sentence]):
    """Keeps the sentences of a note that ask for a refund."""

    def __init__(self, parent: Identifiable, *, selection_threshold: float | None = None) -> None:
        super().__init__(
            parent,
            output_type=Sentence,
            key_tool=SplitSentences,
            palette=(),
            objective="Keep the sentences that ask for a refund",
            selection_threshold=selection_threshold,
        )


def refund_policy(
    yes_if: float = 0.9, yes_else: float = 0.2
) -> Callable[[DecisionRequest], dict[str, Answer]]:
    """A policy splitting the note, then finishing, saying yes to sentences about a refund with
    ``yes_if`` and to others with ``yes_else``."""

    def policy(request: DecisionRequest) -> dict[str, Answer]:
        answers = default_answers(request)
        for question_id, question in request.questions.items():
            if question_id == "next" and isinstance(question, Choice):
                tool = next(o for o in question.options if o.startswith("split_sentences"))
                move = FINISH if FINISH in question.options else tool
                answers[question_id] = choose(question, move, probability=0.9)
            elif isinstance(question, Noul):
                words = digest_of(request, question_id.removeprefix("select_"))
                answers[question_id] = yes(yes_if if "refund" in words.lower() else yes_else)
        return answers

    return policy


@tool_name("split_sentences_slowly")
class SplitSentencesSlowly(DecisionTool[Note, ListArtifact[Sentence]]):
    """:class:`SplitSentences`, noting each run in the file $HARNESS_EVAL_RUN_LOG and pausing
    $HARNESS_EVAL_PAUSE seconds (a long eval to kill midway)."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Sentence]:
        log = os.environ.get("HARNESS_EVAL_RUN_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as file:  # noqa: ASYNC230 - a test tool's tiny log
                file.write(input.text + "\n")
        await asyncio.sleep(float(os.environ.get("HARNESS_EVAL_PAUSE", "0")))
        return await SplitSentences(self).execute(input, context)


@tool_name("keep_sentences_slowly")
class KeepSentencesSlowly(DecisionThinker[Note, Sentence]):
    """:class:`KeepSentences` with a slow key tool."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Sentence,
            key_tool=SplitSentencesSlowly,
            palette=(),
            objective="Keep the sentences that ask for a refund",
        )


@tool_name("keep_sentences_strictly")
class KeepSentencesStrictly(KeepSentences):
    """:class:`KeepSentences` whose constructor sets its threshold (0.7)."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(parent, selection_threshold=0.7)
