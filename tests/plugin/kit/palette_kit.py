"""Artifacts and tools shared by the plugin's YAML cases (on MYPYPATH while they run)."""

from __future__ import annotations

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.jobs import JobContext as JobContext
from harness.thinker._thinker import DecisionThinker as DecisionThinker
from harness.tools import DecisionTool, tool_name
from harness.tools import Identifiable as Identifiable


@attrs.frozen
class Note(Artifact, alias="note"):
    text: str


@attrs.frozen
class SubNote(Note, alias="sub_note"):
    pass


@attrs.frozen
class Part(Artifact, alias="part"):
    text: str


@attrs.frozen
class Verdict(Artifact, alias="verdict"):
    ok: bool


@attrs.frozen
class SubVerdict(Verdict, alias="sub_verdict"):
    pass


@attrs.frozen
class Orphan(Artifact, alias="orphan"):
    n: int


@tool_name("split_note")
class SplitNote(DecisionTool[Note, ListArtifact[Part]]):
    """Splits a note into parts."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Part]:
        raise NotImplementedError


@tool_name("refine_note")
class RefineNote(DecisionTool[Note, SubNote]):
    """Refines a note."""

    async def execute(self, input: Note, context: JobContext) -> SubNote:
        raise NotImplementedError


@tool_name("judge_note")
class JudgeNote(DecisionTool[Note, ListArtifact[Verdict]]):
    """Judges a note."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("judge_part")
class JudgePart(DecisionTool[Part, ListArtifact[Verdict]]):
    """Judges a part."""

    async def execute(self, input: Part, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("judge_parts")
class JudgeParts(DecisionTool[ListArtifact[Part], ListArtifact[SubVerdict]]):
    """Judges a list of parts at once."""

    async def execute(
        self, input: ListArtifact[Part], context: JobContext
    ) -> ListArtifact[SubVerdict]:
        raise NotImplementedError


@tool_name("judge_orphan")
class JudgeOrphan(DecisionTool[Orphan, ListArtifact[Verdict]]):
    """Judges an orphan, which no run from a note ever holds."""

    async def execute(self, input: Orphan, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("read_orphan")
class ReadOrphan(DecisionTool[Orphan, Note]):
    """Reads an orphan."""

    async def execute(self, input: Orphan, context: JobContext) -> Note:
        raise NotImplementedError
