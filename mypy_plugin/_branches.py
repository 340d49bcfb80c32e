"""Arguments chosen by a condition, and filing what a palette check found once.

A palette, key tool or palette entry chosen by a condition (a conditional expression in the call,
a union of tuples or of class objects from a constant elsewhere) is checked in every branch and
every combination of branches (``branches``): what every combination says is filed once as
certain, what only some say carries a note naming them (``file_all``). A pointer from a palette
entry to the error its class has where it is defined is filed here too (``note_definition``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from mypy.checker import TypeChecker
from mypy.messages import format_type
from mypy.nodes import (
    ConditionalExpr,
    Context,
    Expression,
    TypeInfo,
)
from mypy.options import Options
from mypy.types import (
    TupleType,
    Type,
    UnionType,
    get_proper_type,
)

from harness.palette._rules import (
    Verdict,
)
from mypy_plugin._arguments import Site, class_of
from mypy_plugin._codes import code_for
from mypy_plugin._names import DECORATOR_LINE_CODES
from mypy_plugin._report import disabled_in_file, report

__all__ = ["MAX_COMBINATIONS", "Branch", "Filed", "branches", "file_all", "note_definition"]


@dataclass
class Branch:
    """One possibility of a conditional argument: its type, where to report, how it reads."""

    typ: Type
    node: Expression
    shown: str | None  # None: the argument has one possibility only


def branches(api: object, typ: Type, expr: Expression, options: Options) -> list[Branch]:
    """Each possibility of an argument: the branches of a conditional expression written in the
    call (reported at each branch), else the items of a union type (a constant chosen by a
    condition elsewhere), else the argument itself."""
    if isinstance(expr, ConditionalExpr) and isinstance(api, TypeChecker):
        found: list[Branch] = []
        for part in (expr.if_expr, expr.else_expr):
            part_type = api.lookup_type_or_none(part)
            if part_type is None:
                break
            found += branches(api, part_type, part, options)
        else:
            for branch in found:
                branch.shown = branch.shown or format_type(branch.typ, options)
            return found
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType) and _each_a_palette_or_tool(proper):
        out: list[Branch] = []
        for item in proper.relevant_items():
            for branch in branches(api, item, expr, options):
                branch.shown = branch.shown or format_type(branch.typ, options)
                out.append(branch)
        return out
    if isinstance(proper, TupleType):
        choices = [_entry_choices(item) for item in proper.items]
        if any(len(choice) > 1 for choice in choices):
            combos = list(itertools.islice(itertools.product(*choices), MAX_COMBINATIONS + 1))
            return [
                Branch(
                    proper.copy_modified(items=list(combo)),
                    expr,
                    format_type(proper.copy_modified(items=list(combo)), options),
                )
                for combo in combos
            ]
    return [Branch(typ, expr, None)]


def _entry_choices(item: Type) -> list[Type]:
    """A palette entry's possibilities: each class of a union of class objects (``A if fast
    else B`` in the tuple), else the entry itself."""
    proper = get_proper_type(item)
    if isinstance(proper, UnionType) and _each_a_palette_or_tool(proper):
        return [choice for member in proper.relevant_items() for choice in _entry_choices(member)]
    return [item]


def _each_a_palette_or_tool(union: UnionType) -> bool:
    """A union of fixed tuples (palettes) or of class objects (key tools): a union of ``type[X]``
    items written as one ``type[A | B]`` stays one unknown entry."""
    items = [get_proper_type(item) for item in union.relevant_items()]
    return (
        all(isinstance(item, TupleType) or class_of(item) is not None for item in items)
        and len(items) > 1
    )


#: What one palette check would file: an error (a verdict) or a pointer to a definition.
Filed = tuple[str, Verdict, Context, "TypeInfo | None", "dict[str, object] | None"]

#: More combinations than this (key tool branches times palette branches) are not enumerated.
MAX_COMBINATIONS = 64


_Identity = tuple[str, str, str]


def _identity(filed: Filed) -> _Identity:
    kind, verdict, _, _, _ = filed
    return kind, verdict.code, verdict.message


def _branch_note(
    where: set[tuple[int, int]], keys: Sequence[Branch], palettes: Sequence[Branch]
) -> str:
    """Which branches a verdict holds in, naming only the arguments that matter."""
    key_part = sorted({k for k, _ in where})
    palette_part = sorted({p for _, p in where})
    conditions: list[str] = []
    if len(where) == len(key_part) * len(palette_part):
        if len(key_part) < len(keys):
            shown = " or ".join(str(keys[k].shown) for k in key_part)
            conditions.append(f"the key tool is {shown}")
        if len(palette_part) < len(palettes):
            shown = " or ".join(str(palettes[p].shown) for p in palette_part)
            conditions.append(f"the palette is {shown}")
        text = " and ".join(conditions)
    else:
        text = " or ".join(
            f"(the key tool is {keys[k].shown} and the palette is {palettes[p].shown})"
            for k, p in sorted(where)
        )
    return f"Only in some branches of a conditional argument: when {text}"


def file_all(
    site: Site,
    runs: dict[tuple[int, int], list[Filed]],
    keys: Sequence[Branch],
    palettes: Sequence[Branch],
    palette_expr: Expression,
) -> None:
    """File what every branch says once, as certain; what only some branches say with a note
    naming those branches (at the branch's own node when the condition is written inline)."""
    where: dict[_Identity, set[tuple[int, int]]] = {}
    nodes: dict[_Identity, set[int]] = {}
    notes: dict[_Identity, list[tuple[str, ...]]] = {}
    for combination, filed in runs.items():
        for item in filed:
            where.setdefault(_identity(item), set()).add(combination)
            nodes.setdefault(_identity(item), set()).add(id(item[2]))
            notes.setdefault(_identity(item), []).append(item[1].notes)
    done: set[tuple[_Identity, int]] = set()
    for filed in runs.values():
        for item in filed:
            kind, verdict, node, info, record = item
            identity = _identity(item)
            certain = len(where[identity]) == len(runs)
            if certain and len(nodes[identity]) > 1:
                node = palette_expr  # one problem found at several places: the whole argument
            if (identity, id(node)) in done:
                continue
            done.add((identity, id(node)))
            if kind == "pointer" and info is not None and record is not None:
                note_definition(site, verdict, info, record, node)
                continue
            if len(set(notes[identity])) > 1:  # e.g. what is reachable differs by branch
                common = tuple(n for n in verdict.notes if all(n in o for o in notes[identity]))
                verdict = Verdict(
                    verdict.code,
                    verdict.subject,
                    verdict.message,
                    common,
                    verdict.definition,
                    verdict.key,
                )
            if not certain:
                verdict = Verdict(
                    verdict.code,
                    verdict.subject,
                    verdict.message,
                    (_branch_note(where[identity], keys, palettes), *verdict.notes),
                    verdict.definition,
                    verdict.key,
                )
            report(site.ctx.api.msg, verdict, node)


def note_definition(
    site: Site, verdict: Verdict, info: TypeInfo, record: dict[str, object], node: Context
) -> None:
    """Point a palette entry at the error its class has where it is defined; nothing when that
    error's code is disabled there (it was not shown) or here (mypy drops the note)."""
    disabled = record.get("disabled")
    if isinstance(disabled, list) and verdict.code in disabled:
        return
    if verdict.code in disabled_in_file(site.ctx.api.msg.errors.file):
        return
    module = (
        site.ctx.api.modules.get(info.module_name)
        if isinstance(site.ctx.api, TypeChecker)
        else None
    )
    if module is not None and verdict.code in disabled_in_file(module.path):
        return  # switched off where the class is defined: its error was not shown there
    lines = record.get("lines")
    line = lines.get(verdict.code) if isinstance(lines, dict) else None
    if not isinstance(line, int) and verdict.code in DECORATOR_LINE_CODES:
        line = record.get("at")
    line = line if isinstance(line, int) else record.get("line")
    where = f'module "{info.module_name}"' + (f", line {line}" if isinstance(line, int) else "")
    site.ctx.api.msg.note(
        f'"{info.name}" breaks the palette rules where it is defined ({where})',
        node,
        code=code_for(verdict.code),
    )
