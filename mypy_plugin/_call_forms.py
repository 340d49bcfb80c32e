"""The name a ``tool_name("x")(Cls)`` call gives a class with no ``@tool_name`` of its own.

The call form names a class in place (a vendored class the user cannot decorate), so a palette
in one module may rely on a call in another. The plugin decides the name where the program
promises it: a literal in a call that is a statement at the top of the palette's module or of a
module it imports, directly or not (that module has run before the palette's module does), with
one name for the class across them. A call in a function or under a condition, a computed name,
two calls giving different names, or a call in a module that imports the palette's module back
(which runs first is up to the order of imports) is ``harness-undecidable``. A class no such
call names, in the palette's module and everything it imports, has no name: the certain
``harness-name`` (the rule is written out in docs/plugin.md, "Names given by a call").

A module's tree loses its statements once it is checked (and a cached module never had them),
so each module holding a call form records its calls where the cache keeps them: a private
module attribute (:data:`~mypy_plugin._names.CALLS_KEY`, a ``str`` whose literal type holds the
record as JSON), written when the call is type-checked (:func:`record_call_forms`). Being part
of the module's interface, a changed call changes the interface hash of its module (a warm run
re-checks the palette's module, which lists every module it consulted as an indirect
dependency) and fires the module's wildcard trigger (the daemon re-checks the palette, which
depends on it).
"""

from __future__ import annotations

import json  # the stdlib: the plugin imports only the palette rules of harness, not its JSON
from collections.abc import Iterable

from mypy.checker import TypeChecker
from mypy.nodes import (
    GDEF,
    AssignmentStmt,
    CallExpr,
    Expression,
    ExpressionStmt,
    MypyFile,
    NameExpr,
    RefExpr,
    SymbolTableNode,
    TypeInfo,
    Var,
)
from mypy.server.subexpr import get_subexpressions
from mypy.server.trigger import make_wildcard_trigger
from mypy.types import Instance, LiteralType, get_proper_type

from harness.palette._rules import (
    Verdict,
    aliased_name_verdict,
    call_form_verdict,
    unread_call_form_verdict,
)
from mypy_plugin._memo import CONSULTED
from mypy_plugin._names import CALLS_KEY, TOOL_NAME
from mypy_plugin._record import literal_name

__all__ = ["call_form_name", "record_call_forms"]

#: One call form: the name it gives (None: computed), whether it is a top-level statement, the
#: variable a top-level assignment binds it to.
_Call = tuple[str | None, bool, str | None]

#: Modules never searched for call forms: they never name a user's class.
_NOT_SEARCHED = ("harness", "mypy_plugin")

#: Modules ``tool_name`` may be read from as an attribute (``harness.tool_name``).
_NAMING_MODULES = frozenset({"harness", "harness.tools"})


def _named_class(call: CallExpr) -> TypeInfo | None:
    """The class ``tool_name(...)(Cls)`` names, when ``call`` is that form."""
    callee = call.callee
    if not (
        isinstance(callee, CallExpr)
        and isinstance(callee.callee, RefExpr)
        and callee.callee.fullname == TOOL_NAME
        and len(call.args) == 1
        and isinstance(call.args[0], RefExpr)
    ):
        return None
    node = call.args[0].node
    return node if isinstance(node, TypeInfo) else None


def _scan(tree: MypyFile) -> dict[str, list[_Call]]:
    """The call forms of a module with its statements, by the full name of the class named."""
    top: dict[int, str | None] = {}  # id of a top-level call -> the variable it is bound to
    for statement in tree.defs:
        if isinstance(statement, ExpressionStmt) and isinstance(statement.expr, CallExpr):
            top[id(statement.expr)] = None
        elif (
            isinstance(statement, AssignmentStmt)
            and isinstance(statement.rvalue, CallExpr)
            and len(statement.lvalues) == 1
            and isinstance(statement.lvalues[0], NameExpr)
        ):
            top[id(statement.rvalue)] = statement.lvalues[0].name
    out: dict[str, list[_Call]] = {}
    for call in get_subexpressions(tree):  # in functions and under conditions too
        if not isinstance(call, CallExpr):
            continue
        info = _named_class(call)
        if info is None:
            continue
        at_top = id(call) in top
        out.setdefault(info.fullname, []).append(
            (literal_name(call.callee), at_top, top.get(id(call)) if at_top else None)
        )
    return out


