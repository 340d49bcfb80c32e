"""Full names of the harness classes the plugin looks at (the definitions, not re-exports)."""

from __future__ import annotations

from typing import Final

DECISION_TOOL: Final = "harness.tools._tool.DecisionTool"
TOOL_NAME: Final = "harness.tools._tool.tool_name"
TOOL_NAME_CALL: Final = "harness.tools._tool.tool_name.__call__"
THINKER: Final = "harness.thinker._thinker.DecisionThinker"
THINKER_SUPER_INIT: Final = "__init__ of DecisionThinker"  # how mypy names super().__init__
LIST_ARTIFACT: Final = "harness.artifacts._artifact.ListArtifact"
ARTIFACT: Final = "harness.artifacts._artifact.Artifact"
METADATA_KEY: Final = "harness"
THINKER_INIT: Final = "harness.thinker._thinker.DecisionThinker.__init__"  # an explicit call
NAME_ATTR: Final = "__harness_tool_name__"  # what @tool_name sets on the class at run time
OTHER_DECORATORS_KEY: Final = "harness_decorators"  # a tool's decorators other than tool_name
RUNNERS: Final = frozenset({"harness.runs._run.run_sync", "harness.runs._run.run"})
CALLS_KEY: Final = "__harness_tool_calls__"  # a module's tool_name("x")(Cls) calls (recorded)
DATACLASS_INIT_KEY: Final = "harness_dataclass_init"  # @dataclass writes the class's __init__
WRITTEN_INIT_KEY: Final = "harness_written_init"  # attrs keeps the __init__ the class writes
#: The codes a tool's record places on its outermost ``@tool_name`` call (its "at" line, where
#: that is not the class line) unless its "lines" say otherwise.
DECORATOR_LINE_CODES: Final = frozenset({"harness-name", "harness-tool", "harness-undecidable"})
