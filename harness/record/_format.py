"""The record file of a run: what ``harness demo`` and ``harness run`` write, ``harness record``
reads.

A record is one JSON object::

    {
      "format": "harness-record", "version": 1,
      "command": "demo", "thinker": "find_price_decisions",
      "objective": "...", "entry": {"id": "embedded", "provider": "embedded",
                                    "wire_model_id": "sparrow-decider"},
      "input": {"alias": "folder", "value": {...}},
      "artifacts": {"folder#1": "folder#1 (folder): ...", ...},
      "turns": [<DecisionTurn.to_json()>, ...],
      "answer": [{"ref": "statement#4", "alias": "statement", "probability": 0.71,
                  "value": {...}}, ...],
      "calls": [{"success": true, "latency": 0.002, "model": "...", "input_tokens": null,
                 "counted_input_tokens": 812, "cost": null, "reason": null,
                 "body": {...}?, "reply": {...}?}, ...],
      "timing": {"wall_seconds": 1.2, "model_seconds": 0.3},
      "threshold": 0.5,
      "settings": {"max_turns": 32, "selection_threshold": 0.5, "question_scheme": "lean"},
      "score": "found 4 of 7 planted decisions; ...",
      "failure": null
    }

``artifacts`` maps every ref of the run's world to its digest line (what the model read), so a
record reads on its own. ``calls`` are the decision calls in the order they were made; ``body``
(the request's wire body) is there only when asked for, and then ``reply`` too (what the model
answered, as a cassette holds it: see :mod:`harness.replay._cassette`), so ``harness replay``
can re-run the record offline; each call's tokens and latency are its
decision job's record (:class:`harness.jobs.ModelCall`). ``failure`` is ``null`` for a run that
answered, else ``"<error type>: <message>"``: a failed run's record holds the turns and calls
made before it failed, and no answer (a record without the key reads as ``null``).
``settings`` are the thinker's settings a replay needs to take the same turns (``max_turns``,
``selection_threshold``, ``question_scheme``; empty for a plain tool; ``harness replay`` builds
the thinker with them).
``score`` is the answer's score against an answer key as the command printed it (``harness
demo`` on its shipped folder; ``null`` otherwise).
``threshold`` is the thinker's selection threshold (``null`` for a plain tool) and a call's
``cost`` its price under the entry's prices (``null`` when unpriced); records written before
either existed read as ``null``.
:func:`load_record` checks every field and names the first thing wrong with its place in the
file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from harness.artifacts import (
    Artifact,
    ArtifactRegistry,
    TextFormatterRegistry,
    artifact_converter,
    digest_line,
)
from harness.errors import HarnessError
from harness.replay._internal import FileFormat

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.jobs import ModelCall
from harness.thinker import DecisionTurn

__all__ = [
    "RECORD_FILE",
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "RecordError",
    "RecordedAnswer",
    "RecordedCall",
    "RunRecord",
    "load_record",
]


class RecordError(HarnessError, ValueError):
    """A record file that cannot be read: names the file, the place in it and what is wrong."""


RECORD_FILE: Final = FileFormat(
    "record",
    RecordError,
    written_by="a file written by `harness demo --record` or `harness run --record`",
    rewrite="re-record the run with this harness",
)
RECORD_FORMAT: Final = RECORD_FILE.name
RECORD_VERSION: Final = RECORD_FILE.version

JsonObject = dict[str, object]


@attrs.frozen
class RecordedAnswer:
    """One item of the answer: its ref, alias, selection probability and value (its JSON)."""

    ref: str
    alias: str
    probability: float | None
    value: object  # the artifact's JSON form: any JSON value

    @classmethod
    def of(cls, ref: str, item: Artifact, selection: Mapping[str, float]) -> RecordedAnswer:
        """The answer item ``item`` under ``ref``, with its probability in the run's final
        ``selection`` (``None`` when the finish did not rank it)."""
        return cls(ref, type(item).alias, selection.get(ref), artifact_converter.unstructure(item))

    def to_json(self) -> JsonObject:
        """The item as a JSON object."""
        return {
            "ref": self.ref,
            "alias": self.alias,
            "probability": self.probability,
            "value": self.value,
        }


@attrs.frozen
class RecordedCall:
    """One decision call of the run, as its job's record saw it (plus the wire body if kept)."""

    success: bool
    latency: float
    model: str | None
    input_tokens: int | None
    counted_input_tokens: int | None
    reason: str | None = None
    body: object = None  # the request's wire body (JSON) when the run kept it
    reply: object = None  # what the model answered (JSON), kept with the body
    cost: float | None = None  # the billed tokens' price, None when the entry has no price
    reading: object = None  # how the answers were read (method, mass per question), when said

    @classmethod
    def of(cls, made: ModelCall, body: object = None, reply: object = None) -> RecordedCall:
        """The call as its job's record holds it, with the wire ``body`` and ``reply`` when
        kept."""
        return cls(
            success=made.success,
            latency=made.latency,
            model=made.model,
            input_tokens=made.input_tokens,
            counted_input_tokens=made.counted_input_tokens,
            reason=made.reason,
            body=body,
            reply=reply,
            cost=made.cost,
            reading=dict(made.reading) if made.reading is not None else None,
        )

    def to_json(self) -> JsonObject:
        """The call as a JSON object (``body`` only when kept)."""
        data: JsonObject = {
            "success": self.success,
            "latency": self.latency,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "counted_input_tokens": self.counted_input_tokens,
            "cost": self.cost,
            "reason": self.reason,
        }
        if self.reading is not None:
            data["reading"] = self.reading
        if self.body is not None:
            data["body"] = self.body
        if self.reply is not None:
            data["reply"] = self.reply
        return data


