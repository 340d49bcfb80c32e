"""Semantic analysis of tool classes: what ``@tool_name`` names, and a class's other decorators.

Both are recorded in the class's metadata (JSON, so they reach the cache and other modules'
palette checks); the checks themselves run later, in :mod:`mypy_plugin._definition`. Kept apart
from the checks because these hooks run for every decorated class (and the decorator hook for
every class mypy analyses): they import nothing of harness, so a run that re-checks no tool and
no thinker never loads the runtime's rules.

The name is also declared as the class variable the runtime decorator sets
(``__harness_tool_name__: str``, its literal value kept in the type), so the daemon's
fine-grained dependencies see a changed name. A class decorated twice takes the outermost name,
as at run time.

One concern, past 400 lines: reading the name a decorator gives (a literal, a constant, an
enum member, a formatted string) is most of it, and each form must be read as the runtime
reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    ClassDef,
    Context,
    Decorator,
    Expression,
    FuncDef,
    IndexExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    OpExpr,
    OverloadedFuncDef,
    RefExpr,
    StrExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import ClassDefContext, SemanticAnalyzerPluginInterface
from mypy.plugins.common import add_attribute_to_class
from mypy.semanal import SemanticAnalyzer
from mypy.types import Instance, LiteralType, get_proper_type

from mypy_plugin._codes import ERROR_CODES
from mypy_plugin._facts import ctor_problem, written_init
from mypy_plugin._names import (
    DATACLASS_INIT_KEY,
    DECISION_TOOL,
    METADATA_KEY,
    NAME_ATTR,
    OTHER_DECORATORS_KEY,
    TOOL_NAME,
    WRITTEN_INIT_KEY,
)
from mypy_plugin._report import SURPRISE_NOTE, Fail, report_surprise

__all__ = [
    "literal_name",
    "name_argument",
    "record_other_decorator",
    "record_tool_name",
    "tool_name_calls",
]

#: The attributes of an enum member that read its value, and its name, at run time.
_VALUE_ATTRIBUTES: Final = frozenset({"value", "_value_"})
_NAME_ATTRIBUTES: Final = frozenset({"name", "_name_"})
#: How mypy spells one part of an f-string, ``"{:{}}".format(value, spec)``: the conversion
#: applied to the value for each format string (an f-string with a format spec is not read).
_CONVERSIONS: Final[dict[str, Callable[[str], str]]] = {
    "{:{}}": str,
    "{!s:{}}": str,
    "{!r:{}}": repr,
    "{!a:{}}": ascii,
}


def _name_argument(call: CallExpr) -> Expression | None:
    for expr, name in zip(call.args, call.arg_names, strict=False):
        if name in (None, "name"):
            return expr
    return None


def _tool_name_calls(defn: ClassDef) -> list[CallExpr]:
    """The class's ``@tool_name(...)`` decorators, outermost first (the one that wins)."""
    return [
        expr
        for expr in defn.decorators
        if isinstance(expr, CallExpr)
        and isinstance(expr.callee, RefExpr)
        and expr.callee.fullname == TOOL_NAME
    ]


def _class_named(expr: Expression) -> TypeInfo | None:
    """The class an expression names (``Command``, ``module.Command``), else ``None``."""
    node = expr.node if isinstance(expr, RefExpr) else None
    return node if isinstance(node, TypeInfo) else None


def _generated_value(enum: TypeInfo, member: str) -> str | None:
    """The value ``auto()`` gives ``member``: a ``StrEnum``'s lower-cased member name, unless a
    class on the way defines ``_generate_next_value_`` (then it is whatever that returns)."""
    for info in enum.mro:
        if info.fullname == "enum.StrEnum":
            return member.lower()
        if "_generate_next_value_" in info.names:
            return None
    return None


