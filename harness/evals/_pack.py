"""Decision packs: single requests with their right answers, for models judged without a thinker.

A pack file holds one labelled decision a line (JSONL) or a list of them (YAML)::

    {"name": "refund-7",
     "request": {"state": {"ticket": "..."},
                 "questions": {"refund": {"type": "noul", "instructions": "Refund it?"}}},
     "labels": {"refund": true},
     "tags": ["billing"]}

``request`` is a System One request body (``model`` left out); ``labels`` give, per question id,
the right option of a choice (its key), the truth of a noul (``true``/``false``) or the level of a
score (its name). A question without a label is asked and not scored.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import attrs

from harness.decision import Choice, DecisionRequest, Noul, RequestValidationError, Score
from harness.decision import systemone as _systemone
from harness.evals._dataset import tags_of
from harness.evals._rows import DatasetError, _RowError, read_entries, row_head, row_tags

__all__ = ["DecisionPack", "Label", "LabelledDecision"]

Label = str | bool
"""A question's right answer: a choice's option key, a noul's truth, a score's level name."""


def _labels(value: Mapping[str, Label]) -> Mapping[str, Label]:
    return dict(value)


@attrs.frozen
class LabelledDecision:
    """One request and the right answer to each labelled question of it."""

    name: str
    request: DecisionRequest
    labels: Mapping[str, Label] = attrs.field(converter=_labels)
    tags: tuple[str, ...] = attrs.field(default=(), converter=tags_of)

    def __attrs_post_init__(self) -> None:
        problem = label_problem(self.request, self.labels)
        if problem is not None:
            raise DatasetError(f"decision {self.name!r}: {problem}")


def label_problem(request: DecisionRequest, labels: Mapping[str, Label]) -> str | None:
    """What is wrong with ``labels`` for ``request`` (``None`` when they fit)."""
    if not labels:
        return "labels is empty: label at least one question"
    for question_id, label in labels.items():
        question = request.questions.get(question_id)
        if question is None:
            known = ", ".join(request.questions)
            return f"labels.{question_id}: no such question (the request asks {known})"
        if isinstance(question, Noul):
            if not isinstance(label, bool):
                return f"labels.{question_id}: a noul's label is true or false"
        elif isinstance(question, Choice):
            if not isinstance(label, str) or label not in question.options:
                return f"labels.{question_id}: a choice's label is one of its option keys"
        elif isinstance(question, Score) and (
            not isinstance(label, str) or label not in question.levels
        ):
            return f"labels.{question_id}: a score's label is one of its level names"
    return None


class DecisionPack:
    """Labelled decisions, named, in order."""

    def __init__(self, decisions: Iterable[LabelledDecision], *, name: str = "pack") -> None:
        self.decisions = tuple(decisions)
        self.name = name
        seen: set[str] = set()
        for decision in self.decisions:
            if decision.name in seen:
                raise DatasetError(
                    f"{name}: two decisions are named {decision.name!r}: give each its own name"
                )
            seen.add(decision.name)

    def __len__(self) -> int:
        return len(self.decisions)

    def __iter__(self) -> Iterator[LabelledDecision]:
        return iter(self.decisions)

    def __repr__(self) -> str:
        return f"DecisionPack({self.name!r}: {len(self.decisions)} decisions)"

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, name: str | None = None) -> DecisionPack:
        """The labelled decisions of a ``.jsonl`` or ``.yaml`` file; every bad line is named by
        number and field at once."""
        source = Path(path)
        found = read_entries(
            source, _decision_from, "entr(ies) are not labelled decisions", "decisions", "request"
        )
        return cls(found, name=source.stem if name is None else name)


_FIELDS = ("name", "request", "labels", "tags")


def _decision_from(raw: object) -> LabelledDecision:
    raw, name = row_head(
        raw,
        _FIELDS,
        "a decision",
        "a labelled decision is a JSON object with name, request, labels",
    )
    body = raw.get("request")
    if not isinstance(body, Mapping):
        raise _RowError("request must be a System One request body (state, questions)")
    try:
        request, _ = _systemone.decode_request({**body, "model": "pack"})
    except RequestValidationError as error:
        shown = "; ".join(
            f"request.{'.'.join(map(str, loc[1:]))}: {msg}" for loc, msg in error.problems
        )
        raise _RowError(shown) from None
    labels = raw.get("labels")
    if not isinstance(labels, Mapping) or not all(
        isinstance(v, str | bool) for v in labels.values()
    ):
        raise _RowError("labels must map question ids to an option key, true/false or a level")
    tags = row_tags(raw)
    problem = label_problem(request, labels)
    if problem is not None:
        raise _RowError(problem)
    return LabelledDecision(name, request, labels, tags)