def record_call_forms(api: object) -> None:
    """Type checking of a call form: record the module's call forms in its symbol table (once
    per check of the module), where the cache and other modules' palette checks find them."""
    if not isinstance(api, TypeChecker) or CALLS_KEY in api.tree.names:
        return
    tree = api.tree
    text = json.dumps(_scan(tree), sort_keys=True)
    str_type = api.named_type("builtins.str")
    var = Var(CALLS_KEY, str_type.copy_modified(last_known_value=LiteralType(text, str_type)))
    var._fullname = f"{tree.fullname}.{CALLS_KEY}"
    var.is_ready = True
    var.is_final = True
    tree.names[CALLS_KEY] = SymbolTableNode(GDEF, var, module_public=False, plugin_generated=True)


def _recorded(module: MypyFile, fine_grained: bool) -> dict[str, list[_Call]]:
    """A module's call forms: its record, or, for a module of the palette's import cycle not
    checked yet (its statements are still there), read from its statements."""
    symbol = module.names.get(CALLS_KEY)
    node = symbol.node if symbol is not None else None
    typ = get_proper_type(node.type) if isinstance(node, Var) and node.type else None
    if isinstance(typ, Instance) and typ.last_known_value is not None:
        value = typ.last_known_value.value
        if isinstance(value, str):
            loaded = json.loads(value)
            return {key: [(n, bool(t), a) for n, t, a in calls] for key, calls in loaded.items()}
    if module.defs and not fine_grained and not module.is_cache_skeleton:
        return _scan(module)
    return {}


def _searched(module: MypyFile) -> bool:
    if module.is_stub or module.fullname.split(".")[0] in _NOT_SEARCHED:
        return False
    return "site-packages" not in module.path and "dist-packages" not in module.path


def _imports_of(module: MypyFile, modules: dict[str, MypyFile]) -> Iterable[str]:
    """The modules ``module`` imports at module level, as its symbol table records them (a name
    imported from a module leads to the module that defines it, which that one imports)."""
    prefix = module.fullname + "."
    for name, symbol in module.names.items():
        node = symbol.node
        if symbol.no_serialize or node is None:
            continue  # an implicit reference a cached module does not keep
        if isinstance(node, MypyFile):
            yield node.fullname
            continue
        full = node.fullname
        if not full or full == prefix + name:
            continue  # defined here
        owner = full.rpartition(".")[0]
        while owner and owner not in modules:
            owner = owner.rpartition(".")[0]
        if owner:
            yield owner


def _imported(start: MypyFile, modules: dict[str, MypyFile]) -> list[str]:
    """Every module ``start`` imports, directly or not, that may hold a call form."""
    seen = {start.fullname}
    order: list[str] = []
    stack = [start]
    while stack:
        for name in _imports_of(stack.pop(), modules):
            module = modules.get(name)
            if name in seen or module is None:
                continue
            seen.add(name)
            if _searched(module):
                order.append(name)
                stack.append(module)
    return sorted(order)


def _depend(api: TypeChecker, modules: list[str]) -> None:
    CONSULTED.setdefault(api.tree.fullname, set()).update(modules)
    options = api.options
    if options.fine_grained_incremental or options.cache_fine_grained:
        target = api.tscope.current_target()
        for name in modules:
            api.tree.plugin_deps.setdefault(make_wildcard_trigger(name), set()).add(target)


