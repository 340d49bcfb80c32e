"""Artifacts as JSON: the cattrs converter, ``to_json`` and ``from_json``.

Every artifact unstructures by its *runtime* class, whatever a field declares (a field typed
``Artifact`` holding a ``Note`` unstructures as a note), keeping attrs field order. A
``ListArtifact`` reads ``{"iterand_type": <alias>, "iterands": [...], "instruction": ...}``.

A few common value types get a JSON form both ways: ``datetime``/``date``/``time`` as ISO 8601,
``Path``, ``UUID`` and ``Decimal`` as strings, ``bytes`` as base64, sets as sorted lists (so a
run's record never depends on the hash seed). Anything else with no JSON form is refused by
``to_json`` naming the artifact class and the fix.

A key of the JSON object that is not a field of the class is refused by name
(:class:`UnknownFieldError`: ``unknown field 'age' for Application: expected one of candidate,
text; remove it (or pass allow_extra=True)``), so a typo in an optional field never vanishes;
``from_json(..., allow_extra=True)`` drops such keys instead (a command's ``--allow-extra``).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json  # the stdlib: only for its JSONDecodeError, what load_json raises for a body it refuses
import uuid
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any, TypeVar, cast

import attrs
import cattrs
from cattrs.gen import make_dict_unstructure_fn

from harness.artifacts._artifact import Artifact, ListArtifact
from harness.decision._internal import compact_json, load_json
from harness.errors import HarnessError

__all__ = [
    "UnknownFieldError",
    "artifact_converter",
    "from_json",
    "refuse_unknown_fields",
    "to_json",
    "with_article",
]

A = TypeVar("A", bound=Artifact)

# JSON never needs these escaped, but str.splitlines() breaks on them: escaping keeps every
# JSON text one line (and safe to embed in JavaScript).
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_LINE_BREAKS_TABLE = str.maketrans(_LINE_BREAKS)

_Unstructure = Callable[[Any], object]  # cattrs hooks take the value of the type they serve


def with_article(noun: str) -> str:
    """``noun`` after its indefinite article: ``"an Application"``, ``"a Note"`` (by its first
    letter: a vowel takes ``an``)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


class UnknownFieldError(HarnessError, ValueError):
    """Keys of an artifact's JSON object that are not fields of its class: names each, the
    fields expected, and the opt-out (:meth:`line` words it for a command)."""

    def __init__(
        self,
        artifact: str,
        unknown: tuple[str, ...],
        expected: tuple[str, ...],
        opt_out: str = "pass allow_extra=True",
    ) -> None:
        self.artifact = artifact
        self.unknown = unknown
        self.expected = expected
        super().__init__(self.line(opt_out))

    def line(self, opt_out: str) -> str:
        """The one line, with ``opt_out`` (``"pass --allow-extra"``) as the other fix."""
        names = ", ".join(repr(name) for name in self.unknown)
        many = len(self.unknown) != 1
        return (
            f"unknown field{'s' if many else ''} {names} for {self.artifact}: expected one of "
            f"{', '.join(self.expected) or '(no fields)'}; remove {'them' if many else 'it'} "
            f"(or {opt_out})"
        )


def _fields_of(tp: type) -> tuple[str, ...]:
    """The keys an attrs class reads from JSON: its fields built by ``__init__``."""
    origin = getattr(tp, "__origin__", tp)
    if not attrs.has(origin):
        return ()
    return tuple(field.name for field in attrs.fields(origin) if field.init)


def refuse_unknown_fields(
    tp: type, value: Mapping[str, object], *, opt_out: str = "pass allow_extra=True"
) -> None:
    """Raise :class:`UnknownFieldError` when ``value`` (the JSON object of a ``tp``) has a key
    that is not a field of ``tp`` (sorted by name); ``opt_out`` is the fix besides removing
    it. A class that is not an attrs class is not checked."""
    expected = _fields_of(tp)
    if not expected and not attrs.has(getattr(tp, "__origin__", tp)):
        return
    unknown = tuple(sorted(str(key) for key in value if key not in expected))
    if unknown:
        name = getattr(getattr(tp, "__origin__", tp), "__qualname__", repr(tp))
        raise UnknownFieldError(name, unknown, expected, opt_out)


