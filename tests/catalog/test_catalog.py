"""The catalog: entry rules, pins, resolution (CONTRACT.md "Resolution"), loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.catalog import (
    CATALOG_ENV,
    PROVIDERS,
    Catalog,
    CatalogEntry,
    CatalogError,
    default_catalog,
    load_catalog,
)


def _entry(entry_id: str = "alpha", /, **changes: object) -> CatalogEntry:
    fields: dict[str, object] = {
        "id": entry_id,
        "provider": "systemone",
        "wire_model_id": "jev-latest",
        "base_url": "http://127.0.0.1:8080/",
        "max_context_tokens": 4096,
        "max_concurrent": 1,
    }
    fields.update(changes)
    return CatalogEntry(**fields)  # type: ignore[arg-type]  # the test varies every field


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "catalog.toml"
    path.write_text(text, encoding="utf-8")
    return path


# -- entry rules ----------------------------------------------------------------------------


def test_entry_defaults() -> None:
    entry = _entry()
    assert entry.kind == "decision"
    assert entry.tokenizer == "cl100k_base"
    assert entry.path == "/v1/systemone"
    assert entry.url == "http://127.0.0.1:8080/v1/systemone"
    assert entry.bound == "concurrency"
    assert entry.decision_timeout == 60.0
    assert _entry(decision_timeout_s=900.0).decision_timeout == 900.0
    assert _entry(provider="openai").path == "/v1/decisions"
    assert _entry(path="/api/decide").url == "http://127.0.0.1:8080/api/decide"
    assert _entry(provider="openai-chat").path == "/v1/chat/completions"
    assert _entry(provider="openai-completions").path == "/v1/completions"
    assert (
        frozenset(
            {
                "systemone",
                "openai",
                "openai-chat",
                "openai-completions",
                "embedded",
                "llama",
                "fitted",
                "fake",
            }
        )
        == PROVIDERS
    )


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        ({"tpm": 1000}, "both tpm and max_concurrent"),
        ({"max_concurrent": None}, "neither tpm nor max_concurrent"),
        ({"provider": "gemini"}, "unknown provider 'gemini'"),
        ({"base_url": None}, "needs a base_url"),
        ({"base_url": "ftp://host"}, "base_url must start with http"),
        ({"max_context_tokens": 0}, "max_context_tokens must be > 0"),
        ({"max_concurrent": 0}, "max_concurrent must be > 0"),
        ({"max_concurrent": None, "tpm": 10, "rpm": 0}, "rpm must be > 0"),
        ({"rpm": 10}, "rpm is set without tpm"),
        ({"max_levels": 1}, "max_levels must be >= 2"),
        ({"max_options": 0}, "max_options must be > 0"),
        ({"input_price_per_million": -1.0}, "input_price_per_million must be >= 0"),
        ({"path": "v1/x"}, "path must start with '/'"),
        ({"kind": " "}, "kind must not be blank"),
        ({"wire_model_id": ""}, "wire_model_id must not be blank"),
        ({"decision_timeout_s": 0.0}, "decision_timeout_s must be > 0 seconds"),
        ({"decision_timeout_s": float("nan")}, "decision_timeout_s must be > 0 seconds"),
    ],
)
def test_entry_rules_name_the_entry_and_the_rule(changes: dict[str, object], rule: str) -> None:
    with pytest.raises(CatalogError, match="catalog entry 'alpha'") as caught:
        _entry(**changes)
    assert rule in str(caught.value)


def test_embedded_and_fake_need_no_base_url() -> None:
    embedded = _entry(provider="embedded", base_url=None)
    assert embedded.base_url is None
    with pytest.raises(CatalogError, match=r"'alpha' .*has no base_url"):
        _ = embedded.url
    assert _entry(provider="fake", base_url=None).provider == "fake"


def test_a_fake_entry_is_concurrency_bound_and_named_by_its_id() -> None:
    entry = CatalogEntry.fake("policy")
    assert (entry.provider, entry.wire_model_id, entry.bound) == ("fake", "policy", "concurrency")
    assert entry.max_concurrent == 1
    wide = CatalogEntry.fake("replay", "recorded-model", max_concurrent=8)
    assert (wide.wire_model_id, wide.max_concurrent) == ("recorded-model", 8)
    with pytest.raises(CatalogError, match="max_concurrent must be > 0"):
        CatalogEntry.fake("none", max_concurrent=0)


def test_window_entry() -> None:
    entry = _entry(max_concurrent=None, tpm=60_000, rpm=100)
    assert entry.bound == "window"
    assert (entry.tpm, entry.rpm) == (60_000, 100)


def test_api_key_is_read_at_call_time_and_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _entry(api_key_env="HARNESS_TEST_KEY")

    def key_now() -> str | None:
        return entry.api_key

    monkeypatch.delenv("HARNESS_TEST_KEY", raising=False)
    assert key_now() is None
    monkeypatch.setenv("HARNESS_TEST_KEY", "")
    assert key_now() is None  # an empty variable is no key
    monkeypatch.setenv("HARNESS_TEST_KEY", "sk-secret-value")
    assert key_now() == "sk-secret-value"
    assert "sk-secret-value" not in repr(entry)
    assert _entry().api_key is None


def test_cost() -> None:
    assert _entry(input_price_per_million=0.042).cost(2_000_000) == pytest.approx(0.084)
    assert _entry().cost(10) is None


# -- catalog and pins -----------------------------------------------------------------------


def test_entries_keep_order_and_unknown_id_lists_known_ones() -> None:
    catalog = Catalog([_entry("b"), _entry("a"), _entry("c")])
    assert list(catalog.entries) == ["b", "a", "c"]
    assert catalog.entry("a").id == "a"
    with pytest.raises(
        CatalogError, match="unknown catalog entry id 'z'; known ids: 'b', 'a', 'c'"
    ):
        catalog.entry("z")


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(CatalogError, match="'a' is listed twice"):
        Catalog([_entry("a"), _entry("a")])


def test_unknown_tokenizer_is_refused_naming_the_entry() -> None:
    with pytest.raises(CatalogError, match="entry 'a': unknown tokenizer 'gpt2'; known encodings"):
        Catalog([_entry("a", tokenizer="gpt2")])


def test_decision_pin_resolves_and_changing_it_changes_the_entry() -> None:
    catalog = Catalog([_entry("a"), _entry("b")], {"decision": "a"})
    assert catalog.pinned().id == "a"
    assert catalog.resolve_decision(None, asked_by="job-1").id == "a"
    catalog.pin("decision", "b")
    assert catalog.pinned("decision").id == "b"
    assert catalog.resolve_decision(None, asked_by="job-2").id == "b"
    assert catalog.pins == {"decision": "b"}


def test_pins_are_a_copy() -> None:
    catalog = Catalog([_entry("a"), _entry("b")], {"decision": "a"})
    catalog.pins["decision"] = "b"
    assert catalog.pinned().id == "a"


def test_pinned_id_wins_over_the_pin() -> None:
    catalog = Catalog([_entry("a"), _entry("b")], {"decision": "a"})
    assert catalog.resolve_decision("b", asked_by="job-1").id == "b"


def test_no_decision_entry_is_refused_naming_the_job() -> None:
    catalog = Catalog([_entry("chatty", kind="chat")], {"chat": "chatty"})
    with pytest.raises(CatalogError, match="decision-call#7 asked for a decision model") as caught:
        catalog.resolve_decision(None, asked_by="decision-call#7")
    assert "it has none" in str(caught.value)
    with pytest.raises(CatalogError, match="job-x asked"):
        Catalog([]).resolve_decision(None, asked_by="job-x")


def test_a_decision_seat_never_resolves_to_a_non_decision_entry() -> None:
    catalog = Catalog([_entry("d"), _entry("chatty", kind="chat")], {"decision": "d"})
    with pytest.raises(CatalogError, match="'chatty', which is not a decision entry"):
        catalog.resolve_decision("chatty", asked_by="job-1")
    with pytest.raises(CatalogError, match="'chatty' to seat 'decision': it is not a decision"):
        catalog.pin("decision", "chatty")
    assert catalog.pinned().id == "d"


def test_and_the_reverse() -> None:
    catalog = Catalog([_entry("d"), _entry("chatty", kind="chat")])
    with pytest.raises(CatalogError, match="'d' to seat 'chat': it is not a chat entry"):
        catalog.pin("chat", "d")
    catalog.pin("chat", "chatty")
    assert catalog.pinned("chat").id == "chatty"


def test_unpinned_seat_says_how_to_pin() -> None:
    with pytest.raises(CatalogError, match=r'add \[pins\] decision = "<entry id>"'):
        Catalog([_entry("a")]).pinned()


def test_pin_to_unknown_id_is_refused() -> None:
    with pytest.raises(CatalogError, match="unknown catalog entry id 'ghost'"):
        Catalog([_entry("a")], {"decision": "ghost"})


# -- loading --------------------------------------------------------------------------------


def test_default_catalog_pins_the_embedded_model() -> None:
    entry = default_catalog().pinned()
    assert entry.id == "embedded"
    assert entry.provider == "embedded"
    assert entry.wire_model_id == "sparrow-decider"
    assert entry.max_concurrent == 2
    assert entry.max_context_tokens >= 32768
    assert entry.tokenizer == "cl100k_base"
    assert entry.max_options == 255


def test_load_catalog_without_path_or_env_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CATALOG_ENV, raising=False)
    assert load_catalog().pinned().id == "embedded"


CATALOG_TEXT = """
[pins]
decision = "jev"

