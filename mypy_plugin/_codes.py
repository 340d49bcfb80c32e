"""The plugin's error codes: one per rule, namespaced ``harness-*``, each switchable per module
with ``disable_error_code`` / ``enable_error_code``. The names are the rules module's codes."""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

from harness._palette._rules import CODES

__all__ = ["ERROR_CODES", "INTERNAL", "code_for"]

_CATEGORY: Final = "harness"

#: One mypy error code per palette rule, keyed by the rule's code.
ERROR_CODES: Final[dict[str, ErrorCode]] = {
    name: ErrorCode(name, description, _CATEGORY) for name, description in CODES.items()
}

#: An internal surprise of the plugin: reported as an error asking for a bug report.
INTERNAL: Final = ErrorCode("harness-internal", "the harness plugin hit an internal error", _CATEGORY)


def code_for(verdict_code: str) -> ErrorCode:
    """The mypy error code of a rule's verdict code."""
    return ERROR_CODES[verdict_code]
