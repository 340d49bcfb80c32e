"""Reading a record file back: :func:`load_record` and :func:`record_from_json` check every field
of the format (:mod:`harness.record._format`) and name the first thing wrong with its place in
the file; fields added since the first version read as ``null`` when absent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from harness.record._format import (
    RECORD_FILE,
    RecordedAnswer,
    RecordedCall,
    RecordError,
    RunRecord,
)
from harness.thinker import DecisionTurn

__all__ = ["load_record", "record_from_json"]


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
        reading=_reading(reader),
    )


def _reading(reader: _Reader) -> dict[str, object] | None:
    """A call's ``reading`` (absent in older records, and for providers that answer directly:
    ``None``)."""
    value = reader.data.get("reading")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise reader._fail("reading", "must be a JSON object or null")
    return {str(key): item for key, item in value.items()}


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
