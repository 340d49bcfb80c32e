"""What a tool name may be: the rule the runtime decorator and the palette rules share.

Kept apart from the tool classes (no import of artifacts or scope), so the palette rules, which
the mypy plugin loads into a type-checking run, load only this.
"""

from __future__ import annotations

import keyword
import re

__all__ = ["RESERVED_TOOL_NAMES", "validate_tool_name"]

RESERVED_TOOL_NAMES = frozenset({"finish"})
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def validate_tool_name(name: object) -> str | None:
    """Why ``name`` is not a valid tool name, or ``None`` when it is."""
    if not isinstance(name, str):
        return f"a tool name is a string, not {type(name).__name__}"
    if not _NAME.match(name):
        return f"tool name {name!r} is not an ASCII identifier"
    if keyword.iskeyword(name):
        return f"tool name {name!r} is a Python keyword"
    if name in RESERVED_TOOL_NAMES:
        return f"tool name {name!r} is reserved for the thinker's own move"
    return None
