"""Checks at a tool's definition: ``@tool_name``'s name, the constructor, the bound types.

Why the plugin is needed: mypy does not see what a decorator means, accepts any string as a name,
does not compare constructors of classes passed as ``type[...]``, and accepts ``Any`` or an open
type variable in a tool's base. These problems belong to the class, so they are reported where
it is defined, at the narrowest node: the decorator for the name, ``__init__`` for the
constructor, the base expression for an open type parameter.

Two hooks: the semantic-analysis hook on the decorator records the name in the class's metadata
(JSON, so it reaches the cache and other modules' palette checks) and declares it as the class
variable the runtime decorator sets (``__harness_tool_name__: str``, its literal value kept in the
type), so the daemon's fine-grained dependencies see a changed name; the type-checking hook on
``tool_name.__call__`` reports. A class decorated twice takes the outermost name, as at run time.
"""

from __future__ import annotations

import dataclasses

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    CallExpr,
    ClassDef,
    Context,
    Expression,
    FuncDef,
    Import,
    ImportFrom,
    IndexExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    PlaceholderNode,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import ClassDefContext, MethodContext, SemanticAnalyzerPluginInterface
from mypy.plugins.common import add_attribute_to_class
from mypy.semanal import SemanticAnalyzer
from mypy.types import LiteralType, Type

from harness.palette._rules import (
    Open,
    Verdict,
    decorated_non_tool_verdict,
    invalid_name_verdict,
    tool_verdicts,
    undecidable_name_verdict,
)
from mypy_plugin._codes import ERROR_CODES
from mypy_plugin._dependencies import class_triggers, depend_on
from mypy_plugin._facts import facts_of, own_name_record, tool_base
from mypy_plugin._names import (
    DECISION_TOOL,
    METADATA_KEY,
    NAME_ATTR,
    OTHER_DECORATORS_KEY,
    TOOL_NAME,
)
from mypy_plugin._report import (
    SURPRISE_NOTE,
    Fail,
    checker_fail,
    report,
    reporting_surprises,
)

__all__ = ["check_tool_definition", "record_tool_name"]

_NOT_READY = object()  # a named constant still being analysed: call the hook again


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


def _may_still_resolve(arg: RefExpr) -> bool:
    if isinstance(arg, NameExpr):
        return True
    return isinstance(arg, MemberExpr) and (
        isinstance(arg.expr, RefExpr) and isinstance(arg.expr.node, MypyFile)
    )


def _literal_name(call: Expression, final_iteration: bool) -> str | object | None:
    """The name a decorator gives when it is a literal or a ``Final`` constant (also one reached
    through a module, ``consts.NAME``); ``None`` when computed at run time; :data:`_NOT_READY`."""
    arg = _name_argument(call) if isinstance(call, CallExpr) else None
    if isinstance(arg, StrExpr):
        return arg.value
    if isinstance(arg, RefExpr):
        node = arg.node
        if node is None or isinstance(node, PlaceholderNode):
            return _NOT_READY if _may_still_resolve(arg) and not final_iteration else None
        if isinstance(node, Var) and isinstance(node.final_value, str):
            return node.final_value
    return None


def _disabled_codes(options: Options) -> list[str]:
    """The harness codes disabled in the module being analysed (config and inline comments)."""
    return sorted(
        name for name, code in ERROR_CODES.items() if code in options.disabled_error_codes
    )


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


def _record(ctx: ClassDefContext) -> bool:
    calls = _tool_name_calls(ctx.cls)
    if calls and ctx.reason is not calls[0]:
        return True  # an inner @tool_name: the outermost one's name wins at run time
    name = _literal_name(ctx.reason, ctx.api.final_iteration)
    if name is _NOT_READY:
        return False
    literal = name if isinstance(name, str) else None
    ctx.cls.info.metadata[METADATA_KEY] = {
        "name": literal,
        "dynamic": literal is None,
        "line": ctx.cls.line,  # a class read from the cache has no line of its own
        "disabled": _disabled_codes(ctx.api.options),
    }
    _declare_name(ctx.api, ctx.cls, literal)
    return True


def record_tool_name(ctx: ClassDefContext) -> bool:
    """Semantic analysis: store the literal name (or that it is not literal) on the class.

    Returns ``False`` (call again) while a named constant is still a placeholder, except on the
    final iteration, where deferring would crash mypy.
    """
    done = True  # after an internal surprise (reported): nothing recorded, no second try
    with reporting_surprises(_semanal_fail(ctx.api), ctx.reason, f'the tool "{ctx.cls.name}"'):
        done = _record(ctx)
    return done


def _decorator_name(expr: Expression) -> str | None:
    callee = expr.callee if isinstance(expr, CallExpr) else expr
    if isinstance(callee, NameExpr | MemberExpr):
        return callee.name
    return None


