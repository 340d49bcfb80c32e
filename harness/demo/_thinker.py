"""The demo's thinker: finds, in a folder, the statements that decide a price change and say from
when it applies.

Input a :class:`Folder`; palette ``list_folder`` and ``read_document``; key tool
``split_statements``; the answer the statements selected at the threshold. The digests the model
reads are the demo's formatters (:func:`register_formatters`).
"""

from __future__ import annotations

from typing import Final

from harness.artifacts import TextFormatterRegistry
from harness.deciding import DecisionThinker
from harness.demo._artifacts import Folder, Statement, register_formatters
from harness.demo._tools import ListFolder, ReadDocument, SplitStatements
from harness.tools import Identifiable, tool_name

__all__ = ["DEMO_MAX_TURNS", "DEMO_OBJECTIVE", "PriceDecisionFinder", "demo_formatters"]

DEMO_OBJECTIVE: Final = (
    "Find the statements that decide a price change and say from when it applies."
)
"""What the demo asks for when no ``--objective`` is given."""

DEMO_MAX_TURNS: Final = 12
"""The demo's turn budget: one listing, a few readings and splits, then the selection; enough
for the embedded model to reach statements, few enough to finish in seconds."""


def demo_formatters() -> TextFormatterRegistry:
    """A formatter registry with the demo's artifacts registered."""
    formatters = TextFormatterRegistry()
    register_formatters(formatters)
    return formatters


@tool_name("find_price_decisions")
class PriceDecisionFinder(DecisionThinker[Folder, Statement]):
    """Finds, in a folder of documents, the statements that decide a price change and from when
    it applies: lists the folder, reads documents, splits them into statements, selects."""

    def __init__(
        self,
        parent: Identifiable,
        *,
        objective: str = DEMO_OBJECTIVE,
        max_turns: int = DEMO_MAX_TURNS,
    ) -> None:
        super().__init__(
            parent,
            output_type=Statement,
            key_tool=SplitStatements,
            palette=(ListFolder, ReadDocument),
            objective=objective,
            max_turns=max_turns,
            formatters=demo_formatters(),
        )
