"""A small thinker for `harness run`: split a sentence into words, keep the words."""

from __future__ import annotations

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.jobs import JobContext
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool, Identifiable, tool_name


@attrs.frozen
class Sentence(Artifact, alias="sentence"):
    text: str


@attrs.frozen
class Word(Artifact, alias="word"):
    text: str
    position: int


@tool_name("split_words")
class SplitWords(DecisionTool[Sentence, ListArtifact[Word]]):
    """Splits a sentence into its words."""

    async def execute(self, input: Sentence, context: JobContext) -> ListArtifact[Word]:
        return ListArtifact.of(Word, [Word(w, i) for i, w in enumerate(input.text.split())])


@tool_name("find_words")
class WordFinder(DecisionThinker[Sentence, Word]):
    """Finds the words of a sentence worth keeping."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Word,
            key_tool=SplitWords,
            palette=(),
            objective="Keep the words that name a Greek letter",
        )


class NotATool:
    """Not a tool at all (harness run refuses it)."""


@attrs.frozen
class Part(Artifact, alias="part"):
    text: str


@tool_name("take_part")
class TakePart(DecisionTool[Sentence, Part]):
    """Takes the sentence as one part."""

    async def execute(self, input: Sentence, context: JobContext) -> Part:
        return Part(input.text)


@tool_name("divide_part")
class DividePart(DecisionTool[Part, ListArtifact[Word]]):
    """Crashes, as a user's tool with a bug does (not a readable failure)."""

    async def execute(self, input: Part, context: JobContext) -> ListArtifact[Word]:
        raise ZeroDivisionError("the part has no words to divide by")


@tool_name("find_words_badly")
class CrashingFinder(DecisionThinker[Sentence, Word]):
    """One move always runs (take_part), then the only move left (divide_part) crashes."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Word,
            key_tool=DividePart,
            palette=(TakePart,),
            objective="Keep the words that name a Greek letter",
        )


class UnnamedSplit(DecisionTool[Sentence, ListArtifact[Word]]):
    """Splits a sentence, but carries no @tool_name: a palette may not hold it."""

    async def execute(self, input: Sentence, context: JobContext) -> ListArtifact[Word]:
        return ListArtifact.of(Word, [Word(w, i) for i, w in enumerate(input.text.split())])


@tool_name("find_words_illegally")
class IllegalFinder(DecisionThinker[Sentence, Word]):
    """A thinker whose palette is not legal: its key tool has no name."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Word,
            key_tool=UnnamedSplit,  # type: ignore[harness-name]  # illegal on purpose: the CLI test
            palette=(),
            objective="Keep the words that name a Greek letter",
        )
