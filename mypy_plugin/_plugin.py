"""The plugin's dispatch table: which hook runs which check. One module per check beside it."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from mypy.nodes import MypyFile, TypeInfo
from mypy.options import Options
from mypy.plugin import (
    ClassDefContext,
    FunctionContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import Type

from mypy_plugin._codes import ERROR_CODES
from mypy_plugin._memo import CONSULTED, forget
from mypy_plugin._names import (
    RUNNERS,
    THINKER,
    THINKER_INIT,
    THINKER_SUPER_INIT,
    TOOL_NAME,
    TOOL_NAME_CALL,
)
from mypy_plugin._record import record_other_decorator, record_tool_name

__all__ = ["PLUGIN_VERSION", "RULE_SOURCES", "SOURCE_DIGEST", "HarnessPlugin", "plugin"]

#: The plugin's human version, bumped with every change to what it reports.
PLUGIN_VERSION: Final = "0.7.0"

_PLUGIN_DIR = Path(__file__).resolve().parent
_HARNESS = _PLUGIN_DIR.parent / "harness"

#: The modules of harness the checks import and whose words or rules a cached verdict holds:
#: every module of the palette rules (not the runtime validator) and the tool-name rule.
RULE_SOURCES: Final = (
    "palette/__init__.py",
    "palette/_codes.py",
    "palette/_graph.py",
    "palette/_rules.py",
    "palette/_types.py",
    "palette/_undecidable.py",
    "tools/_names.py",
)


def _source_digest() -> str:
    """A hash of the plugin's sources and the shared rules: any edit changes it, so a cache
    written by another version of the checks is never reused, bumped version or not."""
    digest = hashlib.sha256()
    rules = [_HARNESS / name for name in RULE_SOURCES]
    for path in [*sorted(_PLUGIN_DIR.glob("*.py")), *rules]:
        digest.update(path.name.encode())
        try:
            digest.update(path.read_bytes())
        except OSError:  # an installed layout without the file: the version still counts
            digest.update(b"-")
    return digest.hexdigest()[:16]


#: What goes into mypy's cache key beside :data:`PLUGIN_VERSION` (see ``report_config_data``).
SOURCE_DIGEST: Final = _source_digest()


# The checks import harness (the shared rules) only when a type-checking hook is first asked
# for: a run that re-checks no tool and no thinker, such as a warm run after an edit elsewhere,
# never pays for importing the runtime. The semantic-analysis hooks (``_record``) import nothing
# of harness: the decorator hook runs for every class mypy analyses, stdlib and third-party ones
# included. mypy asks for a hook right before calling it, so importing on the first request is
# importing on the first check; each hook is then handed out as it is, with no wrapper to call.

#: The type-checking hooks by the full name mypy asks about: where each is, (module, function),
#: until it is first asked for, then the function itself.
_Hook = Callable[[Any], Type]  # Any: a mypy context
_METHOD_HOOKS: Final[dict[str, tuple[str, str] | _Hook]] = {
    TOOL_NAME_CALL: ("mypy_plugin._definition", "check_tool_definition"),
    THINKER_INIT: ("mypy_plugin._palette_site", "check_explicit_init"),
}
_FUNCTION_HOOKS: Final[dict[str, tuple[str, str] | _Hook]] = {
    THINKER: ("mypy_plugin._palette_site", "check_direct_thinker"),
    THINKER_SUPER_INIT: ("mypy_plugin._palette_site", "check_super_init"),
    **{runner: ("mypy_plugin._runner", "note_thinker_input") for runner in RUNNERS},
}


def _load(hooks: dict[str, tuple[str, str] | _Hook], fullname: str) -> _Hook:
    """Import the hook ``hooks`` has for ``fullname`` and keep it there in place of where it is."""
    where = hooks[fullname]
    if not isinstance(where, tuple):
        return where
    module, name = where
    found: _Hook = getattr(importlib.import_module(module), name)
    hooks[fullname] = found
    return found


class HarnessPlugin(Plugin):
    """Reports illegal palettes; never changes a type. Holds no state across files but what a
    class's settled facts are (:func:`mypy_plugin._facts.facts_of`), forgotten per build."""

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        forget()
        #: The daemon updates classes in place: a class that lost its decorators keeps their
        #: records until the hook runs for it again, so there every class gets the hook.
        self._every_class = options.fine_grained_incremental

    def get_class_decorator_hook_2(self, fullname: str) -> Callable[[ClassDefContext], bool] | None:
        """``@tool_name(...)``: record the name (semantic analysis)."""
        return record_tool_name if fullname == TOOL_NAME else None

    def get_customize_class_mro_hook(
        self, fullname: str
    ) -> Callable[[ClassDefContext], None] | None:
        """Any decorated class: record its decorators other than ``@tool_name`` (a library's
        wrapper may name a tool at run time). Not a decorator hook: mypy keeps the first
        plugin's hook per decorator, and this one must not shadow ``dataclass`` or ``attrs``.

        mypy asks about every class it analyses and builds a context for every hook it gets: a
        class of typeshed's stubs, or a module-level class with no decorators (most classes),
        gets none, as the hook has nothing to record there (outside the daemon, a class
        analysed here is new: no record of earlier decorators to take back). A class not
        found that way (nested, local) gets the hook."""
        if self._every_class or self._modules is None:
            return record_other_decorator
        module, _, name = fullname.rpartition(".")
        tree = self._modules.get(module)
        if tree is None:
            return record_other_decorator
        if tree.is_typeshed_file(self.options):
            return None  # the hook records nothing in typeshed's stubs (no tool is defined there)
        symbol = tree.names.get(name)
        info = symbol.node if symbol is not None else None
        if isinstance(info, TypeInfo) and info.fullname == fullname and not info.defn.decorators:
            return None
        return record_other_decorator

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        """``tool_name.__call__``: check the decorated class (type checking); an explicit
        ``DecisionThinker.__init__(self, ...)``: check the palette."""
        found = _METHOD_HOOKS.get(fullname)  # mypy asks about most calls it checks: one lookup
        return _load(_METHOD_HOOKS, fullname) if isinstance(found, tuple) else found

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        """The thinker's constructor, in both forms; the runners (a note on their input)."""
        found = _FUNCTION_HOOKS.get(fullname)
        return _load(_FUNCTION_HOOKS, fullname) if isinstance(found, tuple) else found

    def get_additional_indirect_deps(self, file: MypyFile) -> set[str]:
        """The modules whose ``tool_name("x")(Cls)`` calls a palette check of ``file`` read: a
        change to their calls re-checks it in a warm run (see :mod:`mypy_plugin._call_forms`)."""
        return CONSULTED.pop(file.fullname, set())

    def report_config_data(
        self, ctx: ReportConfigContext
    ) -> dict[str, Any]:  # Any: mypy's own signature
        """What invalidates the cache: the plugin's version, its sources' digest and its codes."""
        return {
            "harness_plugin": PLUGIN_VERSION,
            "sources": SOURCE_DIGEST,
            "codes": sorted(ERROR_CODES),
        }


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: ``plugins = ["mypy_plugin"]`` (or ``["harness.mypy"]``)."""
    return HarnessPlugin
