"""Palette modules written the ways authors write them, checked by the plugin and the runtime.

A hypothesis strategy composes each part of a palette module from the ways an author writes it:

- a tool's **name**: a literal, a ``Final`` constant, an imported constant, an enum member's
  ``.value``, a ``StrEnum`` member, a class's ``Final`` attribute, an f-string of a ``Final``,
  the call form ``tool_name("x")(Cls)``, none at all; and, hidden from a type checker, an
  f-string of a plain variable, a class's plain attribute and a project's wrapper function;
- its **shape**: plain, bound through a generic base (a bound or a constrained type variable),
  ``@final``, an abstract base made concrete, ``@dataclass``, ``@attrs.define``, under a
  project's own class decorator (hidden when no name is in sight: it may name the class), a
  nested thinker, left abstract;
- its **constructor**: none, an extra keyword-only parameter, overloaded, a changed one, one
  inherited changed, a dataclass's ``InitVar`` parent;
- its **artifacts**: classes, a subclass, an alias, lists, lists of lists, a
  ``TypeAliasType``, a ``NewType`` and a union (both open);
- the **palette**: a tuple literal, a ``Final`` tuple, ``+``, star-unpacking (of this module's
  tuple or of another module's), ``tuple(itertools.chain(...))``, a class attribute of a
  ``@final`` thinker, a ``Final`` class attribute, a list, an entry made by
  ``functools.partial``; and, hidden, a class attribute a subclass may override, a
  comprehension, a function and a property.

Each batch of modules goes through one mypy run with the plugin and through ``harness check``
(the runtime validator). A module **fails** on an internal error (of the whole run), on a
disagreement in the codes where the plugin decides, on a certain plugin error the runtime does
not give, on a palette the runtime refuses and the plugin passes, and on a "cannot prove" in a
module written only in forms a type checker can read.

``tests/plugin/test_generated_palettes.py`` runs a few batches in the suite; run this file for
a long run, with its figures by kind::

    python tests/plugin/palette_generator.py --modules 2000
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "tests" / "plugin" / "kit"

#: Names a tool may get; two tools of a palette may share one (a duplicate), ``finish`` is
#: reserved, and the kit's own tools answer to ``judge_note`` and ``split_note``.
NAMES = (
    "split_note",
    "judge_note",
    "refine",
    "read_part",
    "outline",
    "summarize",
    "extract",
    "tag",
    "finish",
    "not a name",
)
#: Name forms whose value mypy sees, and those it does not (computed at run time).
VISIBLE_NAMES = (
    "literal",
    "final",
    "imported",
    "enum_value",
    "str_enum",
    "class_final",
    "f_string_final",
    "call_form",
    "none",
)
HIDDEN_NAMES = ("f_string_variable", "class_attribute", "wrapper")
SHAPES = (
    "plain",
    "generic",
    "constrained",
    "final",
    "concrete_of_abstract",
    "dataclass",
    "attrs",
    "decorated",
    "nested_thinker",
    "abstract",
)
CTORS = ("none", "keyword_only", "overloaded", "changed", "inherited_changed", "init_var")
#: The constructors each shape can be written with (``inherited_changed`` needs a base of the
#: project's own, ``init_var`` a dataclass; a nested thinker always writes its own).
SHAPE_CTORS = {
    "generic": CTORS[:5],
    "constrained": CTORS[:5],
    "concrete_of_abstract": CTORS[:5],
    "dataclass": ("none", "init_var", "keyword_only", "overloaded", "changed"),
    "nested_thinker": ("none", "keyword_only", "changed"),
}
INPUTS = (
    "Note",
    "SubNote",
    "Part",
    "Verdict",
    "Orphan",
    "NoteAlias",
    "ListArtifact[Part]",
    "ListArtifact[ListArtifact[Part]]",
    "NoteId",
)
OUTPUTS = (
    "Note",
    "SubNote",
    "Part",
    "ListArtifact[Part]",
    "ListArtifact[Verdict]",
    "Verdicts",
    "ListArtifact[ListArtifact[Part]]",
    "ListArtifact[Verdict | Part]",
)
VISIBLE_PALETTES = (
    "tuple",
    "final",
    "plus",
    "star",
    "chain",
    "final_thinker",
    "final_attribute",
    "list",
    "star_module",
    "partial",
)
HIDDEN_PALETTES = ("overridable_attribute", "comprehension", "function", "property")
KIT_KEYS = ("JudgeNote", "JudgePart")

HEADER = """\
from __future__ import annotations
import dataclasses
import enum
import functools
import itertools
from typing import Final, Generic, NewType, TypeVar, overload
import attrs
import typing_extensions
from harness.artifacts import Artifact, ListArtifact
from harness.tools import DecisionTool, tool_name
from palette_kit import (
    DecisionThinker, Identifiable, JobContext, JudgeNote, JudgePart, Note, Orphan, Part,
    SplitNote, SubNote, Verdict,
)
import gen_support