def record_other_decorator(ctx: ClassDefContext) -> None:
    """Semantic analysis of a class (before its MRO): record its decorators other than
    ``@tool_name``, so a tool without a visible ``@tool_name`` is reported as undecidable (a
    decorator may name it at run time, e.g. a library's ``@register("...")``), never as
    unnamed. Kept in the class's metadata, so it reaches palettes in other modules."""
    names = [_decorator_name(expr) for expr in ctx.cls.decorators]
    others = [name for name in names if name is not None and name != "tool_name"]
    if not others or "tool_name" in names:
        ctx.cls.info.metadata.pop(OTHER_DECORATORS_KEY, None)
        return
    ctx.cls.info.metadata[OTHER_DECORATORS_KEY] = {"decorators": others}


def _type_checking_only(ctx: MethodContext, defn: ClassDef) -> list[Verdict]:
    """A quoted type in a ``DecisionTool[...]`` base naming something imported only under
    ``if TYPE_CHECKING:``: it does not exist when the runtime reads the tool's types."""
    module = (
        ctx.api.modules.get(defn.info.module_name) if isinstance(ctx.api, TypeChecker) else None
    )
    if module is None:
        return []
    mypy_only = {
        alias or name
        for imp in module.imports
        if isinstance(imp, ImportFrom) and imp.is_mypy_only
        for name, alias in imp.names
    }
    mypy_only |= {
        alias or name.split(".")[0]
        for imp in module.imports
        if isinstance(imp, Import) and imp.is_mypy_only
        for name, alias in imp.ids
    }
    out: list[Verdict] = []
    for expr in defn.base_type_exprs:
        if not isinstance(expr, IndexExpr):
            continue
        target = expr.base.node if isinstance(expr.base, RefExpr) else None
        if not (isinstance(target, TypeInfo) and target.fullname == DECISION_TOOL):
            continue
        args = expr.index.items if isinstance(expr.index, TupleExpr) else [expr.index]
        for role, arg in zip(("input", "output"), args, strict=False):
            if isinstance(arg, StrExpr) and arg.value.split("[")[0].strip() in mypy_only:
                facts = facts_of(defn.info, ctx.api.options)
                sides = {"input": facts.input, "output": facts.output}
                sides[role] = Open.type_checking_only(arg.value)
                facts = dataclasses.replace(facts, input=sides["input"], output=sides["output"])
                out += [v for v in tool_verdicts(facts) if v.code == "harness-open-type"]
    return out


def _base_expression(defn: ClassDef) -> Context:
    for expr in defn.base_type_exprs:
        target = expr.base if isinstance(expr, IndexExpr) else expr
        node = target.node if isinstance(target, RefExpr) else None
        if isinstance(node, TypeInfo) and tool_base(node) is not None:
            return expr
    return defn


def _node_for(verdict: Verdict, defn: ClassDef, decorator: Context) -> Context:
    if verdict.code == "harness-ctor":
        own = defn.info.names.get("__init__")
        if own is not None and isinstance(own.node, FuncDef):
            return own.node
        return defn
    if verdict.code == "harness-open-type":
        return _base_expression(defn)
    return decorator


def _check(ctx: MethodContext, defn: ClassDef, calls: list[CallExpr]) -> None:
    info = defn.info
    outermost: Context = calls[0] if calls else defn
    depend_on(ctx.api, class_triggers(info.mro[1:]))  # inherited bases and constructors
    facts = facts_of(info, ctx.api.options)
    if facts.not_a_tool is not None:
        report(ctx.api.msg, decorated_non_tool_verdict(facts.label, facts.key), outermost)
        return
    forward = _type_checking_only(ctx, defn)
    verdicts = tool_verdicts(facts)
    if forward:
        verdicts = [v for v in verdicts if v.code != "harness-open-type"] + forward
    for verdict in verdicts:
        if verdict.definition:
            report(ctx.api.msg, verdict, _node_for(verdict, defn, outermost))
    record = own_name_record(info)
    if record is not None and record.get("dynamic"):
        argument = _name_argument(calls[0]) if calls else None
        node = argument if argument is not None else outermost
        report(ctx.api.msg, undecidable_name_verdict(info.name, info.fullname), node)
    for call in calls[1:]:  # an inner name is overridden, but its decorator still checks it
        name = _literal_name(call, final_iteration=True)
        inner = (
            invalid_name_verdict(info.name, name, info.fullname) if isinstance(name, str) else None
        )
        if inner is not None:
            report(ctx.api.msg, inner, call)


def check_tool_definition(ctx: MethodContext) -> Type:
    """Type checking of ``@tool_name(...)`` applied to a class: report the class's own
    problems (a non-tool class, an invalid name, the constructor, an open type parameter).

    mypy calls this once per ``@tool_name`` on the class; each call reports the same errors at
    the same nodes, which mypy merges.
    """
    defn = ctx.context
    if not isinstance(defn, ClassDef):
        return ctx.default_return_type
    calls = _tool_name_calls(defn)
    where = calls[0] if calls else defn
    with reporting_surprises(checker_fail(ctx.api.msg), where, f'the tool "{defn.name}"'):
        _check(ctx, defn, calls)
    return ctx.default_return_type
