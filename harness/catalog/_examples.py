"""A catalog entry's solved examples: the few-shot demonstrations a local model's prompt shows.

A small base model judges a question far better when its prompt first shows a few solved
questions of the same role (the thinker's ``next`` move, a tool's ``input``, a ``select`` of a
candidate, or any other question by its kind; roles as :func:`harness.catalog.role_of`). The
examples are fitted on labelled decisions (``harness.evals`` draws them, never from the split it
reports on) and stored beside the entry's calibration, inline or in a JSON file the table names
(relative to the catalog's folder)::

    [entries.examples]
    file = "examples.json"

The file (what :func:`write_examples` writes) holds what the examples were drawn from and the
examples by role::

    {"format": "harness-examples", "version": 1,
     "drawn_from": {"dataset": "decisions", "split": "dev", "digest": "sha256:...",
                    "method": "labeled", "k": 2, "seed": 0, "decisions": 198},
     "pool": ["3f0c9a...", ...],
     "noul": [{"state": "...", "question": {"type": "noul", "instructions": "..."},
               "answer": "yes"}]}

``pool`` holds a short digest of every state of the split the examples were drawn from
(:func:`state_key`): an eval whose cases share a state with it is refused, since examples shown
to the model must never come from the data a figure is reported on. A question is written as a
System One request writes it; an answer is a choice's option key, ``yes`` / ``no``, or a score's
level. The same keys make the inline table (``[[entries.examples.noul]]`` tables with
``state``, ``question`` and ``answer``).

:class:`ExampleSet` is what the entry holds; the provider that builds prompts reads
:meth:`ExampleSet.for_role` and renders each example's state as :func:`state_text` renders a
request's.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

import attrs

from harness.decision import (
    Choice,
    DecisionRequest,
    JsonValue,
    Noul,
    Question,
    RequestValidationError,
    Score,
)
from harness.decision import systemone as _systemone
from harness.decision._internal import compact_json, indented_json

from ._calibration import CALIBRATION_ROLES, role_kind, role_of
from ._errors import CatalogError

__all__ = [
    "EXAMPLES_FORMAT",
    "DrawnFrom",
    "ExampleSet",
    "SolvedExample",
    "answer_problem",
    "examples_from_table",
    "state_key",
    "state_text",
    "write_examples",
]

EXAMPLES_FORMAT: Final = "harness-examples"
EXAMPLES_VERSION: Final = 1
_KEY_LENGTH: Final = 16
"""Hex digits of a state's digest in ``pool`` (64 bits: no two states of a split collide)."""


def state_text(state: JsonValue) -> str:
    """A request's state as a prompt shows it: a string as it is, a JSON object or array as
    compact JSON in its own key order (non-ASCII kept)."""
    if isinstance(state, str):
        return state
    return compact_json(state, allow_nan=True)


def state_key(state: JsonValue | str) -> str:
    """A short digest of a state (of :func:`state_text`): what ``pool`` holds."""
    text = state if isinstance(state, str) else state_text(state)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_KEY_LENGTH]


def answer_problem(question: Question, answer: str) -> str | None:
    """What is wrong with ``answer`` for ``question`` (``None`` when it fits)."""
    if isinstance(question, Noul):
        if answer not in ("yes", "no"):
            return f"a noul's answer is 'yes' or 'no', not {answer!r}"
    elif isinstance(question, Choice):
        if answer not in question.options:
            return f"a choice's answer is one of its option keys ({', '.join(question.options)})"
    elif isinstance(question, Score) and answer not in question.levels:
        return f"a score's answer is one of its levels ({', '.join(question.levels)})"
    return None


@attrs.frozen
class SolvedExample:
    """One solved question: the state as the model saw it, the question, and its right answer.

    ``answer`` is an option key of a :class:`~harness.decision.Choice`, ``"yes"`` or ``"no"``
    for a :class:`~harness.decision.Noul`, a level of a :class:`~harness.decision.Score`.
    """

    state: str
    question: Question
    answer: str

    def to_json(self) -> dict[str, object]:
        """The example as the examples file holds it."""
        return {
            "state": self.state,
            "question": _question_json(self.question),
            "answer": self.answer,
        }


