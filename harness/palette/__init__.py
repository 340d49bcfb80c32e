"""Palette rules and the runtime palette validator.

A thinker's palette is legal when every tool is a concrete ``DecisionTool`` class with its own
valid ``@tool_name`` and the ``(parent)`` constructor, both type parameters are bound to concrete
artifact classes, names are unique, the key tool produces ``ListArtifact[O]``, and the key tool's
input (like every tool's) is reachable from the thinker's input. The mypy plugin proves this at
type-check time; :func:`validate_palette` re-checks it at construction, with the same verdicts.

Names load on first use (PEP 562): the mypy plugin loads the rules alone, never the runtime
validator; type checkers read the explicit imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = [
    "CODES",
    "Open",
    "PaletteError",
    "PaletteReport",
    "RuntimeType",
    "ToolFacts",
    "TypeNode",
    "Verdict",
    "palette_report",
    "palette_verdicts",
    "runtime_facts",
    "thinker_input_of",
    "tool_verdicts",
    "validate_palette",
]

if TYPE_CHECKING:
    from harness.palette._rules import CODES as CODES
    from harness.palette._rules import Open as Open
    from harness.palette._rules import ToolFacts as ToolFacts
    from harness.palette._rules import TypeNode as TypeNode
    from harness.palette._rules import Verdict as Verdict
    from harness.palette._rules import palette_verdicts as palette_verdicts
    from harness.palette._rules import tool_verdicts as tool_verdicts
    from harness.palette._runtime import PaletteError as PaletteError
    from harness.palette._runtime import PaletteReport as PaletteReport
    from harness.palette._runtime import RuntimeType as RuntimeType
    from harness.palette._runtime import palette_report as palette_report
    from harness.palette._runtime import runtime_facts as runtime_facts
    from harness.palette._runtime import thinker_input_of as thinker_input_of
    from harness.palette._runtime import validate_palette as validate_palette
else:

    def __getattr__(name: str) -> object:
        if name not in __all__:
            raise AttributeError(f"module 'harness.palette' has no attribute {name!r}")
        from harness.palette import _rules  # the runtime validator loads the rules too

        if name in _rules.__all__:
            value = getattr(_rules, name)
        else:
            from harness.palette import _runtime

            value = getattr(_runtime, name)
        globals()[name] = value
        return value