def _why(info: TypeInfo, found: list[tuple[str, _Call]], cycle: set[str]) -> tuple[str, str] | None:
    """Why the calls found do not decide the name (the module and the reason), if so."""
    for module, (name, top, _) in found:
        if not top:
            return (
                module,
                "runs only when the code around it does (it is not a statement at the top of "
                "its module)",
            )
        if name is None:
            return module, "computes the name at run time"
        if module in cycle:
            return module, (
                "sits in an import cycle with the palette's module: which of the two runs "
                "first depends on the order of imports"
            )
    names = sorted({str(name) for _, (name, _, _) in found})
    if len(names) > 1:
        shown = " and ".join(f'"{n}"' for n in names)
        return found[0][
            0
        ], f"and another call give it different names ({shown}): the last to run wins"
    return None


def call_form_name(api: object, info: TypeInfo, written: Expression | None) -> str | Verdict | None:
    """The name call forms give ``info`` (which has no ``@tool_name`` of its own) where the
    palette is checked: the literal when the program promises it, the ``harness-undecidable``
    verdict when it does not, ``None`` when no call names the class in the palette's module or
    anything it imports (then the class has no name)."""
    if not isinstance(api, TypeChecker):
        return None
    tree = api.tree
    modules = api.modules
    fine_grained = api.options.fine_grained_incremental
    imported = _imported(tree, modules)
    _depend(api, imported)
    found: list[tuple[str, _Call]] = [
        (tree.fullname, c) for c in _scan(tree).get(info.fullname, [])
    ]
    for name in imported:
        found += [(name, c) for c in _recorded(modules[name], fine_grained).get(info.fullname, [])]
    alias = written.node if isinstance(written, RefExpr) else None
    if isinstance(alias, Var) and not _plain_alias(tree, alias, info):
        owner = alias.fullname.rpartition(".")[0]
        if not any(m == owner and a == alias.name for m, (_, _, a) in found):
            return aliased_name_verdict(info.name, alias.name)
    if not found:
        unread = _unread(api, imported, info)
        return None if unread is None else unread_call_form_verdict(info.name, unread)
    holders = {module for module, _ in found if module != tree.fullname}
    cycle = {m for m in holders if tree.fullname in _imported(modules[m], modules)}
    why = _why(info, found, cycle)
    if why is not None:
        return call_form_verdict(info.name, *why)
    return found[0][1][0]


def _unread(api: TypeChecker, imported: list[str], info: TypeInfo) -> str | None:
    """The first module of ``imported`` whose function bodies mypy dropped unread (its errors
    are silenced: ``follow_imports = silent``, or it lies on the Python path, where mypy treats
    it as installed) and that could call ``tool_name`` on ``info``: it holds ``tool_name`` (or
    the module it is read from) and the class (or is, or holds, the class's module), so a call in
    one of its functions may name the class unseen; ``None`` when there is none."""
    if api.options.preserve_asts:  # the daemon and --cache-fine-grained keep every body
        return None
    ignored = api.msg.errors.ignored_files
    if not ignored:
        return None
    owner = info.module_name
    for name in [*imported, owner]:
        module = api.modules.get(name)
        if module is None or module.path not in ignored:
            continue
        names = False
        reaches = name == owner
        for symbol in module.names.values():
            node = symbol.node
            if isinstance(node, MypyFile):
                names = names or node.fullname in _NAMING_MODULES
                reaches = reaches or node.fullname == owner
            elif node is info:
                reaches = True
            elif node is not None and node.fullname == TOOL_NAME:
                names = True
        if names and reaches:
            return name
    return None


def _plain_alias(tree: MypyFile, alias: Var, info: TypeInfo) -> bool:
    """``Alias: type[Cls] = Cls`` in the palette's module: the class under another name."""
    if alias.fullname != f"{tree.fullname}.{alias.name}":
        return False
    for statement in tree.defs:
        if (
            isinstance(statement, AssignmentStmt)
            and any(isinstance(t, NameExpr) and t.node is alias for t in statement.lvalues)
            and isinstance(statement.rvalue, RefExpr)
            and statement.rvalue.node is info
        ):
            return True
    return False
