"""Refusing an eval on the split an entry's solved examples were drawn from.

Its own module because both the pack eval (which refuses) and the examples' fitting (which runs
pack evals) use it.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.catalog import CatalogEntry
from harness.decision import DecisionRequest, JsonValue
from harness.evals._dataset import DatasetError
from harness.evals._folder import EvalError

__all__ = ["DrawnSplitError", "refuse_drawn", "refuse_fitted_on"]


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


def refuse_fitted_on(entry: CatalogEntry, requests: Iterable[DecisionRequest], what: str) -> None:
    """Refuse an eval of a ``fitted`` entry on decisions its file was fitted on: a
    :class:`DrawnSplitError` naming the count and the fix when any of ``requests`` is one of the
    requests the file names in ``fitted_on.request_keys``."""
    if entry.provider != "fitted":
        return
    from harness.providers import fitted_model, request_key

    fitted_on = fitted_model(entry).document.get("fitted_on")
    keys = fitted_on.get("request_keys") if isinstance(fitted_on, dict) else None
    if not isinstance(keys, list) or not keys:
        return
    known = set(keys)
    found = sum(1 for request in requests if request_key(request) in known)
    if found:
        raise DrawnSplitError(
            f"catalog entry {entry.id!r} was fitted on {found} of {what}: a figure on the data "
            "a model was fitted on says nothing; evaluate on the held-out split: harness eval "
            "pack ... --split test (the decisions tagged test)"
        )
