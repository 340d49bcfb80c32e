"""Reading a catalog file: its entries' tables, each checked where it is read, and the pins,
into a :class:`~harness.catalog.Catalog`; the shipped catalog and the configured one.

File format (TOML)::

    [pins]
    decision = "embedded"

    [[entries]]
    id = "embedded"
    provider = "embedded"
    wire_model_id = "sparrow-decider"
    max_context_tokens = 32768
    max_concurrent = 2

Entries are an array of tables (``[[entries]]``), each with its ``id`` inside; the keys are the
fields of :class:`CatalogEntry`. Every entry's tokenizer is resolved when the catalog is built.
An entry's retry policy is a sub-table, every key optional (the rest keep the default)::

    [entries.retry]
    max_retries = 4
    statuses = [429, 503]
    backoff_base = 0.25
    backoff_cap = 4.0
    jitter = 0.25
    no_reply = true
    honour_hints = true
    max_hint = 20.0

An entry's calibration (the maps its answers go through before a thinker reads them, fitted by
``harness.evals``) is a sub-table too, or names a TOML file beside the catalog::

    [entries.calibration]
    select = { method = "platt", a = 2.1, b = -0.4 }
    next = { method = "temperature", temperature = 1.3 }

    # or: [entries.calibration] file = "embedded-calibration.toml"

An entry's solved examples (what a prompt-building provider shows before each question, fitted
by ``harness.evals``) are a sub-table as well, usually naming the JSON file they were written to
(:mod:`harness.catalog._examples` describes both)::

    [entries.examples]
    file = "examples.json"
"""

from __future__ import annotations

import importlib.resources
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import attrs

from harness.decision._internal import load_json

from ._calibration import calibration_from_table
from ._catalog import DECISION, Catalog
from ._entry import CatalogEntry, CatalogError, RetrySettings
from ._env import TYPESAFE_ENTRY, read_environment
from ._examples import examples_from_table

__all__ = ["CATALOG_ENV", "default_catalog", "load_catalog"]

CATALOG_ENV = "HARNESS_CATALOG"
"""The environment variable naming the catalog file when no path is given."""

_STR_FIELDS = (
    "id",
    "provider",
    "kind",
    "wire_model_id",
    "base_url",
    "path",
    "api_key_env",
    "model_path",
    "gguf_package",
    "prompt_format",
    "choice_options",
    "file",
    "base",
)
_INT_FIELDS = (
    "max_context_tokens",
    "tpm",
    "rpm",
    "max_concurrent",
    "max_options",
    "max_levels",
    "max_reply_bytes",
    "max_reply_depth",
    "max_connections",
    "top_logprobs",
    "orderings",
    "n_ctx",
    "n_threads",
    "n_batch",
)
_FLOAT_FIELDS = ("input_price_per_million", "mass_floor", "decision_timeout_s")
_BOOL_FIELDS = ("adaptive", "batch_questions")
_FIELDS = frozenset(f.name for f in attrs.fields(CatalogEntry))
_FIELD_KINDS: dict[str, str] = {
    **dict.fromkeys((*_STR_FIELDS, "tokenizer"), "str"),
    **dict.fromkeys(_INT_FIELDS, "int"),
    **dict.fromkeys(_FLOAT_FIELDS, "float"),
    **dict.fromkeys(_BOOL_FIELDS, "bool"),
}
"""The kind of each scalar field of an entry's table (``retry``, ``calibration`` and ``examples``
are tables)."""
_RETRY_KEYS: dict[str, str] = {
    "max_retries": "int",
    "statuses": "list",
    "no_reply": "bool",
    "backoff_base": "float",
    "backoff_cap": "float",
    "jitter": "float",
    "honour_hints": "bool",
    "max_hint": "float",
}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_KINDS: dict[str, Callable[[object], bool]] = {
    "str": lambda value: isinstance(value, str),
    "int": _is_int,
    "float": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "bool": lambda value: isinstance(value, bool),
    "list": lambda value: isinstance(value, list) and all(_is_int(v) for v in value),
}
"""What a TOML value of each kind of field may be (a bool is no number; ``list``: of ints)."""


