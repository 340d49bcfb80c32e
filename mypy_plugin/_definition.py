"""Checks at a tool's definition: ``@tool_name``'s name, the constructor, the bound types.

Why the plugin is needed: mypy does not see what a decorator means, accepts any string as a name,
does not compare constructors of classes passed as ``type[...]``, and accepts ``Any`` or an open
type variable in a tool's base. These problems belong to the class, so they are reported where
it is defined, at the narrowest node: the decorator for the name, ``__init__`` for the
constructor, the base expression for an open type parameter.

The type-checking hook on ``tool_name.__call__`` reports; what it reads of the decorators was
recorded during semantic analysis by :mod:`mypy_plugin._record`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from mypy.checker import TypeChecker
from mypy.nodes import (
    CallExpr,
    ClassDef,
    Context,
    Expression,
    Import,
    ImportFrom,
    IndexExpr,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
)
from mypy.plugin import MethodContext
from mypy.types import Type

from harness.palette._rules import (
    Open,
    Verdict,
    decorated_non_tool_verdict,
    invalid_name_verdict,
    tool_verdicts,
    undecidable_name_verdict,
)
from mypy_plugin._call_forms import record_call_forms
from mypy_plugin._dependencies import class_triggers, depend_on, wants_dependencies
from mypy_plugin._facts import facts_of, own_name_record, own_verdicts, tool_base
from mypy_plugin._names import DECISION_TOOL
from mypy_plugin._plain import plain_definition_fine
from mypy_plugin._record import (
    base_expression,
    init_node,
    literal_name,
    name_argument,
    tool_name_calls,
)
from mypy_plugin._report import checker_fail, report, report_surprise, reporting_surprises

__all__ = ["check_tool_definition"]


def _quotes_a_type(expr: Expression) -> bool:
    if not isinstance(expr, IndexExpr):
        return False
    index = expr.index
    if isinstance(index, TupleExpr):
        for arg in index.items:  # noqa: SIM110  (a loop: no generator made for every tool)
            if isinstance(arg, StrExpr):
                return True
        return False
    return isinstance(index, StrExpr)


def _type_checking_only(ctx: MethodContext, defn: ClassDef) -> list[Verdict]:
    """A quoted type in a ``DecisionTool[...]`` base naming something imported only under
    ``if TYPE_CHECKING:``: it does not exist when the runtime reads the tool's types."""
    for expr in defn.base_type_exprs:
        if _quotes_a_type(expr):
            break
    else:
        return []  # most tools: nothing quoted, no import to walk
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


def _node_for(verdict: Verdict, defn: ClassDef, decorator: Context) -> Context:
    if verdict.code == "harness-ctor":
        init = init_node(defn)
        return init if init is not None else defn
    if verdict.code == "harness-open-type":
        return base_expression(defn, lambda info: tool_base(info) is not None)
    return decorator


def _check(ctx: MethodContext, defn: ClassDef, calls: list[CallExpr]) -> None:
    info = defn.info
    outermost: Context = calls[0] if calls else defn
    if wants_dependencies(ctx.api):
        depend_on(ctx.api, class_triggers(info.mro[1:]))  # inherited bases and constructors
    facts = facts_of(info, ctx.api.options)
    if facts.not_a_tool is not None:
        report(ctx.api.msg, decorated_non_tool_verdict(facts.label, facts.key), outermost)
        return
    forward = _type_checking_only(ctx, defn)
    verdicts: Sequence[Verdict] = own_verdicts(facts)
    if forward:
        verdicts = [v for v in verdicts if v.code != "harness-open-type"] + forward
    for verdict in verdicts:
        if verdict.definition:
            report(ctx.api.msg, verdict, _node_for(verdict, defn, outermost))
    record = own_name_record(info) if facts.name is None else None  # a literal: not dynamic
    if record is not None and record.get("dynamic"):
        argument = name_argument(calls[0]) if calls else None
        node = argument if argument is not None else outermost
        report(ctx.api.msg, undecidable_name_verdict(info.name, info.fullname), node)
    for call in calls[1:]:  # an inner name is overridden, but its decorator still checks it
        name = literal_name(call)
        inner = invalid_name_verdict(info.name, name, info.fullname) if name is not None else None
        if inner is not None:
            report(ctx.api.msg, inner, call)


def _check_call_form(ctx: MethodContext, call: CallExpr) -> None:
    """``tool_name("x")(Cls)``: the class gets its name here, so its own problems (the name,
    the constructor, the bound types) are reported here, as a decorator's are at the class
    (at the call: the class may be another module's, a vendored one)."""
    target = ctx.args[0][0] if ctx.args and ctx.args[0] else None
    info = target.node if isinstance(target, RefExpr) else None
    if not isinstance(info, TypeInfo) or not isinstance(call.callee, CallExpr):
        return
    facts = facts_of(info, ctx.api.options)
    if facts.not_a_tool is not None:
        report(ctx.api.msg, decorated_non_tool_verdict(facts.label, facts.key), call)
        return
    name = literal_name(call.callee)
    if name is None:
        report(ctx.api.msg, undecidable_name_verdict(info.name, info.fullname), call)
    else:
        invalid = invalid_name_verdict(info.name, name, info.fullname)
        if invalid is not None:
            report(ctx.api.msg, invalid, call)
    for verdict in own_verdicts(facts):
        if verdict.definition and verdict.code in ("harness-ctor", "harness-open-type"):
            report(ctx.api.msg, verdict, call)


def check_tool_definition(ctx: MethodContext) -> Type:
    """Type checking of ``@tool_name(...)`` applied to a class: report the class's own
    problems (a non-tool class, an invalid name, the constructor, an open type parameter).

    mypy calls this once per ``@tool_name`` on the class; each call reports the same errors at
    the same nodes, which mypy merges.
    """
    defn = ctx.context
    if not isinstance(defn, ClassDef):
        if isinstance(defn, CallExpr):  # the call form, tool_name("x")(Cls): for palettes
            with reporting_surprises(checker_fail(ctx.api.msg), defn, "a tool_name(...) call"):
                record_call_forms(ctx.api)
                _check_call_form(ctx, defn)
        return ctx.default_return_type
    try:
        api = ctx.api
        options = api.options
        if plain_definition_fine(defn, options):  # most tools: nothing to report
            if wants_dependencies(api):  # what the general check would depend on
                depend_on(api, class_triggers(defn.info.mro[1:]))
            return ctx.default_return_type
        _check(ctx, defn, tool_name_calls(defn))
    except Exception as error:  # any bug of ours must not crash the user's type check
        calls = tool_name_calls(defn)
        where = calls[0] if calls else defn
        report_surprise(checker_fail(ctx.api.msg), where, f'the tool "{defn.name}"', error)
    return ctx.default_return_type
