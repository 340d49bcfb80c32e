"""Configuration from the environment, against `jevcompat mock` on loopback with a key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from examples.triage import Note, Triage
from harness import Catalog, RunFailedError, run_sync
from harness.catalog import CATALOG_ENV, CatalogError, load_catalog, read_environment
from harness.catalog._env import ENVIRONMENT_VARIABLES
from harness.errors import UnauthorizedError
from tests.interop.peers import Peer

KEY = "test-key-0123456789"
TEXT = "alpha is due today; beta can wait"

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def keyed_mock() -> Iterator[Peer]:
    """``jevcompat mock --key KEY`` on 127.0.0.1."""
    peer = Peer("jevcompat", ("mock", "--key", KEY))
    try:
        yield peer.start()
    finally:
        peer.stop()


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENVIRONMENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_typesafe_variables_give_a_ready_default_model_with_no_toml(
    keyed_mock: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", KEY)
    monkeypatch.setenv("TYPESAFE_BASE_URL", keyed_mock.root)
    monkeypatch.setenv("TYPESAFE_DEFAULT_MODEL", "jev-latest")
    result = run_sync(Triage, Note(TEXT))  # no model=, no catalog
    assert result.entry.id == "typesafe"
    assert result.entry.url == f"{keyed_mock.root}/v1/systemone"
    assert result.entry.wire_model_id == "jev-latest"
    assert result.usage.decisions >= 2
    assert all(call.success for call in result.calls)
    assert result.usage.cost is None  # not the hosted service: its price is unknown
    assert result.turns[-1].tool == "finish"


def test_a_systemone_model_string_reaches_the_configured_server(
    keyed_mock: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", KEY)
    monkeypatch.setenv("TYPESAFE_BASE_URL", keyed_mock.root)
    result = run_sync(Triage, Note(TEXT), model="systemone:jev-1.13.0")
    assert result.entry.id == "systemone:jev-1.13.0"
    assert result.entry.wire_model_id == "jev-1.13.0"
    assert all(call.success for call in result.calls)


def test_a_key_alone_keeps_the_embedded_default(
    keyed_mock: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", KEY)
    monkeypatch.setenv("TYPESAFE_BASE_URL", keyed_mock.root)
    catalog = load_catalog()
    assert catalog.pinned().id == "embedded"  # no surprise spend: the default stays offline
    assert catalog.entry("typesafe").base_url == keyed_mock.root
    result = run_sync(Triage, Note(TEXT), model="typesafe")
    assert result.entry.id == "typesafe"


def test_a_wrong_key_fails_the_run_by_name_and_never_shows_the_key(
    keyed_mock: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", "wrong-key-987654321")
    monkeypatch.setenv("TYPESAFE_BASE_URL", keyed_mock.root)
    with pytest.raises(RunFailedError) as caught:
        run_sync(Triage, Note(TEXT), model="typesafe")
    failed = caught.value
    assert isinstance(failed.error, UnauthorizedError)
    assert failed.error.status == 401
    assert "wrong-key" not in str(failed)
    assert len(failed.result.calls) == 1


def test_a_catalog_file_wins_over_the_environment_and_an_explicit_catalog_over_both(
    keyed_mock: Peer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", KEY)
    monkeypatch.setenv("TYPESAFE_BASE_URL", keyed_mock.root)
    monkeypatch.setenv("TYPESAFE_DEFAULT_MODEL", "jev-latest")
    file = tmp_path / "catalog.toml"
    file.write_text(
        '[pins]\ndecision = "local"\n\n'
        '[[entries]]\nid = "local"\nprovider = "systemone"\nwire_model_id = "jev-1.13.0"\n'
        f'base_url = "{keyed_mock.root}"\napi_key_env = "TYPESAFE_API_KEY"\n'
        "max_context_tokens = 65536\nmax_concurrent = 2\n",
        encoding="utf-8",
    )
    monkeypatch.setenv(CATALOG_ENV, str(file))
    configured = load_catalog()
    assert configured.pinned().id == "local"  # the file's pin, not TYPESAFE_DEFAULT_MODEL
    assert set(configured.entries) == {"local", "typesafe"}  # the environment adds its entry
    result = run_sync(Triage, Note(TEXT))
    assert result.entry.id == "local"
    assert result.entry.wire_model_id == "jev-1.13.0"
    explicit = Catalog([configured.entry("local")], {})
    with pytest.raises(CatalogError, match="unknown catalog entry id 'typesafe'"):
        run_sync(Triage, Note(TEXT), model="typesafe", catalog=explicit)  # nothing added to it


def test_an_entry_of_the_file_with_the_environments_id_wins(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TYPESAFE_BASE_URL", "http://127.0.0.1:9")
    file = tmp_path / "catalog.toml"
    file.write_text(
        '[[entries]]\nid = "typesafe"\nprovider = "fake"\nwire_model_id = "mine"\n'
        "max_context_tokens = 100\nmax_concurrent = 1\n",
        encoding="utf-8",
    )
    assert load_catalog(file).entry("typesafe").provider == "fake"


def test_openai_variables_configure_openai_model_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")
    entry = read_environment().entry_for("openai:decider-1")
    assert entry is not None
    assert (entry.provider, entry.wire_model_id, entry.url) == (
        "openai",
        "decider-1",
        "http://127.0.0.1:9/v1/decisions",
    )
    assert entry.api_key_env == "OPENAI_API_KEY"
    assert entry.api_key == "sk-secret"  # read when asked, never stored on the entry
    assert "sk-secret" not in repr(entry)
    assert all("sk-secret" not in s.value for s in read_environment().settings())


def test_nothing_configured_is_the_shipped_catalog_alone() -> None:
    catalog = load_catalog()
    assert list(catalog.entries) == ["embedded", "demo-fitted", "triage-fitted"]
    assert read_environment().entry_for("embedded") is None
    hosted = read_environment({"TYPESAFE_API_KEY": "k"}).entries()[0]
    assert hosted.base_url == "https://api.typesafe.ai"
    assert hosted.input_price_per_million == 0.042  # the hosted service's price
