"""Reading entry files (JSONL, one entry a line, or YAML, a list of entries) for datasets and
decision packs: every bad entry named by number and field at once, a key that is no field
refused by name (the wording every command shares), a JSON array told the format is JSONL."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from json import JSONDecodeError  # what load_json raises: a bad line named by column and message
from pathlib import Path
from typing import Any, TypeVar

from harness.decision._internal import load_json
from harness.errors import HarnessError

__all__ = [
    "OPT_OUT",
    "DatasetError",
    "read_entries",
    "row_head",
    "row_tags",
    "unknown_fields",
]

R = TypeVar("R")


class DatasetError(HarnessError, ValueError):
    """A dataset (or decision pack) file or value that cannot be used: names the file, the line
    and the field, and how to fix it (never the line's text)."""


class _RowError(ValueError):
    """What is wrong with one row (the caller adds where it is)."""


def read_entries(
    source: Path, parse: Callable[[object], R], not_what: str, nouns: str, noun: str
) -> list[R]:
    """Each entry of the ``.jsonl`` or ``.yaml`` file ``source`` through ``parse``; every bad one
    is named by number and field at once (``"{n} {not_what}: ..."``), and a file of none is
    refused (``"holds no {nouns}"``); ``noun`` names one entry (``"case"``)."""
    found: list[R] = []
    problems: list[str] = []
    for number, raw in _read_rows(source, noun):
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


OPT_OUT = "pass allow_extra=True"
"""The fix besides removing it, for a key that is not a field (a command says its flag)."""


def unknown_fields(
    what: str, unknown: Iterable[str], expected: Iterable[str], opt_out: str | None
) -> str:
    """The line naming keys that are no field: ``unknown field 'age' for Note: expected one of
    text; remove it (or pass allow_extra=True)`` (the wording every command shares)."""
    names = sorted(unknown)
    many = len(names) != 1
    fix = f"remove {'them' if many else 'it'}" + (f" (or {opt_out})" if opt_out else "")
    return (
        f"unknown field{'s' if many else ''} {', '.join(repr(n) for n in names)} for {what}: "
        f"expected one of {', '.join(expected) or '(no fields)'}; {fix}"
    )


def row_head(
    raw: object,
    fields: tuple[str, ...],
    what: str,
    shape: str,
    *,
    allow_extra: bool = False,
    opt_out: str | None = None,
) -> tuple[Mapping[str, object], str]:
    """``raw`` as a JSON object with no field but ``fields``, and its name (a non-empty string);
    ``what`` names the entry (``"a case"``), ``shape`` says what it is when it is no object.
    Another key is refused by name (``opt_out`` the other fix), or dropped with
    ``allow_extra``."""
    if not isinstance(raw, Mapping):
        raise _RowError(shape)
    unknown = [str(k) for k in raw if k not in fields]
    if unknown and allow_extra:
        raw = {k: v for k, v in raw.items() if k in fields}
    elif unknown:
        raise _RowError(unknown_fields(what, unknown, fields, opt_out))
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


def _json_array(source: Path, noun: str) -> None:
    """Refuse a file holding one JSON array (a list of cases is JSONL here, one a line)."""
    with source.open("rb") as file:
        head = file.read(64).lstrip()
    if not head.startswith(b"["):
        return
    try:
        whole = load_json(source.read_bytes())
    except ValueError:  # not JSON, not UTF-8: no array to tell of
        return
    if isinstance(whole, list):
        raise DatasetError(
            f"{source} is a JSON array ({len(whole)} element(s)): the format is JSONL, one "
            f"{noun} a line (a JSON object each); write each element on a line of its own, or "
            "name the file .yaml (a YAML file may hold a list, and JSON is YAML)"
        )


def _read_rows(source: Path, noun: str) -> list[tuple[int, object]]:
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
    _json_array(source, noun)
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
            except JSONDecodeError as error:
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
