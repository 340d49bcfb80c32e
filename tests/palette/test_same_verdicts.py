"""One source of truth: the same palettes, fed to the mypy plugin (``mypy.api.run`` over generated
modules) and to the runtime validator, give the same verdict codes.

Where plain mypy already reports a problem the plugin stays silent; the mypy code stands for the
verdict then (``[type-abstract]`` on an abstract key tool is ``harness-tool``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from mypy import api

from harness.palette import palette_report, thinker_input_of

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "tests" / "plugin" / "kit"
PLAIN_MYPY = {"type-abstract": "harness-tool"}
CODE = re.compile(r"^(?P<file>case_\w+)\.py:\d+: error: .*\[(?P<code>[a-z-]+)\]$")

HEADER = """\
from __future__ import annotations
from typing import Any, Final
from harness.artifacts import Artifact, ListArtifact
from harness.tools import DecisionTool, tool_name
from palette_kit import (
    DecisionThinker, Identifiable, JobContext, JudgeNote, JudgeOrphan, JudgePart, Note, Part,
    ReadOrphan, RefineNote, SplitNote, Verdict,
)
"""

THINKER = """
KEY: Final = {key}
PALETTE: Final = ({palette})
OUTPUT: Final = {output}
OBJECTIVE: Final = {objective!r}


class Triage(DecisionThinker[{input}, {thinker_output}]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type={output},
            key_tool={key},
            palette=({palette}),
            objective={objective!r},
        )
"""

# name: (extra definitions, key tool, palette entries, expected codes)
CASES: dict[str, tuple[str, str, str, set[str]]] = {
    "legal": ("", "JudgePart", "SplitNote, RefineNote", set()),
    "abstract_entry": (
        """
        @tool_name("half_done")
        class HalfDone(DecisionTool[Note, Note]):
            pass
        """,
        "JudgeNote",
        "HalfDone,",
        {"harness-tool"},
    ),
    "abstract_key": (
        """
        @tool_name("half_judge")
        class HalfJudge(DecisionTool[Note, ListArtifact[Verdict]]):
            pass
        """,
        "HalfJudge",
        "",
        {"harness-tool"},
    ),
    "missing_name": (
        """
        class Nameless(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
        "JudgeNote",
        "Nameless,",
        {"harness-name"},
    ),
    "ctor_decorated": (
        """
        @tool_name("twice")
        class Twice(DecisionTool[Note, Note]):
            def __init__(self, parent: Identifiable, times: int) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
        "JudgeNote",
        "Twice,",
        {"harness-ctor"},
    ),
    "ctor_undecorated": (
        """
        class Twice(DecisionTool[Note, Note]):
            def __init__(self, parent: Identifiable, *, times: int) -> None:
                super().__init__(parent)

            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
        "JudgeNote",
        "Twice,",
        {"harness-name", "harness-ctor"},
    ),
    "open_type": (
        """
        @tool_name("loose")
        class Loose(DecisionTool[Note, Any]):
            async def execute(self, input: Note, context: JobContext) -> Any:
                raise NotImplementedError
        """,
        "JudgeNote",
        "Loose,",
        {"harness-open-type"},
    ),
    "duplicate": (
        """
        @tool_name("split_note")
        class SplitNoteToo(DecisionTool[Note, Note]):
            async def execute(self, input: Note, context: JobContext) -> Note:
                raise NotImplementedError
        """,
        "JudgeNote",
        "SplitNote, SplitNoteToo",
        {"harness-duplicate"},
    ),
    "key_output": ("", "SplitNote", "", {"harness-key-tool"}),
    "graph": ("", "JudgeOrphan", "SplitNote,", {"harness-graph"}),
    "dead_tool": ("", "JudgeNote", "ReadOrphan,", {"harness-dead-tool"}),
    "objective": ("", "JudgeNote", "", {"harness-objective"}),
    "nested_thinker": (
        """
        class Inner(DecisionThinker[Note, Verdict]):
            def __init__(self, parent: Identifiable) -> None:
                super().__init__(
                    parent, output_type=Verdict, key_tool=JudgeNote, palette=(),
                    objective="Judge the note",
                )
        """,
        "JudgeNote",
        "Inner,",
        {"harness-name"},
    ),
}


def _source(name: str) -> str:
    extra, key, palette, _ = CASES[name]
    key_output = name == "key_output"
    return (
        HEADER
        + textwrap.dedent(extra)
        + THINKER.format(
            key=key,
            palette=palette,
            input="Note",
            output="Verdict",
            thinker_output="Artifact" if key_output else "Verdict",
            objective="  " if name == "objective" else "Run the case",
        )
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("same_verdicts")
    for name in CASES:
        (root / f"case_{name}.py").write_text(_source(name))
    (root / "mypy.ini").write_text(
        "[mypy]\npython_version = 3.11\nstrict = True\nplugins = mypy_plugin\n"
        "[mypy-harness.*]\nfollow_imports = silent\n"
    )
    return root


@pytest.fixture(scope="module")
def plugin_codes(generated: Path) -> dict[str, set[str]]:
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
    codes: dict[str, set[str]] = {f"case_{name}": set() for name in CASES}
    for line in stdout.splitlines():
        match = CODE.match(line)
        if match:
            code = match["code"]
            codes[match["file"]].add(PLAIN_MYPY.get(code, code))
    return codes


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


@pytest.mark.parametrize("name", sorted(CASES))
def test_plugin_and_runtime_agree(
    name: str, generated: Path, plugin_codes: dict[str, set[str]]
) -> None:
    module = _load(generated, f"case_{name}")
    report = palette_report(
        thinker_input=thinker_input_of(module.Triage),
        output_type=module.OUTPUT,
        key_tool=module.KEY,
        palette=module.PALETTE,
        objective=module.OBJECTIVE,
    )
    runtime = {verdict.code for verdict in report.verdicts}
    expected = CASES[name][3]
    assert runtime == expected, report.verdicts
    assert plugin_codes[f"case_{name}"] == expected