In = TypeVar("In", bound=Artifact)
Out = TypeVar("Out", bound=Artifact)
Verdicts = typing_extensions.TypeAliasType("Verdicts", ListArtifact[Verdict])
NoteId = NewType("NoteId", Note)
NoteAlias = Note
"""

SUPPORT = (
    "from __future__ import annotations\n"
    "from collections.abc import Callable\n"
    "from typing import Final, TypeVar\n"
    "from harness.tools import tool_name\n"
    "from palette_kit import RefineNote\n\n"
    'C = TypeVar("C", bound=type)\n\n'
    "KIT_TOOLS: Final = (RefineNote,)\n"
    + "".join(f"{_n.upper().replace(' ', '_')}: Final = {_n!r}\n" for _n in NAMES)
    + "\n\ndef named(name: str) -> Callable[[C], C]:\n"
    "    def wrap(cls: C) -> C:\n"
    "        return tool_name(name)(cls)  # type: ignore[arg-type, no-any-return]\n\n"
    "    return wrap\n\n\n"
    "def registered(cls: C) -> C:\n"
    "    return cls\n"
)


@dataclass(frozen=True)
class ToolSpec:
    """One generated tool."""

    name: str
    name_form: str
    shape: str
    ctor: str
    takes: str
    makes: str


@dataclass(frozen=True)
class ModuleSpec:
    """One generated module: its tools, the thinker's input, key tool and palette."""

    tools: tuple[ToolSpec, ...]
    thinker_input: str
    key: int | str  # a tool's index, or a kit tool
    palette: tuple[int, ...]  # tools' indexes
    palette_form: str

    @property
    def hidden(self) -> bool:
        """Whether the module uses a form whose value a type checker cannot read."""
        named = {tool.name_form for tool in self.tools}  # each is checked where defined
        # a project's decorator on a class with no name in sight may name it at run time
        unseen = any(t.shape == "decorated" and t.name_form == "none" for t in self.tools)
        return self.palette_form in HIDDEN_PALETTES or bool(named & set(HIDDEN_NAMES)) or unseen

    def kinds(self) -> list[str]:
        """The forms this module is made of, for the figures by kind."""
        out = [f"palette:{self.palette_form}"]
        for tool in self.tools:
            out += [f"name:{tool.name_form}", f"shape:{tool.shape}", f"ctor:{tool.ctor}"]
            out += [f"takes:{tool.takes}", f"makes:{tool.makes}"]
        return sorted(set(out))


def _mostly(common: Sequence[str], rare: Sequence[str], times: int = 4) -> st.SearchStrategy[str]:
    """One of ``common`` (each ``times`` as likely) or of ``rare``: most generated modules are
    legal, or break one rule, so each rule's verdict is compared on its own too."""
    return st.sampled_from([*common] * times + [*rare])


