"""Refusing an eval on the split an entry's solved examples were drawn from.

Its own module because both the pack eval (which refuses) and the examples' fitting (which runs
pack evals) use it.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.catalog import CatalogEntry
from harness.decision import JsonValue
from harness.evals._dataset import DatasetError
from harness.evals._folder import EvalError

__all__ = ["DrawnSplitError", "refuse_drawn"]


class DrawnSplitError(EvalError, DatasetError):
    """An eval on data the entry's solved examples were drawn from: names the count and the
    fix (an :class:`EvalError`, and a :class:`DatasetError` as the data cannot be used)."""


def refuse_drawn(entry: CatalogEntry, states: Iterable[JsonValue], what: str) -> None:
    """Refuse an eval of ``entry`` on data the entry's examples were drawn from: a
    :class:`DrawnSplitError` naming the count and the fix when any of ``states`` (request
    states) is in the examples' split."""
    examples = entry.examples
    if examples is None or not examples.pool:
        return
    found = examples.drawn(states)
    if found:
        raise DrawnSplitError(
            f"catalog entry {entry.id!r} shows solved examples drawn from {examples.drawn_from}, "
            f"and {found} of {what} come from that split: a figure on the data the examples "
            "came from says nothing; evaluate on the held-out split: harness eval ... --split test "
            "(the cases or decisions tagged test; Dataset.tagged('test') in Python)"
        )
