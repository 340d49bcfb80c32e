"""What a thinker construction's arguments let a type checker prove.

The call site (``Site``: the hook's context and the thinker's ``I`` and ``O``), arguments given
through ``**SETTINGS`` of a ``TypedDict``, the entries of a palette tuple, and why an argument's
expression proves nothing about the class it names: read from a class attribute a subclass may
override, from a container or from a call (mypy only knows the join of what it may hold).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from mypy.checker import TypeChecker
from mypy.messages import format_type, format_type_bare
from mypy.nodes import (
    ARG_POS,
    ARG_STAR2,
    AssignmentStmt,
    CallExpr,
    Context,
    DictExpr,
    Expression,
    IndexExpr,
    MemberExpr,
    NameExpr,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import FunctionContext, MethodContext
from mypy.types import (
    CallableType,
    Instance,
    LiteralType,
    NoneType,
    Overloaded,
    TupleType,
    Type,
    TypedDictType,
    TypeType,
    get_proper_type,
)
from mypy.typevars import fill_typevars

from harness.palette._rules import (
    ToolFacts,
    Verdict,
    container_entry_verdict,
    object_entry,
    overridable_entry_verdict,
    subscripted_entry,
    tool_instance_entry,
    tool_verdicts,
)
from mypy_plugin._facts import MypyType
from mypy_plugin._names import DECISION_TOOL

__all__ = [
    "CallContext",
    "Entry",
    "Site",
    "class_of",
    "instance_of_class_type",
    "literal_text",
    "not_a_class",
    "palette_entries",
    "shown_later",
    "spelled_out_palette",
    "unprovable",
]


CallContext = FunctionContext | MethodContext


@dataclass
class Entry:
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
    """Whether ``self.NAME`` reads a class attribute no subclass can override: a ``Final`` one,
    or any one of a ``@final`` class (which has no subclasses)."""
    info = api.scope.enclosing_class() if isinstance(api, TypeChecker) else None
    if info is not None and info.is_final:
        return True
    node = expr.node
    if isinstance(node, Var):
        return node.is_final
    found = info.get(expr.name) if info is not None else None
    return found is not None and isinstance(found.node, Var) and found.node.is_final


def unprovable(
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


def not_a_class(expr: Expression | None, typ: Type, options: Options) -> Verdict | None:
    """``harness-tool`` for what is certainly no tool class, in the runtime's words: a tool
    instance (``SplitNote(parent)``), a subscripted generic tool class (``JudgeText[Note]``,
    a typing alias at run time)."""
    proper = get_proper_type(typ)
    if isinstance(proper, LiteralType):
        proper = proper.fallback
    found: tuple[str, str, str | None] | None = None
    if isinstance(proper, Instance) and proper.type.has_base(DECISION_TOOL):
        found = tool_instance_entry(proper.type.name)
    elif isinstance(proper, Instance) and _never_a_class(proper.type):
        found = (*object_entry(proper.type.name), None)
    elif isinstance(proper, NoneType):  # None, named by its class as the runtime names it
        found = (*object_entry("NoneType"), None)
    elif isinstance(expr, IndexExpr) and _is_class_ref(expr.base):
        made = proper.ret_type if isinstance(proper, CallableType) else None
        instance = get_proper_type(made) if made is not None else instance_of_class_type(typ)
        if isinstance(instance, Instance) and instance.type.has_base(DECISION_TOOL):
            found = subscripted_entry(format_type_bare(instance, options))
    if found is None:
        return None
    label, why, fix = found
    facts: ToolFacts[MypyType] = ToolFacts(f"<{label}>", label, not_a_tool=why, not_a_tool_fix=fix)
    return tool_verdicts(facts)[0]


def _never_a_class(info: TypeInfo) -> bool:
    """Whether no value of type ``info`` is a class: not ``object`` (anything), not a
    metaclass (its instances are classes), not a protocol (a class may satisfy it)."""
    return not (
        info.fullname == "builtins.object" or info.is_protocol or info.has_base("builtins.type")
    )


def shown_later(typ: Type, options: Options) -> Callable[[], str]:
    """The type as a message shows it, rendered when a message needs it."""
    return lambda: format_type(typ, options)


def _is_class_ref(expr: Expression) -> bool:
    return isinstance(expr, RefExpr) and isinstance(expr.node, TypeInfo)


@dataclass
class Site:
    """One thinker construction: what the arguments are and where to report."""

    ctx: CallContext
    thinker_args: Sequence[Type] | None
    owner: TypeInfo | None = None  # the thinker class whose constructor builds the palette

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


#: Calls that join tuples into one, entry by entry, as their arguments hold them.
_CHAINS: Final = frozenset({"itertools.chain"})


def spelled_out_palette(api: object, typ: Type, expr: Expression) -> Type:
    """The palette's type with its entries, where mypy's own type lost them: ``tuple(chain(A,
    B))`` of tuples whose entries mypy knows is the tuple of those entries, in order (mypy
    types it ``tuple[<their join>, ...]``). Anything else: ``typ`` as it is."""
    if not (
        isinstance(api, TypeChecker)
        and isinstance(expr, CallExpr)
        and isinstance(expr.callee, RefExpr)
        and expr.callee.fullname == "builtins.tuple"
        and len(expr.args) == 1
    ):
        return typ
    inner = expr.args[0]
    if not (
        isinstance(inner, CallExpr)
        and isinstance(inner.callee, RefExpr)
        and inner.callee.fullname in _CHAINS
        and all(kind == ARG_POS for kind in inner.arg_kinds)
    ):
        return typ
    items: list[Type] = []
    for arg in inner.args:
        found = api.lookup_type_or_none(arg)
        proper = get_proper_type(found) if found is not None else None
        if not isinstance(proper, TupleType):
            return typ
        items += proper.items
    fallback = get_proper_type(typ)
    if not isinstance(fallback, Instance):
        return typ
    return TupleType(items, fallback)


def class_of(typ: Type) -> TypeInfo | None:
    proper = get_proper_type(typ)
    if isinstance(proper, (CallableType, Overloaded)) and proper.is_type_obj():
        return proper.type_object()
    return None


def instance_of_class_type(typ: Type) -> Instance | None:
    proper = get_proper_type(typ)
    if isinstance(proper, (CallableType, Overloaded)) and proper.is_type_obj():
        filled = fill_typevars(proper.type_object())
        return filled if isinstance(filled, Instance) else None
    if isinstance(proper, TypeType):
        item = proper.item
        return item if isinstance(item, Instance) else None
    return None


def palette_entries(site: Site, typ: Type, expr: Expression) -> list[Entry] | None:
    proper = get_proper_type(typ)
    options = site.ctx.api.options
    if not isinstance(proper, TupleType):
        return None  # a variable-length tuple (reported by the caller) or mypy's own error
    items = proper.items
    literal = expr.items if isinstance(expr, TupleExpr) else None
    if literal is not None and len(literal) != len(items):
        literal = None
    entries = []
    for index, item in enumerate(items):
        own = literal[index] if literal else None
        node: Context = own if own is not None else expr
        show = shown_later(item, options)  # rendered only for a message: format_type is not cheap
        info = class_of(item)
        if isinstance(own, NameExpr) and isinstance(own.node, TypeInfo):
            unknown = None  # a class named as written (most entries): it is that class itself
        else:
            unknown = not_a_class(own, item, options)
            if unknown is None and own is not None:
                unknown = unprovable("Palette entry", own, show, site.ctx.api)
        if unknown is None and info is not None and info.fullname == DECISION_TOOL:
            unknown = container_entry_verdict("Palette entry", show(), "a container or a join")
        shown = show() if unknown is None and info is None else ""  # read only in that case
        entries.append(Entry(None if unknown else info, node, shown, unknown, own))
    return entries


def literal_text(typ: Type | None, expr: Expression | None) -> str | None:
    if isinstance(expr, StrExpr):
        return expr.value
    proper = get_proper_type(typ) if typ is not None else None
    if isinstance(proper, LiteralType) and isinstance(proper.value, str):
        return proper.value
    if isinstance(proper, Instance) and proper.last_known_value is not None:
        value = proper.last_known_value.value
        return value if isinstance(value, str) else None
    return None
