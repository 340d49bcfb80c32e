"""Labelled cases for a thinker: ``Dataset[I, O]`` of ``Case[I, O]``, loaded from JSONL or YAML.

A case is an input of the thinker and the items its answer should hold. The dataset says how an
answered item is compared to an expected one (``key``; by default the items themselves, equal
when their attrs fields are equal). A file holds one case a line (JSONL; a file holding one JSON
array is refused, saying so) or a list of cases (YAML)::

    {"name": "refund-1", "input": {"text": "..."}, "expected": [{"label": "refund"}],
     "tags": ["billing"]}

Every line that is not a case is named by its number and field; nothing is dropped silently: a
key that is no field of the case, its input or an item is refused by name unless
``allow_extra=True``.
"""

from __future__ import annotations

import hashlib
import json  # the stdlib: sorted compact keys and case lines that keep NaN, as json writes them
import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

import attrs
import cattrs

from harness.artifacts import Artifact, artifact_converter, to_json
from harness.evals._rows import (
    OPT_OUT,
    DatasetError,
    _RowError,
    read_entries,
    row_head,
    row_tags,
    unknown_fields,
)

__all__ = ["Case", "Dataset", "DatasetError", "ItemKey", "key_text", "structure_item"]

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the seed's name for the input type
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type

R = TypeVar("R")
ItemKey = Callable[[O], Hashable]
"""How a dataset compares items: two items are the same answer when their keys are equal."""


def tags_of(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen
class Case(Generic[I, O]):
    """One labelled input: ``name`` (unique in its dataset), the thinker's ``input``, the items
    the answer should hold (``expected``, possibly none) and free ``tags``."""

    name: str
    input: I
    expected: tuple[O, ...] = attrs.field(converter=tuple)
    tags: tuple[str, ...] = attrs.field(default=(), converter=tags_of)


def key_text(key: Hashable) -> str:
    """A key as stable text (what reports compare and show): an artifact's compact JSON, a JSON
    value's sorted JSON, else its ``repr``."""
    if isinstance(key, Artifact):
        return to_json(key)
    try:
        return json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(key)


class Dataset(Generic[I, O]):
    """Cases of a thinker taking ``I`` and answering items of ``O``, compared by ``key``.

    >>> # Dataset.load("cases.jsonl", Note, Verdict, key=lambda v: v.label)
    """

    def __init__(
        self,
        cases: Iterable[Case[I, O]],
        *,
        input_type: type[I],
        output_type: type[O],
        key: ItemKey[O] | None = None,
        name: str = "dataset",
    ) -> None:
        self.cases: tuple[Case[I, O], ...] = tuple(cases)
        self.input_type = input_type
        self.output_type = output_type
        self.key = key
        self.name = name
        seen: dict[str, int] = {}
        for index, case in enumerate(self.cases, 1):
            if not case.name:
                raise DatasetError(f"{name}: case {index} has an empty name: give every case one")
            if case.name in seen:
                raise DatasetError(
                    f"{name}: cases {seen[case.name]} and {index} are both named {case.name!r}: "
                    "give every case a name of its own"
                )
            seen[case.name] = index

    def key_of(self, item: O) -> Hashable:
        """The key ``item`` is compared by."""
        return item if self.key is None else self.key(item)

    def keys(self, items: Iterable[O]) -> list[str]:
        """The distinct keys of ``items`` as text, in first-seen order."""
        shown: dict[str, None] = {}
        for item in items:
            shown.setdefault(key_text(self.key_of(item)), None)
        return list(shown)

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Case[I, O]]:
        return iter(self.cases)

    def __repr__(self) -> str:
        return (
            f"Dataset({self.name!r}: {len(self.cases)} cases of {self.input_type.__qualname__} "
            f"-> {self.output_type.__qualname__})"
        )

    def with_cases(self, cases: Iterable[Case[I, O]], name: str | None = None) -> Dataset[I, O]:
        """The same dataset (types, key) over other cases."""
        return Dataset(
            cases,
            input_type=self.input_type,
            output_type=self.output_type,
            key=self.key,
            name=self.name if name is None else name,
        )

    def tagged(self, tag: str) -> Dataset[I, O]:
        """The cases carrying ``tag``."""
        return self.with_cases((c for c in self.cases if tag in c.tags), f"{self.name}[{tag}]")

    def split(self, dev: float = 0.5, *, seed: int = 0) -> tuple[Dataset[I, O], Dataset[I, O]]:
        """A dev split (about ``dev`` of the cases) and the held-out rest, chosen by a hash of
        each case's name and ``seed``: the same cases land on the same side whatever their
        order, and a case added later never moves the others."""
        if not 0.0 < dev < 1.0:
            raise ValueError(f"dev must be a fraction in (0, 1), got {dev!r}")

        def draw(case: Case[I, O]) -> float:
            digest = hashlib.sha256(f"{seed}:{case.name}".encode()).digest()
            return int.from_bytes(digest[:8], "big") / 2**64

        dev_cases = [c for c in self.cases if draw(c) < dev]
        rest = [c for c in self.cases if draw(c) >= dev]
        return (
            self.with_cases(dev_cases, f"{self.name}[dev]"),
            self.with_cases(rest, f"{self.name}[held-out]"),
        )

    def digest(self) -> str:
        """A SHA-256 of the cases as JSON (a resumed eval checks it runs the same cases)."""
        hashed = hashlib.sha256()
        for case in self.cases:
            hashed.update(_case_line(case).encode())
            hashed.update(b"\n")
        return hashed.hexdigest()

    def to_jsonl(self) -> str:
        """The cases as JSONL text (what :meth:`load` reads back)."""
        return "".join(_case_line(case) + "\n" for case in self.cases)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        input_type: type[I],
        output_type: type[O],
        *,
        key: ItemKey[O] | None = None,
        name: str | None = None,
        allow_extra: bool = False,
    ) -> Dataset[I, O]:
        """The cases of a ``.jsonl`` file (one a line) or a ``.yaml``/``.yml`` file (a list of
        cases). Every bad line or entry is reported at once, by number and field.

        A key that is not a field (of the case, of its input, of an expected item) is refused
        by name, so a typo never vanishes; ``allow_extra=True`` drops such keys instead."""
        source = Path(path)
        cases = read_entries(
            source,
            lambda raw: _case_from(raw, input_type, output_type, allow_extra=allow_extra),
            f"case(s) are not cases of {input_type.__qualname__} -> {output_type.__qualname__}",
            "cases",
            "case",
        )
        return cls(
            cases,
            input_type=input_type,
            output_type=output_type,
            key=key,
            name=source.stem if name is None else name,
        )


