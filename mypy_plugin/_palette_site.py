"""Checks where a thinker is built: its palette, key tool, reachability and objective.

Why the plugin is needed: with ``palette: tuple[type[DecisionTool[Never, Artifact]], ...]`` mypy
accepts an abstract class inside the tuple, a class without ``@tool_name``, duplicate names, a
changed constructor and ``Any`` in a base, and it cannot know whether the key tool's input can
ever exist in a run. Both forms reach this module: a direct ``DecisionThinker[I, O](...)`` call
(a function hook on the class), ``super().__init__(...)`` in a subclass (a function hook on
``__init__ of DecisionThinker``) and an explicit ``DecisionThinker.__init__(self, ...)`` (a
method hook on its full name). Palettes held in constants of other modules work because the
hook reads the argument *types* (a tuple keeps each entry's class), not the call's syntax.

An entry whose type is not one specific class (``type[SplitNote]``, a union) is reported as such
and the rules that need every entry (reachability, dead tools) are skipped: they are never
judged on a guess.

What plain mypy already reports is not reported again: a non-tool class (``[arg-type]``), an
abstract class passed directly as ``key_tool`` (``[type-abstract]``), a key tool whose output is
not ``ListArtifact[O]`` for an explicit ``O`` (``[arg-type]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mypy.checker import TypeChecker
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type
from mypy.nodes import Context, Expression, StrExpr, TupleExpr, TypeInfo
from mypy.plugin import FunctionContext, MethodContext
from mypy.subtypes import is_subtype
from mypy.types import (
    CallableType,
    Instance,
    LiteralType,
    Overloaded,
    TupleType,
    Type,
    TypeType,
    get_proper_type,
)
from mypy.typevars import fill_typevars

from harness._palette._rules import ToolFacts, Verdict, palette_verdicts, unknown_entry_verdict
from mypy_plugin._codes import code_for
from mypy_plugin._dependencies import class_triggers, depend_on
from mypy_plugin._facts import MypyType, artifact_side, facts_of, own_name_record, tool_base
from mypy_plugin._names import LIST_ARTIFACT, THINKER
from mypy_plugin._report import checker_fail, report, reporting_surprises

__all__ = ["check_direct_thinker", "check_explicit_init", "check_super_init"]

_Context = FunctionContext | MethodContext


@dataclass
class _Entry:
    info: TypeInfo | None  # None: not one specific class
    node: Context
    shown: str  # the entry's type, for a message when it is not a specific class


@dataclass
class _Site:
    """One thinker construction: what the arguments are and where to report."""

    ctx: _Context
    thinker_args: Sequence[Type] | None

    def argument(self, name: str) -> tuple[Type | None, Expression | None]:
        names = self.ctx.callee_arg_names
        if name not in names:
            return None, None
        index = names.index(name)
        types, args = self.ctx.arg_types[index], self.ctx.args[index]
        if not types or not args:
            return None, None
        return types[0], args[0]


def _class_of(typ: Type) -> TypeInfo | None:
    proper = get_proper_type(typ)
    if isinstance(proper, (CallableType, Overloaded)) and proper.is_type_obj():
        return proper.type_object()
    return None


def _instance_of_class_type(typ: Type) -> Instance | None:
    proper = get_proper_type(typ)
    if isinstance(proper, (CallableType, Overloaded)) and proper.is_type_obj():
        filled = fill_typevars(proper.type_object())
        return filled if isinstance(filled, Instance) else None
    if isinstance(proper, TypeType):
        item = proper.item
        return item if isinstance(item, Instance) else None
    return None


def _palette_entries(site: _Site, typ: Type, expr: Expression) -> list[_Entry] | None:
    proper = get_proper_type(typ)
    options = site.ctx.api.options
    if not isinstance(proper, TupleType):
        return None  # a variable-length tuple (reported by the caller) or mypy's own error
    items = proper.items
    literal = expr.items if isinstance(expr, TupleExpr) else None
    entries = []
    for index, item in enumerate(items):
        node: Context = literal[index] if literal and len(literal) == len(items) else expr
        entries.append(_Entry(_class_of(item), node, format_type(item, options)))
    return entries


def _literal_text(typ: Type | None, expr: Expression | None) -> str | None:
    if isinstance(expr, StrExpr):
        return expr.value
    proper = get_proper_type(typ) if typ is not None else None
    if isinstance(proper, LiteralType) and isinstance(proper.value, str):
        return proper.value
    if isinstance(proper, Instance) and proper.last_known_value is not None:
        value = proper.last_known_value.value
        return value if isinstance(value, str) else None
    return None


def _check(site: _Site) -> None:
    ctx = site.ctx
    api = ctx.api
    options = api.options
    key_type, key_expr = site.argument("key_tool")
    palette_type, palette_expr = site.argument("palette")
    output_type, _ = site.argument("output_type")
    objective_type, objective_expr = site.argument("objective")
    if key_type is None or key_expr is None or palette_type is None or palette_expr is None:
        return
    key_info = _class_of(key_type)
    if key_info is None:
        if _instance_of_class_type(key_type) is not None:
            shown = format_type(key_type, options)
            report(api.msg, unknown_entry_verdict("Key tool", shown), key_expr)
        return  # anything else: plain mypy reports it
    entries = _palette_entries(site, palette_type, palette_expr)
    if entries is None:
        proper = get_proper_type(palette_type)
        if isinstance(proper, Instance) and proper.type.fullname == "builtins.tuple":
            shown = format_type(palette_type, options)
            report(api.msg, unknown_entry_verdict("Palette entry", shown), palette_expr)
        return
    for entry in entries:
        if entry.info is None:
            report(api.msg, unknown_entry_verdict("Palette entry", entry.shown), entry.node)
    known = [(entry, entry.info) for entry in entries if entry.info is not None]

    facts: dict[str, ToolFacts[MypyType]] = {}
    nodes: dict[str, Context] = {}
    infos: dict[str, TypeInfo] = {}
    for entry, entry_info in known:
        facts.setdefault(entry_info.fullname, facts_of(entry_info, options))
        nodes.setdefault(entry_info.fullname, entry.node)
        infos.setdefault(entry_info.fullname, entry_info)
    key_facts = facts_of(key_info, options)
    nodes.setdefault(key_info.fullname, key_expr)
    infos[key_info.fullname] = key_info
    palette_facts = [facts[entry_info.fullname] for _, entry_info in known]

    thinker_input = None
    thinker_output: Type | None = None
    if site.thinker_args is not None and len(site.thinker_args) == 2:
        side = artifact_side(site.thinker_args[0], options)
        thinker_input = side if isinstance(side, MypyType) else None
        thinker_output = site.thinker_args[1]
    asked = _instance_of_class_type(output_type) if output_type is not None else None
    asked_side = artifact_side(asked, options) if asked is not None else None
    output_node = asked_side if isinstance(asked_side, MypyType) else None

    verdicts = palette_verdicts(
        thinker_input=thinker_input,
        output_type=output_node,
        key_tool=key_facts,
        palette=palette_facts,
        objective=_literal_text(objective_type, objective_expr),
        complete=len(known) == len(entries),
    )
    noted: set[str] = set()
    for verdict in verdicts:
        info = infos.get(verdict.key)
        node = nodes.get(verdict.key, key_expr)
        if info is not None and _already_reported(
            verdict, info, key_info, key_facts, thinker_output
        ):
            continue
        record = own_name_record(info) if info is not None else None
        if verdict.definition and info is not None and record is not None:
            if verdict.key not in noted:  # reported where it is defined: point there
                noted.add(verdict.key)
                _note_definition(site, verdict, info, record, node)
            continue
        if verdict.code in ("harness-key-tool", "harness-graph"):
            node = key_expr
        elif verdict.code == "harness-objective" and objective_expr is not None:
            node = objective_expr
        report(api.msg, verdict, node)

    depend_on(api, _names_involved(infos.values(), [*palette_facts, key_facts], site))


def _note_definition(
    site: _Site, verdict: Verdict, info: TypeInfo, record: dict[str, object], node: Context
) -> None:
    """Point a palette entry at the error its class has where it is defined; nothing when that
    error's code is disabled there (it was not shown) or here (mypy drops the note)."""
    disabled = record.get("disabled")
    if isinstance(disabled, list) and verdict.code in disabled:
        return
    line = record.get("line")
    where = f'module "{info.module_name}"' + (f", line {line}" if isinstance(line, int) else "")
    site.ctx.api.msg.note(
        f'"{info.name}" breaks the palette rules where it is defined ({where})',
        node,
        code=code_for(verdict.code),
    )


