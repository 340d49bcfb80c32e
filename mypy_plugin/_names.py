"""Full names of the harness classes the plugin looks at (the definitions, not re-exports)."""

from __future__ import annotations

from typing import Final

DECISION_TOOL: Final = "harness.tools._tool.DecisionTool"
TOOL_NAME: Final = "harness.tools._tool.tool_name"
TOOL_NAME_CALL: Final = "harness.tools._tool.tool_name.__call__"
THINKER: Final = "harness.deciding._thinker.DecisionThinker"
THINKER_SUPER_INIT: Final = "__init__ of DecisionThinker"  # how mypy names super().__init__
LIST_ARTIFACT: Final = "harness.artifacts._artifact.ListArtifact"
ARTIFACT: Final = "harness.artifacts._artifact.Artifact"
METADATA_KEY: Final = "harness"
