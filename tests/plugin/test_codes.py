"""The plugin's error codes are the rules' codes, one for one, with the same meanings."""

from __future__ import annotations

from harness.palette import CODES
from mypy_plugin._codes import ERROR_CODES, RULE_CODES


def test_plugin_codes_are_the_rules_codes() -> None:
    assert RULE_CODES == CODES
    assert sorted(ERROR_CODES) == sorted(CODES)
    assert all(ERROR_CODES[name].description == CODES[name] for name in CODES)
