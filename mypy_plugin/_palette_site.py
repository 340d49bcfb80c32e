"""Checks where a thinker is built: its palette, key tool, reachability and objective.

Why the plugin is needed: with ``palette: tuple[type[DecisionTool[Never, Artifact]], ...]`` mypy
accepts an abstract class inside the tuple, a class without ``@tool_name``, duplicate names, a
changed constructor and ``Any`` in a base, and it cannot know whether the key tool's input can
ever exist in a run. Both forms reach this module: a direct ``DecisionThinker[I, O](...)`` call
(a function hook on the class), ``super().__init__(...)`` in a subclass (a function hook on
``__init__ of DecisionThinker``) and an explicit ``DecisionThinker.__init__(self, ...)`` (a
method hook on its full name). Palettes held in constants of other modules work because the
hook reads the argument *types* (a tuple keeps each entry's class), not the call's syntax.

A palette, key tool or palette entry chosen by a condition (a conditional expression in the call,
a union of tuples or of class objects from a constant elsewhere) is checked in every branch and
every combination of branches: what every combination says is reported once, what only some say
carries a note naming them. An entry whose type is not one specific class (``type[SplitNote]``,
``Any``) is reported as ``harness-undecidable`` and the rules that need every entry
(reachability, dead tools) are skipped: they are never judged on a guess.

What plain mypy already reports is not reported again: a non-tool class (``[arg-type]``), an
abstract class passed directly as ``key_tool`` (``[type-abstract]``). A key tool whose output is
not ``ListArtifact[O]`` is reported in the runtime's words even where mypy's ``[arg-type]``
precedes it (see :func:`_already_reported`).

Over 400 lines for one reason: every check at a thinker's construction (the branches of
conditional arguments, what each argument's expression lets a type checker prove, the filing of
each verdict once at the narrowest node) reads the same call site (``_Site``) and files through
``_file_all``; split, the parts would pass that state around instead of sharing it.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from mypy import errorcodes as codes
from mypy.checker import TypeChecker
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type, format_type_bare
from mypy.nodes import (
    ARG_STAR2,
    AssignmentStmt,
    CallExpr,
    ConditionalExpr,
    Context,
    DictExpr,
    Expression,
    ExpressionStmt,
    IndexExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    RefExpr,
    SetExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import FunctionContext, MethodContext
from mypy.subtypes import is_subtype
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    LiteralType,
    Overloaded,
    TupleType,
    Type,
    TypedDictType,
    TypeType,
    TypeVarType,
    UnionType,
    get_proper_type,
)
from mypy.typevars import fill_typevars

from harness.palette._rules import (
    ToolFacts,
    Verdict,
    aliased_name_verdict,
    container_entry_verdict,
    generic_input_verdict,
    overridable_entry_verdict,
    palette_shape_verdict,
    palette_verdicts,
    too_many_branches_verdict,
    undecidable_name_verdict,
    unknown_entry_verdict,
)
from mypy_plugin._codes import code_for
from mypy_plugin._dependencies import class_triggers, depend_on, wants_dependencies
from mypy_plugin._facts import (
    MypyType,
    artifact_side,
    facts_of,
    own_name_record,
    own_verdicts,
    tool_base,
)
from mypy_plugin._names import DECISION_TOOL, THINKER, TOOL_NAME
from mypy_plugin._record import literal_name
from mypy_plugin._report import checker_fail, disabled_in_file, report, reporting_surprises

__all__ = ["check_direct_thinker", "check_explicit_init", "check_super_init", "note_thinker_input"]

_Context = FunctionContext | MethodContext


@dataclass
class _Entry:
    info: TypeInfo | None  # None: not one specific class
    node: Context
    shown: str  # the entry's type, for a message when it is not a specific class
    unknown: Verdict | None = None  # why it cannot be proved (read from a container, ...)
    written: Expression | None = None  # the entry as written in a tuple literal


def _self_reference(expr: Expression) -> bool:
    """``self``, ``cls`` or ``type(self)``: a lookup through it finds a subclass's override."""
    if isinstance(expr, NameExpr):
        return expr.name in ("self", "cls")
    return (
        isinstance(expr, CallExpr)
        and isinstance(expr.callee, NameExpr)
        and expr.callee.name == "type"
        and len(expr.args) == 1
        and _self_reference(expr.args[0])
    )