def _enum_member_value(enum: TypeInfo, member: str) -> str | None:
    """The string value of ``enum.member`` as mypy knows it: the string literal (or ``auto()``
    of a ``StrEnum``) assigned in the class body, else the literal type of the member (a class
    read from the cache has no body, but its members keep their inferred types); ``None`` for a
    value a type checker cannot read (a call, a computed value, a value that is not a string)."""
    for statement in enum.defn.defs.body:
        if (
            isinstance(statement, AssignmentStmt)
            and len(statement.lvalues) == 1
            and isinstance(statement.lvalues[0], NameExpr)
            and statement.lvalues[0].name == member
        ):
            value = statement.rvalue
            if isinstance(value, StrExpr):
                return value.value
            callee = value.callee if isinstance(value, CallExpr) else None
            if isinstance(callee, RefExpr) and callee.fullname == "enum.auto":
                return _generated_value(enum, member)
            return None
    symbol = enum.names.get(member)
    node = symbol.node if symbol is not None else None
    typ = get_proper_type(node.type) if isinstance(node, Var) and node.type else None
    if isinstance(typ, Instance) and typ.last_known_value is not None:
        typ = typ.last_known_value
    if isinstance(typ, LiteralType) and isinstance(typ.value, str):
        return typ.value
    return None


def _enum_member(expr: Expression) -> tuple[TypeInfo, str] | None:
    """``(Enum, "MEMBER")`` when ``expr`` is ``Enum.MEMBER`` of an enum class."""
    if not isinstance(expr, MemberExpr):
        return None
    owner = _class_named(expr.expr)
    if owner is None or not owner.is_enum or expr.name not in owner.names:
        return None
    return owner, expr.name


def _class_constant(expr: MemberExpr) -> str | None:
    """``Names.SPLIT`` where the class declares ``SPLIT: Final = "..."`` (no subclass or
    assignment can change a ``Final`` attribute, so its value is known)."""
    owner = _class_named(expr.expr)
    symbol = owner.get(expr.name) if owner is not None else None
    node = symbol.node if symbol is not None else None
    if isinstance(node, Var) and node.is_final and isinstance(node.final_value, str):
        return node.final_value
    return None


def _member_value(expr: MemberExpr) -> str | None:
    member = _enum_member(expr)
    if member is not None:  # a member used as the name itself: a string only in a str enum
        enum, name = member
        return _enum_member_value(enum, name) if enum.has_base("builtins.str") else None
    member = _enum_member(expr.expr)
    if member is not None:
        enum, name = member
        if expr.name in _VALUE_ATTRIBUTES:
            return _enum_member_value(enum, name)
        return name if expr.name in _NAME_ATTRIBUTES else None
    return _class_constant(expr)


def _formatted(call: CallExpr) -> str | None:
    """One part of an f-string, ``f"{KIND}"``, read when its value is known and it has no
    format spec; the whole f-string, ``"".join([...])``, when every part is known."""
    callee = call.callee
    if not (isinstance(callee, MemberExpr) and isinstance(callee.expr, StrExpr)):
        return None
    if callee.name == "join" and callee.expr.value == "" and len(call.args) == 1:
        parts = call.args[0]
        if not isinstance(parts, ListExpr):
            return None
        values = [_string_value(part) for part in parts.items]
        return "".join(v for v in values if v is not None) if None not in values else None
    convert = _CONVERSIONS.get(callee.expr.value)
    if callee.name == "format" and convert is not None and len(call.args) == 2:
        value, spec = (_string_value(arg) for arg in call.args)
        return convert(value) if value is not None and spec == "" else None
    return None


def _string_value(expr: Expression) -> str | None:
    """The string an expression always evaluates to, as far as a type checker sees it: a
    literal; a ``Final`` constant (of this module, another, or a class); a string enum member,
    or any enum member's ``.value`` or ``.name``; an f-string or a ``+`` of those. ``None`` for
    anything computed at run time (a plain variable may be reassigned, a call may return
    anything)."""
    if isinstance(expr, StrExpr):
        return expr.value
    if isinstance(expr, MemberExpr):
        value = _member_value(expr)
        if value is not None:
            return value
    if isinstance(expr, RefExpr):
        node = expr.node
        if isinstance(node, Var) and node.is_final and isinstance(node.final_value, str):
            return node.final_value
        return None
    if isinstance(expr, OpExpr) and expr.op == "+":
        left, right = _string_value(expr.left), _string_value(expr.right)
        return left + right if left is not None and right is not None else None
    if isinstance(expr, CallExpr):
        return _formatted(expr)
    return None


