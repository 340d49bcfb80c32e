"""Labelled data shipped with harness, written for it (made from templates by the repository's
``scripts/shipped_data.py``, which also checks that these files are what the templates give).

* ``decisions.jsonl``: 396 labelled decisions (support tickets, recipes, server logs), each one
  request with one question and its label;
* ``runs-support.jsonl``, ``runs-recipes.jsonl``, ``runs-logs.jsonl``: 60 labelled runs of the
  thinkers in :mod:`harness.evals.data.domains`;
* ``runs-triage.jsonl``: 48 labelled notes of the guide's triage example
  (:class:`harness.demo.triage.Triage`, ``scripts/triage_notes.py``);
* ``selections-triage.jsonl``: the same notes' selections as labelled decisions, the requests the
  triage thinker asks when its moves are right (``scripts/triage_selections.py``).

Both are split ``dev`` / ``test``: fit on ``dev``, report on ``test``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

__all__ = ["DATA_FILES", "DOMAINS", "data_path"]

DOMAINS: Final = ("support", "recipes", "logs")
"""The domains of the shipped data (none of them the demo's)."""

DATA_FILES: Final = (
    "decisions.jsonl",
    *(f"runs-{domain}.jsonl" for domain in DOMAINS),
    "runs-triage.jsonl",
    "selections-triage.jsonl",
)
"""The shipped data files."""


def data_path(name: str) -> Path:
    """The path of the shipped data file ``name`` (one of :data:`DATA_FILES`)."""
    if name not in DATA_FILES:
        raise ValueError(f"no shipped data file {name!r}; the files are {', '.join(DATA_FILES)}")
    return Path(__file__).resolve().parent / name
