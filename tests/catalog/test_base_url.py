"""A ``base_url`` ending in ``/v1`` reaches the same path as one without it, in a catalog entry
and in a model string alike (one rule: the entry's ``url``), against real loopback servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import harness
from harness.catalog import Catalog, CatalogEntry, load_catalog
from harness.testing import FakeSystemOneServer, LogprobServer
from tests.cli.words import Sentence, WordFinder

SUFFIXES = ["", "/", "/v1", "/v1/"]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_the_url_holds_v1_once(suffix: str) -> None:
    entry = CatalogEntry(
        id="s1",
        provider="systemone",
        wire_model_id="m",
        base_url="http://127.0.0.1:9" + suffix,
        max_context_tokens=1000,
        max_concurrent=1,
    )
    assert entry.url == "http://127.0.0.1:9/v1/systemone"
    assert entry.url_of("/v1/models") == "http://127.0.0.1:9/v1/models"
    custom = CatalogEntry(
        id="c",
        provider="systemone",
        wire_model_id="m",
        base_url="http://127.0.0.1:9" + suffix,
        path="/decide",
        max_context_tokens=1000,
        max_concurrent=1,
    )  # a path of its own is joined as given: the /v1 of the base is part of it
    assert custom.url == "http://127.0.0.1:9" + suffix.rstrip("/") + "/decide"


@pytest.mark.parametrize("suffix", SUFFIXES)
async def test_a_catalog_entry_reaches_the_systemone_server_with_or_without_v1(
    suffix: str,
) -> None:
    async with FakeSystemOneServer() as server:
        entry = server.entry(base_url=server.root + suffix)
        result = await harness.run(
            WordFinder, Sentence("alpha beta"), catalog=Catalog([entry], {"decision": entry.id})
        )
        assert result.failure is None
        assert result.calls
        assert server.requests >= 1  # the server was reached (a call it never saw fails)


@pytest.fixture(scope="module")
def upstream() -> Iterator[LogprobServer]:
    with LogprobServer().in_thread() as server:
        yield server


@pytest.mark.parametrize("suffix", ["", "/v1"])
def test_a_model_string_and_a_catalog_entry_reach_the_same_path(
    suffix: str, upstream: LogprobServer, tmp_path: Path
) -> None:
    base = upstream.root + suffix
    before = upstream.calls
    by_string = harness.run_sync(
        WordFinder, Sentence("alpha"), model=f"openai-completions:bigram-test@{base}"
    )
    assert by_string.failure is None
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(
        f"""[pins]
decision = "local"

[[entries]]
id = "local"
provider = "openai-completions"
wire_model_id = "bigram-test"
base_url = "{base}"
max_context_tokens = 32768
max_concurrent = 2
""",
        encoding="utf-8",
    )
    loaded = load_catalog(catalog)
    by_entry = harness.run_sync(WordFinder, Sentence("alpha"), catalog=loaded)
    assert by_entry.failure is None
    assert loaded.entry("local").url == upstream.root + "/v1/completions"
    assert by_entry.entry.url == by_string.entry.url
    assert upstream.calls > before
