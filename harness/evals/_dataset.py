"""Labelled cases for a thinker: ``Dataset[I, O]`` of ``Case[I, O]``, loaded from JSONL or YAML.

A case is an input of the thinker and the items its answer should hold. The dataset says how an
answered item is compared to an expected one (``key``; by default the items themselves, equal
when their attrs fields are equal). A file holds one case a line (JSONL) or a list of cases
(YAML)::

    {"name": "refund-1", "input": {"text": "..."}, "expected": [{"label": "refund"}],
     "tags": ["billing"]}

Every line that is not a case is named by its number and field; nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
import importlib

# the stdlib's json: keys and case lines as json writes them (default separators, NaN), which
# orjson cannot
import json
import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar

import attrs
import cattrs

from harness.artifacts import Artifact, artifact_converter, to_json
from harness.decision._internal import load_json
from harness.errors import HarnessError

__all__ = ["Case", "Dataset", "DatasetError", "ItemKey", "key_text"]

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the seed's name for the input type
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type

R = TypeVar("R")
ItemKey = Callable[[O], Hashable]
"""How a dataset compares items: two items are the same answer when their keys are equal."""


class DatasetError(HarnessError, ValueError):
    """A dataset (or decision pack) file or value that cannot be used: names the file, the line
    and the field, and how to fix it (never the line's text)."""


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
    ) -> Dataset[I, O]:
        """The cases of a ``.jsonl`` file (one a line) or a ``.yaml``/``.yml`` file (a list of
        cases). Every bad line or entry is reported at once, by number and field."""
        source = Path(path)
        cases = read_entries(
            source,
            lambda raw: _case_from(raw, input_type, output_type),
            f"case(s) are not cases of {input_type.__qualname__} -> {output_type.__qualname__}",
            "cases",
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


# -- reading --------------------------------------------------------------------------------


class _RowError(ValueError):
    """What is wrong with one row (the caller adds where it is)."""


def read_entries(source: Path, parse: Callable[[object], R], not_what: str, nouns: str) -> list[R]:
    """Each entry of the ``.jsonl`` or ``.yaml`` file ``source`` through ``parse``; every bad one
    is named by number and field at once (``"{n} {not_what}: ..."``), and a file of none is
    refused (``"holds no {nouns}"``)."""
    found: list[R] = []
    problems: list[str] = []
    for number, raw in _read_rows(source):
        try:
            found.append(parse(raw))
        except (_RowError, DatasetError) as error:
            problems.append(f"{_where(source, number)}: {error}")
    if problems:
        shown = "; ".join(problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise DatasetError(f"{source}: {len(problems)} {not_what}: {shown}{more}; fix them")
    if not found:
        raise DatasetError(f"{source} holds no {nouns}: give one JSON object a line")
    return found


def row_head(
    raw: object, fields: tuple[str, ...], what: str, shape: str
) -> tuple[Mapping[str, object], str]:
    """``raw`` as a JSON object with no field but ``fields``, and its name (a non-empty string);
    ``what`` names the entry (``"a case"``), ``shape`` says what it is when it is no object."""
    if not isinstance(raw, Mapping):
        raise _RowError(shape)
    unknown = sorted(str(k) for k in raw if k not in fields)
    if unknown:
        raise _RowError(f"unknown field(s) {', '.join(unknown)}: {what} has {', '.join(fields)}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _RowError("name must be a non-empty string")
    return raw, name


def row_tags(raw: Mapping[str, object]) -> tuple[str, ...]:
    """The entry's ``tags`` (none when left out)."""
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _RowError("tags must be a list of strings")
    return tuple(tags)


def _where(source: Path, number: int) -> str:
    return f"entry {number}" if source.suffix.lower() in (".yaml", ".yml") else f"line {number}"


def _read_rows(source: Path) -> list[tuple[int, object]]:
    if not source.is_file():
        raise DatasetError(f"no dataset file {source}: give a .jsonl or .yaml file of cases")
    suffix = source.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return _yaml_rows(source)
    if suffix not in (".jsonl", ".json", ".ndjson"):
        raise DatasetError(
            f"{source}: unknown dataset format {suffix or '(no suffix)'!r}: name the file "
            ".jsonl (one case a line) or .yaml (a list of cases)"
        )
    rows: list[tuple[int, object]] = []
    problems: list[str] = []
    with source.open("rb") as file:
        for number, raw in enumerate(file, start=1):
            try:
                text = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                problems.append(f"line {number}: the line is not UTF-8 text")
                continue
            if not text:
                continue
            try:
                rows.append((number, load_json(text)))
            except json.JSONDecodeError as error:
                problems.append(f"line {number}: not JSON (column {error.colno}: {error.msg})")
    if problems:
        raise DatasetError(
            f"{source}: {len(problems)} line(s) are not JSON: {'; '.join(problems[:5])}; give "
            "one JSON object a line"
        )
    return rows


def _yaml_rows(source: Path) -> list[tuple[int, object]]:
    try:
        yaml: Any = importlib.import_module("yaml")  # Any: PyYAML ships no type information
    except ImportError:
        raise DatasetError(
            f"{source}: reading YAML needs PyYAML: pip install 'harness[yaml]', or give the "
            "cases as JSONL"
        ) from None
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:  # PyYAML's base error
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise DatasetError(f"{source} is not YAML{where}: fix the file") from None
    except UnicodeDecodeError:
        raise DatasetError(f"{source} is not UTF-8 text") from None
    if not isinstance(data, list):
        raise DatasetError(f"{source}: a YAML dataset is a list of cases (a `- name: ...` each)")
    return list(enumerate(data, start=1))


_ROW_FIELDS = ("name", "input", "expected", "tags")


def _case_from(raw: object, input_type: type[I], output_type: type[O]) -> Case[I, O]:
    raw, name = row_head(
        raw, _ROW_FIELDS, "a case", "a case is a JSON object with name, input, expected (and tags)"
    )
    if "input" not in raw:
        raise _RowError("input is missing: give the thinker's input as a JSON object")
    expected = raw.get("expected")
    if not isinstance(expected, list):
        raise _RowError("expected must be a list of the answer's items (possibly empty)")
    tags = row_tags(raw)
    value = _structure(raw["input"], input_type, "input")
    items = tuple(
        _structure(item, output_type, f"expected[{index}]") for index, item in enumerate(expected)
    )
    return Case(name, value, items, tags)


def structure_item(raw: object, tp: type[O], where: str) -> O:
    """``raw`` built into ``tp`` through the artifact converter; a :class:`ValueError` names the
    field paths under ``where`` (never the values)."""
    return _structure(raw, tp, where)


def _structure(raw: object, tp: type[O], where: str) -> O:
    if not isinstance(raw, Mapping):
        raise _RowError(f"{where} must be a JSON object of {tp.__qualname__}'s fields")
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