@st.composite
def tool_specs(draw: st.DrawFn) -> ToolSpec:
    shape = draw(_mostly(("plain",), SHAPES[1:], times=9))
    ctors = SHAPE_CTORS.get(shape, CTORS[:4])
    makes = draw(_mostly(OUTPUTS[:6], OUTPUTS[6:]))
    return ToolSpec(
        name=draw(_mostly(NAMES[:8], NAMES[8:], times=8)),
        name_form=draw(_mostly(VISIBLE_NAMES, HIDDEN_NAMES, times=3)),
        shape=shape,
        ctor=draw(_mostly(ctors[:2], ctors[2:])),
        takes=draw(_mostly(INPUTS[:1], INPUTS[1:], times=12)),
        makes="ListArtifact[Verdict]" if shape == "nested_thinker" else makes,
    )


@st.composite
def module_specs(draw: st.DrawFn) -> ModuleSpec:
    tools = tuple(draw(st.lists(tool_specs(), min_size=1, max_size=4)))
    indexes = st.integers(0, len(tools) - 1)
    key: int | str = draw(st.one_of(indexes, _mostly(KIT_KEYS[:1], KIT_KEYS[1:])))
    palette = tuple(draw(st.lists(indexes, min_size=1, max_size=3, unique=True)))
    return ModuleSpec(
        tools=tools,
        thinker_input=draw(_mostly(("Note",), ("SubNote", "Part"))),
        key=key,
        palette=palette,
        # a partial entry is always illegal: as rare as a hidden form
        palette_form=draw(_mostly(VISIBLE_PALETTES[:-1], (*HIDDEN_PALETTES, "partial"), times=2)),
    )


def _constant(name: str) -> str:
    return name.upper().replace(" ", "_")


