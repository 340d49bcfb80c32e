"""The guide's example thinker, shipped so the first program runs anywhere harness is installed:
a note split on ';', each part judged, the parts that need action kept.

``from harness.demo import triage`` then ``harness.run_sync(triage.Triage, triage.Note("..."))``;
on the command line ``harness run harness.demo.triage:Triage --input '{"text": "..."}'``. The
guide (``docs/guide.md``) builds the same classes step by step.
"""

from __future__ import annotations

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.errors import InvalidInputError
from harness.jobs import JobContext
from harness.scope import Identifiable
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool, tool_name

__all__ = ["JudgeNote", "Note", "SplitNote", "Triage", "TriageVerdict"]


@attrs.frozen
class Note(Artifact, alias="note"):
    """A piece of text to triage."""

    text: str


@attrs.frozen
class TriageVerdict(Artifact, alias="verdict"):
    """Whether a note needs action (the guide builds it under this name): a triage's verdict, not
    a palette rule's (:class:`harness.palette.Verdict`)."""

    note: str
    urgent: bool


@tool_name("split_note")
class SplitNote(DecisionTool[Note, ListArtifact[Note]]):
    """Splits a note into its parts on ';'."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Note]:
        parts = [part.strip() for part in input.text.split(";") if part.strip()]
        if len(parts) < 2:
            raise InvalidInputError("note", input.text, "has no ';' to split on")
        return ListArtifact.of(Note, [Note(part) for part in parts])


@tool_name("judge_note")
class JudgeNote(DecisionTool[Note, ListArtifact[TriageVerdict]]):
    """Judges whether a note needs action soon."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[TriageVerdict]:
        urgent = any(word in input.text.lower() for word in ("due", "today", "urgent", "now"))
        return ListArtifact.of(TriageVerdict, [TriageVerdict(input.text, urgent)])


@tool_name("triage")
class Triage(DecisionThinker[Note, TriageVerdict]):
    """Triages a note into the verdicts that need action."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=TriageVerdict,
            key_tool=JudgeNote,
            palette=(SplitNote,),
            objective="Split the note, judge every part, and keep the parts that need action",
            max_turns=8,
        )