def _type_alias(tp: object) -> str:
    """The alias of an iterand type (a class or a parameterised alias such as ListArtifact[X])."""
    origin = getattr(tp, "__origin__", tp)
    if isinstance(origin, type) and issubclass(origin, Artifact):
        return origin.alias
    raise TypeError(f"a list's iterand type must be an Artifact class, not {tp!r}")


def _sorted_items(values: frozenset[object] | set[object]) -> list[object]:
    try:
        return sorted(values)  # type: ignore[type-var]  # mixed sets fall back below
    except TypeError:
        return sorted(values, key=repr)


def _build_converter() -> cattrs.Converter:
    converter = cattrs.Converter()
    by_class: dict[type, _Unstructure] = {}

    def unstructure_list(artifact: Artifact) -> dict[str, object]:
        value = cast("ListArtifact[Artifact]", artifact)  # by_class routes only lists here
        return {
            "iterand_type": _type_alias(value.iterand_type),
            "iterands": [unstructure_artifact(item) for item in value.iterands],
            "instruction": value.instruction,
        }

    def unstructure_artifact(value: Artifact) -> object:
        cls = type(value)
        hook = by_class.get(cls)
        if hook is None:
            if issubclass(cls, ListArtifact):
                hook = unstructure_list
            elif attrs.has(cls):
                hook = make_dict_unstructure_fn(cls, converter)
            else:
                raise TypeError(
                    f"{cls.__qualname__} is not an attrs class, so it has no JSON form: "
                    "declare it with @attrs.frozen, or register an unstructure hook for it on "
                    "harness.artifacts.artifact_converter"
                )
            by_class[cls] = hook
        return hook(value)

    def is_artifact_class(tp: object) -> bool:
        origin = getattr(tp, "__origin__", tp)
        return isinstance(origin, type) and issubclass(origin, Artifact)

    def is_list_class(tp: object) -> bool:
        origin = getattr(tp, "__origin__", tp)
        return isinstance(origin, type) and issubclass(origin, ListArtifact)

    converter.register_unstructure_hook_func(is_artifact_class, unstructure_artifact)

    def structure_list(value: object, tp: object) -> ListArtifact[Artifact]:
        raise TypeError(
            "a ListArtifact is not built from JSON (its iterand type is a class): build it with "
            "ListArtifact.of(ItemType, items)"
        )

    converter.register_structure_hook_func(is_list_class, structure_list)

    def iso(value: datetime.date | datetime.time) -> str:
        return value.isoformat()

    for moment in (datetime.datetime, datetime.date, datetime.time):
        converter.register_unstructure_hook(moment, iso)
    converter.register_structure_hook(
        datetime.datetime, lambda v, _: datetime.datetime.fromisoformat(v)
    )
    converter.register_structure_hook(datetime.date, lambda v, _: datetime.date.fromisoformat(v))
    converter.register_structure_hook(datetime.time, lambda v, _: datetime.time.fromisoformat(v))
    converter.register_unstructure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, PurePath), str
    )
    converter.register_structure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, PurePath), lambda v, tp: tp(v)
    )
    converter.register_unstructure_hook(uuid.UUID, str)
    converter.register_structure_hook(uuid.UUID, lambda v, _: uuid.UUID(v))
    converter.register_unstructure_hook(decimal.Decimal, str)
    converter.register_structure_hook(decimal.Decimal, lambda v, _: decimal.Decimal(v))
    converter.register_unstructure_hook(bytes, lambda v: base64.b64encode(v).decode("ascii"))
    converter.register_structure_hook(bytes, lambda v, _: base64.b64decode(v, validate=True))

    # JSON in is taken as written: no silent coercion ("false" is not True, 3.9 is not 3).
    def strict(kind: type, accepts: tuple[type, ...], words: str) -> None:
        def structure(value: object, _: object) -> object:
            if isinstance(value, bool) and kind is not bool:
                raise ValueError(f"expected {words}, got a boolean")
            if not isinstance(value, accepts):
                raise ValueError(f"expected {words}, got {type(value).__name__}")
            return float(value) if isinstance(value, int | float) and kind is float else value

        converter.register_structure_hook(kind, structure)

    strict(str, (str,), "a string")
    strict(int, (int,), "an integer")
    strict(float, (int, float), "a number")
    strict(bool, (bool,), "true or false")

    def unstructure_set(value: frozenset[object] | set[object]) -> list[object]:
        return [converter.unstructure(item) for item in _sorted_items(value)]

    converter.register_unstructure_hook_func(
        lambda tp: getattr(tp, "__origin__", tp) in (set, frozenset), unstructure_set
    )
    return converter


