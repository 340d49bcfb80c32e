"""Every way the docs name a tool, run through mypy with the plugin and through the runtime.

Each form is one module: a tool named that way and a thinker whose palette holds it. The whole
set is checked in one mypy run, which must end without an internal error (a plugin that crashes
takes the user's whole type check down); then each module's harness codes are compared with the
form's expected verdict, and with what ``harness check`` (the runtime validator) reports, where
a type checker can decide. A name a type checker cannot read is ``harness-undecidable``, never
a crash and never a pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli._check import check_targets

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "tests" / "plugin" / "kit"

HEADER = """\
from __future__ import annotations
from collections.abc import Callable
from enum import Enum, StrEnum, auto
from typing import Final, TypeVar
from harness.artifacts import ListArtifact
from harness.tools import DecisionTool, tool_name
from palette_kit import DecisionThinker, Identifiable, JobContext, JudgeNote, Note, Part, Verdict
import naming_support
from naming_support import SUPPORT_NAME, Shared

C = TypeVar("C", bound=type[DecisionTool[Note, ListArtifact[Part]]])

"""

TOOL = """
{decorator}
class Named(DecisionTool[Note, ListArtifact[Part]]):
    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Part]:
        raise NotImplementedError
"""

THINKER = """

class Triage(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent, output_type=Verdict, key_tool=JudgeNote, palette=({entry},), objective="x"
        )
"""

SUPPORT = """\
from __future__ import annotations
from enum import Enum, StrEnum
from typing import Final

SUPPORT_NAME: Final = "from_support"


class Shared(Enum):
    LIST = "shared_list"


class Kind(StrEnum):
    LIST = "kind_list"
