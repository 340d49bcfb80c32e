"""The plugin's dispatch table: which hook runs which check. One module per check beside it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from mypy.plugin import (
    ClassDefContext,
    FunctionContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import Type

from mypy_plugin._codes import ERROR_CODES
from mypy_plugin._names import THINKER, THINKER_SUPER_INIT, TOOL_NAME, TOOL_NAME_CALL

__all__ = ["PLUGIN_VERSION", "HarnessPlugin", "plugin"]

#: Bumped with every change to what the plugin reports: it goes into mypy's cache key.
PLUGIN_VERSION: Final = "0.1.0"


# The checks import harness (the shared rules) only when a hook first fires: a run that meets no
# tool and no thinker, such as a warm no-op run, never pays for importing the runtime.


def record_tool_name(ctx: ClassDefContext) -> bool:
    """See :func:`mypy_plugin._definition.record_tool_name`."""
    from mypy_plugin._definition import record_tool_name as hook

    return hook(ctx)


def check_tool_definition(ctx: MethodContext) -> Type:
    """See :func:`mypy_plugin._definition.check_tool_definition`."""
    from mypy_plugin._definition import check_tool_definition as hook

    return hook(ctx)


def check_direct_thinker(ctx: FunctionContext) -> Type:
    """See :func:`mypy_plugin._palette_site.check_direct_thinker`."""
    from mypy_plugin._palette_site import check_direct_thinker as hook

    return hook(ctx)


def check_super_init(ctx: FunctionContext) -> Type:
    """See :func:`mypy_plugin._palette_site.check_super_init`."""
    from mypy_plugin._palette_site import check_super_init as hook

    return hook(ctx)


class HarnessPlugin(Plugin):
    """Reports illegal palettes; never changes a type. Holds no state across files."""

    def get_class_decorator_hook_2(self, fullname: str) -> Callable[[ClassDefContext], bool] | None:
        """``@tool_name(...)``: record the name (semantic analysis)."""
        return record_tool_name if fullname == TOOL_NAME else None

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        """``tool_name.__call__``: check the decorated class (type checking)."""
        return check_tool_definition if fullname == TOOL_NAME_CALL else None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        """The thinker's constructor, in both forms."""
        if fullname == THINKER:
            return check_direct_thinker
        if fullname == THINKER_SUPER_INIT:
            return check_super_init
        return None

    def report_config_data(
        self, ctx: ReportConfigContext
    ) -> dict[str, Any]:  # Any: mypy's own signature
        """What invalidates the cache: the plugin's version and its codes."""
        return {"harness_plugin": PLUGIN_VERSION, "codes": sorted(ERROR_CODES)}


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: ``plugins = ["mypy_plugin"]`` (or ``["harness.mypy"]``)."""
    return HarnessPlugin
