"""One source of truth: the same palettes, fed to the mypy plugin (``mypy.api.run`` over generated
modules) and to the runtime validator, give the same verdicts: codes, messages and notes (the
fix last).

Where plain mypy already reports a problem the plugin stays silent; the mypy code stands for the
verdict then (``[type-abstract]`` on an abstract key tool is ``harness-tool``) and only codes are
compared. The plugin's pointer from a palette entry to its class's definition-site error (a note
of its own, which the runtime has no use for) is left out.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from mypy import api

from harness.palette import palette_report, thinker_input_of

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "tests" / "plugin" / "kit"
PLAIN_MYPY = {"type-abstract": "harness-tool"}
LINE = re.compile(r"^(?P<file>case_\w+)\.py:\d+: (?P<kind>error|note): (?P<text>.*)$")
CODED = re.compile(r"^(?P<message>.*)  \[(?P<code>[a-z-]+)\]$")
POINTER = re.compile(r'^"\w+" breaks the palette rules where it is defined ')

HEADER = """\
from __future__ import annotations
from typing import Any, Final, Generic, TypeVar
from harness.artifacts import Artifact, ListArtifact
from harness.tools import DecisionTool, tool_name
from palette_kit import (
    DecisionThinker, Identifiable, JobContext, JudgeNote, JudgeOrphan, JudgePart, Note, Part,
    ReadOrphan, RefineNote, SplitNote, Verdict,
)

T = TypeVar("T", bound=Artifact)
In = TypeVar("In", bound=Artifact)
Out = TypeVar("Out", bound=Artifact)
"""

THINKER = """
KEY: Final = {key}
PALETTE: Final = ({palette})
OUTPUT: Final = {output}
OBJECTIVE: Final = {objective!r}


class Triage(DecisionThinker[Note, {thinker_output}]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type={output},
            key_tool={key},
            palette=({palette}),
            objective={objective!r},
        )
"""


@dataclass(frozen=True)
class Case:
    """One generated module: extra definitions, the thinker's arguments, the codes expected."""

    codes: frozenset[str]
    key: str = "JudgeNote"
    palette: str = ""
    extra: str = ""
    thinker_output: str = "Verdict"
    objective: str = "Run the case"


def _case(codes: set[str], **fields: str) -> Case:
    return Case(frozenset(codes), **fields)


ECHO = """
@tool_name("echo")
class Echo(DecisionTool[Note, T], Generic[T]):
    async def execute(self, input: Note, context: JobContext) -> T:
        raise NotImplementedError
"""

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
}

#: A verdict as both sides show it: code, message, notes (``None`` for a plain mypy error).
Shown = tuple[str, str | None, tuple[str, ...] | None]


def _source(case: Case) -> str:
    return (
        HEADER
        + textwrap.dedent(case.extra)
        + THINKER.format(
            key=case.key,
            palette=case.palette,
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
            if POINTER.match(text) is None and current is not None and current[0] == file:
                current[3].append(text)
            continue
        close()
        current = None
        coded = CODED.match(text)
        assert coded is not None, line
        code = coded["code"]
        if code in PLAIN_MYPY:
            shown[file].append((PLAIN_MYPY[code], None, None))
        else:
            current = (file, code, coded["message"], [])
    close()
    return shown


@pytest.fixture(scope="module")
def plugin_verdicts(generated: Path) -> dict[str, list[Shown]]:
    old_cwd, old_path = os.getcwd(), os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = os.pathsep.join([str(REPO), str(KIT)])
    sys.path.insert(0, str(REPO))
    try:
        os.chdir(generated)
        files = sorted(p.name for p in generated.glob("case_*.py"))
        stdout, stderr, _ = api.run(
            ["--config-file", "mypy.ini", "--cache-dir", str(generated / ".cache"), *files]
        )
    finally:
        os.chdir(old_cwd)
        sys.path.remove(str(REPO))
        if old_path is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = old_path
    assert "Traceback" not in stderr, stderr
    return _parse(stdout)


def _load(generated: Path, name: str) -> ModuleType:
    if str(KIT) not in sys.path:
        sys.path.insert(0, str(KIT))
    spec = importlib.util.spec_from_file_location(f"same_verdicts_{name}", generated / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _key(shown: Shown) -> tuple[str, str, tuple[str, ...]]:
    code, message, notes = shown
    return code, message or "", notes or ()


@pytest.mark.parametrize("name", sorted(CASES))
def test_plugin_and_runtime_agree(
    name: str, generated: Path, plugin_verdicts: dict[str, list[Shown]]
) -> None:
    module = _load(generated, f"case_{name}")
    report = palette_report(
        thinker_input=thinker_input_of(module.Triage),
        output_type=module.OUTPUT,
        key_tool=module.KEY,
        palette=module.PALETTE,
        objective=module.OBJECTIVE,
    )
    expected = CASES[name].codes
    runtime: list[Shown] = [(v.code, v.message, v.notes) for v in report.verdicts]
    plugin = plugin_verdicts[f"case_{name}"]
    assert {code for code, _, _ in runtime} == expected, report.verdicts
    assert {code for code, _, _ in plugin} == expected, plugin
    plain = {code for code, message, _ in plugin if message is None}
    assert sorted(_key(v) for v in plugin if v[0] not in plain) == sorted(
        _key(v) for v in runtime if v[0] not in plain
    )
    for verdict in report.verdicts:
        assert verdict.fix, verdict  # every verdict says how to fix it, last


def test_messages_read_as_mypy_prints_types(plugin_verdicts: dict[str, list[Shown]]) -> None:
    """Spot checks of the wording both sides now share (type variables, unions, lists)."""
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