[[entries]]
id = "local"
provider = "fake"
wire_model_id = "fake-1"
max_context_tokens = 1000
max_concurrent = 3

[[entries]]
id = "jev"
provider = "systemone"
wire_model_id = "jev-latest"
base_url = "https://api.example.test"
api_key_env = "TYPESAFE_API_KEY"
tokenizer = "o200k_base"
max_context_tokens = 65536
tpm = 15000000
rpm = 1200
input_price_per_million = 1
max_options = 255
max_levels = 10
"""


def test_load_catalog_from_path(tmp_path: Path) -> None:
    catalog = load_catalog(_write(tmp_path, CATALOG_TEXT))
    assert list(catalog.entries) == ["local", "jev"]
    jev = catalog.pinned()
    assert jev.id == "jev"
    assert jev.url == "https://api.example.test/v1/systemone"
    assert (jev.tpm, jev.rpm, jev.max_concurrent) == (15_000_000, 1200, None)
    assert jev.input_price_per_million == 1.0
    assert isinstance(jev.input_price_per_million, float)
    assert jev.tokenizer == "o200k_base"
    assert catalog.entry("local").max_concurrent == 3


def test_load_catalog_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CATALOG_ENV, str(_write(tmp_path, CATALOG_TEXT)))
    assert load_catalog().pinned().id == "jev"


def test_env_path_that_does_not_exist_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CATALOG_ENV, str(tmp_path / "nowhere.toml"))
    with pytest.raises(CatalogError, match=r"nowhere\.toml \(from \$HARNESS_CATALOG\) does not"):
        load_catalog()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[entries]\n", "not valid TOML"),
        ("models = 1\n", "unknown top-level key(s) models"),
        ('[[entries]]\nid = "x"\nmax_concurent = 1\n', "catalog entry 'x': unknown key(s) max_con"),
        ('[[entries]]\nid = "x"\nprovider = "fake"\n', "catalog entry 'x': wire_model_id is req"),
        (
            '[[entries]]\nid = "x"\nprovider = "fake"\nwire_model_id = "m"\nmax_context_tokens'
            ' = "big"\nmax_concurrent = 1\n',
            "catalog entry 'x': max_context_tokens has the wrong type (str)",
        ),
        (
            '[[entries]]\nid = "x"\nprovider = "fake"\nwire_model_id = "m"\nmax_context_tokens'
            " = 10\ntpm = 5\nmax_concurrent = 1\n",
            "catalog entry 'x': both tpm and max_concurrent",
        ),
        (
            '[[entries]]\nid = "x"\nprovider = "fake"\nwire_model_id = "m"\nmax_context_tokens'
            " = 10\n",
            "catalog entry 'x': neither tpm nor max_concurrent",
        ),
        ("[pins]\ndecision = 3\n", "[pins] maps a seat to an entry id"),
        ('[pins]\ndecision = "nope"\n', "unknown catalog entry id 'nope'"),
    ],
)
def test_bad_files_are_refused_naming_the_file_entry_and_rule(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(CatalogError) as caught:
        load_catalog(path)
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_decision_timeout_is_read_from_toml_as_seconds(tmp_path: Path) -> None:
    text = """
