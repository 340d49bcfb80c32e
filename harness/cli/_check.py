"""``harness check PACKAGE_OR_PATH...``: the palette rules at run time, without a type checker.

For users of pyright, pylance or no type checker, and for a CI that wants one line per problem:
every thinker and tool class defined in the given packages, modules or files is checked by the
runtime validator, and each broken rule printed in the mypy plugin's words (code, message, notes
with the fix last), on the line of the class it is about.

Each thinker class is built the way a run builds it, ``Thinker(parent)``, with the constructor of
``DecisionThinker`` replaced for the moment by one that only captures its arguments (so no
argument check of the constructor speaks before the palette rules); a decorated tool class is
checked on its own (its name, constructor and types) where it is defined. A thinker that cannot
be built from its parent alone is a warning, and so is one whose input type nothing binds (a
generic thinker): its palette's reachability cannot be judged.

Output: text (default) or GitHub annotation lines (``--format github``) on stdout; SARIF 2.1
(``--sarif FILE``) and JUnit XML (``--junit FILE``) on request. Exit 0 with no error, 1 with one
or more (warnings do not count), 2 for a usage problem (a package that does not import).

One concern, past 400 lines: the command, from finding the classes of the named packages, modules
or files to placing each problem on the line mypy's plugin would name.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json  # the stdlib: the log's ASCII escapes (ensure_ascii), which orjson cannot write
import pkgutil
import sys
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Final, get_origin
from xml.sax.saxutils import escape, quoteattr

from harness.cli._common import CliError, add_choice_option, say

if TYPE_CHECKING:
    from harness.palette import Verdict

__all__ = ["DESCRIPTION", "Finding", "add_arguments", "check_targets", "run_check"]

SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass(frozen=True)
class Finding:
    """One broken rule (or a warning) at a class: where, how severe, the verdict's words."""

    path: str
    line: int
    severity: str  # "error" or "warning"
    code: str
    message: str
    notes: tuple[str, ...] = field(default=())
    subject: str = ""  # the class it is about (module.qualname)

    def text(self) -> str:
        """As mypy prints it: the error line, then its notes."""
        lines = [f"{self.path}:{self.line}: {self.severity}: {self.message}  [{self.code}]"]
        lines += [f"{self.path}:{self.line}: note: {note}" for note in self.notes]
        return "\n".join(lines)

    def github(self) -> str:
        """A GitHub Actions workflow command annotating the line."""
        body = self.message + "".join(f"\n{note}" for note in self.notes)
        body = body.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        title = self.code.replace(",", "%2C").replace("::", "%3A%3A")
        path = self.path.replace(",", "%2C").replace(":", "%3A")
        return f"::{self.severity} file={path},line={self.line},title={title}::{body}"


