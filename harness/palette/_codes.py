"""The palette rules' codes and what each means: one code a rule.

The mypy plugin registers one error code per entry (``mypy_plugin._codes``) before any check
runs, so this module imports nothing: reading it loads no rule and no runtime.
"""

from __future__ import annotations

__all__ = ["CODES"]

#: Every verdict code, with what it means (the mypy plugin's error codes carry the same names).
CODES: dict[str, str] = {
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
