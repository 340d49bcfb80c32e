"""The plugin's error codes: one per rule, namespaced ``harness-*``, each switchable per module
with ``disable_error_code`` / ``enable_error_code``.

The codes must exist when mypy reads its configuration, before any check runs, so they are
listed here rather than imported from ``harness.palette`` (whose import loads the runtime);
``tests/plugin/test_codes.py`` holds the two lists equal.
"""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

__all__ = ["ERROR_CODES", "INTERNAL", "RULE_CODES", "code_for"]

_CATEGORY: Final = "harness"

#: The rules' codes and what each means (as ``harness.palette.CODES``).
RULE_CODES: Final[dict[str, str]] = {
    "harness-tool": "a palette entry or key tool that is not a concrete DecisionTool class",
    "harness-name": "a tool without its own @tool_name, or with an invalid or reserved name",
    "harness-ctor": "a tool that changes the (parent) constructor",
    "harness-open-type": "a tool that leaves a type parameter Any, open or not an artifact, or "
    "whose execute method takes less than its declared input",
    "harness-duplicate": "two tools with the same name in one palette",
    "harness-key-tool": "a key tool whose output is not ListArtifact[O] for the thinker's O",
    "harness-graph": "a key tool whose input is unreachable from the thinker's input",
    "harness-dead-tool": "a palette tool whose input is unreachable from the thinker's input",
    "harness-objective": "a blank objective",
    "harness-undecidable": "what a type checker cannot decide: a computed tool name, an entry or "
    "key tool that is not one specific class",
}

#: One mypy error code per palette rule, keyed by the rule's code.
ERROR_CODES: Final[dict[str, ErrorCode]] = {
    name: ErrorCode(name, description, _CATEGORY) for name, description in RULE_CODES.items()
}

#: An internal surprise of the plugin: reported as an error asking for a bug report.
INTERNAL: Final = ErrorCode(
    "harness-internal", "the harness plugin hit an internal error", _CATEGORY
)


def code_for(verdict_code: str) -> ErrorCode:
    """The mypy error code of a rule's verdict code."""
    return ERROR_CODES[verdict_code]
