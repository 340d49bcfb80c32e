"""Checks at a tool's definition: ``@tool_name``'s name, the constructor, the bound types.

Why the plugin is needed: mypy does not see what a decorator means, accepts any string as a name,
does not compare constructors of classes passed as ``type[...]``, and accepts ``Any`` or an open
type variable in a tool's base. These problems belong to the class, so they are reported where
it is defined, at the narrowest node: the decorator for the name, ``__init__`` for the
constructor, the base expression for an open type parameter.

Two hooks: the semantic-analysis hook on the decorator records the name in the class's metadata
(JSON, so it reaches the cache and other modules' palette checks); the type-checking hook on
``tool_name.__call__`` reports, once per decorated class.
"""

from __future__ import annotations

from mypy.nodes import (
    CallExpr,
    ClassDef,
    Context,
    Expression,
    FuncDef,
    IndexExpr,
    NameExpr,
    PlaceholderNode,
    RefExpr,
    StrExpr,
    TypeInfo,
    Var,
)
from mypy.plugin import ClassDefContext, MethodContext
from mypy.types import Type

from harness._palette._rules import Verdict, tool_verdicts
from mypy_plugin._facts import facts_of, tool_base
from mypy_plugin._names import METADATA_KEY, TOOL_NAME
from mypy_plugin._report import report, reporting_surprises

__all__ = ["check_tool_definition", "record_tool_name"]


def _name_argument(call: CallExpr) -> Expression | None:
    for expr, name in zip(call.args, call.arg_names, strict=False):
        if name in (None, "name"):
            return expr
    return None


def _is_tool_name_call(expr: Expression) -> bool:
    return (
        isinstance(expr, CallExpr)
        and isinstance(expr.callee, RefExpr)
        and expr.callee.fullname == TOOL_NAME
    )


def record_tool_name(ctx: ClassDefContext) -> bool:
    """Semantic analysis: store the literal name (or that it is not literal) on the class.

    Returns ``False`` (call again) while a named constant is still a placeholder, except on the
    final iteration, where deferring would crash mypy.
    """
    reason = ctx.reason
    name: str | None = None
    dynamic = True
    if isinstance(reason, CallExpr):
        arg = _name_argument(reason)
        if isinstance(arg, StrExpr):
            name, dynamic = arg.value, False
        elif isinstance(arg, NameExpr):
            node = arg.node
            if (node is None or isinstance(node, PlaceholderNode)) and not ctx.api.final_iteration:
                return False
            if isinstance(node, Var) and isinstance(node.final_value, str):
                name, dynamic = node.final_value, False
    ctx.cls.info.metadata[METADATA_KEY] = {"name": name, "dynamic": dynamic}
    return True


def _decorator_of(defn: ClassDef) -> Expression | None:
    for decorator in defn.decorators:
        if _is_tool_name_call(decorator):
            return decorator
    return None


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


def check_tool_definition(ctx: MethodContext) -> Type:
    """Type checking of ``@tool_name(...)`` applied to a class: report the class's own
    problems (a non-tool class, an invalid name, the constructor, an open type parameter)."""
    defn = ctx.context
    if not isinstance(defn, ClassDef):
        return ctx.default_return_type
    decorator = _decorator_of(defn) or defn
    with reporting_surprises(ctx.api.msg, decorator, f'the tool "{defn.name}"'):
        info = defn.info
        facts = facts_of(info, ctx.api.options)
        if facts.not_a_tool is not None:
            report(
                ctx.api.msg,
                Verdict(
                    "harness-tool",
                    facts.label,
                    f'@tool_name decorates "{facts.label}", which is not a DecisionTool subclass',
                    ('Name tool classes only: "class Tool(DecisionTool[Note, Verdict])"',),
                    key=facts.key,
                ),
                decorator,
            )
            return ctx.default_return_type
        for verdict in tool_verdicts(facts):
            if verdict.definition:
                report(ctx.api.msg, verdict, _node_for(verdict, defn, decorator))
    return ctx.default_return_type