def _final_attribute(api: object, expr: MemberExpr) -> bool:
    """Whether ``self.NAME`` reads a ``Final`` class attribute (no subclass can override it)."""
    node = expr.node
    if isinstance(node, Var):
        return node.is_final
    info = api.scope.enclosing_class() if isinstance(api, TypeChecker) else None
    found = info.get(expr.name) if info is not None else None
    return found is not None and isinstance(found.node, Var) and found.node.is_final


def _unprovable(
    role: str, expr: Expression, shown: Callable[[], str], api: object = None
) -> Verdict | None:
    """Why the class an argument names cannot be proved from its expression, if so: read
    from a class attribute a subclass may override, or from a container or a call (mypy only
    knows the join of what it may hold)."""
    if (
        isinstance(expr, MemberExpr)
        and _self_reference(expr.expr)
        and not _final_attribute(api, expr)
    ):
        return overridable_entry_verdict(role, expr.name)
    if isinstance(expr, IndexExpr):
        base = expr.base.node if isinstance(expr.base, RefExpr) else None
        typ = get_proper_type(base.type) if isinstance(base, Var) and base.type else None
        if not isinstance(typ, TupleType):  # a tuple's item keeps its own class
            return container_entry_verdict(role, shown(), "a container")
    if isinstance(expr, CallExpr) and not _is_class_ref(expr.callee):
        return container_entry_verdict(role, shown(), "a call")
    return None


def _shown(typ: Type, options: Options) -> Callable[[], str]:
    """The type as a message shows it, rendered when a message needs it."""
    return lambda: format_type(typ, options)


def _is_class_ref(expr: Expression) -> bool:
    return isinstance(expr, RefExpr) and isinstance(expr.node, TypeInfo)


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
        if self.ctx.arg_kinds[index][0] == ARG_STAR2:
            return _unpacked(self.ctx.api, name, types[0], args[0])
        return types[0], args[0]


def _unpacked(
    api: object, name: str, typ: Type, expr: Expression
) -> tuple[Type | None, Expression | None]:
    """An argument given through ``**SETTINGS``: a ``TypedDict``'s item. A ``Final`` one of
    this module is read as written (the item's own expression and type, where the report then
    lands); otherwise the item's declared type, which proves what it can (a palette typed
    ``tuple[type[...], ...]`` is undecidable, never silence). Anything else ``**``-unpacked is
    mypy's to check; it proves nothing here."""
    proper = get_proper_type(typ)
    if not isinstance(proper, TypedDictType) or name not in proper.items:
        return None, None
    written = _final_item(api, expr, name)
    if written is not None and isinstance(api, TypeChecker):
        found = api.lookup_type_or_none(written)
        if found is not None:
            return found, written
    return proper.items[name], expr


def _final_item(api: object, expr: Expression, name: str) -> Expression | None:
    """The expression of key ``name`` in ``SETTINGS: Final = {...}`` (or ``= Settings(...)``),
    when ``expr`` names such a constant of the module being checked."""
    var = expr.node if isinstance(expr, NameExpr) else None
    tree = api.tree if isinstance(api, TypeChecker) else None
    if not isinstance(var, Var) or not var.is_final or tree is None:
        return None
    if var.fullname != f"{tree.fullname}.{var.name}":
        return None  # another module's: its syntax is not read (it may come from the cache)
    for statement in tree.defs:
        if not (
            isinstance(statement, AssignmentStmt)
            and any(isinstance(t, NameExpr) and t.node is var for t in statement.lvalues)
        ):
            continue
        value = statement.rvalue
        if isinstance(value, DictExpr):
            for key, item in value.items:
                if isinstance(key, StrExpr) and key.value == name:
                    return item
        if isinstance(value, CallExpr):
            for item, keyword in zip(value.args, value.arg_names, strict=False):
                if keyword == name:
                    return item
    return None


