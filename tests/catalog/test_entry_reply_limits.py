"""The entry fields that bound a reply and a connection pool: defaults, TOML, validation."""

from __future__ import annotations

import pathlib

import pytest

from harness.catalog import CatalogEntry, CatalogError, load_catalog
from harness.catalog._entry import (
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_MAX_REPLY_DEPTH,
    WINDOW_CONNECTIONS,
)
from harness.decision import _wire


def entry(**fields: object) -> CatalogEntry:
    base: dict[str, object] = {
        "id": "e",
        "provider": "systemone",
        "wire_model_id": "m",
        "base_url": "http://127.0.0.1:1",
        "max_context_tokens": 1000,
    }
    base.update(fields)
    if "tpm" not in base and "max_concurrent" not in base:
        base["max_concurrent"] = 4
    return CatalogEntry(**base)  # type: ignore[arg-type]  # the test's own fields


def test_the_defaults_are_the_codecs_defaults() -> None:
    made = entry()
    assert (made.max_reply_bytes, made.max_reply_depth) == (
        _wire.MAX_REPLY_BYTES,
        _wire.MAX_REPLY_DEPTH,
    )
    assert (DEFAULT_MAX_REPLY_BYTES, DEFAULT_MAX_REPLY_DEPTH) == (8 * 1024 * 1024, 32)


def test_the_pool_follows_the_admission_unless_told() -> None:
    assert entry(max_concurrent=7).connection_limit == 7
    assert entry(tpm=1000).connection_limit == WINDOW_CONNECTIONS
    assert entry(tpm=1000, max_connections=3).connection_limit == 3
    assert entry(max_concurrent=7, max_connections=2).connection_limit == 2


@pytest.mark.parametrize("name", ["max_reply_bytes", "max_reply_depth", "max_connections"])
def test_non_positive_bounds_are_refused_by_name(name: str) -> None:
    with pytest.raises(CatalogError, match=f"{name} must be > 0"):
        entry(**{name: 0})


def test_the_fields_load_from_toml(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(
        """
[[entries]]
id = "bounded"
provider = "systemone"
wire_model_id = "m"
base_url = "http://127.0.0.1:9"
max_context_tokens = 1000
tpm = 5000
max_reply_bytes = 65536
max_reply_depth = 8
max_connections = 6

[pins]
decision = "bounded"
""",
        encoding="utf-8",
    )
    loaded = load_catalog(path).entry("bounded")
    assert (loaded.max_reply_bytes, loaded.max_reply_depth, loaded.connection_limit) == (
        65536,
        8,
        6,
    )
