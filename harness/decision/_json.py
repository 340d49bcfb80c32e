"""JSON values: the type of a decision's state and of wire bodies, checked and encoded."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["JsonValue", "compact_json", "json_kind", "plain_json"]

JsonValue: TypeAlias = (
    str | int | float | bool | Sequence["JsonValue"] | Mapping[str, "JsonValue"] | None
)
"""A JSON value: a string, number, boolean or null, or an array or object of JSON values.

Arrays and objects are read as any sequence and mapping (so a ``tuple`` or a read-only mapping
is one); :func:`plain_json` turns them into ``list`` and ``dict``.
"""

_MAX_DEPTH = 200


def plain_json(value: object, what: str) -> JsonValue:
    """``value`` as a plain JSON value (lists and dicts), or ``ValueError`` saying why not.

    The message names ``what`` and the kind of thing that is in the way (a type name, a
    non-finite number, a non-string key, a cycle), never the value itself: a decision's state
    must never appear in an error message.
    """
    return _plain(value, what, 0, set())


def _plain(value: object, what: str, depth: int, path: set[int]) -> JsonValue:
    if depth > _MAX_DEPTH:
        raise ValueError(f"{what} is nested more than {_MAX_DEPTH} levels deep; flatten it")
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(
                f"{what} holds a non-finite number (NaN or infinity), which JSON cannot carry; "
                "use null or a string"
            )
        return value
    if isinstance(value, (Mapping, list, tuple)):
        if id(value) in path:
            raise ValueError(f"{what} holds a reference cycle, which JSON cannot carry")
        path.add(id(value))
        try:
            if isinstance(value, Mapping):
                out: dict[str, JsonValue] = {}
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise ValueError(
                            f"{what} holds an object key of type {type(key).__name__}; "
                            "JSON object keys are strings"
                        )
                    out[key] = _plain(item, what, depth + 1, path)
                return out
            return [_plain(item, what, depth + 1, path) for item in value]
        finally:
            path.discard(id(value))
    raise ValueError(
        f"{what} holds a {type(value).__name__}, which is not a JSON value: use str, int, "
        "float, bool, None, list or dict (with str keys)"
    )


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
"""One encoder for every body: ``json.dumps`` with these options makes a new one per call."""


def compact_json(value: JsonValue) -> str:
    """``value`` as compact, deterministic JSON text: no spaces, non-ASCII kept, keys in order."""
    return _COMPACT.encode(value)


def json_kind(value: object) -> str:
    """The JSON kind of a decoded value, for messages: "an object", "a string", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return f"a {type(value).__name__}"