def _tool_source(index: int, tool: ToolSpec) -> tuple[str, str]:
    """(the tool's definitions, the class name a palette uses)."""
    cls = f"Tool{index}"
    before: list[str] = []
    decorators: list[str] = []
    after = ""
    form = tool.name_form
    if form == "literal":
        decorators.append(f"@tool_name({tool.name!r})")
    elif form == "final":
        before.append(f"NAME{index}: Final = {tool.name!r}")
        decorators.append(f"@tool_name(NAME{index})")
    elif form == "imported":
        decorators.append(f"@tool_name(gen_support.{_constant(tool.name)})")
    elif form == "enum_value":
        before.append(f"class Command{index}(enum.Enum):\n    VALUE = {tool.name!r}")
        decorators.append(f"@tool_name(Command{index}.VALUE.value)")
    elif form == "str_enum":
        before.append(f"class ToolName{index}(enum.StrEnum):\n    VALUE = {tool.name!r}")
        decorators.append(f"@tool_name(ToolName{index}.VALUE)")
    elif form == "class_final":
        before.append(f"class Names{index}:\n    VALUE: Final = {tool.name!r}")
        decorators.append(f"@tool_name(Names{index}.VALUE)")
    elif form == "f_string_final":
        before.append(f"KIND{index}: Final = {tool.name!r}")
        decorators.append(f'@tool_name(f"{{KIND{index}}}")')
    elif form == "f_string_variable":
        before.append(f"KIND{index} = {tool.name!r}")
        decorators.append(f'@tool_name(f"{{KIND{index}}}")')
    elif form == "class_attribute":
        before.append(f"class Names{index}:\n    VALUE = {tool.name!r}")
        decorators.append(f"@tool_name(Names{index}.VALUE)")
    elif form == "wrapper":
        decorators.append(f"@gen_support.named({tool.name!r})")
    elif form == "call_form":
        after = f"tool_name({tool.name!r})({cls})"
    if tool.shape == "final":
        decorators.append("@typing_extensions.final")
    if tool.shape == "dataclass":  # its generated __init__ takes no parent (unless InitVar)
        decorators.append("@dataclasses.dataclass")
    if tool.shape == "attrs":  # as a dataclass: a generated __init__ unless one is written
        decorators.append("@attrs.define")
    if tool.shape == "decorated":  # a project's own class decorator, typed to keep the class
        decorators.append("@gen_support.registered")
    execute = (
        f"    async def execute(self, input: {tool.takes}, context: JobContext) -> {tool.makes}:\n"
        "        raise NotImplementedError\n"
    )
    ctor = ""
    if tool.ctor == "overloaded":
        ctor = (
            "    @overload\n"
            "    def __init__(self, parent: Identifiable) -> None: ...\n"
            "    @overload\n"
            "    def __init__(self, parent: Identifiable, times: int) -> None: ...\n"
            "    def __init__(self, parent: Identifiable, times: int = 1) -> None:\n"
            "        super().__init__(parent)\n\n"
        )
    elif tool.ctor == "keyword_only":
        ctor = (
            "    def __init__(self, parent: Identifiable, *, times: int = 1) -> None:\n"
            "        super().__init__(parent)\n\n"
        )
    elif tool.ctor == "changed":
        ctor = (
            "    def __init__(self, parent: Identifiable, times: int) -> None:\n"
            "        super().__init__(parent)\n\n"
        )
    elif tool.ctor == "init_var":  # the dataclass's generated __init__ takes (parent)
        ctor = (
            "    parent: dataclasses.InitVar[Identifiable]\n\n"
            "    def __post_init__(self, parent: Identifiable) -> None:\n"
            "        super().__init__(parent)\n\n"
        )
    base_ctor = ""
    if tool.ctor == "inherited_changed":
        base_ctor = (
            "    def __init__(self, parent: Identifiable, times: int) -> None:\n"
            "        super().__init__(parent)\n\n"
        )
    body = ctor + (execute if tool.shape != "abstract" else "    pass\n")
    if tool.shape in ("generic", "constrained"):
        var = "In"
        if tool.shape == "constrained":  # the tool's input one of the variable's constraints
            var = f"InC{index}"
            other = "Orphan" if tool.takes != "Orphan" else "Part"
            before.append(f'{var} = TypeVar("{var}", {tool.takes}, {other})')
        generic_execute = (
            f"    async def execute(self, input: {var}, context: JobContext) -> Out:\n"
            "        raise NotImplementedError\n"
        )
        before.append(
            f"class Base{index}(DecisionTool[{var}, Out], Generic[{var}, Out]):\n"
            + (base_ctor + generic_execute)
        )
        declared = f"class {cls}(Base{index}[{tool.takes}, {tool.makes}]):\n"
        body = ctor + "    pass\n"
    elif tool.shape == "nested_thinker":  # a thinker is itself a tool
        extra = {"keyword_only": ", *, times: int = 1", "changed": ", times: int"}
        declared = f"class {cls}(DecisionThinker[{tool.takes}, Verdict]):\n"
        body = (
            f"    def __init__(self, parent: Identifiable{extra.get(tool.ctor, '')}) -> None:\n"
            "        super().__init__(\n"
            "            parent,\n"
            "            output_type=Verdict,\n"
            "            key_tool=JudgePart,\n"
            "            palette=(SplitNote,),\n"
            '            objective="Judge every part",\n'
            "        )\n"
        )
    elif tool.shape == "concrete_of_abstract":
        before.append(
            f"class Base{index}(DecisionTool[{tool.takes}, {tool.makes}]):\n"
            + (base_ctor or "    pass\n")
        )
        declared = f"class {cls}(Base{index}):\n"
    else:
        declared = f"class {cls}(DecisionTool[{tool.takes}, {tool.makes}]):\n"
    parts = [*before, "\n".join([*decorators, declared.rstrip("\n")]) + "\n" + body]
    if after:
        parts.append(after)
    return "\n\n".join(parts), cls