def _call_form_name(api: object, info: TypeInfo, written: Expression | None) -> str | bool | None:
    """The name ``tool_name("x")(Cls)``, a call in the module being checked, gives ``info`` (a
    vendored class named without a decorator): the literal when such a call is seen; ``True``
    when the palette names the class through a variable a type checker cannot read here (one of
    another module, or one assigned something other than the class itself); else ``None``."""
    tree = api.tree if isinstance(api, TypeChecker) else None
    alias = written.node if isinstance(written, RefExpr) else None
    if tree is None:
        return True if isinstance(alias, Var) else None
    assigned: Expression | None = None
    for statement in tree.defs:
        value = (
            statement.rvalue
            if isinstance(statement, AssignmentStmt)
            else statement.expr
            if isinstance(statement, ExpressionStmt)
            else None
        )
        if isinstance(statement, AssignmentStmt) and any(
            isinstance(t, NameExpr) and t.node is alias for t in statement.lvalues
        ):
            assigned = value
        if (
            isinstance(value, CallExpr)
            and isinstance(value.callee, CallExpr)
            and isinstance(value.callee.callee, RefExpr)
            and value.callee.callee.fullname == TOOL_NAME
            and len(value.args) == 1
            and isinstance(value.args[0], RefExpr)
            and value.args[0].node is info
        ):
            named = literal_name(value.callee)
            if named is not None:
                return named
    if not isinstance(alias, Var):
        return None
    if isinstance(assigned, RefExpr) and assigned.node is info:
        return None  # a plain alias of the class: its name is the class's
    return True


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
        own = literal[index] if literal and len(literal) == len(items) else None
        node: Context = own if own is not None else expr
        show = _shown(item, options)  # rendered only for a message: format_type is not cheap
        info = _class_of(item)
        unknown = _unprovable("Palette entry", own, show, site.ctx.api) if own is not None else None
        if unknown is None and info is not None and info.fullname == DECISION_TOOL:
            unknown = container_entry_verdict("Palette entry", show(), "a container or a join")
        shown = show() if unknown is None and info is None else ""  # read only in that case
        entries.append(_Entry(None if unknown else info, node, shown, unknown, own))
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


@dataclass
class _Branch:
    """One possibility of a conditional argument: its type, where to report, how it reads."""

    typ: Type
    node: Expression
    shown: str | None  # None: the argument has one possibility only


def _branches(api: object, typ: Type, expr: Expression, options: Options) -> list[_Branch]:
    """Each possibility of an argument: the branches of a conditional expression written in the
    call (reported at each branch), else the items of a union type (a constant chosen by a
    condition elsewhere), else the argument itself."""
    if isinstance(expr, ConditionalExpr) and isinstance(api, TypeChecker):
        found: list[_Branch] = []
        for part in (expr.if_expr, expr.else_expr):
            part_type = api.lookup_type_or_none(part)
            if part_type is None:
                break
            found += _branches(api, part_type, part, options)
        else:
            for branch in found:
                branch.shown = branch.shown or format_type(branch.typ, options)
            return found
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType) and _each_a_palette_or_tool(proper):
        out: list[_Branch] = []
        for item in proper.relevant_items():
            for branch in _branches(api, item, expr, options):
                branch.shown = branch.shown or format_type(branch.typ, options)
                out.append(branch)
        return out
    if isinstance(proper, TupleType):
        choices = [_entry_choices(item) for item in proper.items]
        if any(len(choice) > 1 for choice in choices):
            combos = list(itertools.islice(itertools.product(*choices), _MAX_COMBINATIONS + 1))
            return [
                _Branch(
                    proper.copy_modified(items=list(combo)),
                    expr,
                    format_type(proper.copy_modified(items=list(combo)), options),
                )
                for combo in combos
            ]
    return [_Branch(typ, expr, None)]


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
        all(isinstance(item, TupleType) or _class_of(item) is not None for item in items)
        and len(items) > 1
    )


#: What one palette check would file: an error (a verdict) or a pointer to a definition.
_Filed = tuple[str, Verdict, Context, "TypeInfo | None", "dict[str, object] | None"]