DESCRIPTION: Final = (
    "Find every thinker and tool class in the given packages, modules or .py files "
    "(folders are walked), check them with the runtime palette validator and print "
    "each broken rule in the mypy plugin's words. Exit 1 when a rule is broken."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness check``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    parser.add_argument(
        "targets",
        nargs="+",
        metavar="PACKAGE_OR_PATH",
        help="a dotted module or package name, a .py file or a folder",
    )
    add_choice_option(
        parser,
        "--format",
        ("text", "github"),
        "stdout as mypy-style text (default) or GitHub annotation lines",
    )
    parser.add_argument("--sarif", metavar="FILE", help="also write the findings as SARIF 2.1")
    parser.add_argument("--junit", metavar="FILE", help="also write the findings as JUnit XML")
    parser.set_defaults(command=run_check)


def run_check(args: argparse.Namespace) -> int:
    """Check the targets, print and write the findings; the exit status by severity."""
    findings, checked = check_targets(args.targets)
    for finding in findings:
        say(finding.github() if args.format == "github" else finding.text())
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    if args.format == "text":
        say(
            f"checked {checked} class(es): {errors} error(s), {warnings} warning(s)",
            error=True,
        )
    for path, text in ((args.sarif, sarif(findings)), (args.junit, junit(findings, checked))):
        if path is None:
            continue
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as error:
            raise CliError(f"cannot write {path}: {error.strerror}") from None
    return 1 if errors else 0


# -- finding the classes ---------------------------------------------------------------------


def _module_name_of(path: Path) -> tuple[Path, str]:
    """The sys.path root and dotted name of a .py file: up through folders with __init__.py."""
    path = path.resolve()
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def _import_path(path: Path) -> list[ModuleType]:
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    modules = []
    for file in files:
        if any(part.startswith(".") for part in file.parts):
            continue
        root, name = _module_name_of(file)
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        modules.append(_import(name))
    return modules


def _import(name: str) -> ModuleType:
    """The user's module ``name``, through the one importer of user modules: a module that
    cannot be imported is its table's one line (exit 2), as in ``harness run``."""
    from harness.runs import import_module

    return import_module(name)


def _modules(target: str) -> list[ModuleType]:
    path = Path(target)
    if path.suffix == ".py" or path.is_dir() or path.exists():
        if not path.exists():
            raise CliError(f"no such file or folder: {target}")
        return _import_path(path)
    module = _import(target)
    found = [module]
    if hasattr(module, "__path__"):
        for info in pkgutil.walk_packages(module.__path__, prefix=f"{module.__name__}."):
            found.append(_import(info.name))
    return found


def _classes(module: ModuleType) -> Iterator[type]:
    """Classes defined in ``module`` (at any depth of class nesting), in source order."""
    pending = [v for v in vars(module).values() if isinstance(v, type)]
    seen: set[int] = set()
    while pending:
        cls = pending.pop(0)
        if id(cls) in seen or cls.__module__ != module.__name__:
            continue
        seen.add(id(cls))
        yield cls
        pending += [v for v in vars(cls).values() if isinstance(v, type)]


def _where(cls: type) -> tuple[str, int]:
    try:
        file = inspect.getsourcefile(cls) or "<unknown>"
        lines, line = inspect.getsourcelines(cls)
        # the class statement itself, under its decorators
        line += next((i for i, text in enumerate(lines) if text.lstrip().startswith("class ")), 0)
    except (OSError, TypeError):
        module = sys.modules.get(cls.__module__)
        return getattr(module, "__file__", None) or cls.__module__, 1
    return _shown_path(file), line


def _shown_path(file: str) -> str:
    """A file as the findings name it: relative to the current folder when inside it."""
    try:
        return str(Path(file).resolve().relative_to(Path.cwd()))
    except ValueError:
        return file


# -- checking them ---------------------------------------------------------------------------


class _Captured(Exception):
    """Raised by the stand-in constructor with the palette arguments it was given and where
    the call is (the file and line of ``super().__init__(...)``)."""

    def __init__(self, arguments: dict[str, object], file: str, line: int) -> None:
        super().__init__("captured")
        self.arguments = arguments
        self.file = file
        self.line = line


def _capture(self: object, parent: object, **arguments: object) -> None:
    caller = sys._getframe(1)  # the thinker's constructor call
    raise _Captured(arguments, caller.f_code.co_filename, caller.f_lineno)


# -- where each problem is: the line mypy's plugin reports it on -----------------------------
#
# One line per problem, the same in mypy and here: a problem of the palette (an entry without
# a name, a dead tool, a duplicate) at the entry in the constructor call, the key tool's at the
# key_tool argument, the objective's at it; a problem of a decorated tool class where it is
# defined: the constructor at its def line, an open type at the base naming DecisionTool. The
# class line says nothing about which entry, argument or method is wrong, and for a class
# without @tool_name (maybe in another package) the palette is the only place mypy can report.


def _tree(file: str, trees: dict[str, ast.Module | None]) -> ast.Module | None:
    if file not in trees:
        try:
            trees[file] = ast.parse(Path(file).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            trees[file] = None
    return trees[file]


def _call_at(tree: ast.Module, line: int) -> ast.Call | None:
    """The innermost call spanning ``line`` that passes a thinker's arguments."""
    found: ast.Call | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
            and any(k.arg in ("key_tool", "palette") or k.arg is None for k in node.keywords)
            and (found is None or node.lineno >= found.lineno)
        ):
            found = node
    return found


def _argument(tree: ast.Module, call: ast.Call, name: str) -> ast.expr | None:
    """The expression passing ``name``: a keyword, or the item of a ``**SETTINGS`` dict
    written at module level."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    for keyword in call.keywords:
        if keyword.arg is None and isinstance(keyword.value, ast.Name):
            for statement in tree.body:
                targets = (
                    statement.targets
                    if isinstance(statement, ast.Assign)
                    else [statement.target]
                    if isinstance(statement, ast.AnnAssign)
                    else []
                )
                value = getattr(statement, "value", None)
                if not any(isinstance(t, ast.Name) and t.id == keyword.value.id for t in targets):
                    continue
                if isinstance(value, ast.Dict):
                    for key, item in zip(value.keys, value.values, strict=True):
                        if isinstance(key, ast.Constant) and key.value == name:
                            return item
    return None


def _palette_lines(
    captured: _Captured, trees: dict[str, ast.Module | None]
) -> tuple[int, dict[str, int]]:
    """The call's line and, by verdict subject key, the line of each palette entry, the key
    tool and the objective (as mypy reports them)."""
    from harness.palette import runtime_facts

    tree = _tree(captured.file, trees)
    call = _call_at(tree, captured.line) if tree is not None else None
    if tree is None or call is None:
        return captured.line, {}
    lines: dict[str, int] = {}
    palette = captured.arguments.get("palette")
    written = _argument(tree, call, "palette")
    if isinstance(palette, tuple):
        items = written.elts if isinstance(written, ast.Tuple) else None
        for index, entry in enumerate(palette):
            node = items[index] if items is not None and len(items) == len(palette) else written
            if node is not None:
                lines.setdefault(runtime_facts(entry).key, node.lineno)
    key = _argument(tree, call, "key_tool")
    if key is not None:
        lines.setdefault(runtime_facts(captured.arguments.get("key_tool")).key, key.lineno)
        lines["key_tool"] = key.lineno
    if written is not None:
        lines["palette"] = written.lineno
    objective = _argument(tree, call, "objective")
    if objective is not None:
        lines["objective"] = objective.lineno
    return call.lineno, lines


def _verdict_line(verdict: Verdict, call_line: int, lines: dict[str, int]) -> int:
    if verdict.code in ("harness-key-tool", "harness-graph"):
        return lines.get("key_tool", call_line)
    if verdict.code == "harness-objective":
        return lines.get("objective", call_line)
    if verdict.subject == "palette":
        return lines.get("palette", call_line)
    return lines.get(verdict.key, lines.get("key_tool", call_line))


def _definition_line(tool: type, verdict: Verdict, class_line: int) -> int:
    """Where mypy reports a decorated tool's own problem: the constructor at its ``def`` line
    (however decorated), an open type at the base expression naming ``DecisionTool``."""
    from harness.tools import DecisionTool

    try:
        lines, first = inspect.getsourcelines(tool)
        node = ast.parse(textwrap.dedent("".join(lines))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return class_line
    if not isinstance(node, ast.ClassDef):
        return class_line
    if verdict.code == "harness-ctor":
        inits = [
            statement.lineno
            for statement in node.body
            if isinstance(statement, ast.FunctionDef) and statement.name == "__init__"
        ]  # of an overloaded constructor, the implementation (the last one, what runs)
        return first + inits[-1] - 1 if inits else class_line
    if verdict.code == "harness-open-type":
        bases = tool.__dict__.get("__orig_bases__", tool.__bases__)
        for written, base in zip(node.bases, bases, strict=False):
            origin = get_origin(base) or base
            if isinstance(origin, type) and issubclass(origin, DecisionTool):
                return first + written.lineno - 1
    return class_line


def _thinker_findings(
    cls: type, tool_keys: set[str], trees: dict[str, ast.Module | None]
) -> list[Finding]:
    from harness.palette import palette_report, thinker_input_of
    from harness.thinker import DecisionThinker
    from harness.tools import Workflow

    path, line = _where(cls)
    subject = f"{cls.__module__}.{cls.__qualname__}"
    original = DecisionThinker.__init__
    DecisionThinker.__init__ = _capture  # type: ignore[method-assign]  # for a moment
    try:
        cls(Workflow())
    except _Captured as captured:
        arguments = captured.arguments
        where = captured
    except Exception as error:
        return [
            Finding(
                path,
                line,
                "warning",
                "harness-check",
                f'Thinker "{cls.__name__}" cannot be built from its parent alone '
                f"({type(error).__name__}: {error}): its palette is not checked",
                ("Give it the constructor a run uses: def __init__(self, parent) -> None",),
                subject,
            )
        ]
    else:
        return []  # a thinker not calling DecisionThinker.__init__: nothing to check
    finally:
        DecisionThinker.__init__ = original  # type: ignore[method-assign]
    objective = arguments.get("objective")
    report = palette_report(
        thinker_input=thinker_input_of(cls),
        output_type=arguments.get("output_type"),  # type: ignore[arg-type]  # checked by it
        key_tool=arguments.get("key_tool"),
        palette=arguments.get("palette"),  # type: ignore[arg-type]  # checked by it
        objective=objective if isinstance(objective, str) else None,
    )
    call_line, lines = _palette_lines(where, trees)
    call_path = _shown_path(where.file)
    findings = [
        Finding(
            call_path,
            _verdict_line(v, call_line, lines),
            "error",
            v.code,
            v.message,
            v.notes,
            subject,
        )
        for v in report.verdicts
        if not (v.definition and v.key in tool_keys)  # said where the tool is defined
    ]
    # what could not be judged (the thinker's input unknown): said, never passed in silence
    findings += [
        Finding(path, line, "warning", v.code, v.message, v.notes, subject) for v in report.unproved
    ]
    return findings


def check_targets(targets: Sequence[str]) -> tuple[list[Finding], int]:
    """Every finding in ``targets`` (packages, modules, files, folders) and how many thinker and
    tool classes were checked."""
    from harness.palette import runtime_facts
    from harness.palette import tool_verdicts as verdicts_of
    from harness.thinker import DecisionThinker
    from harness.tools import NAME_ATTR, DecisionTool

    classes: list[type] = []
    for target in targets:
        for module in _modules(target):
            classes += [c for c in _classes(module) if c not in classes]
    # a named thinker is a tool too: its definition is judged as every tool's (its palette too)
    tools = [c for c in classes if issubclass(c, DecisionTool) and NAME_ATTR in c.__dict__]
    thinkers = [c for c in classes if issubclass(c, DecisionThinker) and c is not DecisionThinker]
    findings: list[Finding] = []
    keys: set[str] = set()
    trees: dict[str, ast.Module | None] = {}
    for tool in tools:
        facts = runtime_facts(tool)
        keys.add(facts.key)
        path, line = _where(tool)
        for verdict in verdicts_of(facts):
            if verdict.definition:
                subject = f"{tool.__module__}.{tool.__qualname__}"
                findings.append(
                    Finding(
                        path,
                        _definition_line(tool, verdict, line),
                        "error",
                        verdict.code,
                        verdict.message,
                        verdict.notes,
                        subject,
                    )
                )
    for thinker in thinkers:
        findings += _thinker_findings(thinker, keys, trees)
    # files in path order, each file's problems in line order (as mypy prints them)
    findings.sort(key=lambda f: (f.path, f.line))
    return findings, len({*tools, *thinkers})


# -- reports ---------------------------------------------------------------------------------


def sarif(findings: Sequence[Finding]) -> str:
    """The findings as a SARIF 2.1.0 log (one run, one rule per code)."""
    from harness.palette import CODES

    codes = sorted({f.code for f in findings} | set(CODES))
    rules = [
        {
            "id": code,
            "shortDescription": {"text": CODES.get(code, "a thinker the check cannot build")},
        }
        for code in codes
    ]
    results = [
        {
            "ruleId": f.code,
            "level": f.severity,
            "message": {"text": f.message + "".join(f"\n{note}" for note in f.notes)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": Path(f.path).as_posix()},
                        "region": {"startLine": f.line},
                    }
                }
            ],
        }
        for f in findings
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "harness check",
                        "informationUri": "https://github.com/harness/harness",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)


def junit(findings: Sequence[Finding], checked: int) -> str:
    """The findings as JUnit XML: one failing test case per error, one suite."""
    errors = [f for f in findings if f.severity == "error"]
    cases = []
    for f in findings:
        kind = "failure" if f.severity == "error" else "skipped"
        detail = escape(f.text())
        name = quoteattr(f"{f.path}:{f.line} [{f.code}]")
        cases.append(
            f"  <testcase classname={quoteattr(f.subject or f.path)} name={name} "
            f'file={quoteattr(f.path)} line="{f.line}">\n'
            f"    <{kind} message={quoteattr(f.message)} type={quoteattr(f.code)}>"
            f"{detail}</{kind}>\n  </testcase>"
        )
    if not findings:
        cases.append(f'  <testcase classname="harness check" name="{checked} class(es)"/>')
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<testsuite name="harness check" tests="{max(len(findings), 1)}" '
        f'failures="{len(errors)}" errors="0" skipped="{len(findings) - len(errors)}">\n'
        + "\n".join(cases)
        + "\n</testsuite>\n"
    )