def _refuse_unknown(table: dict[str, object], known: Iterable[str], where: str, what: str) -> None:
    """Refuse the keys of ``table`` not in ``known``, naming them and the known ones."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise CatalogError(
            f"{where}: unknown {what}(s) {', '.join(unknown)}; "
            f"known {what}s: {', '.join(sorted(known))}"
        )


def _retry_from_table(table: object, where: str) -> RetrySettings:
    """An entry's ``[entries.retry]`` table as settings; every key checked by name and type."""
    if not isinstance(table, dict):
        raise CatalogError(f"{where}: retry must be a table ([entries.retry])")
    _refuse_unknown(table, _RETRY_KEYS, where, "retry key")
    values: dict[str, object] = {}
    for key, value in table.items():
        kind = _RETRY_KEYS[key]
        if not _KINDS[kind](value):
            wanted = {"list": "a list of HTTP statuses", "float": "a number"}.get(kind, f"a {kind}")
            raise CatalogError(
                f"{where}: retry.{key} has the wrong type ({type(value).__name__}); "
                f"it takes {wanted}"
            )
        if kind == "float":
            value = float(value)
        values[key] = value
    try:
        return RetrySettings(**values)  # type: ignore[arg-type]  # each checked just above
    except CatalogError as exc:
        raise CatalogError(f"{where}: {exc}") from None


@attrs.frozen
class _TableOrFile:
    """An entry's sub-table that may name a file beside the catalog instead (``file = "..."``):
    the calibration's maps (a TOML file) and the solved examples (a JSON file, as
    ``harness examples fit`` writes it) are read the same way; this holds what differs."""

    key: str  # the sub-table's key in an entry: "calibration", "examples"
    example: str  # a file name, for the fix of a table holding more than ``file``
    holds: str  # what the table holds, for the same fix
    else_fix: str  # the fix offered beside a right path when the file cannot be read
    language: str  # what the file is written in
    loads: Callable[[str], object]  # the file's reader; raises ValueError on a bad file
    build: Callable[[object, str], object]  # the table (or the file's), checked, as its value

    def read(self, table: object, where: str, base: Traversable | Path | None) -> object:
        """The sub-table itself, or the file it names (relative to the catalog's folder),
        as the entry's value; anything wrong is one :class:`CatalogError` naming ``where``."""
        if isinstance(table, dict) and "file" in table:
            name = table["file"]
            if set(table) != {"file"} or not isinstance(name, str) or not name.strip():
                raise CatalogError(
                    f"{where}: {self.key}.file must be the only key, a path string (file = "
                    f'"{self.example}"): put {self.holds} in that file or in the table, not both'
                )
            found: Traversable | Path = (
                Path(name) if base is None or os.path.isabs(name) else base.joinpath(name)
            )
            try:
                text = found.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CatalogError(
                    f"{where}: {self.key} file {name} cannot be read ({type(exc).__name__}): "
                    f"give a path relative to the catalog's folder, {self.else_fix}"
                ) from None
            try:
                table = self.loads(text)
            except ValueError as exc:  # tomllib.TOMLDecodeError and json's errors are ones
                raise CatalogError(
                    f"{where}: {self.key} file {name} is not valid {self.language} ({exc})"
                ) from None
            where = f"{where} ({self.key} file {name})"
        return self.build(table, where)


_SUB_FILES: tuple[_TableOrFile, ...] = (
    _TableOrFile(
        key="calibration",
        example="calibration.toml",
        holds="the maps",
        else_fix="or put the maps in [entries.calibration]",
        language="TOML",
        loads=tomllib.loads,
        build=calibration_from_table,
    ),
    _TableOrFile(
        key="examples",
        example="examples.json",
        holds="the examples",
        else_fix="or fit them again (harness examples fit)",
        language="JSON",
        loads=load_json,
        build=examples_from_table,
    ),
)
"""The sub-tables of an entry that may name a file (``[entries.calibration]``,
``[entries.examples]``)."""


def _entry_from_table(
    table: object, index: int, source: str, base: Traversable | Path | None = None
) -> CatalogEntry:
    if not isinstance(table, dict):
        raise CatalogError(f"{source}: entries[{index}] must be a table ([[entries]])")
    raw_id = table.get("id")
    name = repr(raw_id) if isinstance(raw_id, str) else f"#{index + 1} (no id)"
    where = f"{source}: catalog entry {name}"
    _refuse_unknown(table, _FIELDS, where, "key")
    for key, value in table.items():
        if key in ("retry", "calibration", "examples"):
            continue  # a sub-table, read below
        if not _KINDS[_FIELD_KINDS[key]](value):
            raise CatalogError(f"{where}: {key} has the wrong type ({type(value).__name__})")
    if table.get("provider") == "llama":
        table = _llama_defaults(table)
    if table.get("provider") == "fitted":
        table = _fitted_defaults(table, base)
    for required in ("id", "provider", "wire_model_id", "max_context_tokens"):
        if required not in table:
            raise CatalogError(f"{where}: {required} is required")
    for name in _FLOAT_FIELDS:
        if name in table:
            table = {**table, name: float(table[name])}
    if "retry" in table:
        table = {**table, "retry": _retry_from_table(table["retry"], where)}
    for sub in _SUB_FILES:
        if sub.key in table:
            table = {**table, sub.key: sub.read(table[sub.key], where, base)}
    try:
        return CatalogEntry(**table)
    except CatalogError as exc:
        raise CatalogError(f"{source}: {exc}") from None