#: More combinations than this (key tool branches times palette branches) are not enumerated.
_MAX_COMBINATIONS = 64


def _check(site: _Site) -> None:
    ctx = site.ctx
    api = ctx.api
    options = api.options
    key_type, key_expr = site.argument("key_tool")
    palette_type, palette_expr = site.argument("palette")
    if key_type is None or key_expr is None or palette_type is None or palette_expr is None:
        return
    keys = _branches(api, key_type, key_expr, options)
    palettes = _branches(api, palette_type, palette_expr, options)
    if len(keys) * len(palettes) > _MAX_COMBINATIONS:
        report(api.msg, too_many_branches_verdict(_MAX_COMBINATIONS), palette_expr)
        return
    runs: dict[tuple[int, int], list[_Filed]] = {}
    for key_index, key in enumerate(keys):
        for palette_index, palette in enumerate(palettes):
            runs[key_index, palette_index] = _check_branch(site, key, palette)
    _file_all(site, runs, keys, palettes, palette_expr)


_Identity = tuple[str, str, str]


def _identity(filed: _Filed) -> _Identity:
    kind, verdict, _, _, _ = filed
    return kind, verdict.code, verdict.message


def _branch_note(
    where: set[tuple[int, int]], keys: Sequence[_Branch], palettes: Sequence[_Branch]
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


def _file_all(
    site: _Site,
    runs: dict[tuple[int, int], list[_Filed]],
    keys: Sequence[_Branch],
    palettes: Sequence[_Branch],
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
                _note_definition(site, verdict, info, record, node)
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


def _check_branch(site: _Site, key: _Branch, palette: _Branch) -> list[_Filed]:
    """What the palette check files for one key tool and one palette (branches of conditional
    arguments, or the arguments themselves)."""
    ctx = site.ctx
    api = ctx.api
    options = api.options
    key_type, key_expr = key.typ, key.node
    palette_type, palette_expr = palette.typ, palette.node
    output_type, _ = site.argument("output_type")
    objective_type, objective_expr = site.argument("objective")
    filed: list[_Filed] = []
    key_info = _class_of(key_type)
    key_unknown = _unprovable("Key tool", key_expr, _shown(key_type, options), api)
    if key_unknown is None and key_info is not None and key_info.fullname == DECISION_TOOL:
        key_unknown = container_entry_verdict(
            "Key tool", format_type(key_type, options), "a container or a join"
        )
    if key_unknown is not None:
        filed.append(("error", key_unknown, key_expr, None, None))
        return filed
    palette_unknown = _unprovable("Palette", palette_expr, _shown(palette_type, options), api)
    if palette_unknown is not None:
        filed.append(("error", palette_unknown, palette_expr, None, None))
        return filed
    if key_info is None:
        if _instance_of_class_type(key_type) is not None or isinstance(
            get_proper_type(key_type), (UnionType, AnyType)
        ):
            shown = format_type(key_type, options)
            filed.append(("error", unknown_entry_verdict("Key tool", shown), key_expr, None, None))
        return filed  # anything else: plain mypy reports it
    entries = _palette_entries(site, palette_type, palette_expr)
    if entries is None:
        proper = get_proper_type(palette_type)
        if isinstance(proper, Instance) and proper.type.fullname != "builtins.tuple":
            _note_palette_shape(site, proper, palette_expr)  # after mypy's own [arg-type]
        if isinstance(proper, Instance) and proper.type.fullname == "builtins.tuple":
            shown = format_type(palette_type, options)
            verdict = unknown_entry_verdict("Palette entry", shown)
            filed.append(("error", verdict, palette_expr, None, None))
        elif isinstance(proper, AnyType):  # mypy accepts Any anywhere: say it proves nothing
            verdict = unknown_entry_verdict("Palette", format_type(palette_type, options))
            filed.append(("error", verdict, palette_expr, None, None))
        return filed  # anything else: plain mypy reports it
    for entry in entries:
        if entry.unknown is not None:
            filed.append(("error", entry.unknown, entry.node, None, None))
        elif entry.info is None:
            verdict = unknown_entry_verdict("Palette entry", entry.shown)
            filed.append(("error", verdict, entry.node, None, None))
    known = [(entry, entry.info) for entry in entries if entry.info is not None]

    facts: dict[str, ToolFacts[MypyType]] = {}
    nodes: dict[str, Context] = {}
    infos: dict[str, TypeInfo] = {}
    aliased: dict[str, str] = {}  # tools named through a variable a checker cannot read
    for entry, entry_info in known:
        if entry_info.fullname not in facts:
            facts[entry_info.fullname] = _named_facts(
                api, entry_info, entry.written, options, aliased
            )
        nodes.setdefault(entry_info.fullname, entry.node)
        infos.setdefault(entry_info.fullname, entry_info)
    key_facts = facts.get(key_info.fullname) or _named_facts(
        api, key_info, key_expr, options, aliased
    )
    nodes.setdefault(key_info.fullname, key_expr)
    infos[key_info.fullname] = key_info
    palette_facts = [facts[entry_info.fullname] for _, entry_info in known]

    thinker_input = None
    members: list[MypyType] = []
    if site.thinker_args is not None and len(site.thinker_args) == 2:
        declared = get_proper_type(site.thinker_args[0])
        side = artifact_side(declared, options)
        thinker_input = side if isinstance(side, MypyType) else None
        if isinstance(declared, UnionType):
            sides = [artifact_side(item, options) for item in declared.relevant_items()]
            members = [m for m in sides if isinstance(m, MypyType)]
            members = members if len(members) == len(sides) else []
        elif isinstance(declared, TypeVarType) and len(known) == len(entries):
            verdict = generic_input_verdict(declared.name)
            filed.append(("error", verdict, ctx.context, None, None))
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
        input_members=members,
        own_verdicts=own_verdicts,
    )
    for verdict in verdicts:
        info = infos.get(verdict.key)
        node = nodes.get(verdict.key, key_expr)
        if info is not None and _already_reported(verdict, info, key_info):
            continue
        record = own_name_record(info) if info is not None else None
        dynamic = info is not None and record is not None and bool(record.get("dynamic"))
        if verdict.code == "harness-name" and verdict.key in aliased and info is not None:
            verdict = aliased_name_verdict(info.name, aliased[verdict.key])
            filed.append(("error", verdict, node, None, None))
            continue
        if dynamic and info is not None and record is not None and verdict.code == "harness-name":
            pointer = undecidable_name_verdict(info.name, info.fullname)  # said where defined
            filed.append(("pointer", pointer, node, info, record))
            continue
        if verdict.definition and info is not None and record is not None:
            filed.append(("pointer", verdict, node, info, record))
            continue
        if verdict.code in ("harness-key-tool", "harness-graph"):
            node = key_expr
        elif verdict.code == "harness-objective" and objective_expr is not None:
            node = objective_expr
        filed.append(("error", verdict, node, None, None))

    if wants_dependencies(api):
        depend_on(api, _names_involved(infos.values(), [*palette_facts, key_facts], site))
    return filed


def _named_facts(
    api: object,
    info: TypeInfo,
    written: Expression | None,
    options: Options,
    aliased: dict[str, str],
) -> ToolFacts[MypyType]:
    """A tool's facts, with the name a ``tool_name("x")(Cls)`` call gives a class that has no
    ``@tool_name`` of its own; a class named through a variable a type checker cannot read is
    recorded in ``aliased`` (its name is then undecidable, never "no @tool_name")."""
    facts = facts_of(info, options)
    if facts.name is not None or facts.not_a_tool is not None or own_name_record(info):
        return facts
    named = _call_form_name(api, info, written)
    if isinstance(named, str):
        return dataclasses.replace(facts, name=named, inherited_from=None, unseen_decorator=None)
    if named is True and isinstance(written, RefExpr) and written.node is not None:
        aliased[facts.key] = written.node.name
    return facts


def _note_definition(
    site: _Site, verdict: Verdict, info: TypeInfo, record: dict[str, object], node: Context
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
    line = line if isinstance(line, int) else record.get("line")
    where = f'module "{info.module_name}"' + (f", line {line}" if isinstance(line, int) else "")
    site.ctx.api.msg.note(
        f'"{info.name}" breaks the palette rules where it is defined ({where})',
        node,
        code=code_for(verdict.code),
    )


def _already_reported(verdict: Verdict, info: TypeInfo, key_info: TypeInfo) -> bool:
    """What plain mypy reports itself: a non-tool class (``[arg-type]``), an abstract key tool
    passed directly (``[type-abstract]``).

    A key tool's output is ours: the signature hook (``relax_key_tool``) lets mypy accept any
    tool there, so the mismatch reads as ``[harness-key-tool]``, not as an ``[arg-type]`` about
    ``type[DecisionTool[Never, ListArtifact[Verdict]]]``.
    """
    if verdict.code == "harness-tool" and info is key_info:
        return True  # [arg-type] or [type-abstract] on the key_tool argument
    return verdict.code == "harness-tool" and tool_base(info) is None  # [arg-type]


def _names_involved(
    infos: Iterable[TypeInfo], facts: Sequence[ToolFacts[MypyType]], site: _Site
) -> list[str]:
    """Every class (and tool member) the verdicts read: each tool's MRO with its constructor
    and name, each artifact type's MRO down through list iterands, the thinker's arguments."""
    names = class_triggers(base for info in infos for base in info.mro)
    nodes: list[MypyType] = []
    for fact in facts:
        nodes += [n for n in (fact.input_node, fact.output_node) if n is not None]
    walked: set[Instance] = set()  # tools of one palette share most artifact types
    for node in nodes:
        current: MypyType | None = node
        while current is not None and current.typ not in walked:
            walked.add(current.typ)
            names += [base.fullname for base in current.typ.type.mro]
            current = current.iterand()
    if site.thinker_args:
        for arg in site.thinker_args:
            proper = get_proper_type(arg)
            if isinstance(proper, Instance):
                names += [base.fullname for base in proper.type.mro]
    return sorted(set(names))


def _note_palette_shape(site: _Site, proper: Instance, expr: Expression) -> None:
    """A palette that is not a tuple (mypy's own ``[arg-type]`` says so, without a fix): the
    runtime's words and the fix as a note on the same line."""
    names = (
        [item.name for item in expr.items if isinstance(item, NameExpr | MemberExpr)]
        if isinstance(expr, ListExpr | SetExpr)
        else []
    )
    verdict = palette_shape_verdict(proper.type.name, names)
    site.ctx.api.msg.note(
        f"{verdict.message}: {verdict.fix[0].lower()}{verdict.fix[1:]}",
        expr,
        code=codes.ARG_TYPE,  # it explains mypy's own error: one ignore covers both
    )


def note_thinker_input(ctx: FunctionContext) -> Type:
    """``run_sync(Triage, "text")``: mypy's ``[arg-type]`` names a type variable; add which
    input the thinker takes and how to pass one, as a note on the same line."""
    with reporting_surprises(checker_fail(ctx.api.msg), ctx.context, "a thinker's input"):
        if len(ctx.arg_types) >= 2 and ctx.arg_types[0] and ctx.arg_types[1]:
            info = _class_of(ctx.arg_types[0][0])
            thinker = next((b for b in info.mro if b.fullname == THINKER), None) if info else None
            own = fill_typevars(info) if info is not None else None
            if info is not None and thinker is not None and isinstance(own, Instance):
                wanted = map_instance_to_supertype(own, thinker).args[0]
                given = ctx.arg_types[1][0]
                if isinstance(get_proper_type(wanted), Instance) and not is_subtype(given, wanted):
                    shown = format_type(wanted, ctx.api.options)
                    ctx.api.msg.note(
                        f'"{info.name}" takes {shown} as its input, not '
                        f"{format_type(given, ctx.api.options)}: pass one, e.g. "
                        f"run_sync({info.name}, {format_type_bare(wanted, ctx.api.options)}(...))",
                        ctx.args[1][0],
                        code=codes.ARG_TYPE,  # it explains mypy's own error: one ignore covers both
                    )
    return ctx.default_return_type


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
