"""The plugin's error codes: one per rule, namespaced ``harness-*``, each switchable per module
with ``disable_error_code`` / ``enable_error_code``.

The codes must exist when mypy reads its configuration, before any check runs: they come from
``harness.palette._codes``, a module of the rules that imports nothing (``harness.palette``
itself loads the rest lazily), so one table serves the rules, the runtime and the plugin.
"""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

from harness.palette._codes import CODES

__all__ = ["ERROR_CODES", "INTERNAL", "RULE_CODES", "code_for"]

_CATEGORY: Final = "harness"

#: The rules' codes and what each means: the rules' own table, read from a module that imports
#: nothing (so registering the codes loads no rule).
RULE_CODES: Final[dict[str, str]] = CODES

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
