"""The layer checker of ``tests/api/test_layers.py``: every way a module can name another.

A source file *uses* a ``harness`` module when it

* imports it (``import harness.x``, ``from harness.x import y``, relative imports resolved), at
  module level, under ``TYPE_CHECKING`` or inside a function (``kind`` ``"import"`` or
  ``"function"``);
* loads it by name: ``importlib.import_module("harness.x")``, ``import_module("harness.x")``,
  ``__import__("harness.x")`` (``"importlib"``, ``"__import__"``);
* names it in a string that is a module path and not a docstring: ``"harness.x"``,
  ``"harness.x._y"`` or a ``MODULE:NAME`` target ``"harness.x:Y"`` (``"string"``), the shape every
  lazy loader and plugin table takes.

The checker reads source text, so the tests can plant any of these in a file of their own.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

MODULE_PATH = re.compile(r"harness(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")


class Use(NamedTuple):
    """One use of a ``harness`` module: the dotted module, how, and on which line."""

    module: str
    kind: str
    line: int

    @property
    def package(self) -> str:
        """The top package used (``thinker`` for ``harness.thinker._turn``)."""
        return self.module.split(".")[1]

    @property
    def private_module(self) -> str | None:
        """``harness.x._y`` when the use reaches into package ``x``'s private module ``_y``; a
        package's one explicitly internal module, ``harness.x._internal``, is not private."""
        parts = self.module.split(".")
        if len(parts) > 2 and parts[2] == "_internal":
            return None
        if len(parts) > 2 and parts[2].startswith("_") and not parts[2].startswith("__"):
            return ".".join(parts[:3])
        return None


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module at ``path`` under ``root`` (the folder holding ``harness``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _resolve(node: ast.ImportFrom, here: str, is_package: bool) -> str | None:
    if node.level == 0:
        return node.module
    base = here.split(".") if is_package else here.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _loaded_by_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id in ("__import__", "import_module"):
        return "__import__" if func.id == "__import__" else "importlib"
    if isinstance(func, ast.Attribute) and func.attr in ("import_module", "__import__"):
        return "importlib" if func.attr == "import_module" else "__import__"
    return None


def uses(
    source: str,
    here: str,
    *,
    is_package: bool = False,
    is_module: Callable[[str], bool] = lambda name: True,
) -> list[Use]:
    """Every use of a ``harness`` module in ``source``, the text of module ``here``. A string
    counts when ``is_module`` says it names a module (``"harness.job.id"``, a telemetry
    attribute, and ``"harness.serve.access"``, a logger, do not)."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found: list[Use] = []

    def visit(node: ast.AST, in_function: bool) -> Iterator[Use]:
        kind = "function" if in_function else "import"
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Use(alias.name, kind, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node, here, is_package)
            if module:
                yield Use(module, kind, node.lineno)
                for alias in node.names:
                    yield Use(f"{module}.{alias.name}", kind, node.lineno)
        elif isinstance(node, ast.Call):
            how = _loaded_by_name(node)
            first = node.args[0] if node.args else None
            if how and isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield Use(first.value, how, node.lineno)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and MODULE_PATH.fullmatch(node.value)
        ):
            yield Use(node.value.split(":")[0], "string", node.lineno)
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            yield from visit(child, inner)

    seen: set[tuple[str, int]] = set()
    for use in visit(tree, False):
        # ``importlib.import_module("harness.x")`` is a call holding a string: count it once.
        parts = use.module.split(".")
        if parts[0] != "harness" or len(parts) < 2 or parts[1] in ("__version__", "__all__"):
            continue
        if use.kind == "string" and ((use.module, use.line) in seen or not is_module(use.module)):
            continue
        seen.add((use.module, use.line))
        found.append(use)
    return found


def package_of(module: str) -> str:
    """The top package of a dotted ``harness`` module (``record`` for ``harness.record._html``)."""
    return module.split(".")[1]


class Violation(NamedTuple):
    """A use that breaks a rule: which file, which line, what it uses and how."""

    path: str
    line: int
    module: str
    kind: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} uses {self.module} ({self.kind})"


def sources(harness_root: Path) -> list[Path]:
    """Every source module of the ``harness`` package at ``harness_root`` but its top face
    (``harness/__init__.py`` serves every package's names) and the demo's corpus (data)."""
    return sorted(
        p
        for p in harness_root.rglob("*.py")
        if "corpus" not in p.relative_to(harness_root).parts and p != harness_root / "__init__.py"
    )


def is_module_under(harness_root: Path) -> Callable[[str], bool]:
    """Whether a dotted ``harness`` name is a module or package of the tree at ``harness_root``."""

    def is_module(name: str) -> bool:
        where = harness_root.joinpath(*name.split(".")[1:])
        return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()

    return is_module


def all_uses(harness_root: Path) -> Iterator[tuple[Path, str, Use]]:
    """(file, its package, a use) for every use in every source module."""
    root = harness_root.parent
    is_module = is_module_under(harness_root)
    for path in sources(harness_root):
        here = module_name(path, root)
        text = path.read_text(encoding="utf-8")
        for use in uses(text, here, is_package=path.name == "__init__.py", is_module=is_module):
            yield path, package_of(here), use


def upward(
    harness_root: Path, layers: tuple[frozenset[str], ...], allowed: set[tuple[str, str]]
) -> list[Violation]:
    """Every use of a package in a higher layer than the user's own."""

    def layer(package: str) -> int:
        for number, members in enumerate(layers):
            if package in members:
                return number
        raise AssertionError(f"harness.{package} has no layer: add it to LAYERS")

    found: list[Violation] = []
    for path, source, use in all_uses(harness_root):
        target = use.package
        if target == source or (source, target) in allowed:
            continue
        if layer(target) > layer(source):
            shown = path.relative_to(harness_root.parent).as_posix()
            found.append(Violation(shown, use.line, use.module, use.kind))
    return found


def reach_ins(harness_root: Path) -> dict[tuple[str, str], list[Violation]]:
    """(file, private module) -> its uses, for every use of another package's private module."""
    found: dict[tuple[str, str], list[Violation]] = {}
    for path, source, use in all_uses(harness_root):
        private = use.private_module
        if private is None or use.package == source:
            continue
        shown = path.relative_to(harness_root.parent).as_posix()
        found.setdefault((shown, private), []).append(
            Violation(shown, use.line, use.module, use.kind)
        )
    return found


def imported_modules(
    source: str, here: str, *, is_package: bool, is_module: Callable[[str], bool]
) -> set[str]:
    """The modules of ``here``'s top package (``harness``) that ``source``, the text of module
    ``here``, imports anywhere: at module level, under ``TYPE_CHECKING`` and inside functions.
    An import deferred into a function hides a circle from the loader, not from the reader, and
    is the usual way one is papered over; so it counts. ``from harness.x import _y`` (``_y`` a
    module) names ``harness.x._y``; ``from harness.x import Name`` names ``harness.x``, whose
    ``__init__`` must bind ``Name``. Python loads ``harness.x`` before any ``harness.x._y``, but
    that is not counted: every private module would otherwise sit in a circle with the face that
    imports it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(node, here, is_package)
            if not module:
                continue
            for alias in node.names:
                inner = f"{module}.{alias.name}"
                found.add(inner if is_module(inner) else module)
    top = here.split(".")[0]
    return {name for name in found if name.startswith(f"{top}.") and is_module(name)} - {here}


def import_graph(harness_root: Path) -> dict[str, set[str]]:
    """Module -> the ``harness`` modules it imports (a package counts as its ``__init__``)."""
    root = harness_root.parent
    is_module = is_module_under(harness_root)
    return {
        module_name(path, root): imported_modules(
            path.read_text(encoding="utf-8"),
            module_name(path, root),
            is_package=path.name == "__init__.py",
            is_module=is_module,
        )
        for path in sources(harness_root)
    }


def circles(harness_root: Path) -> list[tuple[str, ...]]:
    """Every import circle among the modules of the tree at ``harness_root``: each strongly
    connected group of two or more modules, its members sorted, shortest name first."""
    graph = import_graph(harness_root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []

    def connect(start: str) -> None:
        # Tarjan's algorithm, iteratively (a deep chain of imports must not hit the recursion
        # limit): each frame is a module and the iterator over its remaining edges.
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        frames = [(start, iter(sorted(graph.get(start, ()))))]
        while frames:
            node, edges = frames[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    frames.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                frames.pop()
                if frames:
                    parent = frames[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(tuple(sorted(group)))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return sorted(found)