def _literal_name(call: Expression) -> str | None:
    """The name a decorator gives when a type checker can read it (see :func:`_string_value`),
    ``None`` when it is computed at run time.

    Read once semantic analysis of the module's import cycle is done (mypy runs class decorator
    hooks after it), so every name is bound by then: nothing is deferred, and mypy's limit on
    repeated hook passes is never reached.
    """
    arg = _name_argument(call) if isinstance(call, CallExpr) else None
    return _string_value(arg) if arg is not None else None


def _disabled_codes(options: Options) -> list[str]:
    """The harness codes disabled in the module being analysed by mypy's own config and inline
    comments (the plugin's ``# harness: disable-error-code=`` switch is read from the module's
    file only when a palette files a pointer to the class: most runs never need it)."""
    disabled = options.disabled_error_codes
    if not disabled:
        return []
    return sorted(name for name, code in ERROR_CODES.items() if code in disabled)


def _declare_name(api: SemanticAnalyzerPluginInterface, defn: ClassDef, name: str | None) -> None:
    existing = defn.info.names.get(NAME_ATTR)
    if existing is not None and not existing.plugin_generated:
        return  # the class spells it out itself
    text = api.named_type("builtins.str", [])
    if name is not None:
        text = text.copy_modified(last_known_value=LiteralType(name, text))
    add_attribute_to_class(
        api,
        defn,
        NAME_ATTR,
        text,
        override_allow_incompatible=True,
        is_classvar=True,
        overwrite_existing=True,
    )


def _semanal_fail(api: SemanticAnalyzerPluginInterface) -> Fail:
    def fail(message: str, context: Context, code: ErrorCode) -> None:
        api.fail(message, context, code=code)
        if isinstance(api, SemanticAnalyzer):
            api.note(SURPRISE_NOTE, context, code=code)

    return fail


def init_node(defn: ClassDef) -> Context | None:
    """The class's own ``__init__`` as the node to report at: its ``def`` line, however it is
    decorated (a ``ParamSpec`` wrapper, ``@overload``: the implementation, which runs)."""
    for statement in defn.defs.body:
        node: object = statement
        if isinstance(node, OverloadedFuncDef):
            node = node.impl if node.impl is not None else (node.items[0] if node.items else None)
        if isinstance(node, Decorator):
            node = node.func
        if isinstance(node, FuncDef) and node.name == "__init__":
            return node
    return None


def base_expression(defn: ClassDef, is_tool_base: Callable[[TypeInfo], bool]) -> Context:
    """The base expression naming the tool base (``DecisionTool[Note, Any]``), else the class."""
    for expr in defn.base_type_exprs:
        target = expr.base if isinstance(expr, IndexExpr) else expr
        node = target.node if isinstance(target, RefExpr) else None
        if isinstance(node, TypeInfo) and is_tool_base(node):
            return expr
    return defn


def _is_tool_base(info: TypeInfo) -> bool:
    return info.has_base(DECISION_TOOL) or (not info.mro and info.fullname == DECISION_TOOL)


def _report_lines(
    defn: ClassDef, calls: list[CallExpr], argument: Expression | None
) -> tuple[int | None, dict[str, int]]:
    """Where each definition-site error of the class is reported, where it is not the class
    line: a palette's pointer note names the line of the error it points to. (Only those: the
    record of every tool goes into mypy's cache.) First the outermost call's line, where the
    codes of :data:`DECORATOR_LINE_CODES` are reported (``None`` on the class line); then the
    lines of the other codes by code, and of those codes where they are elsewhere (a name
    argument on a line of its own). ``argument``: the name argument of the outermost call."""
    own = defn.line
    at: int | None = None
    lines: dict[str, int] = {}
    if calls:  # else the decorator's codes are reported on the class line
        outermost = calls[0].line
        if outermost != own:
            at = outermost
        if argument is not None and argument.line != outermost:
            lines["harness-undecidable"] = argument.line
    if "__init__" in defn.info.names:  # else no ``__init__`` in the body (most tools)
        init = init_node(defn)
        if init is not None and init.line != own:
            lines["harness-ctor"] = init.line
    for expr in defn.base_type_exprs:
        if expr.line != own:  # else whichever expression names the base is on the class line
            base = base_expression(defn, _is_tool_base).line
            if base != own:
                lines["harness-open-type"] = base
            break
    return at, lines


