"""The plugin's dispatch table: which hook runs which check. One module per check beside it."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from mypy.nodes import MypyFile
from mypy.options import Options
from mypy.plugin import (
    ClassDefContext,
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


# The checks import harness (the shared rules) only when a type-checking hook is first called:
# a run that re-checks no tool and no thinker, such as a warm run after an edit elsewhere, never
# pays for importing the runtime. The semantic-analysis hooks (``_record``) import nothing of
# harness: the decorator hook runs for every class mypy analyses, stdlib and third-party ones
# included. Until then each hook is a stand-in that imports it, puts it in its own place and
# calls it; mypy asks for a hook right before each call, so every later call gets the hook
# itself, with no wrapper to call.

#: A type-checking hook: what it gets is a mypy context (Any: method or function context).
_Hook = Callable[[Any], Type]


def _stand_in(hooks: dict[str, _Hook], fullname: str, module: str, name: str) -> _Hook:
    """``hooks[fullname]`` until its first call: imports ``module.name``, puts it in its place."""

    def first_call(ctx: Any) -> Type:  # Any: a mypy context, as the hook takes
        found: _Hook = getattr(importlib.import_module(module), name)
        hooks[fullname] = found
        return found(ctx)

    return first_call


#: The error codes, as ``HarnessPlugin.report_config_data`` gives them.
_CODES: Final = sorted(ERROR_CODES)

#: The type-checking hooks by the full name mypy asks about (see ``get_method_hook``).
_METHOD_HOOKS: Final[dict[str, _Hook]] = {}
_FUNCTION_HOOKS: Final[dict[str, _Hook]] = {}
for _hooks, _fullname, _where in (
    (_METHOD_HOOKS, TOOL_NAME_CALL, ("mypy_plugin._definition", "check_tool_definition")),
    (_METHOD_HOOKS, THINKER_INIT, ("mypy_plugin._palette_site", "check_explicit_init")),
    (_FUNCTION_HOOKS, THINKER, ("mypy_plugin._palette_site", "check_direct_thinker")),
    (_FUNCTION_HOOKS, THINKER_SUPER_INIT, ("mypy_plugin._palette_site", "check_super_init")),
    *(
        (_FUNCTION_HOOKS, runner, ("mypy_plugin._runner", "note_thinker_input"))
        for runner in RUNNERS
    ),
):
    _hooks[_fullname] = _stand_in(_hooks, _fullname, *_where)


class HarnessPlugin(Plugin):
    """Reports illegal palettes; never changes a type. Holds no state across files but what a
    class's settled facts are (:func:`mypy_plugin._facts.facts_of`), forgotten per build."""

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        forget()
        # The hooks mypy asks about most (every call it checks, every class decorator) are
        # answered by a dictionary's own ``get``: no Python method runs for a name not ours.
        # ``get_class_decorator_hook_2``: ``@tool_name(...)``, record the name (semantic
        # analysis). ``get_method_hook``: ``tool_name.__call__``, check the decorated class
        # (type checking); an explicit ``DecisionThinker.__init__(self, ...)``, check the
        # palette. ``get_function_hook``: the thinker's constructor, in both forms; the runners
        # (a note on their input).
        decorator_hooks: dict[str, Callable[[ClassDefContext], bool]] = {
            TOOL_NAME: record_tool_name
        }
        self.get_class_decorator_hook_2 = decorator_hooks.get  # type: ignore[method-assign,assignment]  # see above
        self.get_method_hook = _METHOD_HOOKS.get  # type: ignore[method-assign,assignment]  # see above
        self.get_function_hook = _FUNCTION_HOOKS.get  # type: ignore[method-assign,assignment]  # see above

    def get_customize_class_mro_hook(
        self, fullname: str
    ) -> Callable[[ClassDefContext], None] | None:
        """Any decorated class: record its decorators other than ``@tool_name`` (a library's
        wrapper may name a tool at run time). Not a decorator hook: mypy keeps the first
        plugin's hook per decorator, and this one must not shadow ``dataclass`` or ``attrs``.
        (Telling here which classes have no decorators costs more than the hook's own early
        exit: mypy asks about every class, and each attribute read here is dear.)"""
        return record_other_decorator

    def get_additional_indirect_deps(self, file: MypyFile) -> set[str]:
        """The modules whose ``tool_name("x")(Cls)`` calls a palette check of ``file`` read: a
        change to their calls re-checks it in a warm run (see :mod:`mypy_plugin._call_forms`)."""
        return CONSULTED.pop(file.fullname, set())

    def report_config_data(
        self, ctx: ReportConfigContext
    ) -> dict[str, Any]:  # Any: mypy's own signature
        """What invalidates the cache: the plugin's version, its sources' digest and its codes
        (sorted once: mypy asks about every module)."""
        return {"harness_plugin": PLUGIN_VERSION, "sources": SOURCE_DIGEST, "codes": _CODES}


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: ``plugins = ["mypy_plugin"]`` (or ``["harness.mypy"]``)."""
    return HarnessPlugin
