"""The name a ``tool_name("x")(Cls)`` call gives a class that has no ``@tool_name`` of its own."""

from __future__ import annotations

from mypy.checker import TypeChecker
from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    Expression,
    ExpressionStmt,
    NameExpr,
    RefExpr,
    TypeInfo,
    Var,
)

from mypy_plugin._names import TOOL_NAME
from mypy_plugin._record import literal_name

__all__ = ["call_form_name"]


def call_form_name(api: object, info: TypeInfo, written: Expression | None) -> str | bool | None:
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