def _record(ctx: ClassDefContext) -> bool:
    cls = ctx.cls
    reason = ctx.reason
    if len(cls.decorators) == 1 and isinstance(reason, CallExpr):
        calls = [reason]  # most tools: mypy asks about a decorator call by its callee's name
    else:
        calls = _tool_name_calls(cls)
        if calls and reason is not calls[0]:
            return True  # an inner @tool_name: the outermost one's name wins at run time
    argument = _name_argument(reason) if isinstance(reason, CallExpr) else None
    literal = _string_value(argument) if argument is not None else None  # _literal_name's
    # What every palette naming the class reads, in mypy's cache: "name" and "line" always; the
    # rest only when it says something ("dynamic" when the name is computed, "at" and "lines"
    # where errors are reported elsewhere than "line", "disabled" when a code is off).
    record: dict[str, object] = {"name": literal, "line": cls.line}  # cached: no own line
    if literal is None:
        record["dynamic"] = True
    at, lines = _report_lines(cls, calls, argument)  # the outermost call is the reason
    if at is not None:
        record["at"] = at
    if lines:
        record["lines"] = lines
    api = ctx.api
    if api.options.disabled_error_codes:
        disabled = _disabled_codes(api.options)
        if disabled:
            record["disabled"] = disabled
    cls.info.metadata[METADATA_KEY] = record
    _declare_name(api, cls, literal)
    return True


def record_tool_name(ctx: ClassDefContext) -> bool:
    """Semantic analysis: store the literal name (or that it is not literal) on the class.

    Always returns ``True`` (done): asking mypy to call again would only repeat the same
    reading, and mypy stops with an internal error after ten passes.
    """
    try:
        return _record(ctx)
    except Exception as error:  # any bug of ours must not crash the user's type check
        report_surprise(_semanal_fail(ctx.api), ctx.reason, f'the tool "{ctx.cls.name}"', error)
        return True  # nothing recorded, no second try


#: Decorators known to leave a class's tool name alone (they never call ``tool_name``): a class
#: so decorated (``@final``, ``@dataclass``, ``@attrs.frozen``, ``@tool_description``) and
#: without ``@tool_name`` certainly has no name of its own.
_NAMING_NOTHING: Final = frozenset(
    {
        "typing.final",
        "typing_extensions.final",
        "typing.runtime_checkable",
        "typing_extensions.runtime_checkable",
        "dataclasses.dataclass",
        "functools.total_ordering",
        "enum.unique",
        "abc.abstractmethod",
        "attr.s",
        "attr.attrs",
        "attr.define",
        "attr.frozen",
        "attr.mutable",
        "attrs.define",
        "attrs.frozen",
        "attrs.mutable",
        "harness.tools._tool.tool_description",
    }
)


def _dotted(expr: Expression) -> str | None:
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, MemberExpr):
        owner = _dotted(expr.expr)
        return f"{owner}.{expr.name}" if owner is not None else None
    return None


def _decorator_fullname(api: SemanticAnalyzerPluginInterface, callee: Expression) -> str:
    """What a class decorator refers to; ``""`` when unknown. (The class's decorators are not
    analysed yet when the decorator hook runs: the name is looked up as written.)"""
    fullname = callee.fullname if isinstance(callee, RefExpr) else ""
    written = _dotted(callee)
    if not fullname and written is not None:
        found = api.lookup_qualified(written, callee, suppress_errors=True)
        node = found.node if found is not None else None
        fullname = node.fullname if node is not None else ""
    return fullname


def _shown(expr: Expression) -> str:
    """A decorator that is neither a name nor an attribute, as a message names it
    (``registry["split"]``: whatever it holds may name the class)."""
    if isinstance(expr, IndexExpr):
        base = _dotted(expr.base)
        return f"{base}[...]" if base is not None else "a computed decorator"
    return "a computed decorator"


def _writes_init(expr: Expression) -> bool:
    """``@dataclass`` (``expr``, its decorator, not ``init=False``): at run time it gives the
    class an ``__init__`` of its fields alone, with no ``parent`` (mypy adds none where there
    are no fields)."""
    if isinstance(expr, CallExpr):
        for arg, name in zip(expr.args, expr.arg_names, strict=False):
            if name == "init" and not (isinstance(arg, NameExpr) and arg.name == "True"):
                return False
    return True