@attrs.frozen
class DrawnFrom:
    """What a set of examples was drawn from, and how: the labelled data's name, its split and
    digest, the method, ``k`` per role, the seed, and how many labelled decisions the split
    held."""

    dataset: str
    split: str
    digest: str = ""
    method: str = "labeled"
    k: int = 0
    seed: int = 0
    decisions: int = 0

    def summary(self) -> str:
        """One line: ``decisions, split dev (198 decisions), labeled k=2 seed=0``."""
        held = f" ({self.decisions} decisions)" if self.decisions else ""
        return (
            f"{self.dataset}, split {self.split}{held}, {self.method} k={self.k} seed={self.seed}"
        )

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


def _roles(value: Mapping[str, Iterable[SolvedExample]]) -> Mapping[str, tuple[SolvedExample, ...]]:
    return {role: tuple(found) for role, found in value.items()}


def _pool(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


@attrs.frozen
class ExampleSet:
    """Solved examples by role, with what they were drawn from.

    ``drawn_from`` names the labelled data and its split (an eval on that same split is refused
    or flagged); ``method`` how they were chosen (``labeled``: k balanced labelled examples,
    seeded; ``search``: the best of candidate sets scored on part of the dev split). ``source``
    holds the same in fields when it is known, and ``pool`` the digests (:func:`state_key`) of
    every state of the split the examples were drawn from.
    """

    by_role: Mapping[str, tuple[SolvedExample, ...]] = attrs.field(converter=_roles)
    drawn_from: str
    method: str = "labeled"
    source: DrawnFrom | None = None
    pool: frozenset[str] = attrs.field(default=frozenset(), converter=_pool)

    def __attrs_post_init__(self) -> None:
        for role, found in self.by_role.items():
            kind = role_kind(role, "examples")
            for example in found:
                if example.question.kind != kind:
                    raise ValueError(
                        f"examples.{role} holds a {example.question.kind} question: role "
                        f"{role!r} takes {kind} questions"
                    )

    def for_role(self, role: str) -> tuple[SolvedExample, ...]:
        """The examples shown before a question of ``role`` (none when the role has none)."""
        return self.by_role.get(role, ())

    def for_question(self, question_id: str, question: Question) -> tuple[SolvedExample, ...]:
        """The examples shown before the question ``question_id`` (by its role)."""
        return self.for_role(role_of(question_id, question))

    def drawn(self, states: Iterable[JsonValue | str]) -> int:
        """How many of ``states`` belong to the split the examples were drawn from."""
        pool = self.pool
        return sum(1 for state in states if state_key(state) in pool) if pool else 0

    def to_json(self) -> dict[str, object]:
        """The set as its JSON file holds it (see the module's notes)."""
        source = self.source or DrawnFrom(dataset=self.drawn_from, split="", method=self.method)
        data: dict[str, object] = {
            "format": EXAMPLES_FORMAT,
            "version": EXAMPLES_VERSION,
            "drawn_from": source.to_json(),
            "pool": sorted(self.pool),
        }
        for role, found in self.by_role.items():
            data[role] = [example.to_json() for example in found]
        return data


def write_examples(examples: ExampleSet, path: str | os.PathLike[str]) -> Path:
    """Write ``examples`` as the JSON file an ``[entries.examples]`` table names with
    ``file = "..."`` (stable bytes: the same set writes the same file)."""
    target = Path(path)
    text = indented_json(examples.to_json(), indent=1)
    target.write_text(text + "\n", encoding="utf-8")
    return target


def _question_json(question: Question) -> dict[str, JsonValue]:
    encoded = _systemone.encode_request(DecisionRequest("-", {"q": question}), None)
    found = encoded["questions"]
    assert isinstance(found, dict)
    inner = found["q"]
    assert isinstance(inner, dict)
    return inner


def _table(raw: object, wrong: str) -> Mapping[str, object]:
    """``raw`` when it is a table (a mapping); else a ValueError saying ``wrong``."""
    if not isinstance(raw, Mapping):
        raise ValueError(wrong)
    return raw


def _question_from(raw: object, where: str) -> Question:
    raw = _table(
        raw,
        f"{where}.question must be a question as a System One request writes it "
        '({"type": "noul", "instructions": "..."})',
    )
    try:
        request, _ = _systemone.decode_request(
            {"model": "-", "state": "-", "questions": {"q": raw}}
        )
    except RequestValidationError as error:
        shown = "; ".join(msg for _, msg in error.problems)
        raise ValueError(f"{where}.question: {shown}") from None
    return request.questions["q"]


def _example_from(raw: object, where: str) -> SolvedExample:
    raw = _table(raw, f"{where} must be a table with state, question and answer")
    unknown = sorted(set(raw) - {"state", "question", "answer"})
    if unknown:
        raise ValueError(
            f"{where} has unknown key(s) {', '.join(unknown)}; it takes state, question, answer"
        )
    state, answer = raw.get("state"), raw.get("answer")
    if not isinstance(state, str):
        raise ValueError(f"{where}.state must be the state's text (a string)")
    if not isinstance(answer, str):
        raise ValueError(f"{where}.answer must be a string (an option key, yes/no or a level)")
    question = _question_from(raw.get("question"), where)
    problem = answer_problem(question, answer)
    if problem is not None:
        raise ValueError(f"{where}.answer: {problem}")
    return SolvedExample(state, question, answer)


def _int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"examples.drawn_from.{name} must be an integer >= 0")
    return value


