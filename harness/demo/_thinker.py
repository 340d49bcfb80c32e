"""The demo's thinker: finds, in a folder, the statements that decide a price change and say from
when it applies.

Input a :class:`Folder`; palette ``list_folder`` (a folder -> its text files); key tool
``read_statements`` (a text file -> its statements); the answer the statements selected at the
threshold. The types carry the rules: only text files are listed as :class:`TextFile`, and only
a ``TextFile`` can be read, so no turn goes to a file that cannot be read. The model decides what
to read and what to keep. The digests the model reads are the demo's formatters
(:func:`register_formatters`).
"""

from __future__ import annotations

from typing import Final

from harness.artifacts import TextFormatterRegistry
from harness.demo._artifacts import Folder, Statement, register_formatters
from harness.demo._tools import ListFolder, ReadStatements
from harness.thinker import DecisionThinker
from harness.tools import Identifiable, tool_name

__all__ = ["DEMO_MAX_TURNS", "DEMO_OBJECTIVE", "PriceDecisionFinder", "demo_formatters"]

DEMO_OBJECTIVE: Final = (
    "Find the statements that decide a price change and say from when it applies."
)
"""What the demo asks for when no ``--objective`` is given."""

DEMO_MAX_TURNS: Final = 12
"""The demo's turn budget: one listing and eleven readings. A perfect model needs eight tool
turns (the listing, then the seven files holding the planted decisions of the shipped corpus),
so the budget can be met with four turns to spare; few enough to finish in seconds."""


def demo_formatters() -> TextFormatterRegistry:
    """A formatter registry with the demo's artifacts registered."""
    formatters = TextFormatterRegistry()
    register_formatters(formatters)
    return formatters


@tool_name("find_price_decisions")
class PriceDecisionFinder(DecisionThinker[Folder, Statement]):
    """Finds, in a folder of documents, the statements that decide a price change and from when
    it applies: lists the folder's text files, reads some into statements, selects."""

    def __init__(
        self,
        parent: Identifiable,
        *,
        objective: str = DEMO_OBJECTIVE,
        max_turns: int = DEMO_MAX_TURNS,
        selection_threshold: float | None = None,
    ) -> None:
        super().__init__(
            parent,
            output_type=Statement,
            key_tool=ReadStatements,
            palette=(ListFolder,),
            objective=objective,
            max_turns=max_turns,
            selection_threshold=selection_threshold,
            formatters=demo_formatters(),
        )