#: attrs' class makers that keep an ``__init__`` the class writes itself (``auto_detect`` on
#: unless it is turned off); ``attr.s`` keeps it only with ``auto_detect=True``.
_DETECTING: Final = frozenset(
    {"attr.define", "attr.mutable", "attr.frozen", "attrs.define", "attrs.mutable", "attrs.frozen"}
)
_NOT_DETECTING: Final = frozenset({"attr.s", "attr.attrs", "attr.attributes"})
_ATTRS_MAKERS: Final = _DETECTING | _NOT_DETECTING


def _keeps_written_init(expr: Expression, fullname: str) -> bool:
    """Whether the attrs class maker ``expr`` (named ``fullname``) keeps, at run time, the
    ``__init__`` the class body writes, where mypy's attrs plugin still gives the class one of
    the fields (it reads no ``auto_detect``)."""
    detecting = fullname in _DETECTING
    if isinstance(expr, CallExpr):
        for arg, name in zip(expr.args, expr.arg_names, strict=False):
            if name == "auto_detect":
                detecting = isinstance(arg, NameExpr) and arg.name == "True"
    return detecting


def record_other_decorator(ctx: ClassDefContext) -> None:
    """Semantic analysis of a class (its MRO just calculated): record its decorators other than
    ``@tool_name``, so a tool without a visible ``@tool_name`` is reported as undecidable (a
    decorator may name it at run time, e.g. a library's ``@register("...")``), never as
    unnamed. Kept in the class's metadata, so it reaches palettes in other modules."""
    cls = ctx.cls
    decorators = cls.decorators
    if not decorators:  # most classes (this hook sees every class mypy analyses): no work
        metadata = cls.info.metadata
        if metadata:  # the daemon's class that lost its decorators: take their records back
            metadata.pop(OTHER_DECORATORS_KEY, None)
            metadata.pop(DATACLASS_INIT_KEY, None)
            metadata.pop(WRITTEN_INIT_KEY, None)
        return
    if not cls.info.has_base(DECISION_TOOL):  # its MRO is known here
        return  # the checks read these records of tool classes only (most classes are not)
    api = ctx.api
    # One pass over the decorators, each looked up once: does one write ``__init__`` (every
    # one is asked), does one keep the ``__init__`` the class writes, and which may name the
    # class (none once ``tool_name`` is seen).
    writes_init = keeps_written = False
    others: list[str] | None = []
    for expr in decorators:
        callee = expr.callee if isinstance(expr, CallExpr) else expr
        fullname = _decorator_fullname(api, callee)
        if not writes_init and fullname == "dataclasses.dataclass":
            writes_init = _writes_init(expr)
        if not keeps_written and fullname in _ATTRS_MAKERS:
            keeps_written = _keeps_written_init(expr, fullname)
        if others is None:
            continue
        name = callee.name if isinstance(callee, NameExpr | MemberExpr) else _shown(callee)
        if name == "tool_name":  # a tool named where a type checker sees it
            others = None
        elif fullname not in _NAMING_NOTHING:
            others.append(name)
    metadata = cls.info.metadata
    if writes_init:
        metadata[DATACLASS_INIT_KEY] = {"init": True}
    elif DATACLASS_INIT_KEY in metadata:
        del metadata[DATACLASS_INIT_KEY]
    if others:
        metadata[OTHER_DECORATORS_KEY] = {"decorators": others}
    elif OTHER_DECORATORS_KEY in metadata:
        del metadata[OTHER_DECORATORS_KEY]
    written = written_init(cls) if keeps_written else None
    if written is not None:
        metadata[WRITTEN_INIT_KEY] = {"ctor": ctor_problem(written)}
    elif WRITTEN_INIT_KEY in metadata:
        del metadata[WRITTEN_INIT_KEY]


#: Public names for :mod:`mypy_plugin._definition` (the checks read the same decorators).
name_argument = _name_argument
tool_name_calls = _tool_name_calls


def literal_name(call: Expression) -> str | None:
    """The name a decorator gives where a type checker can read it, else ``None``."""
    return _literal_name(call)
