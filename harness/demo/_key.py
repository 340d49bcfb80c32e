"""The answer key of the shipped corpus, and a run's score against it.

The corpus holds seven planted statements that decide a price change and say from when it
applies, one per file (``answer_key.json`` beside this module: the file and the exact sentence of
each). The demo itself never reads the key to decide anything: it reads it after the answer, to
say how good the answer was (:func:`score_answer`), and the tests and ``benchmarks/demo.py``
build a perfect policy from it (:class:`~harness.demo.AnswerKeyPolicy`).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from typing import Any, Final

import attrs

from harness.decision._internal import load_json
from harness.record import RunRecord

__all__ = [
    "KEY_FILE",
    "AnswerKey",
    "DemoScore",
    "PlantedDecision",
    "answer_key",
    "answer_statements",
    "score_answer",
]

KEY_FILE: Final = "answer_key.json"
"""The key's file name inside the ``harness.demo`` package."""


@attrs.frozen
class PlantedDecision:
    """One planted decision: the file (relative to the corpus folder) and its sentence (exactly
    one statement as the demo's splitter cuts it)."""

    file: str
    sentence: str


@attrs.frozen
class AnswerKey:
    """The planted decisions of the shipped corpus and the objective they answer."""

    objective: str
    decisions: tuple[PlantedDecision, ...]

    @property
    def files(self) -> frozenset[str]:
        """The files holding a planted decision."""
        return frozenset(decision.file for decision in self.decisions)

    @property
    def sentences(self) -> frozenset[str]:
        """The planted sentences."""
        return frozenset(decision.sentence for decision in self.decisions)

    def holds(self, source: str, text: str) -> bool:
        """Whether the statement ``text`` of file ``source`` is a planted decision."""
        return PlantedDecision(source, text) in self.decisions


def answer_key() -> AnswerKey:
    """The key shipped with the corpus (a malformed key raises ``ValueError`` naming the file)."""
    raw = resources.files("harness.demo").joinpath(KEY_FILE).read_text(encoding="utf-8")
    data: Any = load_json(raw)  # Any: read by key; a malformed key raises below
    try:
        decisions = tuple(
            PlantedDecision(str(item["file"]), str(item["sentence"])) for item in data["decisions"]
        )
        return AnswerKey(str(data["objective"]), decisions)
    except (KeyError, TypeError) as error:
        message = f"harness/demo/{KEY_FILE} is malformed ({error!r}): reinstall harness"
        raise ValueError(message) from None


@attrs.frozen
class DemoScore:
    """An answer scored against the key: ``found`` of the ``planted`` decisions among the
    ``selected`` statements."""

    planted: int
    selected: int
    found: int

    @property
    def recall(self) -> float:
        """The share of the planted decisions the answer holds."""
        return self.found / self.planted if self.planted else 1.0

    @property
    def precision(self) -> float | None:
        """The share of the answer that is planted (``None`` for an empty answer)."""
        return self.found / self.selected if self.selected else None

    def line(self) -> str:
        """``"found 3 of 7 planted decisions; precision 0.50 (3 of 6 selected)"``."""
        if self.selected == 0:
            return f"found 0 of {self.planted} planted decisions (nothing selected)"
        return (
            f"found {self.found} of {self.planted} planted decisions; precision "
            f"{self.precision:.2f} ({self.found} of {self.selected} selected)"
        )


def answer_statements(record: RunRecord) -> list[tuple[str, str]]:
    """``(source, text)`` of each statement of a demo run's answer, in answer order."""
    found = []
    for item in record.answer:
        value = item.value
        if isinstance(value, dict) and "source" in value and "text" in value:
            found.append((str(value["source"]), str(value["text"])))
    return found


def score_answer(statements: Iterable[tuple[str, str]], key: AnswerKey) -> DemoScore:
    """Score ``(source, text)`` statements (sources relative to the corpus) against ``key``;
    a statement given twice counts once. (The wire codec's own ``score_answer``, private to
    :mod:`harness.decision`, builds a model's answer to a score question: another thing.)"""
    chosen = set(statements)
    found = sum(1 for source, text in chosen if key.holds(source, text))
    return DemoScore(planted=len(key.decisions), selected=len(chosen), found=found)
