"""One source of truth: the same palettes, fed to the mypy plugin (``mypy.api.run`` over generated
modules) and to the runtime validator, give the same verdicts: codes, messages and notes (the
fix last).

Where plain mypy already reports a problem the plugin stays silent; the mypy code stands for the
verdict then (``[type-abstract]`` on an abstract key tool, ``[arg-type]`` on a list palette are
``harness-tool``) and only codes are compared. mypy's ``[arg-type]`` on a key tool with the wrong
output is complemented by the plugin's own ``harness-key-tool``, which is compared. The plugin's
pointer from a palette entry to its class's definition-site error (a note of its own, which the
runtime has no use for) is left out.

A palette or key tool chosen by a condition (``FAST``) is checked by the plugin in every branch;
the runtime sees one branch per run, so the module is loaded with ``FAST`` false and true and
the runtime's verdicts over both runs are compared with the plugin's (its note naming the branch
left out).

What a type checker cannot decide (a computed name, an entry typed ``type[SplitNote]``) the
plugin reports as ``harness-undecidable`` where the runtime decides: such a case lists the
plugin's codes apart, and the guarantee checked is that the plugin never passes a palette the
runtime refuses.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from mypy import api

from harness.cli._check import check_targets
from harness.palette import Verdict, palette_report, thinker_input_of

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "tests" / "plugin" / "kit"
PLAIN_MYPY = {"type-abstract": "harness-tool", "override": "harness-open-type"}
#: mypy's [arg-type] stands for a verdict by the argument it is about (None: the plugin's own
#: verdict follows it and is compared instead).
ARG_TYPE = {"palette": "harness-tool", "key_tool": None}
ARGUMENT = re.compile(r'^Argument "(?P<name>\w+)"')
BRANCH = re.compile(r"^Only in some branches of a conditional argument: ")
LINE = re.compile(r"^(?P<file>case_\w+)\.py:\d+: (?P<kind>error|note): (?P<text>.*)$")
CODED = re.compile(r"^(?P<message>.*)  \[(?P<code>[a-z-]+)\]$")
POINTER = re.compile(r'^"\w+" breaks the palette rules where it is defined ')

HEADER = """\
from __future__ import annotations
import abc
import os
from collections.abc import Callable
from enum import StrEnum
from typing import (
    TYPE_CHECKING, Annotated, Any, Final, Generic, Never, NewType, ParamSpec, TypedDict, TypeVar,
    overload,
)
import attrs
import typing_extensions
from harness.artifacts import Artifact, ListArtifact
from harness.tools import DecisionTool, tool_name
from palette_kit import (
    DecisionThinker, Identifiable, JobContext, JudgeNote, JudgeOrphan, JudgePart, Note, Orphan,
    Part, ReadOrphan, RefineNote, SplitNote, SubNote, Verdict,
)

T = TypeVar("T", bound=Artifact)
In = TypeVar("In", bound=Artifact)
Out = TypeVar("Out", bound=Artifact)
FAST: Final = os.environ.get("HARNESS_CASE_FAST") == "1"
"""

THINKER = """
KEY: Final = {key}
PALETTE: Final = {palette}
OUTPUT: Final = {output}
OBJECTIVE: Final = {objective!r}


class Triage(DecisionThinker[{thinker_input}, {thinker_output}]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type={output},
            key_tool={key},
            palette={palette},
            objective={objective!r},
        )
"""


@dataclass(frozen=True)
class Case:
    """One generated module: extra definitions, the thinker's arguments, the codes expected.

    ``palette`` lists the entries of a tuple literal; ``palette_expr`` replaces the whole
    expression (a list, a conditional, a constant). ``plugin_codes`` is set where the plugin
    cannot decide what the runtime decides.
    """

    codes: frozenset[str]
    key: str = "JudgeNote"
    palette: str = ""
    extra: str = ""
    thinker_output: str = "Verdict"
    objective: str = "Run the case"
    palette_expr: str | None = None
    plugin_codes: frozenset[str] | None = None
    thinker_input: str = "Note"
    thinker: str | None = None  # the whole thinker part (KEY, PALETTE, ..., Triage) instead
    modules: tuple[tuple[str, str], ...] = ()  # other modules beside the case's: (name, source)

    @property
    def conditional(self) -> bool:
        """Whether an argument is chosen by ``FAST``."""
        return "FAST" in f"{self.key} {self.palette} {self.palette_expr}"


def _case(codes: set[str], plugin_codes: set[str] | None = None, **fields: Any) -> Case:
    return Case(
        frozenset(codes),
        plugin_codes=frozenset(plugin_codes) if plugin_codes is not None else None,
        **fields,
    )


#: A vendored tool class without @tool_name, in a module of its own.
CSV_VENDOR = """
from harness.jobs import JobContext
from harness.tools import DecisionTool
from palette_kit import Note


class CsvReader(DecisionTool[Note, Note]):
    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError
"""

#: A module naming the vendored class in place, and binding it to ``ReadCsv``.
CSV_NAMING = """
from harness.tools import tool_name
from {vendor} import CsvReader

ReadCsv = tool_name("{name}")(CsvReader)
"""

UNNAMED = """
class Unnamed(DecisionTool[Note, Note]):
    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError
"""


ECHO = """
@tool_name("echo")
class Echo(DecisionTool[Note, T], Generic[T]):
    async def execute(self, input: Note, context: JobContext) -> T:
        raise NotImplementedError
"""

SETTINGS = """
class NoteSettings(TypedDict):
    key_tool: type[DecisionTool[Never, ListArtifact[Verdict]]]
    palette: tuple[type[DecisionTool[Never, Artifact]], ...]
    objective: str
