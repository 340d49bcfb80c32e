"""A small thinker and its labelled cases, for trying evals (docs/evals.md walks through them).

:class:`KeepRefunds` splits a customer's note (the guide's :class:`~harness.demo.triage.Note`)
into sentences and keeps those asking for money back. :data:`EXAMPLE_CASES` label a few notes;
:func:`write_example_cases` writes them as the JSONL file ``harness eval`` reads::

    harness eval harness.evals.example:KeepRefunds refunds.jsonl --model embedded
"""

from __future__ import annotations

import json  # the stdlib: lines with json's default separators, which orjson cannot write
import os
from pathlib import Path
from typing import Final

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.demo.triage import Note
from harness.jobs import JobContext
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool, Identifiable, tool_name

__all__ = [
    "EXAMPLE_CASES",
    "KeepRefunds",
    "Note",
    "Sentence",
    "SplitSentences",
    "write_example_cases",
]


@attrs.frozen
class Sentence(Artifact, alias="sentence"):
    """One sentence of a note."""

    text: str


@tool_name("split_sentences")
class SplitSentences(DecisionTool[Note, ListArtifact[Sentence]]):
    """Splits a note into its sentences (at each period)."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Sentence]:
        parts = [part.strip() for part in input.text.split(".") if part.strip()]
        return ListArtifact.of(Sentence, [Sentence(part) for part in parts])


@tool_name("keep_refunds")
class KeepRefunds(DecisionThinker[Note, Sentence]):
    """Keeps the sentences of a note that ask for money back."""

    def __init__(self, parent: Identifiable, *, selection_threshold: float | None = None) -> None:
        super().__init__(
            parent,
            output_type=Sentence,
            key_tool=SplitSentences,
            palette=(),
            objective="Keep the sentences that ask for money back",
            selection_threshold=selection_threshold,
        )


def _case(name: str, text: str, keep: list[str], *tags: str) -> dict[str, object]:
    return {
        "name": name,
        "input": {"text": text},
        "expected": [{"text": sentence} for sentence in keep],
        "tags": list(tags),
    }


EXAMPLE_CASES: Final[tuple[dict[str, object], ...]] = (
    _case("plain", "I want a refund. The box was fine.", ["I want a refund"], "refund"),
    _case(
        "twice",
        "Please refund me. Hello there. I need my money back.",
        ["Please refund me", "I need my money back"],
        "refund",
    ),
    _case("praise", "Thanks for the quick delivery. All good.", [], "praise"),
    _case("late", "Where is my parcel. It is late again.", [], "delivery"),
    _case(
        "mixed",
        "Refund the shoes please. Keep the hat. I love the hat.",
        ["Refund the shoes please"],
        "refund",
    ),
    _case("policy", "Your refund policy page is broken. Fix it.", [], "website", "hard"),
    _case(
        "charged",
        "I was charged twice. Give me back the second payment.",
        ["Give me back the second payment"],
        "refund",
        "hard",
    ),
    _case("question", "Do you ship to Norway. What does it cost.", [], "delivery"),
)
"""Eight labelled notes: each case's input and the sentences a good answer keeps."""


def write_example_cases(path: str | os.PathLike[str] = "refunds.jsonl") -> Path:
    """Write :data:`EXAMPLE_CASES` as JSONL (one case a line) to ``path``; the path."""
    written = Path(path)
    written.write_text(
        "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in EXAMPLE_CASES),
        encoding="utf-8",
    )
    return written
