"""JSON values: the type of a decision's state and of wire bodies, checked, encoded and read.

Every body harness writes or reads goes through orjson, with the bytes the standard library's
``json`` made before: :func:`json_bytes` and :func:`indented_json` write what ``json.dumps``
writes with their options, :func:`load_json` reads what ``json.loads`` reads, to the same values
(``tests/decision/test_json_bytes.py`` holds each to the standard library's on drawn values).
orjson differs from ``json`` in a few places, each found and kept as ``json`` had it by giving
that value to ``json`` itself:

* it refuses an integer beyond 64 bits (writing), and reads one as a float: a body with a run of
  19 digits or more is read by ``json`` (the values never change);
* it writes a float in [1e-9, 1e-4) its own way (``1e-5`` as ``0.00001``, ``1e-7`` as ``1e-7``
  where ``repr`` gives ``1e-05`` and ``1e-07``): output where one may be is written by ``json``;
* it writes NaN and infinities as ``null`` (``json`` here refuses them), unless the caller says
  the value was checked finite (:func:`plain_json`);
* it refuses what ``json`` reads as an extension (``NaN``, ``Infinity``, lone surrogates, a byte
  order mark, UTF-16 and UTF-32 bodies) and object keys that are not strings (which ``json``
  writes as strings): those go to ``json`` too, which reads or refuses them as before.
"""

from __future__ import annotations

# the standard library's encoder and decoder: the exact fallback where orjson's bytes or values
# would differ from theirs (the cases above); orjson does everything else
import json
import math
from collections.abc import Mapping, Sequence
from typing import TypeAlias

import orjson

__all__ = [
    "JsonValue",
    "compact_json",
    "indented_json",
    "json_bytes",
    "json_kind",
    "load_json",
    "plain_json",
]

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
"""The fallback encoder of :func:`json_bytes` (``json.dumps`` makes a new one per call)."""
_COMPACT_NAN = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""The same, writing NaN and infinities as ``json`` does by default (``NaN``, ``Infinity``)."""

_ORJSON_REFUSED = (orjson.JSONEncodeError, TypeError, ValueError, OverflowError)
"""What orjson raises for a value it will not write as ``json`` does (a big integer, a key that
is not a string, nesting past its limit, a lone surrogate, a type neither writes)."""

_NUMBERS = bytes(
    ord("0") if 0x30 <= byte <= 0x39 else ord(",") if chr(byte) in ",}]\n" else byte
    for byte in range(256)
)
"""Every digit as ``0`` and every byte that may end a number as ``,``: a run of digits and a
number's end are then one pattern each (a bytes search in C, not a regular expression)."""

_FLOAT_MARKS = bytes(
    ord("d") if 0x31 <= byte <= 0x39 else ord(",") if chr(byte) in ",}]\n" else byte
    for byte in range(256)
)
"""The digits 1-9 as ``d`` (``0`` kept) and every byte that may end a number as ``,``."""

_LONG_DIGITS = b"0" * 19
"""19 digits in a row: an integer beyond 64 bits needs them (2**63 has 19)."""


def _orjson_differs(out: bytes) -> bool:
    """Whether orjson's ``out`` may hold a float it writes otherwise than ``repr``: one in
    [1e-5, 1e-4) in fixed notation (``0.0000``) or one in [1e-9, 1e-5) with a one-digit
    exponent (``e-7``, where ``repr`` gives ``e-07``). Strings holding these patterns give a
    false alarm, which costs only the fallback. One copy of the bytes with the digits 1-9 made
    alike (``0`` kept) and a number's ends made alike, then two searches: no search for a short
    pattern of common letters (``e-`` alone takes ten times as long over English text)."""
    marked = out.translate(_FLOAT_MARKS)
    return b"0.0000" in marked or b"e-d," in marked or marked.endswith(b"e-d")


def _orjson(value: object, option: int, finite: bool) -> bytes | None:
    """orjson's bytes for ``value`` when they are ``json``'s, else None (use ``json``)."""
    try:
        out = orjson.dumps(value, option=option)
    except _ORJSON_REFUSED:
        return None
    if _orjson_differs(out) or (not finite and b"null" in out):
        # a NaN or an infinity comes out as null (``json`` refuses them); a real null costs
        # only the fallback
        return None
    return out


def json_bytes(value: object, *, finite: bool = False, allow_nan: bool = False) -> bytes:
    """``value`` as compact, deterministic UTF-8 JSON: no spaces, non-ASCII kept, keys in order;
    byte for byte ``json.dumps(value, separators=(",", ":"), ensure_ascii=False,
    allow_nan=False).encode("utf-8")``, and the same errors (``ValueError`` for a non-finite
    number, ``TypeError`` for what is not JSON, ``UnicodeEncodeError`` for a lone surrogate).
    ``finite``: the caller has checked that ``value`` holds no NaN or infinity
    (:func:`plain_json` has), which saves a search of the output. ``allow_nan``: write them as
    ``json.dumps`` does by default (``NaN``, ``Infinity``) instead of refusing them."""
    out = _orjson(value, 0, finite)
    if out is None:
        return (_COMPACT_NAN if allow_nan else _COMPACT).encode(value).encode("utf-8")
    return out


def compact_json(value: object, *, finite: bool = False, allow_nan: bool = False) -> str:
    """:func:`json_bytes` as text (a lone surrogate kept, as ``json.dumps`` keeps it)."""
    out = _orjson(value, 0, finite)
    if out is None:
        return (_COMPACT_NAN if allow_nan else _COMPACT).encode(value)
    return out.decode("utf-8")


_INDENT_OPTIONS = {
    (2, False): orjson.OPT_INDENT_2,
    (2, True): orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS,
    (None, True): orjson.OPT_SORT_KEYS,
}


def indented_json(value: object, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False,
    allow_nan=False)`` (``indent=None``: compact), character for character; orjson writes it
    when it can (an indent of 2 or none), ``json`` otherwise."""
    option = _INDENT_OPTIONS.get((indent, sort_keys), 0 if indent is None else None)
    out = None if option is None else _orjson(value, option, False)
    if out is None:
        separators = (",", ":") if indent is None else None
        return json.dumps(
            value,
            indent=indent,
            sort_keys=sort_keys,
            ensure_ascii=False,
            allow_nan=False,
            separators=separators,
        )
    return out.decode("utf-8")


def load_json(data: bytes | bytearray | str) -> object:
    """``json.loads(data)``: the same values, the same refusals (``ValueError``, or
    ``RecursionError`` for nesting past the interpreter's limit), read by orjson unless the
    body needs ``json`` (see the module's notes)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)  # NaN or Infinity, a lone surrogate, a BOM, UTF-16 or -32
    digits = (data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data).translate(
        _NUMBERS
    )
    if _LONG_DIGITS in digits:
        return json.loads(data)  # perhaps an integer beyond 64 bits, which orjson makes a float
    return value


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