@attrs.frozen
class RunRecord:
    """A recorded run of a thinker (or any tool): see the module's notes for the file format."""

    command: str
    thinker: str
    objective: str | None
    entry: Mapping[str, str]
    input_alias: str
    input_value: object  # the input artifact's JSON form
    artifacts: Mapping[str, str]
    turns: tuple[DecisionTurn, ...]
    answer: tuple[RecordedAnswer, ...]
    calls: tuple[RecordedCall, ...]
    wall_seconds: float
    model_seconds: float
    failure: str | None = None  # "<error type>: <message>" when the run failed
    threshold: float | None = None  # the thinker's selection threshold (None: a plain tool)
    settings: Mapping[str, object] = attrs.field(factory=dict)  # max_turns, scheme, threshold
    score: str | None = None  # the answer's score against a key, as the command printed it

    @staticmethod
    def entry_of(entry: CatalogEntry) -> dict[str, str]:
        """``entry``: the run's catalog entry as a record names it."""
        return {"id": entry.id, "provider": entry.provider, "wire_model_id": entry.wire_model_id}

    @staticmethod
    def artifacts_of(world: ArtifactRegistry, formatters: TextFormatterRegistry) -> dict[str, str]:
        """``artifacts``: every ref of the run's ``world`` with its digest line (what the model
        read)."""
        return {ref: digest_line(ref, a, formatters) for ref, a in world.world()}

    def to_json(self) -> JsonObject:
        """The record as the JSON object written to a file."""
        return {
            **RECORD_FILE.header(),
            "command": self.command,
            "thinker": self.thinker,
            "objective": self.objective,
            "entry": dict(self.entry),
            "input": {"alias": self.input_alias, "value": self.input_value},
            "artifacts": dict(self.artifacts),
            "turns": [turn.to_json() for turn in self.turns],
            "answer": [item.to_json() for item in self.answer],
            "calls": [call.to_json() for call in self.calls],
            "timing": {"wall_seconds": self.wall_seconds, "model_seconds": self.model_seconds},
            "threshold": self.threshold,
            "settings": dict(self.settings),
            "score": self.score,
            "failure": self.failure,
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the record to ``path`` as indented UTF-8 JSON."""
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False, allow_nan=False)
        with open(path, "w", encoding="utf-8") as file:
            file.write(text + "\n")


# -- reading ---------------------------------------------------------------------------------


class _Reader:
    """Reads fields of one JSON object, naming the place of any problem."""

    def __init__(self, source: str, where: str, data: object) -> None:
        if not isinstance(data, Mapping):
            raise RecordError(f"{source}: {where} must be a JSON object")
        self.source = source
        self.where = where
        self.data: Mapping[str, object] = data

    def _fail(self, key: str, rule: str) -> RecordError:
        return RecordError(f"{self.source}: {self.where}.{key} {rule}")

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> object:
        if key not in self.data:
            raise self._fail(key, "is missing")
        return self.data[key]

    def text(self, key: str, *, optional: bool = False) -> str | None:
        value = self.data.get(key) if optional else self.raw(key)
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self._fail(key, "must be a string")
        return value

    def number(self, key: str, *, optional: bool = False) -> float | None:
        value = self.data.get(key) if optional else self.raw(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._fail(key, "must be a number")
        return float(value)

    def integer(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(key, "must be an integer or null")
        return value

    def items(self, key: str) -> Sequence[object]:
        value = self.raw(key)
        if not isinstance(value, list):
            raise self._fail(key, "must be a JSON array")
        return value

    def strings(self, key: str) -> dict[str, str]:
        value = self.raw(key)
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            raise self._fail(key, "must be an object of strings")
        return {str(k): str(v) for k, v in value.items()}

    def child(self, key: str) -> _Reader:
        return _Reader(self.source, f"{self.where}.{key}", self.raw(key))


def _read_answer(source: str, index: int, data: object) -> RecordedAnswer:
    reader = _Reader(source, f"answer[{index}]", data)
    probability = reader.number("probability", optional=True)
    if probability is not None and not 0.0 <= probability <= 1.0:
        raise RecordError(f"{source}: answer[{index}].probability must be in [0, 1]")
    return RecordedAnswer(
        ref=reader.text("ref") or "",
        alias=reader.text("alias") or "",
        probability=probability,
        value=reader.raw("value"),
    )


def _unit(reader: _Reader, key: str, *, minimum: float, maximum: float | None) -> float | None:
    """An optional number in [minimum, maximum] (``None`` when absent or null)."""
    value = reader.number(key, optional=True)
    if value is not None and (value < minimum or (maximum is not None and value > maximum)):
        bound = f"[{minimum:g}, {maximum:g}]" if maximum is not None else f">= {minimum:g}"
        raise reader._fail(key, f"must be a number {bound} or null")
    return value


def _read_call(source: str, index: int, data: object) -> RecordedCall:
    reader = _Reader(source, f"calls[{index}]", data)
    success = reader.raw("success")
    if not isinstance(success, bool):
        raise RecordError(f"{source}: calls[{index}].success must be true or false")
    return RecordedCall(
        success=success,
        latency=reader.number("latency") or 0.0,
        model=reader.text("model", optional=True),
        input_tokens=reader.integer("input_tokens"),
        counted_input_tokens=reader.integer("counted_input_tokens"),
        reason=reader.text("reason", optional=True),
        body=reader.data.get("body"),
        reply=reader.data.get("reply"),
        cost=_unit(reader, "cost", minimum=0.0, maximum=None),
        reading=reader.data.get("reading"),
    )


def _read_turn(source: str, index: int, data: object) -> DecisionTurn:
    if not isinstance(data, Mapping):
        raise RecordError(f"{source}: turns[{index}] must be a JSON object")
    try:
        return DecisionTurn.from_json(data)
    except (ValueError, TypeError) as error:
        raise RecordError(f"{source}: turns[{index}]: {error}") from None


def record_from_json(data: object, source: str = "<record>") -> RunRecord:
    """Build a :class:`RunRecord` from its JSON object, checking every field."""
    top = _Reader(source, "record", data)
    RECORD_FILE.check_header(source, top.data)
    given = top.child("input")
    timing = top.child("timing")
    return RunRecord(
        command=top.text("command") or "",
        thinker=top.text("thinker") or "",
        objective=top.text("objective", optional=True),
        entry=top.strings("entry"),
        input_alias=given.text("alias") or "",
        input_value=given.raw("value"),
        artifacts=top.strings("artifacts"),
        turns=tuple(_read_turn(source, i, t) for i, t in enumerate(top.items("turns"))),
        answer=tuple(_read_answer(source, i, a) for i, a in enumerate(top.items("answer"))),
        calls=tuple(_read_call(source, i, c) for i, c in enumerate(top.items("calls"))),
        wall_seconds=timing.number("wall_seconds") or 0.0,
        model_seconds=timing.number("model_seconds") or 0.0,
        failure=top.text("failure", optional=True),
        threshold=_unit(top, "threshold", minimum=0.0, maximum=1.0),
        settings=_settings(top),
        score=top.text("score", optional=True),
    )


def _settings(top: _Reader) -> dict[str, object]:
    """The record's thinker settings (absent in older records: empty)."""
    if not top.has("settings") or top.data["settings"] is None:
        return {}
    found = top.child("settings")
    return {
        "max_turns": found.integer("max_turns"),
        "selection_threshold": _unit(found, "selection_threshold", minimum=0.0, maximum=1.0),
        "question_scheme": found.text("question_scheme", optional=True),
    }


def load_record(path: str | os.PathLike[str]) -> RunRecord:
    """Read and check the record file at ``path``; :class:`RecordError` names what is wrong."""
    return record_from_json(RECORD_FILE.read_json(path, label="record file"), os.fspath(path))