def _drawn_from(raw: object) -> DrawnFrom:
    if isinstance(raw, str) and raw.strip():
        return DrawnFrom(dataset=raw, split="")
    raw = _table(
        raw,
        "examples.drawn_from is required: a table naming the labelled data and its split "
        '(drawn_from = { dataset = "decisions", split = "dev" })',
    )
    known = {field.name for field in attrs.fields(DrawnFrom)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(
            f"examples.drawn_from has unknown key(s) {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(known))}"
        )
    texts: dict[str, str] = {}
    for name in ("dataset", "split", "digest", "method"):
        value = raw.get(name, "" if name in ("digest", "split") else None)
        if name == "method" and value is None:
            value = "labeled"
        if not isinstance(value, str) or (name == "dataset" and not value.strip()):
            raise ValueError(f"examples.drawn_from.{name} must be a string")
        texts[name] = value
    return DrawnFrom(
        dataset=texts["dataset"],
        split=texts["split"],
        digest=texts["digest"],
        method=texts["method"],
        k=_int(raw.get("k", 0), "k"),
        seed=_int(raw.get("seed", 0), "seed"),
        decisions=_int(raw.get("decisions", 0), "decisions"),
    )


def examples_from_table(table: object, where: str) -> ExampleSet:
    """An ``[entries.examples]`` table (or the JSON file it names, already read) as an
    :class:`ExampleSet`; anything wrong is one :class:`CatalogError` naming ``where`` (the
    entry) and the fix."""
    if not isinstance(table, Mapping):
        raise CatalogError(f"{where}: examples must be a table ([entries.examples])")
    try:
        fmt, version = table.get("format", EXAMPLES_FORMAT), table.get("version", EXAMPLES_VERSION)
        if fmt != EXAMPLES_FORMAT or version != EXAMPLES_VERSION:
            raise ValueError(
                f"examples are format {fmt!r} version {version!r}; this harness reads "
                f"{EXAMPLES_FORMAT!r} version {EXAMPLES_VERSION}: fit them again"
            )
        source = _drawn_from(table.get("drawn_from"))
        pool = table.get("pool", [])
        if not isinstance(pool, list) or not all(isinstance(key, str) for key in pool):
            raise ValueError("examples.pool must be a list of state digests (strings)")
        by_role: dict[str, tuple[SolvedExample, ...]] = {}
        for key, value in table.items():
            if key in ("format", "version", "drawn_from", "pool"):
                continue
            if key not in CALIBRATION_ROLES:
                raise ValueError(
                    f"unknown examples key {key!r}; a role ({', '.join(CALIBRATION_ROLES)}), "
                    "drawn_from, pool or file"
                )
            if not isinstance(value, list):
                raise ValueError(f"examples.{key} must be a list of solved examples")
            by_role[key] = tuple(
                _example_from(raw, f"examples.{key}[{index}]") for index, raw in enumerate(value)
            )
        return ExampleSet(
            by_role,
            drawn_from=source.summary() if source.split else source.dataset,
            method=source.method,
            source=source,
            pool=frozenset(pool),
        )
    except ValueError as error:
        raise CatalogError(f"{where}: {error}") from None