"""

BOX = """
        Item = TypeVar("Item", bound=Artifact, covariant=True)


        @attrs.frozen
        class Box(Artifact, Generic[Item], alias="box"):
            item: Item
        """  # indented as the cases' own definitions it is joined to

CASES: dict[str, Case] = {
    "legal": _case(set(), key="JudgePart", palette="SplitNote, RefineNote"),
    "abstract_entry": _case(
        {"harness-tool"},
        palette="HalfDone,",
        extra="""
        @tool_name("half_done")
        class HalfDone(DecisionTool[Note, Note]):
            pass
        """,
    ),
    "abstract_key": _case(
        {"harness-tool"},
        key="HalfJudge",
        extra="""
        @tool_name("half_judge")
        class HalfJudge(DecisionTool[Note, ListArtifact[Verdict]]):
            pass
        """,
    ),
    "missing_name": _case(
        {"harness-name"},
        palette="Nameless,",
        extra="""
        class Nameless(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "ctor_decorated": _case(
        {"harness-ctor"},
        palette="Twice,",
        extra="""
        @tool_name("twice")
        class Twice(DecisionTool[Note, Note]):
            def __init__(self, parent: Identifiable, times: int) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "ctor_undecorated": _case(
        {"harness-name", "harness-ctor"},
        palette="Twice,",
        extra="""
        class Twice(DecisionTool[Note, Note]):
            def __init__(self, parent: Identifiable, *, times: int) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "open_type": _case(
        {"harness-open-type"},
        palette="Loose,",
        extra="""
        @tool_name("loose")
        class Loose(DecisionTool[Note, Any]):
            async def execute(self, input: Note, context: JobContext) -> Any:
                raise NotImplementedError
        """,
    ),
    "open_type_any_in_list": _case(
        {"harness-open-type"},
        palette="Spread,",
        extra="""
        @tool_name("spread")
        class Spread(DecisionTool[Note, ListArtifact[Any]]):
            async def execute(self, input: Note, context: JobContext) -> ListArtifact[Any]:
                raise NotImplementedError
        """,
    ),
    "type_variable": _case({"harness-open-type"}, palette="Echo,", extra=ECHO),
    "type_variable_in_list": _case(
        {"harness-open-type"},
        palette="EchoAll,",
        extra="""
        @tool_name("echo_all")
        class EchoAll(DecisionTool[ListArtifact[T], Note], Generic[T]):
            async def execute(self, input: ListArtifact[T], context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "union": _case(
        {"harness-open-type"},
        palette="Either,",
        extra="""
        @tool_name("either")
        class Either(DecisionTool[Note, Part | Verdict]):
            async def execute(self, input: Note, context: JobContext) -> Part | Verdict:
                raise NotImplementedError
        """,
    ),
    "union_of_items_in_a_key_tools_list": _case(
        {"harness-open-type"},
        key="JudgeEither",
        extra="""
        @tool_name("judge_either")
        class JudgeEither(DecisionTool[Note, ListArtifact[Verdict | Part]]):
            async def execute(
                self, input: Note, context: JobContext
            ) -> ListArtifact[Verdict | Part]:
                raise NotImplementedError
        """,
    ),
    "tool_instance_in_the_palette": _case(
        {"harness-tool"},
        palette="SplitNote(Workflow()),",
        extra="""
        from harness.tools import Workflow
        """,
    ),
    "partial_of_a_tool_in_the_palette": _case(
        {"harness-tool", "harness-dead-tool"},
        palette="functools.partial(SplitNote), JudgePart,",
        extra="""
        import functools
        """,
    ),
    "string_in_the_palette": _case({"harness-tool"}, palette='"split_note",'),
    "none_in_the_palette": _case({"harness-tool"}, palette="None, SplitNote,"),
    "attrs_tool_keeping_its_written_init": _case(
        set(),
        palette="ReadNote,",
        extra="""
        @tool_name("read_note")
        @attrs.define
        class ReadNote(DecisionTool[Note, Part]):
            def __init__(self, parent: Identifiable, *, times: int = 1) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Part:
                raise NotImplementedError
        """,
    ),
    "attrs_tool_whose_written_init_wants_more": _case(
        {"harness-ctor"},
        palette="ReadNote,",
        extra="""
        @tool_name("read_note")
        @attrs.frozen
        class ReadNote(DecisionTool[Note, Part]):
            def __init__(self, parent: Identifiable, times: int) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Part:
                raise NotImplementedError
        """,
    ),
    "named_nested_thinker_wanting_more_than_its_parent": _case(
        {"harness-ctor"},
        palette="Inner,",
        extra="""
        @tool_name("inner")
        class Inner(DecisionThinker[Note, Verdict]):
            def __init__(self, parent: Identifiable, times: int) -> None:
                super().__init__(
                    parent,
                    output_type=Verdict,
                    key_tool=JudgePart,
                    palette=(SplitNote,),
                    objective="Judge every part",
                )
        """,
    ),
    "tool_instance_as_the_key_tool": _case(
        {"harness-tool"},
        key="JudgeNote(Workflow())",
        extra="""
        from harness.tools import Workflow
        """,
    ),
    "subscripted_generic_key_tool": _case(
        {"harness-tool"},
        key="JudgeAny[Note]",
        extra="""
        class JudgeAny(DecisionTool[T, ListArtifact[Verdict]]):
            async def execute(self, input: T, context: JobContext) -> ListArtifact[Verdict]:
                raise NotImplementedError
        """,
    ),
    "subscripted_generic_palette_entry": _case(
        {"harness-tool"},
        palette="EchoAny[Note],",
        extra="""
        class EchoAny(DecisionTool[T, Note]):
            async def execute(self, input: T, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "f_string_name_of_a_final_duplicates": _case(
        {"harness-duplicate"},
        palette="SplitNote, SplitKind",
        extra="""
        KIND: Final = "note"

        @tool_name(f"split_{KIND}")
        class SplitKind(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "enum_value_name_duplicates": _case(
        {"harness-duplicate"},
        palette="SplitNote, SplitByCommand",
        extra="""
        import enum

        class Command(enum.Enum):
            SPLIT = "split_note"

        @tool_name(Command.SPLIT.value)
        class SplitByCommand(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "key_tool_output_named_by_a_type_alias_type": _case(
        set(),
        key="JudgeIntoVerdicts",
        extra="""
        Verdicts = typing_extensions.TypeAliasType("Verdicts", ListArtifact[Verdict])

        @tool_name("judge_into_verdicts")
        class JudgeIntoVerdicts(DecisionTool[Note, Verdicts]):
            async def execute(self, input: Note, context: JobContext) -> Verdicts:
                raise NotImplementedError
        """,
    ),
    "dataclass_tool_without_fields": _case(
        {"harness-ctor"},
        palette="Plain,",
        extra="""
        import dataclasses

        @tool_name("plain")
        @dataclasses.dataclass
        class Plain(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "dataclass_tool_keeping_its_init": _case(
        set(),
        palette="Plain,",
        extra="""
        import dataclasses

        @tool_name("plain")
        @dataclasses.dataclass(init=False)
        class Plain(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "named_by_a_decorator_from_a_registry": _case(
        set(),
        {"harness-undecidable"},
        palette="Registered,",
        extra="""
        DECORATORS: Final = {"split": tool_name("registered")}

        @DECORATORS["split"]
        class Registered(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "final_tool_without_a_name": _case(
        {"harness-name"},
        palette="Unnamed,",
        extra="""
        @typing_extensions.final
        class Unnamed(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "generic_base": _case(
        {"harness-dead-tool"},
        key="JudgePart",
        palette="SplitViaBase, ReadOrphan",
        extra="""
        class Base(DecisionTool[In, Out], Generic[Out, In]):
            pass

        @tool_name("split_via_base")
        class SplitViaBase(Base[ListArtifact[Part], Note]):
            async def execute(self, input: Note, context: JobContext) -> ListArtifact[Part]:
                raise NotImplementedError
        """,
    ),
    "list_subclass": _case(
        {"harness-dead-tool"},
        key="JudgeToVerdicts",
        palette="SplitToParts, ReadOrphan",
        extra="""
        class PartList(ListArtifact[Part], alias="part_list"):
            pass

        class Verdicts(ListArtifact[Verdict], alias="verdicts"):
            pass

        @tool_name("split_to_parts")
        class SplitToParts(DecisionTool[Note, PartList]):
            async def execute(self, input: Note, context: JobContext) -> PartList:
                raise NotImplementedError

        @tool_name("judge_to_verdicts")
        class JudgeToVerdicts(DecisionTool[Part, Verdicts]):
            async def execute(self, input: Part, context: JobContext) -> Verdicts:
                raise NotImplementedError
        """,
    ),
    "decorated_twice": _case(
        {"harness-duplicate"},
        palette="SplitNote, Copy",
        extra="""
        @tool_name("split_note")
        @tool_name("copy_note")
        class Copy(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "duplicate": _case(
        {"harness-duplicate"},
        palette="SplitNote, SplitNoteToo",
        extra="""
        @tool_name("split_note")
        class SplitNoteToo(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "key_output": _case({"harness-key-tool"}, key="SplitNote", thinker_output="Artifact"),
    "graph": _case({"harness-graph"}, key="JudgeOrphan", palette="SplitNote,"),
    "dead_tool": _case({"harness-dead-tool"}, palette="ReadOrphan,"),
    "graph_and_dead_tool": _case(
        {"harness-graph", "harness-dead-tool"}, key="JudgeOrphan", palette="ReadOrphan,"
    ),
    "objective": _case({"harness-objective"}, objective="  "),
    "nested_thinker": _case(
        {"harness-name"},
        palette="Inner,",
        extra="""
        class Inner(DecisionThinker[Note, Verdict]):
            def __init__(self, parent: Identifiable) -> None:
                super().__init__(
                    parent, output_type=Verdict, key_tool=JudgeNote, palette=(),
                    objective="Judge the note",
                )
        """,
    ),
    "conditional_palette": _case(
        {"harness-name"},
        palette_expr="(SplitNote,) if FAST else (SplitNote, Unnamed)",
        extra=UNNAMED,
    ),
    "conditional_palette_both_branches_broken": _case(
        {"harness-name", "harness-dead-tool"},
        palette_expr="(Unnamed, ReadOrphan) if FAST else (Unnamed,)",
        extra=UNNAMED,
    ),
    "conditional_key_tool": _case(
        {"harness-graph"}, key="JudgeNote if FAST else JudgeOrphan", palette="SplitNote,"
    ),
    "conditional_key_tool_output": _case(
        {"harness-key-tool"}, key="JudgeNote if FAST else SplitNote", thinker_output="Artifact"
    ),
    "conditional_entry": _case(
        {"harness-dead-tool"}, palette="(RefineNote if FAST else ReadOrphan),"
    ),
    "conditional_legal": _case(
        set(),
        key="JudgePart if FAST else JudgeNote",
        palette="SplitNote, (RefineNote if FAST else SplitNote)",
    ),
    # Two arguments chosen by the same flag: a type checker does not know they go together, so
    # the plugin checks every combination (JudgePart with RefineNote alone) where a run only
    # meets two of them. Over-approximated, never missed; the fix is one call per branch.
    "conditional_arguments_taken_as_independent": _case(
        set(),
        {"harness-graph"},
        key="JudgePart if FAST else JudgeNote",
        palette="(SplitNote if FAST else RefineNote),",
    ),
    "key_output_explicit_o": _case({"harness-key-tool"}, key="SplitNote"),
    "computed_name": _case(
        set(),
        {"harness-undecidable"},
        palette="SplitKind,",
        extra="""
        KIND = "note"

        @tool_name(f"split_{KIND}")
        class SplitKind(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "non_final_name": _case(
        set(),
        {"harness-undecidable"},
        palette="ReadIt,",
        extra="""
        NAME = "read_it"

        @tool_name(NAME)
        class ReadIt(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "final_name": _case(
        {"harness-duplicate"},
        palette="SplitNote, SplitFinal",
        extra="""
        SPLIT: Final = "split_note"

        @tool_name(SPLIT)
        class SplitFinal(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "class_typed_entries": _case(
        {"harness-dead-tool"},
        {"harness-undecidable"},
        palette_expr="TOOLS",
        extra="""
        TOOLS: tuple[type[SplitNote], type[ReadOrphan]] = (SplitNote, ReadOrphan)
        """,
    ),
    "class_typed_key_tool": _case(
        set(),
        {"harness-undecidable"},
        key="CHOSEN",
        extra="""
        CHOSEN: type[JudgeNote] = JudgeNote
        """,
    ),
    "list_palette": _case({"harness-tool"}, palette_expr="[SplitNote]"),
    "list_palette_with_a_dead_tool": _case(
        {"harness-tool"}, palette_expr="[SplitNote, ReadOrphan]"
    ),
    "open_type_fix_from_execute": _case(
        {"harness-open-type"},
        palette="Hinted,",
        extra="""
        @tool_name("hinted")
        class Hinted(DecisionTool[Any, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "open_type_in_generic_base": _case(
        {"harness-open-type"},
        palette="Relay,",
        extra="""
        class Base(DecisionTool[In, Out], Generic[In, Out]):
            pass

        @tool_name("relay")
        class Relay(Base[Note, Out], Generic[Out]):
            async def execute(self, input: Note, context: JobContext) -> Out:
                raise NotImplementedError
        """,
    ),
    # -- what a checker could pass in silence ---------------------------------------------------
    "generic_input_bound_by_a_subclass": _case(
        {"harness-graph", "harness-dead-tool"},
        {"harness-undecidable", "harness-graph", "harness-dead-tool"},
        thinker="""
        KEY: Final = JudgePart
        PALETTE: Final = (SplitNote,)
        OUTPUT: Final = Verdict
        OBJECTIVE: Final = "Judge the parts"


        class Base(DecisionThinker[In, Verdict], Generic[In]):
            def __init__(self, parent: Identifiable) -> None:
                super().__init__(
                    parent,
                    output_type=Verdict,
                    key_tool=JudgePart,
                    palette=(SplitNote,),
                    objective="Judge the parts",
                )


        class Triage(Base[Orphan]):
            pass
        """,
    ),
    "class_attribute_overridden_by_a_subclass": _case(
        {"harness-name"},
        {"harness-undecidable"},
        extra="""
        class QuietSplit(SplitNote):
            pass
        """,
        thinker="""
        KEY: Final = JudgeNote
        PALETTE: Final = (QuietSplit,)
        OUTPUT: Final = Verdict
        OBJECTIVE: Final = "Judge the note"


        class Base(DecisionThinker[Note, Verdict]):
            SPLITTER = SplitNote

            def __init__(self, parent: Identifiable) -> None:
                super().__init__(
                    parent,
                    output_type=Verdict,
                    key_tool=JudgeNote,
                    palette=(self.SPLITTER,),
                    objective="Judge the note",
                )


        class Triage(Base):
            SPLITTER = QuietSplit
        """,
    ),
    "new_type_artifact": _case(
        {"harness-open-type"},
        palette="ById,",
        extra="""
        NoteId = NewType("NoteId", Note)

        @tool_name("by_id")
        class ById(DecisionTool[NoteId, Note]):
            async def execute(self, input: NoteId, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "overloaded_init": _case(
        {"harness-ctor"},
        palette="Twice,",
        extra="""
        @tool_name("twice")
        class Twice(DecisionTool[Note, Note]):
            @overload
            def __init__(self, parent: Identifiable, times: int) -> None: ...
            @overload
            def __init__(self, parent: Identifiable, times: str) -> None: ...
            def __init__(self, parent: Identifiable, times: int | str) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "overloaded_init_with_a_parent_only_form": _case(
        set(),
        palette="Twice,",
        extra="""
        @tool_name("twice")
        class Twice(DecisionTool[Note, Note]):
            @overload
            def __init__(self, parent: Identifiable) -> None: ...
            @overload
            def __init__(self, parent: Identifiable, times: int) -> None: ...
            def __init__(self, parent: Identifiable, times: int = 1) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "type_checking_only_import": _case(
        {"harness-open-type"},
        palette="Hide,",
        extra="""
        if TYPE_CHECKING:
            from palette_kit import SubNote as Hidden

        @tool_name("hide")
        class Hide(DecisionTool[Note, "Hidden"]):
            async def execute(self, input: Note, context: JobContext) -> Hidden:
                raise NotImplementedError
        """,
    ),
    "union_input_with_an_unreachable_member": _case(
        {"harness-graph"}, palette="SplitNote,", thinker_input="Note | Orphan"
    ),
    "narrow_parent": _case(
        {"harness-ctor"},
        palette="CtxSplit,",
        extra="""
        @tool_name("ctx_split")
        class CtxSplit(DecisionTool[Note, Note]):
            def __init__(self, parent: JobContext) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    # -- what a checker cannot decide, in its own words ------------------------------------------
    "entry_read_from_a_final_dict": _case(
        set(),
        {"harness-undecidable"},
        palette='TOOLS["split"],',
        extra="""
        TOOLS: Final = {"split": SplitNote, "refine": RefineNote}
        """,
    ),
    "key_tool_read_from_a_registry": _case(
        set(),
        {"harness-undecidable"},
        key='KEYS["note"]',
        extra="""
        KEYS: Final = {"note": JudgeNote, "part": JudgePart}
        """,
    ),
    "wrapped_tool_name": _case(
        set(),
        {"harness-undecidable"},
        palette="Wrapped,",
        extra="""
        C = TypeVar("C", bound=type[Any])

        def register(name: str) -> Callable[[C], C]:
            def wrap(cls: C) -> C:
                return tool_name(name)(cls)
            return wrap

        @register("wrapped")
        class Wrapped(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    # -- the runtime resolves types as typing does ----------------------------------------------
    "annotated_artifact": _case(
        set(),
        palette="Ann,",
        extra="""
        @tool_name("ann")
        class Ann(DecisionTool[Annotated[Note, "a note"], ListArtifact[Annotated[Part, "x"]]]):
            async def execute(self, input: Note, context: JobContext) -> ListArtifact[Part]:
                raise NotImplementedError
        """,
    ),
    "type_variable_default": _case(
        set(),
        palette="EchoDefault,",
        extra="""
        D = typing_extensions.TypeVar("D", bound=Artifact, default=Note)

        @tool_name("echo_default")
        class EchoDefault(DecisionTool[Note, D], Generic[D]):
            async def execute(self, input: Note, context: JobContext) -> D:
                raise NotImplementedError
        """,
    ),
    "factory_products_sharing_a_name": _case(
        {"harness-duplicate"},
        {"harness-undecidable"},
        palette="SplitA, SplitB",
        extra="""
        def make(name: str) -> type[DecisionTool[Note, Note]]:
            @tool_name(name)
            class Made(DecisionTool[Note, Note]):
                async def execute(self, input: Note, context: JobContext) -> Note:
                    raise NotImplementedError
            return Made

        SplitA = make("same")
        SplitB = make("same")
        """,
    ),
    # -- palettes as libraries write them --------------------------------------------------------
    "mixin_tool": _case(
        set(),
        palette="Mixed,",
        extra="""
        class LoggingMixin:
            def log(self, text: str) -> str:
                return text

        @tool_name("mixed")
        class Mixed(LoggingMixin, DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "abstract_library_base_in_the_palette": _case(
        {"harness-tool", "harness-name"},
        palette="NoteTool,",
        extra="""
        class NoteTool(DecisionTool[Note, Note]):
            @abc.abstractmethod
            def rewrite(self, text: str) -> str: ...

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "subclass_inheriting_a_name": _case(
        {"harness-name"},
        palette="SplitNote, FinerSplit",
        extra="""
        class FinerSplit(SplitNote):
            pass
        """,
    ),
    "palette_built_by_concatenation": _case(
        set(),
        key="JudgePart",
        palette_expr="BASE + (RefineNote,)",
        extra="""
        BASE: Final = (SplitNote,)
        """,
    ),
    "palette_built_by_unpacking": _case(
        {"harness-dead-tool"},
        palette_expr="(*BASE, ReadOrphan)",
        extra="""
        BASE: Final = (SplitNote,)
        """,
    ),
    "key_tool_through_a_final_alias": _case(
        {"harness-graph"},
        key="JUDGE",
        palette="SplitNote,",
        extra="""
        JUDGE: Final = JudgeOrphan
        """,
    ),
    "wider_parent": _case(
        set(),
        palette="Wide,",
        extra="""
        @tool_name("wide")
        class Wide(DecisionTool[Note, Note]):
            def __init__(self, parent: object, *args: object, **options: object) -> None:
                super().__init__(parent)  # type: ignore[arg-type]

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "keyword_only_parent": _case(
        {"harness-ctor"},
        palette="KeywordOnly,",
        extra="""
        @tool_name("keyword_only")
        class KeywordOnly(DecisionTool[Note, Note]):
            def __init__(self, *, parent: Identifiable) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "union_input_all_reachable": _case(set(), palette="SplitNote,", thinker_input="Note | SubNote"),
    "union_input_with_a_dead_tool": _case(
        {"harness-dead-tool"}, palette="SplitNote, ReadOrphan", thinker_input="Note | SubNote"
    ),
    "nested_tool_class": _case(
        set(),
        palette="Library.Inner,",
        extra="""
        class Library:
            @tool_name("inner")
            class Inner(DecisionTool[Note, Note]):
                async def execute(self, input: Note, context: JobContext) -> Note:
                    raise NotImplementedError
        """,
    ),
    "final_class_attribute": _case(
        set(),
        thinker="""
        KEY: Final = JudgeNote
        PALETTE: Final = (SplitNote,)
        OUTPUT: Final = Verdict
        OBJECTIVE: Final = "Judge the note"


        class Triage(DecisionThinker[Note, Verdict]):
            SPLITTER: Final = SplitNote

            def __init__(self, parent: Identifiable) -> None:
                super().__init__(
                    parent,
                    output_type=Verdict,
                    key_tool=JudgeNote,
                    palette=(self.SPLITTER,),
                    objective="Judge the note",
                )
        """,
    ),
    "class_attribute_of_a_final_thinker": _case(
        {"harness-dead-tool"},
        thinker="""
        KEY: Final = JudgeNote
        PALETTE: Final = (SplitNote, ReadOrphan)
        OUTPUT: Final = Verdict
        OBJECTIVE: Final = "Judge the note"


        @typing_extensions.final
        class Triage(DecisionThinker[Note, Verdict]):
            TOOLS = (SplitNote, ReadOrphan)
            SPLITTER = SplitNote

            def __init__(self, parent: Identifiable) -> None:
                super().__init__(
                    parent,
                    output_type=Verdict,
                    key_tool=JudgeNote,
                    palette=(self.SPLITTER, *self.TOOLS[1:]),
                    objective="Judge the note",
                )
        """,
    ),
    "whole_palette_class_attribute_of_a_final_thinker": _case(
        {"harness-dead-tool"},
        thinker="""
        KEY: Final = JudgeNote
        PALETTE: Final = (SplitNote, ReadOrphan)
        OUTPUT: Final = Verdict
        OBJECTIVE: Final = "Judge the note"


        @typing_extensions.final
        class Triage(DecisionThinker[Note, Verdict]):
            TOOLS = (SplitNote, ReadOrphan)

            def __init__(self, parent: Identifiable) -> None:
                super().__init__(
                    parent,
                    output_type=Verdict,
                    key_tool=JudgeNote,
                    palette=type(self).TOOLS,
                    objective="Judge the note",
                )
        """,
    ),
    "palette_chained_from_tuples": _case(
        {"harness-dead-tool"},
        palette_expr="tuple(itertools.chain(BASE_TOOLS, (ReadOrphan,)))",
        extra="""
        import itertools

        BASE_TOOLS: Final = (SplitNote, RefineNote)
        """,
    ),
    "palette_chained_from_tuples_legal": _case(
        set(),
        palette_expr="tuple(itertools.chain(BASE_TOOLS, (JudgePart,)))",
        extra="""
        import itertools

        BASE_TOOLS: Final = (SplitNote, RefineNote)
        """,
    ),
    "type_of_self_attribute": _case(
        {"harness-name"},
        {"harness-undecidable"},
        extra="""
        class QuietSplit(SplitNote):
            pass
        """,
        thinker="""
        KEY: Final = JudgeNote
        PALETTE: Final = (QuietSplit,)
        OUTPUT: Final = Verdict
        OBJECTIVE: Final = "Judge the note"


        class Base(DecisionThinker[Note, Verdict]):
            SPLITTER = SplitNote

            def __init__(self, parent: Identifiable) -> None:
                super().__init__(
                    parent,
                    output_type=Verdict,
                    key_tool=JudgeNote,
                    palette=(type(self).SPLITTER,),
                    objective="Judge the note",
                )


        class Triage(Base):
            SPLITTER = QuietSplit
        """,
    ),
    # -- settings passed as ** of a TypedDict, names given by a call or an enum member ---------
    "settings_unpacked_from_a_final_typed_dict": _case(
        {"harness-dead-tool"},
        extra=SETTINGS,
        thinker="""
        NOTE_SETTINGS: Final[NoteSettings] = {
            "key_tool": JudgeNote,
            "palette": (ReadOrphan,),
            "objective": "Judge the note",
        }
        KEY: Final = JudgeNote
        PALETTE: Final = (ReadOrphan,)
        OUTPUT: Final = Verdict
        OBJECTIVE: Final = "Judge the note"


        class Triage(DecisionThinker[Note, Verdict]):
            def __init__(self, parent: Identifiable) -> None:
                super().__init__(parent, output_type=Verdict, **NOTE_SETTINGS)
        """,
    ),
    "settings_unpacked_from_a_variable_typed_dict": _case(
        {"harness-dead-tool"},
        {"harness-undecidable"},
        extra=SETTINGS,
        thinker="""
        NOTE_SETTINGS: NoteSettings = {
            "key_tool": JudgeNote,
            "palette": (ReadOrphan,),
            "objective": "Judge the note",
        }
        KEY: Final = JudgeNote
        PALETTE: Final = (ReadOrphan,)
        OUTPUT: Final = Verdict
        OBJECTIVE: Final = "Judge the note"


        class Triage(DecisionThinker[Note, Verdict]):
            def __init__(self, parent: Identifiable) -> None:
                super().__init__(parent, output_type=Verdict, **NOTE_SETTINGS)
        """,
    ),
    "tool_named_by_a_call": _case(
        {"harness-duplicate"},
        palette="SplitNote, ReadCsv",
        extra="""
        class CsvReader(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError


        ReadCsv = tool_name("split_note")(CsvReader)
        """,
    ),
    "tool_named_by_a_call_legal": _case(
        set(),
        palette="ReadCsv,",
        extra="""
        class CsvReader(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError


        ReadCsv = tool_name("read_csv")(CsvReader)
        """,
    ),
    # -- a vendored class named by a call in another module: decided where the program promises
    # the name (a literal, at the top of a module the palette's module imports), else undecidable
    "tool_named_by_a_call_in_an_imported_module": _case(
        {"harness-duplicate"},
        palette="SplitNote, CsvReader",
        extra="""
        import csv_naming_direct  # names the class in place, as the runtime does
        from csv_vendor_direct import CsvReader
        """,
        modules=(
            ("csv_vendor_direct", CSV_VENDOR),
            ("csv_naming_direct", CSV_NAMING.format(vendor="csv_vendor_direct", name="split_note")),
        ),
    ),
    "tool_named_by_a_call_through_an_imported_alias": _case(
        set(),
        palette="ReadCsv,",
        extra="""
        from csv_naming_alias import ReadCsv
        """,
        modules=(
            ("csv_vendor_alias", CSV_VENDOR),
            ("csv_naming_alias", CSV_NAMING.format(vendor="csv_vendor_alias", name="read_csv")),
        ),
    ),
    "tool_named_by_a_call_in_a_function_of_an_imported_module": _case(
        set(),
        {"harness-undecidable"},
        palette="CsvReader,",
        extra="""
        import csv_naming_late
        from csv_vendor_late import CsvReader
        """,
        modules=(
            ("csv_vendor_late", CSV_VENDOR),
            (
                "csv_naming_late",
                """
                from harness.tools import tool_name
                from csv_vendor_late import CsvReader


                def name_it() -> None:
                    tool_name("read_csv")(CsvReader)


                name_it()
                """,
            ),
        ),
    ),
    "tool_named_nowhere": _case(
        {"harness-name"},
        palette="CsvReader,",
        extra="""
        from csv_vendor_unnamed import CsvReader
        """,
        modules=(("csv_vendor_unnamed", CSV_VENDOR),),
    ),
    "tool_named_by_a_str_enum_member": _case(
        {"harness-duplicate"},
        palette="SplitNote, Outline",
        extra="""
        class ToolName(StrEnum):
            OUTLINE = "split_note"


        @tool_name(ToolName.OUTLINE)
        class Outline(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "ctor_behind_a_param_spec_decorator": _case(
        {"harness-ctor"},
        palette="Limited,",
        extra="""
        P = ParamSpec("P")
        R = TypeVar("R")


        def logged(function: Callable[P, R]) -> Callable[P, R]:
            return function


        @tool_name("limited")
        class Limited(DecisionTool[Note, Note]):
            @logged
            def __init__(self, parent: Identifiable, limit: int) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "switch_comment_leaves_other_codes_alone": _case(
        {"harness-dead-tool"},
        palette="ReadOrphan,",
        extra="""
        # harness: disable-error-code="harness-graph"
        """,
    ),
    "execute_narrower_than_its_input": _case(
        {"harness-open-type"},
        palette="Narrow,",
        extra="""
        @tool_name("narrow")
        class Narrow(DecisionTool[Note, Note]):
            async def execute(self, input: SubNote, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "generic_artifact_input_never_produced": _case(
        {"harness-dead-tool"},
        palette="BoxParts, OpenBox",
        extra=BOX
        + """
        @tool_name("box_parts")
        class BoxParts(DecisionTool[Note, Box[Part]]):
            async def execute(self, input: Note, context: JobContext) -> Box[Part]:
                raise NotImplementedError


        @tool_name("open_box")
        class OpenBox(DecisionTool[Box[Note], Note]):
            async def execute(self, input: Box[Note], context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "generic_artifact_input_produced_by_a_subtype": _case(
        set(),
        palette="BoxSubNotes, OpenBox",
        extra=BOX
        + """
        @tool_name("box_sub_notes")
        class BoxSubNotes(DecisionTool[Note, Box[SubNote]]):
            async def execute(self, input: Note, context: JobContext) -> Box[SubNote]:
                raise NotImplementedError


        @tool_name("open_box")
        class OpenBox(DecisionTool[Box[Note], Note]):
            async def execute(self, input: Box[Note], context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
    "generic_artifact_input_left_bare": _case(
        {"harness-open-type"},
        palette="OpenAnyBox,",
        extra=BOX
        + """
        # mypy: disable-error-code="type-arg"
        @tool_name("open_any_box")
        class OpenAnyBox(DecisionTool[Box, Note]):  # a bare generic artifact: Box[Any]
            async def execute(self, input: Box, context: JobContext) -> Note:
                raise NotImplementedError
        """,
    ),
}

#: A verdict as both sides show it: code, message, notes (``None`` for a plain mypy error).
Shown = tuple[str, str | None, tuple[str, ...] | None]


def _source(case: Case) -> str:
    if case.thinker is not None:
        return HEADER + textwrap.dedent(case.extra) + textwrap.dedent(case.thinker)
    return (
        HEADER
        + textwrap.dedent(case.extra)
        + THINKER.format(
            thinker_input=case.thinker_input,
            key=case.key,
            palette=case.palette_expr if case.palette_expr is not None else f"({case.palette})",
            output="Verdict",
            thinker_output=case.thinker_output,
            objective=case.objective,
        )
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("same_verdicts")
    for name, case in CASES.items():
        (root / f"case_{name}.py").write_text(_source(case))
        for module, source in case.modules:
            (root / f"{module}.py").write_text(textwrap.dedent(source))
    (root / "mypy.ini").write_text(
        "[mypy]\npython_version = 3.11\nstrict = True\nplugins = mypy_plugin\n"
        "[mypy-harness.*]\nfollow_imports = silent\n"
    )
    return root


def _parse(stdout: str) -> dict[str, list[Shown]]:
    """Each file's verdicts: an error line, then the notes on its line until the next error."""
    shown: dict[str, list[Shown]] = {f"case_{name}": [] for name in CASES}
    current: tuple[str, str, str, list[str]] | None = None  # file, code, message, notes

    def close() -> None:
        if current is not None:
            file, code, message, notes = current
            shown[file].append((code, message, tuple(notes)))

    for line in stdout.splitlines():
        match = LINE.match(line)
        if match is None:
            continue
        file, kind, text = match["file"], match["kind"], match["text"]
        if kind == "note":
            pointer = POINTER.match(text) or BRANCH.match(text)
            if pointer is None and current is not None and current[0] == file:
                current[3].append(text)
            continue
        close()
        current = None
        coded = CODED.match(text)
        assert coded is not None, line
        code = coded["code"]
        argument = ARGUMENT.match(coded["message"])
        if code == "arg-type" and argument is not None and argument["name"] in ARG_TYPE:
            stands_for = ARG_TYPE[argument["name"]]
            if stands_for is not None:
                shown[file].append((stands_for, None, None))
        elif code in PLAIN_MYPY:
            shown[file].append((PLAIN_MYPY[code], None, None))
        else:
            current = (file, code, coded["message"], [])
    close()
    return shown


RUNNER = """\
from __future__ import annotations
from harness import run_sync
from case_legal import Triage

def go() -> None:
    run_sync(Triage, "a note as text")
"""


@pytest.fixture(scope="module")
def plugin_output(generated: Path) -> str:
    """mypy's whole output over the cases (and a module calling run_sync wrongly), run as the
    command line runs it: the runtime's tests put the cases' folder on ``sys.path``, where an
    in-process mypy would take its modules for installed ones (their errors silenced, their
    function bodies unread), so it is off the path while mypy runs."""
    (generated / "runner_input.py").write_text(RUNNER)
    old_cwd, old_path = os.getcwd(), os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = os.pathsep.join([str(REPO), str(KIT)])
    saved = list(sys.path)
    sys.path[:] = [str(REPO), *(p for p in saved if p != str(generated))]
    try:
        os.chdir(generated)
        files = [*sorted(p.name for p in generated.glob("case_*.py")), "runner_input.py"]
        stdout, stderr, _ = api.run(
            ["--config-file", "mypy.ini", "--cache-dir", str(generated / ".cache"), *files]
        )
    finally:
        os.chdir(old_cwd)
        sys.path[:] = saved
        if old_path is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = old_path
    assert "Traceback" not in stderr, stderr
    return stdout


@pytest.fixture(scope="module")
def plugin_verdicts(plugin_output: str) -> dict[str, list[Shown]]:
    return _parse(plugin_output)


def _load(generated: Path, name: str, fast: bool) -> ModuleType:
    for root in (KIT, generated):  # the kit, and the modules a case imports beside it
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
    module_name = f"same_verdicts_{name}_{'fast' if fast else 'slow'}"
    spec = importlib.util.spec_from_file_location(module_name, generated / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    old = os.environ.get("HARNESS_CASE_FAST")
    os.environ["HARNESS_CASE_FAST"] = "1" if fast else "0"
    try:
        spec.loader.exec_module(module)
    finally:
        if old is None:
            del os.environ["HARNESS_CASE_FAST"]
        else:
            os.environ["HARNESS_CASE_FAST"] = old
    return module


def _runtime_verdicts(generated: Path, name: str, case: Case) -> list[Verdict]:
    """The runtime's verdicts; for a conditional case, over both values of ``FAST``, once each."""
    out: list[Verdict] = []
    for fast in (False, True) if case.conditional else (False,):
        module = _load(generated, f"case_{name}", fast)
        report = palette_report(
            thinker_input=thinker_input_of(module.Triage),
            output_type=module.OUTPUT,
            key_tool=module.KEY,
            palette=module.PALETTE,
            objective=module.OBJECTIVE,
        )
        out += [verdict for verdict in report.verdicts if verdict not in out]
    return out


def _key(shown: Shown) -> tuple[str, str, tuple[str, ...]]:
    code, message, notes = shown
    return code, message or "", notes or ()


@pytest.mark.parametrize("name", sorted(CASES))
def test_plugin_and_runtime_agree(
    name: str, generated: Path, plugin_verdicts: dict[str, list[Shown]]
) -> None:
    case = CASES[name]
    verdicts = _runtime_verdicts(generated, name, case)
    runtime: list[Shown] = [(v.code, v.message, v.notes) for v in verdicts]
    plugin = plugin_verdicts[f"case_{name}"]
    assert {code for code, _, _ in runtime} == case.codes, verdicts
    expected_plugin = case.plugin_codes if case.plugin_codes is not None else case.codes
    assert {code for code, _, _ in plugin} == expected_plugin, plugin
    for verdict in verdicts:
        assert verdict.fix, verdict  # every verdict says how to fix it, last
    assert "harness-undecidable" not in case.codes  # the runtime always decides
    if runtime:  # the guarantee: the plugin never passes a palette the runtime refuses
        assert plugin, (runtime, plugin)
    if case.plugin_codes is not None:
        return  # undecidable at type-check time: the codes above are the comparison
    plain = {code for code, message, _ in plugin if message is None}
    ours = sorted({_key(v) for v in plugin if v[0] not in plain})
    theirs = sorted({_key(v) for v in runtime if v[0] not in plain})
    if not case.conditional:
        assert ours == theirs
        return
    # every branch's verdict once; where branches differ in a note (what is reachable), the
    # plugin keeps the notes they share (the fix among them)
    assert sorted({(c, m) for c, m, _ in ours}) == sorted({(c, m) for c, m, _ in theirs})
    for code, message, notes in ours:
        same = [n for c, m, n in theirs if (c, m) == (code, message)]
        assert any(set(notes) <= set(other) for other in same), (notes, same)
        assert notes[-1:] == same[0][-1:]  # the fix


def test_messages_read_as_mypy_prints_types(plugin_verdicts: dict[str, list[Shown]]) -> None:
    """Spot checks of the wording both sides share (type variables, unions, lists)."""
    messages = {
        name: [message for _, message, _ in plugin_verdicts[f"case_{name}"]] for name in CASES
    }
    assert messages["type_variable"] == [
        'Tool "Echo" leaves its output type open (type variable "T")'
    ]
    assert messages["type_variable_in_list"] == [
        'Tool "EchoAll" leaves its input type open (type variable "T" in "ListArtifact[T]")'
    ]
    assert messages["union"] == [
        'Tool "Either" leaves its output type open ("Part | Verdict", not one artifact class)'
    ]
    assert messages["open_type_any_in_list"] == [
        'Tool "Spread" leaves its output type open (Any in "ListArtifact[Any]")'
    ]
    (list_notes,) = [notes for _, _, notes in plugin_verdicts["case_list_subclass"]]
    assert list_notes is not None
    assert list_notes[0] == (
        'Reachable from "Note": "Note", "PartList", "Part", "Verdicts", "Verdict"'
    )
    graph, dead = plugin_verdicts["case_graph_and_dead_tool"]
    assert graph[2] is not None
    assert dead[2] is not None
    assert graph[2][0] == dead[2][0] == 'Reachable from "Note": "Note"'  # each keeps its notes


def test_a_generic_thinkers_palette_is_judged_for_the_subclasses_of_its_module(
    generated: Path, plugin_verdicts: dict[str, list[Shown]]
) -> None:
    """A generic thinker's palette, built for a subclass of the same module binding the input:
    the plugin judges it with that input, in the runtime's words (subclasses elsewhere stay
    undecidable)."""
    name = "generic_input_bound_by_a_subclass"
    runtime = {
        (v.code, v.message, v.notes) for v in _runtime_verdicts(generated, name, CASES[name])
    }
    plugin = {_key(v) for v in plugin_verdicts[f"case_{name}"] if v[0] != "harness-undecidable"}
    assert plugin == runtime
    assert {code for code, _, _ in plugin} == {"harness-graph", "harness-dead-tool"}


def _lines(output: str, file: str) -> list[tuple[int, str]]:
    out = []
    for line in output.splitlines():
        if line.startswith(f"{file}.py:"):
            _, number, rest = line.split(":", 2)
            out.append((int(number), rest.strip()))
    return out


def test_plain_mypy_errors_on_harness_calls_come_with_the_fix(plugin_output: str) -> None:
    """Where plain mypy reports first (a list palette, a key tool producing the item type, a
    wrong input to run_sync), the plugin adds harness's words and the fix on the same line."""
    listed = _lines(plugin_output, "case_list_palette")
    (error_line,) = {n for n, text in listed if text.endswith("[arg-type]")}
    notes = [text for n, text in listed if n == error_line and text.startswith("note:")]
    assert (
        'note: The palette must be a tuple of tool classes, not "list": write it as a tuple: '
        "palette=(SplitNote,)"
    ) in notes, listed
    key = _lines(plugin_output, "case_key_output_explicit_o")
    lines = {n for n, text in key if "[arg-type]" in text}
    assert lines, key
    assert any(
        n in lines and "[harness-key-tool]" in text and "produces" in text for n, text in key
    ), key
    runner = _lines(plugin_output, "runner_input")
    (run_line,) = {n for n, text in runner if "error:" in text}
    assert (
        run_line,
        'note: "Triage" takes "Note" as its input, not "str": pass one, e.g. '
        "run_sync(Triage, Note(...))",
    ) in runner, runner


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if not c.conditional))
def test_harness_check_gives_the_runtimes_verdicts(name: str, generated: Path) -> None:
    """``harness check`` on a case's module names what the runtime names (and, where the
    plugin can decide, what the plugin names), each once."""
    case = CASES[name]
    if str(KIT) not in sys.path:
        sys.path.insert(0, str(KIT))
    findings, checked = check_targets([str(generated / f"case_{name}.py")])
    assert checked >= 1
    errors = [f for f in findings if f.severity == "error"]
    shown = {(f.code, f.message, f.notes) for f in errors}
    runtime = {(v.code, v.message, v.notes) for v in _runtime_verdicts(generated, name, case)}
    assert {code for code, _, _ in shown} == case.codes, findings
    assert shown == runtime
    # a warning only where a generic thinker's input is unknown, or where a thinker cannot be
    # built to read its palette (its constructor's error shown too): said, not passed
    unbuilt = {f.subject for f in errors if f.code == "harness-ctor"}
    warnings = [
        f
        for f in findings
        if f.severity == "warning" and not (f.code == "harness-check" and f.subject in unbuilt)
    ]
    assert all(f.code == "harness-undecidable" for f in warnings), warnings
    assert not warnings or "Generic[In]" in (case.thinker or ""), warnings


@pytest.mark.parametrize(
    "name", sorted(n for n, c in CASES.items() if not c.conditional and c.plugin_codes is None)
)
def test_harness_check_reports_each_problem_on_mypys_line(
    name: str, generated: Path, plugin_output: str
) -> None:
    """One line per problem in both: the line the plugin reports a verdict on is the line
    ``harness check`` reports it on (mypy's own errors, such as ``[arg-type]``, aside)."""
    if str(KIT) not in sys.path:
        sys.path.insert(0, str(KIT))
    mypy_lines = set()
    for number, text in _lines(plugin_output, f"case_{name}"):
        coded = CODED.match(text.removeprefix("error: ")) if text.startswith("error:") else None
        if coded is not None and coded["code"].startswith("harness-"):
            mypy_lines.add((coded["code"], number))
    findings, _ = check_targets([str(generated / f"case_{name}.py")])
    codes = {code for code, _ in mypy_lines}
    check_lines = {(f.code, f.line) for f in findings if f.code in codes}
    assert check_lines == mypy_lines, (findings, plugin_output)


@pytest.mark.slow
def test_dmypy_gives_mypys_verdicts_on_every_row(
    generated: Path, plugin_verdicts: dict[str, list[Shown]], tmp_path: Path
) -> None:
    """The daemon (fine-grained mode, where the plugin's dependencies matter) reports on every
    row of the table exactly what a plain mypy run reports."""
    dmypy = Path(sys.executable).parent / "dmypy"
    env = {
        **os.environ,
        "MYPYPATH": os.pathsep.join([str(REPO), str(KIT)]),
        "PYTHONPATH": str(REPO),
    }
    base = [str(dmypy), "--status-file", str(tmp_path / "dmypy.json")]
    started = subprocess.run(
        [*base, "start", "--", "--config-file", "mypy.ini", "--cache-dir", str(tmp_path / "d")],
        cwd=generated,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        files = [*sorted(p.name for p in generated.glob("case_*.py")), "runner_input.py"]
        done = subprocess.run(
            [*base, "check", *files],
            cwd=generated,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        subprocess.run([*base, "kill"], cwd=generated, env=env, timeout=60, check=False)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    daemon = _parse(done.stdout)
    for name in CASES:
        file = f"case_{name}"
        assert sorted(map(_key, daemon[file])) == sorted(map(_key, plugin_verdicts[file])), name