def _llama_defaults(table: dict[str, Any]) -> dict[str, Any]:  # Any: a TOML table's values
    """A ``llama`` entry's defaults: its wire model id is the GGUF it names, one context."""
    named = table.get("model_path", table.get("gguf_package"))
    if "wire_model_id" not in table and isinstance(named, str):
        table = {**table, "wire_model_id": named}
    if "max_concurrent" not in table and "tpm" not in table:
        table = {**table, "max_concurrent": 1}
    return table


def _fitted_defaults(
    table: dict[str, Any],  # Any: a TOML table's values
    base: Traversable | Path | None,
) -> dict[str, Any]:  # Any: a TOML table's values
    """A ``fitted`` entry's defaults: its file relative to the catalog's folder, its wire model
    id that file, a context no state reaches (a head reads lines), four calls at once."""
    file = table.get("file")
    if isinstance(file, str) and file.strip() and isinstance(base, Path):
        named = Path(file).expanduser()
        table = {**table, "file": str(named if named.is_absolute() else base / named)}
    elif isinstance(file, str) and file.strip() and base is not None:
        table = {**table, "file": str(base.joinpath(file))}
    if "wire_model_id" not in table and isinstance(table.get("file"), str):
        table = {**table, "wire_model_id": table["file"]}
    if "max_context_tokens" not in table:
        table = {**table, "max_context_tokens": 1_000_000}
    if "max_concurrent" not in table and "tpm" not in table:
        table = {**table, "max_concurrent": 4}
    return table


def _parse(text: str, source: str, base: Traversable | Path | None = None) -> Catalog:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{source}: not valid TOML: {exc}") from exc
    unknown = sorted(set(document) - {"entries", "pins"})
    if unknown:
        raise CatalogError(
            f"{source}: unknown top-level key(s) {', '.join(unknown)}; use [[entries]] and [pins]"
        )
    tables = document.get("entries", [])
    if not isinstance(tables, list):
        raise CatalogError(f"{source}: entries must be an array of tables ([[entries]])")
    pins = document.get("pins", {})
    if not isinstance(pins, dict) or not all(isinstance(v, str) for v in pins.values()):
        raise CatalogError(f'{source}: [pins] maps a seat to an entry id (decision = "<id>")')
    entries = [_entry_from_table(table, i, source, base) for i, table in enumerate(tables)]
    return Catalog(entries, pins, source=source)


def _read(file: Traversable | Path, source: str, base: Traversable | Path | None = None) -> Catalog:
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CatalogError(f"catalog file {source} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"catalog file {source} cannot be read: {exc}") from exc
    return _parse(text, source, base if base is not None else _folder(file))


def _folder(file: Traversable | Path) -> Path | None:
    return file.parent if isinstance(file, Path) else None


def default_catalog() -> Catalog:
    """The catalog shipped with harness: the embedded model pinned to the decision seat."""
    package = importlib.resources.files("harness")
    return _read(
        package.joinpath("catalog.toml"), "the default catalog (harness/catalog.toml)", package
    )


def load_catalog(
    path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> Catalog:
    """The configured catalog: the file ``path``, else ``$HARNESS_CATALOG``, else
    :func:`default_catalog`, plus the ready entries of the environment (``TYPESAFE_*``) whose
    ids the file does not use. Over the shipped catalog, ``TYPESAFE_DEFAULT_MODEL`` pins the
    ``typesafe`` entry. ``environ`` replaces the process environment (tests). The precedence is
    in :mod:`harness.catalog._env`.
    """
    environment = read_environment(environ)
    if path is not None:
        base = _read(Path(path), os.fspath(path))
    elif environment.catalog_path is not None:
        found = environment.catalog_path
        base = _read(Path(found), f"{found} (from ${CATALOG_ENV})")
    else:
        base = default_catalog()
    added = [e for e in environment.entries() if e.id not in base.entries]
    if not added:
        return base
    pins = base.pins
    shipped = path is None and environment.catalog_path is None
    if shipped and environment.pins_typesafe:
        pins[DECISION] = TYPESAFE_ENTRY
    names = ", ".join(e.id for e in added)
    return Catalog(
        [*base.entries.values(), *added], pins, source=f"{base.source} + environment ({names})"
    )