def _case_line(case: Case[Any, Any]) -> str:  # Any: a case of any dataset's types
    return json.dumps(
        {
            "name": case.name,
            "input": artifact_converter.unstructure(case.input),
            "expected": [artifact_converter.unstructure(item) for item in case.expected],
            "tags": list(case.tags),
        },
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )


_ROW_FIELDS = ("name", "input", "expected", "tags")


def _case_from(
    raw: object, input_type: type[I], output_type: type[O], *, allow_extra: bool
) -> Case[I, O]:
    raw, name = row_head(
        raw,
        _ROW_FIELDS,
        "a case",
        "a case is a JSON object with name, input, expected (and tags)",
        allow_extra=allow_extra,
        opt_out=OPT_OUT,
    )
    if "input" not in raw:
        raise _RowError("input is missing: give the thinker's input as a JSON object")
    expected = raw.get("expected")
    if not isinstance(expected, list):
        raise _RowError("expected must be a list of the answer's items (possibly empty)")
    tags = row_tags(raw)
    problems: list[str] = []
    value = _checked(raw["input"], input_type, "input", allow_extra, problems)
    items = tuple(
        _checked(item, output_type, f"expected[{index}]", allow_extra, problems)
        for index, item in enumerate(expected)
    )
    if problems:
        raise _RowError("; ".join(problems))
    assert value is not None
    return Case(name, value, tuple(item for item in items if item is not None), tags)


def _checked(
    raw: object, tp: type[O], where: str, allow_extra: bool, problems: list[str]
) -> O | None:
    """``raw`` built into ``tp``, or ``None`` with what is wrong added to ``problems``."""
    try:
        return _structure(raw, tp, where, allow_extra=allow_extra)
    except _RowError as error:
        problems.append(str(error))
        return None


def _fields_of(tp: type) -> tuple[str, ...] | None:
    """The keys an attrs class reads from JSON (its ``__init__`` fields); ``None`` when it is
    not an attrs class (then nothing is checked)."""
    origin = getattr(tp, "__origin__", tp)
    if not attrs.has(origin):
        return None
    return tuple(field.name for field in attrs.fields(origin) if field.init)


def structure_item(raw: object, tp: type[O], where: str) -> O:
    """``raw`` built into ``tp`` through the artifact converter (a key that is no field
    dropped); a :class:`ValueError` names the field paths under ``where`` (never the values)."""
    return _structure(raw, tp, where, allow_extra=True)


def _structure(raw: object, tp: type[O], where: str, *, allow_extra: bool) -> O:
    if not isinstance(raw, Mapping):
        raise _RowError(f"{where} must be a JSON object of {tp.__qualname__}'s fields")
    fields = _fields_of(tp)
    if fields is not None:
        unknown = [str(k) for k in raw if k not in fields]
        if unknown and not allow_extra:
            name = getattr(tp, "__origin__", tp).__qualname__
            raise _RowError(f"{where}: {unknown_fields(name, unknown, fields, OPT_OUT)}")
        if unknown:
            raw = {k: v for k, v in raw.items() if k in fields}
    try:
        return artifact_converter.structure(raw, tp)
    except cattrs.BaseValidationError as error:
        problems = "; ".join(
            p.replace("@ $", f"@ {where}", 1) for p in cattrs.transform_error(error)
        )
        raise _RowError(f"{where} is not a valid {tp.__qualname__}: {problems}") from None
    except (TypeError, ValueError) as error:
        raise _RowError(
            f"{where} is not a valid {tp.__qualname__} ({type(error).__name__})"
        ) from None
