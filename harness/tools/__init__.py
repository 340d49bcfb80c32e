"""Tools: ``DecisionTool[I, O]``, their names and descriptions, and what they are at run time.

A tool takes one artifact and produces one; ``@tool_name`` names it for the model, and
:class:`ClassToolProvider` reads a tool class's name, description and concrete ``(I, O)``
(:func:`tool_types`) and builds instances for a parent (:class:`Identifiable`).

Names load on first use (PEP 562), so the palette rules (which the mypy plugin loads) take the
tool-name rule without loading artifacts and scope; type checkers read the explicit imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = [
    "RESERVED_TOOL_NAMES",
    "ClassToolProvider",
    "DecisionTool",
    "Identifiable",
    "Identity",
    "Workflow",
    "declared_tool_types",
    "list_iterand",
    "new_job_id",
    "open_type_part",
    "runtime_class",
    "tool_description",
    "tool_name",
    "tool_types",
    "validate_tool_name",
]

_SCOPE = frozenset({"Identifiable", "Identity", "Workflow", "new_job_id"})
_TOOL = frozenset({"NAME_ATTR", "DecisionTool", "tool_description", "tool_name"})
_NAMES = frozenset({"RESERVED_TOOL_NAMES", "validate_tool_name"})

if TYPE_CHECKING:
    from harness.scope import Identifiable as Identifiable
    from harness.scope import Identity as Identity
    from harness.scope import Workflow as Workflow
    from harness.scope import new_job_id as new_job_id
    from harness.tools._names import RESERVED_TOOL_NAMES as RESERVED_TOOL_NAMES
    from harness.tools._names import validate_tool_name as validate_tool_name
    from harness.tools._provider import ClassToolProvider as ClassToolProvider
    from harness.tools._provider import declared_tool_types as declared_tool_types
    from harness.tools._provider import list_iterand as list_iterand
    from harness.tools._provider import open_type_part as open_type_part
    from harness.tools._provider import runtime_class as runtime_class
    from harness.tools._provider import tool_types as tool_types
    from harness.tools._tool import NAME_ATTR as NAME_ATTR
    from harness.tools._tool import DecisionTool as DecisionTool
    from harness.tools._tool import tool_description as tool_description
    from harness.tools._tool import tool_name as tool_name
else:

    def __getattr__(name: str) -> object:
        if name in _SCOPE:
            from harness import scope as found
        elif name in _NAMES:
            from harness.tools import _names as found
        elif name in _TOOL:
            from harness.tools import _tool as found
        elif name in __all__:
            from harness.tools import _provider as found
        else:
            raise AttributeError(f"module 'harness.tools' has no attribute {name!r}")
        value = getattr(found, name)
        globals()[name] = value
        return value