def module_source(spec: ModuleSpec) -> str:
    """The module's text: the header, each tool, the thinker."""
    tools = [_tool_source(i, tool) for i, tool in enumerate(spec.tools)]
    names = [cls for _, cls in tools]
    key = names[spec.key] if isinstance(spec.key, int) else spec.key
    entries = [names[i] for i in spec.palette]
    first, rest = entries[:1], entries[1:]
    pre: list[str] = []
    attribute = ""
    decorator = ""
    form = spec.palette_form
    if form == "tuple":
        palette = f"({', '.join(entries)},)"
    elif form == "final":
        pre.append(f"PALETTE: Final = ({', '.join(entries)},)")
        palette = "PALETTE"
    elif form in ("plus", "star", "chain"):
        pre.append(f"BASE: Final = ({', '.join(first)},)")
        tail = f"({', '.join(rest)},)" if rest else "()"
        palette = {
            "plus": f"BASE + {tail}",
            "star": f"(*BASE, *{tail})",
            "chain": f"tuple(itertools.chain(BASE, {tail}))",
        }[form]
    elif form == "final_thinker":
        decorator = "@typing_extensions.final\n"
        attribute = f"    TOOLS = ({', '.join(entries)},)\n\n"
        palette = "self.TOOLS"
    elif form == "final_attribute":
        attribute = f"    TOOLS: Final = ({', '.join(entries)},)\n\n"
        palette = "self.TOOLS"
    elif form == "list":
        palette = f"[{', '.join(entries)}]"
    elif form == "star_module":  # a Final tuple of another module's tools, unpacked
        palette = f"(*gen_support.KIT_TOOLS, {', '.join(entries)},)"
    elif form == "partial":  # a tool with a preset argument: not a class
        palette = f"({', '.join([f'functools.partial({first[0]})', *rest])},)"
    elif form == "property":
        types = ", ".join(f"type[{entry}]" for entry in entries)
        attribute = (
            "    @property\n"
            f"    def tools(self) -> tuple[{types}]:\n"
            f"        return ({', '.join(entries)},)\n\n"
        )
        palette = "self.tools"
    elif form == "comprehension":
        pre.append(f"BASE: Final = ({', '.join(entries)},)")
        palette = "tuple(tool for tool in BASE)"
    elif form == "function":
        types = ", ".join(f"type[{entry}]" for entry in entries)
        pre.append(f"def tools() -> tuple[{types}]:\n    return ({', '.join(entries)},)")
        palette = "tools()"
    else:  # overridable_attribute
        attribute = f"    TOOLS = ({', '.join(entries)},)\n\n"
        palette = "self.TOOLS"
    thinker = (
        f"{decorator}class Triage(DecisionThinker[{spec.thinker_input}, Verdict]):\n"
        f"{attribute}"
        "    def __init__(self, parent: Identifiable) -> None:\n"
        "        super().__init__(\n"
        "            parent,\n"
        "            output_type=Verdict,\n"
        f"            key_tool={key},\n"
        f"            palette={palette},\n"
        '            objective="Judge the note",\n'
        "        )\n"
    )
    blocks = [source for source, _ in tools] + pre + [thinker]
    return HEADER + "\n\n" + "\n\n\n".join(blocks)


#: mypy's own codes that stand for a harness verdict (plain typing reports it first).
PLAIN = {
    "type-abstract": "harness-tool",
    "abstract": "harness-tool",
    "override": "harness-open-type",
}
LINE = re.compile(r"^(?P<file>gen_\w+)\.py:\d+: error: (?P<message>.*)  \[(?P<code>[a-z-]+)\]$")


@dataclass
class Outcome:
    """One module's verdicts and what is wrong with them (``problem``: a kind of failure)."""

    name: str
    spec: ModuleSpec
    plugin: set[str] = field(default_factory=set)
    runtime: set[str] = field(default_factory=set)
    palette_refused: bool = False  # the runtime refuses the thinker's palette itself
    unbuilt: bool = False  # the runtime could not build a thinker: its palette went unchecked
    imported: bool = True  # False: the runtime decorator refused a name at import
    problem: str | None = None
    said: list[str] = field(default_factory=list)  # the plugin's errors on the module


@dataclass
class Batch:
    """A batch's outcomes, and mypy's output when it crashed."""

    outcomes: list[Outcome]
    crash: str | None = None


