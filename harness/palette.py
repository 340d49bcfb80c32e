"""Palette rules and the runtime palette validator.

A thinker's palette is legal when every tool is a concrete ``DecisionTool`` class with its own
valid ``@tool_name`` and the ``(parent)`` constructor, both type parameters are bound to concrete
artifact classes, names are unique, the key tool produces ``ListArtifact[O]``, and the key tool's
input (like every tool's) is reachable from the thinker's input. The mypy plugin proves this at
type-check time; :func:`validate_palette` re-checks it at construction, with the same verdicts.
"""

from harness._palette import CODES as CODES
from harness._palette import Open as Open
from harness._palette import PaletteError as PaletteError
from harness._palette import PaletteReport as PaletteReport
from harness._palette import RuntimeType as RuntimeType
from harness._palette import ToolFacts as ToolFacts
from harness._palette import TypeNode as TypeNode
from harness._palette import Verdict as Verdict
from harness._palette import palette_report as palette_report
from harness._palette import palette_verdicts as palette_verdicts
from harness._palette import runtime_facts as runtime_facts
from harness._palette import thinker_input_of as thinker_input_of
from harness._palette import tool_verdicts as tool_verdicts
from harness._palette import validate_palette as validate_palette

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