"""


@dataclass(frozen=True)
class Form:
    """A naming form: what comes before the tool, its decorator, the plugin's codes and whether
    the runtime refuses the palette (or the module does not import: an invalid name)."""

    decorator: str
    plugin: frozenset[str] = frozenset()
    before: str = ""
    after: str = ""
    entry: str = "Named"
    runtime: frozenset[str] | None = None  # None: the same as the plugin's codes
    imports: bool = True


def _form(decorator: str, *plugin: str, **fields: object) -> Form:
    return Form(decorator, frozenset(plugin), **fields)  # type: ignore[arg-type]


UNDECIDABLE = "harness-undecidable"
FORMS: dict[str, Form] = {
    "literal": _form('@tool_name("literal")'),
    "keyword": _form('@tool_name(name="keyword")'),
    "final_constant": _form("@tool_name(NAME)", before='NAME: Final = "final_constant"\n'),
    "imported_constant": _form("@tool_name(SUPPORT_NAME)"),
    "module_constant": _form("@tool_name(naming_support.SUPPORT_NAME)"),
    "str_enum_member": _form(
        "@tool_name(ToolName.OUTLINE)",
        before='class ToolName(StrEnum):\n    OUTLINE = "outline"\n',
    ),
    "str_enum_member_value": _form(
        "@tool_name(ToolName.OUTLINE.value)",
        before='class ToolName(StrEnum):\n    OUTLINE = "outline"\n',
    ),
    "str_enum_auto": _form(
        "@tool_name(ToolName.OUTLINE)", before="class ToolName(StrEnum):\n    OUTLINE = auto()\n"
    ),
    "str_enum_auto_generated_elsewhere": _form(
        "@tool_name(ToolName.OUTLINE)",
        UNDECIDABLE,
        before=(
            "class ToolName(StrEnum):\n"
            "    @staticmethod\n"
            "    def _generate_next_value_(\n"
            "        name: str, start: int, count: int, last_values: list[str]\n"
            "    ) -> str:\n"
            '        return "made_" + name.lower()\n\n'
            "    OUTLINE = auto()\n"
        ),
        runtime=frozenset(),
    ),
    "enum_value": _form(
        "@tool_name(Command.LIST.value)",
        before='class Command(Enum):\n    LIST = "list_parts"\n',
    ),
    "enum_value_private": _form(
        "@tool_name(Command.LIST._value_)",
        before='class Command(Enum):\n    LIST = "list_parts"\n',
    ),
    "enum_member_name": _form(
        "@tool_name(Command.LIST.name)",
        before='class Command(Enum):\n    LIST = "list_parts"\n',
    ),
    "enum_value_invalid": _form(
        "@tool_name(Command.BAD.value)",
        "harness-name",
        before='class Command(Enum):\n    BAD = "Not A Name"\n',
        imports=False,
    ),
    "enum_value_reserved": _form(
        "@tool_name(Command.DONE.value)",
        "harness-name",
        before='class Command(Enum):\n    DONE = "finish"\n',
        imports=False,
    ),
    "enum_value_imported": _form("@tool_name(Shared.LIST.value)"),
    "enum_value_through_module": _form("@tool_name(naming_support.Shared.LIST.value)"),
    "str_enum_member_through_module": _form("@tool_name(naming_support.Kind.LIST)"),
    "final_class_attribute": _form(
        "@tool_name(Names.SPLIT)",
        before='class Names:\n    SPLIT: Final = "split_by_name"\n',
    ),
    "class_attribute": _form(
        "@tool_name(Names.SPLIT)",
        UNDECIDABLE,
        before='class Names:\n    SPLIT = "split_by_name"\n',
        runtime=frozenset(),
    ),
    "f_string": _form(
        '@tool_name(f"split_{KIND}")', UNDECIDABLE, before='KIND = "x"\n', runtime=frozenset()
    ),
    "f_string_of_final": _form('@tool_name(f"split_{KIND}")', before='KIND: Final = "x"\n'),
    "concatenation_of_final": _form('@tool_name("split_" + KIND)', before='KIND: Final = "x"\n'),
    "module_variable": _form(
        "@tool_name(NAME)", UNDECIDABLE, before='NAME = "variable"\n', runtime=frozenset()
    ),
    "call": _form(
        '@tool_name(make("called"))',
        UNDECIDABLE,
        before="def make(name: str) -> str:\n    return name\n",
        runtime=frozenset(),
    ),
    "wrapper_function": _form(
        '@named("wrapped")',
        UNDECIDABLE,
        before=(
            "def named(name: str) -> Callable[[C], C]:\n"
            "    def wrap(cls: C) -> C:\n"
            "        return tool_name(name)(cls)\n\n"
            "    return wrap\n"
        ),
        runtime=frozenset(),
    ),
    "decorated_twice": _form('@tool_name("outer")\n@tool_name("inner")'),
    "call_form": _form("", after='\nNamedByCall = tool_name("by_call")(Named)\n'),
    "call_form_variable": _form(
        "", after='\nNamedByCall = tool_name("by_call")(Named)\n', entry="NamedByCall"
    ),
    "no_name": _form("", "harness-name"),
    "invalid_literal": _form('@tool_name("not a name")', "harness-name", imports=False),
}

LINE = re.compile(r"^(?P<file>form_\w+)\.py:\d+: error: .*\[(?P<code>[a-z-]+)\]$")


def _source(form: Form) -> str:
    return (
        HEADER
        + form.before
        + TOOL.format(decorator=form.decorator)
        + form.after
        + THINKER.format(entry=form.entry)
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("naming_forms")
    (root / "naming_support.py").write_text(SUPPORT)
    for name, form in FORMS.items():
        (root / f"form_{name}.py").write_text(_source(form))
    (root / "mypy.ini").write_text(
        "[mypy]\npython_version = 3.11\nstrict = True\nplugins = mypy_plugin\n"
        "[mypy-harness.*]\nfollow_imports = silent\n"
    )
    return root


@pytest.fixture(scope="module")
def plugin_codes(generated: Path) -> dict[str, set[str]]:
    """Each form's harness codes from one mypy run over every form, which must not crash."""
    files = sorted(p.name for p in generated.glob("form_*.py"))
    env = {
        **os.environ,
        "MYPYPATH": os.pathsep.join([str(REPO), str(KIT), str(generated)]),
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--show-traceback", *files],
        cwd=generated,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = done.stdout + done.stderr
    assert "INTERNAL ERROR" not in output, output
    assert "Traceback" not in output, output
    assert done.returncode in (0, 1), output
    codes: dict[str, set[str]] = {f"form_{name}": set() for name in FORMS}
    for line in done.stdout.splitlines():
        match = LINE.match(line)
        if match is not None and match["code"].startswith("harness-"):
            codes[match["file"]].add(match["code"])
    return codes


@pytest.mark.parametrize("name", sorted(FORMS))
def test_each_documented_naming_form_gets_its_verdict(
    name: str, generated: Path, plugin_codes: dict[str, set[str]]
) -> None:
    form = FORMS[name]
    assert plugin_codes[f"form_{name}"] == set(form.plugin)
    for root in (KIT, generated):
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
    path = generated / f"form_{name}.py"
    if not form.imports:  # the runtime decorator refuses the name when the module runs
        with pytest.raises(ValueError, match="tool name"):
            exec(compile(path.read_text(), str(path), "exec"), {"__name__": f"naming_{name}"})
        return
    findings, checked = check_targets([str(path)])
    assert checked >= 1, findings  # the thinker (and the tool, where it is decorated)
    expected = form.plugin if form.runtime is None else form.runtime
    assert {f.code for f in findings} == set(expected), findings