def _plugin_codes(stdout: str, names: Sequence[str]) -> tuple[dict[str, set[str]], list[str]]:
    """Each module's harness codes (mypy's own standing for one mapped), and the errors of
    plain mypy that stand for none (the generator wrote code that is wrong in plain typing)."""
    codes: dict[str, set[str]] = {name: set() for name in names}
    strays: list[str] = []
    for line in stdout.splitlines():
        match = LINE.match(line)
        if match is None:
            continue
        code, message = match["code"], match["message"]
        if code.startswith("harness-"):
            codes[match["file"]].add(code)
        elif code in PLAIN:
            codes[match["file"]].add(PLAIN[code])
        elif code == "arg-type" and message.startswith('Argument "palette"'):
            codes[match["file"]].add("harness-tool")
        elif code == "arg-type" and message.startswith('Argument "key_tool"'):
            continue  # the plugin's own harness-key-tool follows it on the same line
        else:
            strays.append(line)
    return codes, strays


def _runtime_codes(path: Path) -> tuple[set[str], bool, bool] | None:
    """The runtime's codes, whether the thinker's palette is among what it refuses, and whether
    it could not build a thinker to check its palette (``None``: the module does not import,
    an invalid name refused)."""
    from harness.cli._check import check_targets
    from harness.runs import TargetError

    try:
        findings, _ = check_targets([str(path)])
    except TargetError as error:  # the runtime decorator refuses an invalid name at import
        if "ValueError: tool name" in str(error):
            return None
        raise
    errors = [f for f in findings if f.severity == "error"]
    unbuilt = any(f.code == "harness-check" for f in findings)
    return {f.code for f in errors}, any(f.subject.endswith(".Triage") for f in errors), unbuilt


def _judge(outcome: Outcome) -> str | None:
    plugin, runtime = outcome.plugin, outcome.runtime
    if not outcome.imported:  # the runtime stops at the first invalid name: only that is known
        refused = plugin & {"harness-name", "harness-undecidable"}
        return None if refused or outcome.spec.hidden else "passed an illegal palette"
    certain = plugin - {"harness-undecidable"}
    if outcome.unbuilt:
        # a nested thinker the runtime cannot build (its constructor wants more than the
        # parent): the plugin still judges its palette, the runtime only says it did not, so
        # the plugin's further errors cannot be compared; it must give what the runtime gives
        if "harness-undecidable" in plugin:  # not passed in silence; the rest not comparable
            return None
        return None if runtime <= plugin else "disagreement"
    if not outcome.spec.hidden:
        if "harness-undecidable" in plugin:
            return "cannot prove what mypy sees"
        return None if plugin == runtime else "disagreement"
    # a name hidden from a type checker: a tool so named, where no palette holds it, is one
    # the plugin cannot know to be a tool at all
    if outcome.palette_refused and not plugin:
        return "passed an illegal palette"
    return None if certain <= runtime else "certain error the runtime does not give"


