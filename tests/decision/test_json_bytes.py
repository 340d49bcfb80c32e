"""harness's JSON goes through orjson and keeps the standard library's bytes and values.

Every encoder is held to ``json.dumps`` with its options byte for byte, and the reader to
``json.loads`` value for value and refusal for refusal, on drawn values: floats anywhere on the
line (orjson writes those in [1e-9, 1e-4) its own way), any unicode (lone surrogates included),
nested maps, integers beyond 64 bits (which orjson refuses to write and reads as floats), keys
that are not strings, NaN and infinities.
"""

from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.decision._json import compact_json, indented_json, json_bytes, load_json

floats_anywhere = st.floats() | st.integers(0, 2**64 - 1).map(
    lambda bits: struct.unpack("<d", struct.pack("<Q", bits))[0]
)
"""Floats by hypothesis (which favours edge cases) and by raw bit pattern (every exponent)."""

small_floats = st.floats(min_value=1e-10, max_value=2e-4) | st.floats(
    min_value=-2e-4, max_value=-1e-10
)
"""Where orjson's notation differs from ``repr``'s."""

keys = st.text(max_size=6) | st.sampled_from(["a", "é", "\u2028", "\x00", "\ud800", "0e-05"])
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**62, max_value=2**70)
    | st.integers(min_value=-(2**70), max_value=-(2**62))
    | floats_anywhere
    | small_floats
    | st.text(max_size=12)
    | st.sampled_from(["e-7,", "0.00001", "1" * 20, "\ud800x", "\U0001f600", "\x1f\x7f"])
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(keys, inner, max_size=4)
        | st.dictionaries(st.integers() | st.booleans() | st.none(), inner, max_size=2)
    ),
    max_leaves=16,
)


def stdlib(value: object) -> str:
    """What harness wrote before: ``json.dumps`` compact, non-ASCII kept, no NaN."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def outcome(make: object) -> tuple[str, object]:
    """What calling ``make`` gives: ("ok", value), or ("error", the exception's type)."""
    assert callable(make)
    try:
        return "ok", make()
    except (ValueError, TypeError, RecursionError) as error:  # UnicodeError is a ValueError
        return "error", type(error)


def same_value(a: object, b: object) -> bool:
    """Equal JSON values, type for type (1 is not 1.0), NaN equal to NaN, -0.0 not 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=600)
@given(values)
@example(1e-05)
@example([1e-7, {"a": 1.5e-9}])
@example(2**64)
@example({"x": float("nan")})
@example({1: "one"})
@example("\ud800")
def test_json_bytes_are_the_standard_librarys(value: object) -> None:
    expected = outcome(lambda: stdlib(value).encode("utf-8"))
    assert outcome(lambda: json_bytes(value)) == expected
    if expected[0] == "ok" or expected[1] is UnicodeEncodeError:
        assert outcome(lambda: compact_json(value)) == outcome(lambda: stdlib(value))
    with_nan = outcome(
        lambda: json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    )
    assert outcome(lambda: json_bytes(value, allow_nan=True)) == with_nan


@settings(max_examples=300)
@given(values)
def test_finite_json_bytes_are_the_standard_librarys_on_finite_values(value: object) -> None:
    try:
        expected = stdlib(value).encode("utf-8")
    except (ValueError, TypeError):
        return  # not a finite JSON value: the caller's promise does not hold
    assert json_bytes(value, finite=True) == expected


@settings(max_examples=300)
@given(values, st.sampled_from([None, 1, 2, 4]), st.booleans())
def test_indented_json_is_the_standard_librarys(
    value: object, indent: int | None, sort_keys: bool
) -> None:
    separators = (",", ":") if indent is None else None
    expected = outcome(
        lambda: json.dumps(
            value,
            indent=indent,
            sort_keys=sort_keys,
            separators=separators,
            ensure_ascii=False,
            allow_nan=False,
        )
    )
    got = outcome(lambda: indented_json(value, indent=indent, sort_keys=sort_keys))
    if expected[0] == "error":  # sort_keys over mixed key types: both refuse, maybe otherwise
        assert got[0] == "error"
    else:
        assert got == expected


texts_to_read = st.one_of(
    values.map(lambda v: json.dumps(v, ensure_ascii=False, default=str, allow_nan=True)),
    st.text(alphabet='[]{}",:0123456789.eE+-truefalsn \\uNaIfiy', max_size=40),
    floats_anywhere.map(repr),
    st.from_regex(r"-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,30})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
)


def _read(data: bytes | str) -> tuple[str, object]:
    return outcome(lambda: json.loads(data))


@settings(max_examples=800)
@given(texts_to_read, st.sampled_from(["str", "utf-8", "utf-16", "utf-8-sig", "surrogates"]))
@example("[NaN, Infinity, -Infinity]", "utf-8")
@example("123456789012345678901234567890", "utf-8")
@example('"\\ud800"', "utf-8")
@example('{"a": 1, "a": 2}', "utf-8")
@example("1e400", "utf-8")
def test_load_json_reads_what_the_standard_library_reads(text: str, encoding: str) -> None:
    data: bytes | str
    if encoding == "str":
        data = text
    elif encoding == "surrogates":
        data = text.encode("utf-8", "surrogatepass")
    else:
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError:
            data = text.encode("utf-8", "surrogatepass")
    expected = _read(data)
    got = outcome(lambda: load_json(data))
    if expected[0] == "error":
        assert got == expected
    else:
        assert got[0] == "ok"
        assert same_value(got[1], expected[1]), (got, expected)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (1e-05, b"1e-05"),  # orjson alone: 0.00001
        (1.5e-07, b"1.5e-07"),  # orjson alone: 1.5e-7
        (0.0001, b"0.0001"),
        (1e16, b"1e+16"),
        (2**64, b"18446744073709551616"),  # orjson alone: refused
        ({1: 2}, b'{"1":2}'),  # orjson alone: refused
    ],
)
def test_the_places_orjson_differs_are_written_as_before(value: object, written: bytes) -> None:
    assert json_bytes(value) == written


def test_non_finite_numbers_are_refused_as_before() -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        json_bytes({"p": float("nan")})
    with pytest.raises(ValueError, match="not JSON compliant"):
        indented_json([float("inf")])


def test_big_integers_are_read_as_integers() -> None:
    assert load_json(b'{"n": 123456789012345678901234567890}') == {
        "n": 123456789012345678901234567890
    }
    assert load_json("[18446744073709551616]") == [2**64]