def _already_reported(
    verdict: Verdict,
    info: TypeInfo,
    key_info: TypeInfo,
    key_facts: ToolFacts[MypyType],
    thinker_output: Type | None,
) -> bool:
    """What plain mypy reports itself, or what is not ours to say."""
    if verdict.code == "harness-name":
        record = own_name_record(info)
        if record is not None and record.get("dynamic"):
            return True  # a name computed at run time: the runtime validator checks it
    if verdict.code == "harness-tool" and info is key_info:
        return True  # [arg-type] or [type-abstract] on the key_tool argument
    if verdict.code == "harness-tool" and tool_base(info) is None:
        return True  # a non-tool class in the palette: [arg-type]
    if verdict.code == "harness-key-tool":
        produced = key_facts.output_node
        if produced is None or thinker_output is None:
            return produced is None
        list_info = next((b for b in produced.typ.type.mro if b.fullname == LIST_ARTIFACT), None)
        if list_info is None:
            return True  # not a list at all: [arg-type]
        # mypy checks the key tool against ListArtifact[O] for the O it inferred or was given.
        return not is_subtype(produced.typ, Instance(list_info, [thinker_output]))
    return False


def _names_involved(
    infos: Iterable[TypeInfo], facts: Sequence[ToolFacts[MypyType]], site: _Site
) -> list[str]:
    """Every class (and tool member) the verdicts read: each tool's MRO with its constructor
    and name, each artifact type's MRO down through list iterands, the thinker's arguments."""
    names = class_triggers(base for info in infos for base in info.mro)
    nodes: list[MypyType] = []
    for fact in facts:
        nodes += [n for n in (fact.input_node, fact.output_node) if n is not None]
    for node in nodes:
        current: MypyType | None = node
        while current is not None:
            names += [base.fullname for base in current.typ.type.mro]
            current = current.iterand()
    if site.thinker_args:
        for arg in site.thinker_args:
            proper = get_proper_type(arg)
            if isinstance(proper, Instance):
                names += [base.fullname for base in proper.type.mro]
    return sorted(set(names))