def check_batch(specs: Sequence[ModuleSpec], root: Path, batch: int, cache: Path) -> Batch:
    """Write the modules, run mypy once over them and the runtime over each, judge each."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "gen_support.py").write_text(SUPPORT)
    (root / "mypy.ini").write_text(
        "[mypy]\npython_version = 3.11\nstrict = True\nplugins = mypy_plugin\n"
        "disable_error_code = unused-ignore\n[mypy-harness.*]\nfollow_imports = silent\n"
    )
    names = [f"gen_{batch}_{index}" for index in range(len(specs))]
    for name, spec in zip(names, specs, strict=True):
        (root / f"{name}.py").write_text(module_source(spec))
    env = {
        **os.environ,
        "MYPYPATH": os.pathsep.join([str(REPO), str(KIT), str(root)]),
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            "mypy.ini",
            "--cache-dir",
            str(cache),
            "--show-traceback",
            *[f"{name}.py" for name in names],
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = done.stdout + done.stderr
    outcomes = [Outcome(name, spec) for name, spec in zip(names, specs, strict=True)]
    if "INTERNAL ERROR" in output or "Traceback" in output or done.returncode not in (0, 1):
        return Batch(outcomes, crash=output)
    codes, strays = _plugin_codes(done.stdout, names)
    for path in (KIT, root):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    for outcome in outcomes:
        outcome.plugin = codes[outcome.name]
        runtime = _runtime_codes(root / f"{outcome.name}.py")
        outcome.imported = runtime is not None
        outcome.runtime, outcome.palette_refused, outcome.unbuilt = runtime or (
            {"harness-name"},
            True,
            False,
        )
        stray = [line for line in strays if line.startswith(f"{outcome.name}.py:")]
        mine = f"{outcome.name}.py:"
        outcome.said = [
            ln for ln in done.stdout.splitlines() if ln.startswith(mine) and "error" in ln
        ]
        outcome.problem = "plain mypy error" if stray else _judge(outcome)
    return Batch(outcomes)


def describe(outcome: Outcome, root: Path) -> str:
    """A failing module as a report shows it: its verdicts and its text."""
    text = (root / f"{outcome.name}.py").read_text()
    return (
        f"{outcome.name}: {outcome.problem}: plugin {sorted(outcome.plugin)}, runtime "
        f"{sorted(outcome.runtime)}\n"
        + "\n".join(outcome.said)
        + f"\n{textwrap.indent(text, '    ')}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The long run: generate modules in batches, print the figures by kind."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--modules", type=int, default=400, help="modules to generate")
    parser.add_argument("--batch", type=int, default=40, help="modules per mypy run")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis's seed")
    parser.add_argument("--show", type=int, default=3, help="failing modules to print")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    totals: collections.Counter[str] = collections.Counter()
    by_kind: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    crashes: list[str] = []
    shown: list[str] = []
    batches = (args.modules + args.batch - 1) // args.batch

    with tempfile.TemporaryDirectory(prefix="palette-generator-") as tmp:
        root = Path(tmp)

        @settings(
            max_examples=batches,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @seed(args.seed)
        @given(st.lists(module_specs(), min_size=args.batch, max_size=args.batch))
        def run(specs: list[ModuleSpec]) -> None:
            number = len(crashes) + totals["batches"]
            result = check_batch(specs, root / f"b{number}", number, root / "cache")
            if result.crash is not None:
                crashes.append(result.crash)
                return
            totals["batches"] += 1
            for outcome in result.outcomes:
                _count(outcome, totals, by_kind)
                if outcome.problem is not None and len(shown) < args.show:
                    shown.append(describe(outcome, root / f"b{number}"))
            print(f"batch {number}: {dict(totals)}", file=sys.stderr)

        run()
    elapsed = time.perf_counter() - started
    for text in [*crashes[:1], *shown]:
        print(text, file=sys.stderr)
    print(f"modules {totals['modules']}, mypy crashes {len(crashes)}, {elapsed:.0f} s")
    for key in sorted(totals):
        print(f"  {key}: {totals[key]}")
    print("by kind: modules, failures by problem")
    for kind in sorted(by_kind):
        counts = by_kind[kind]
        failures = {k: v for k, v in counts.items() if k != "modules"}
        print(f"  {kind}: {counts['modules']} {failures or ''}")
    return 1 if crashes or any(k in PROBLEMS for k in totals) else 0


#: The kinds of failure :func:`_judge` finds.
PROBLEMS = (
    "disagreement",
    "cannot prove what mypy sees",
    "passed an illegal palette",
    "certain error the runtime does not give",
    "plain mypy error",
)


def _count(
    outcome: Outcome,
    totals: collections.Counter[str],
    by_kind: dict[str, collections.Counter[str]],
) -> None:
    totals["modules"] += 1
    totals["undecidable" if "harness-undecidable" in outcome.plugin else "decided"] += 1
    totals["legal" if not outcome.runtime else "illegal"] += 1
    if outcome.problem is not None:
        totals[outcome.problem] += 1
    for kind in outcome.spec.kinds():
        by_kind[kind]["modules"] += 1
        if outcome.problem is not None:
            by_kind[kind][outcome.problem] += 1


if __name__ == "__main__":
    sys.exit(main())