[[entries]]
id = "slow-llm"
provider = "openai-completions"
wire_model_id = "gemma-3-270m"
base_url = "http://127.0.0.1:8800"
max_context_tokens = 8192
max_concurrent = 1
decision_timeout_s = 900

[pins]
decision = "slow-llm"
"""
    entry = load_catalog(_write(tmp_path, text)).pinned()
    assert entry.decision_timeout_s == 900.0
    assert isinstance(entry.decision_timeout_s, float)
    with pytest.raises(CatalogError, match="decision_timeout_s has the wrong type"):
        load_catalog(_write(tmp_path, text.replace("= 900", '= "15 min"')))


def test_decision_entry_is_what_resolve_decision_resolves_or_none_where_it_refuses() -> None:
    catalog = Catalog([_entry("a"), _entry("b"), _entry("chatty", kind="chat")], {"chat": "chatty"})
    assert catalog.decision_entry(None) is None  # no decision pin: resolve_decision refuses
    assert catalog.decision_entry("chatty") is None  # not a decision entry
    assert catalog.decision_entry("nope") is None  # unknown
    assert catalog.decision_entry("b") is catalog.resolve_decision("b", asked_by="job-1")
    catalog.pin("decision", "a")
    assert catalog.decision_entry(None) is catalog.resolve_decision(None, asked_by="job-1")
    catalog.pin("decision", "b")  # a pin changed between calls is followed
    assert catalog.decision_entry(None) is catalog.entry("b")


# -- sub-tables that may name a file beside the catalog ---------------------------------------

_FAKE_ENTRY = (
    '[[entries]]\nid = "x"\nprovider = "fake"\nwire_model_id = "m"\nmax_context_tokens = 10\n'
    "max_concurrent = 1\n"
)
_SUB_FILES = [
    pytest.param(
        "calibration",
        "maps.toml",
        'select = { method = "platt", a = 2.0, b = 0.0 }\n',
        'nope = { method = "platt" }\n',
        "TOML",
        id="calibration",
    ),
    pytest.param(
        "examples",
        "shots.json",
        '{"format": "harness-examples", "version": 1, "drawn_from": "decisions"}',
        '{"format": "harness-examples", "version": 1, "drawn_from": "decisions", "nope": []}',
        "JSON",
        id="examples",
    ),
]


@pytest.mark.parametrize(("key", "name", "good", "wrong", "language"), _SUB_FILES)
def test_a_sub_table_or_the_file_it_names_is_read_the_same_way(
    tmp_path: Path, key: str, name: str, good: str, wrong: str, language: str
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / name).write_text(good, encoding="utf-8")
    named = f'[entries.{key}]\nfile = "sub/{name}"\n'
    entry = load_catalog(_write(tmp_path, _FAKE_ENTRY + named)).entry("x")
    assert getattr(entry, key) is not None  # read relative to the catalog's folder

    (tmp_path / "sub" / name).write_text("{not " + language, encoding="utf-8")
    refusals = [
        (named, f"{key} file sub/{name} is not valid {language} ("),
        (f'[entries.{key}]\nfile = "gone/{name}"\n', f"{key} file gone/{name} cannot be read ("),
        (f'[entries.{key}]\nfile = "{name}"\nfitted_on = "dev"\n', f"{key}.file must be the only"),
    ]
    for table, message in refusals:
        path = _write(tmp_path, _FAKE_ENTRY + table)
        with pytest.raises(CatalogError) as caught:
            load_catalog(path)
        shown = str(caught.value)
        assert shown.startswith(f"{path}: catalog entry 'x': {message}"), shown
        assert "\n" not in shown

    (tmp_path / "sub" / name).write_text(wrong, encoding="utf-8")
    with pytest.raises(CatalogError) as caught:
        load_catalog(_write(tmp_path, _FAKE_ENTRY + named))
    inside = f"catalog entry 'x' ({key} file sub/{name}): unknown {key} key 'nope'"
    assert inside in str(caught.value), str(caught.value)