def check_direct_thinker(ctx: FunctionContext) -> Type:
    """``DecisionThinker[I, O](parent, ...)``: the thinker's ``I`` and ``O`` come from the call."""
    with reporting_surprises(checker_fail(ctx.api.msg), ctx.context, "a thinker's palette"):
        returned = get_proper_type(ctx.default_return_type)
        args = returned.args if isinstance(returned, Instance) else None
        _check(_Site(ctx, args))
    return ctx.default_return_type


def _check_in_thinker_class(ctx: _Context) -> None:
    """A constructor call inside a thinker subclass: ``I`` and ``O`` come from its bases."""
    api = ctx.api
    if not isinstance(api, TypeChecker) or not api.scope.current_function():
        return
    info = api.scope.enclosing_class()
    thinker = next((b for b in info.mro if b.fullname == THINKER), None) if info else None
    if info is None or thinker is None:
        return
    own = fill_typevars(info)
    args = map_instance_to_supertype(own, thinker).args if isinstance(own, Instance) else None
    _check(_Site(ctx, args))


def check_super_init(ctx: FunctionContext) -> Type:
    """``super().__init__(...)`` in a thinker subclass: ``I`` and ``O`` come from its bases."""
    with reporting_surprises(checker_fail(ctx.api.msg), ctx.context, "a thinker's palette"):
        _check_in_thinker_class(ctx)
    return ctx.default_return_type


def check_explicit_init(ctx: MethodContext) -> Type:
    """``DecisionThinker.__init__(self, parent, ...)`` in a thinker subclass: as ``super()``."""
    with reporting_surprises(checker_fail(ctx.api.msg), ctx.context, "a thinker's palette"):
        _check_in_thinker_class(ctx)
    return ctx.default_return_type