artifact_converter: cattrs.Converter = _build_converter()
"""The converter of artifacts to and from JSON-compatible values (register your own hooks on it
for field types it does not know)."""


_JSON_KINDS: dict[type, str] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}
"""A JSON value's kind by its Python type, as a message names it."""


def to_json(artifact: Artifact) -> str:
    """The compact JSON of ``artifact``, fields in declaration order, on one line.

    Non-ASCII text is kept as is (only U+0085, U+2028 and U+2029 are escaped, so the text is
    one line by ``str.splitlines``).
    """
    if not isinstance(artifact, Artifact):
        raise TypeError(
            f"to_json takes an Artifact, not {with_article(type(artifact).__qualname__)}"
        )
    value = artifact_converter.unstructure(artifact)
    try:
        text = compact_json(value)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{with_article(type(artifact).__qualname__)} artifact has no JSON form ({error}): "
            "register an "
            "unstructure hook for the field's type on harness.artifacts.artifact_converter, or "
            "a text formatter for its digest"
        ) from None
    return text.translate(_LINE_BREAKS_TABLE)


def from_json(tp: type[A], text: str | bytes, *, allow_extra: bool = False) -> A:
    """Build an artifact of class ``tp`` from its JSON object (not for ``ListArtifact``).

    Raises ``ValueError`` naming the class and every field that is wrong (never quoting the
    text): a key that is not a field is an :class:`UnknownFieldError` unless ``allow_extra``
    (then it is dropped); ``TypeError`` when ``tp`` is not an artifact class or is a list.
    """
    origin = getattr(tp, "__origin__", tp)
    if not (isinstance(origin, type) and issubclass(origin, Artifact)):
        raise TypeError(f"from_json builds artifacts, and {tp!r} is not an Artifact class")
    if issubclass(origin, ListArtifact):
        raise TypeError(
            "a ListArtifact is not built from JSON: build the items with from_json(ItemType, "
            "...) and the list with ListArtifact.of(ItemType, items)"
        )
    try:
        value = load_json(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"the input for {with_article(origin.__qualname__)} is not JSON (line "
            f"{error.lineno}, column {error.colno}): give a JSON object of its fields"
        ) from None
    except UnicodeDecodeError:
        raise ValueError(
            f"the input for {with_article(origin.__qualname__)} is not UTF-8 text: give a JSON "
            "object of its fields in UTF-8"
        ) from None
    if not isinstance(value, Mapping):
        raise ValueError(
            f"the input for {with_article(origin.__qualname__)} is a JSON "
            f"{_JSON_KINDS.get(type(value), type(value).__name__)}, not an object: give a JSON "
            "object of its fields"
        )
    if not allow_extra:
        refuse_unknown_fields(origin, value)
    try:
        return artifact_converter.structure(value, tp)
    except cattrs.BaseValidationError as error:
        problems = "; ".join(cattrs.transform_error(error))
        raise ValueError(
            f"the input is not a valid {origin.__qualname__}: {problems}: fix those fields"
        ) from None
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"the input is not a valid {origin.__qualname__} ({type(error).__name__}): give "
            "every required field with a value of its declared type"
        ) from None
