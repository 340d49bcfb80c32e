"""A small thinker to read and run: notes split on ';', each part judged.

Run it on the embedded model (no configuration)::

    python examples/triage.py "alpha is due; beta can wait; gamma shipped"

or through the command line: ``harness run examples.triage:Triage --input '{"text": "..."}'``.
"""

from __future__ import annotations

import sys

import attrs

from harness import (
    Artifact,
    DecisionThinker,
    DecisionTool,
    Identifiable,
    InvalidInputError,
    JobContext,
    ListArtifact,
    run_sync,
    tool_name,
)


@attrs.frozen
class Note(Artifact, alias="note"):
    """A piece of text to triage."""

    text: str


@attrs.frozen
class Verdict(Artifact, alias="verdict"):
    """Whether a note needs action."""

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
class JudgeNote(DecisionTool[Note, ListArtifact[Verdict]]):
    """Judges whether a note needs action soon."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        urgent = any(word in input.text.lower() for word in ("due", "today", "urgent", "now"))
        return ListArtifact.of(Verdict, [Verdict(input.text, urgent)])


@tool_name("triage")
class Triage(DecisionThinker[Note, Verdict]):
    """Triages a note into the verdicts that need action."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=(SplitNote,),
            objective="Split the note, judge every part, and keep the parts that need action",
            max_turns=8,
        )


def main(text: str) -> None:
    """Run the thinker on the configured default model (the embedded one unless you configured
    another) and print each turn, the answer and what it used."""
    result = run_sync(Triage, Note(text))
    for turn in result.turns:
        print(turn)
    for verdict in result.items:
        print(f"kept {result.ref(verdict)}: {verdict.note} (urgent: {verdict.urgent})")
    print(f"used: {result.usage}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "alpha is due today; beta can wait")
