"""Where pricing belongs: a body that cannot pass its ceiling in bytes is not counted before
admission on a concurrency-bounded entry without a price; anything else is counted (cached)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.catalog import (
    KNOWN_ENCODINGS,
    Catalog,
    CatalogEntry,
    ContextCeilingError,
    Reservation,
    _pricing,
    check_ceiling,
    count_tokens,
    needs_count,
    price,
    reserve,
    tokenizer,
)
from harness.decision import Choice, DecisionRequest
from harness.jobs import Dispatcher, Pacing
from harness.testing import FakeSystemOneServer
from harness.thinker import DecisionCall
from harness.tools import Workflow

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.parametrize("encoding", KNOWN_ENCODINGS)
@given(text=st.text())
def test_a_text_is_never_more_tokens_than_utf8_bytes(encoding: str, text: str) -> None:
    body = text.encode("utf-8")
    assert tokenizer(encoding).count(body) <= len(body)


@pytest.mark.parametrize("encoding", KNOWN_ENCODINGS)
@given(value=json_values)
def test_a_compact_json_body_is_never_more_tokens_than_bytes(encoding: str, value: object) -> None:
    body = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert tokenizer(encoding).count(body) <= len(body)


def test_special_token_text_and_worst_cases_stay_under_the_bound() -> None:
    for encoding in KNOWN_ENCODINGS:
        worst = ["<|endoftext|>" * 50, "\U0001f600" * 300, "\x00\x01" * 200, " " * 999, "9" * 77]
        for text in worst:
            body = text.encode("utf-8")
            assert tokenizer(encoding).count(body) <= len(body)


def _entry(**fields: object) -> CatalogEntry:
    base: dict[str, object] = {
        "id": "e",
        "provider": "fake",
        "wire_model_id": "m",
        "max_context_tokens": 100,
    }
    base.update(fields)
    if "tpm" not in base and "max_concurrent" not in base:
        base["max_concurrent"] = 2
    return CatalogEntry(**base)  # type: ignore[arg-type]  # fields of an entry


BODY = b'{"model":"m","state":"alpha is due; beta can wait","questions":{}}'


def test_a_gate_bounded_entry_without_a_price_reserves_the_byte_length() -> None:
    entry = _entry()
    assert not needs_count(entry)
    reservation = reserve(entry, BODY)
    assert reservation == Reservation(len(BODY), counted_by="bytes")
    assert not reservation.exact
    assert reservation.input_tokens >= price(entry, BODY).input_tokens


def test_a_window_bounded_or_priced_entry_is_counted() -> None:
    for entry in (_entry(tpm=10_000), _entry(input_price_per_million=1.0)):
        assert needs_count(entry)
        reservation = reserve(entry, BODY)
        assert reservation.counted_by == "tokenizer"
        assert reservation.exact
        assert reservation.input_tokens == tokenizer(entry.tokenizer).count(BODY)


def test_a_body_longer_in_bytes_than_the_ceiling_is_counted_and_may_still_fit() -> None:
    entry = _entry(max_context_tokens=len(BODY) - 1)
    reservation = reserve(entry, BODY)
    assert reservation.counted_by == "tokenizer"
    check_ceiling(entry, reservation)  # fewer tokens than bytes: it fits
    tight = _entry(max_context_tokens=5)
    with pytest.raises(ContextCeilingError, match="exceeds"):
        check_ceiling(tight, reserve(tight, BODY))


def test_counts_are_cached_per_body_and_the_cache_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_pricing, "_CACHE_BYTES", 4096)
    monkeypatch.setattr(_pricing, "_counts", type(_pricing._counts)())
    monkeypatch.setattr(_pricing, "_cached_bytes", 0)
    bodies = [f'{{"n":{n},"pad":"{"x" * 100}"}}'.encode() for n in range(200)]
    for body in bodies:
        assert count_tokens("cl100k_base", body) == tokenizer("cl100k_base").count(body)
    assert _pricing._cached_bytes <= 4096
    assert sum(len(body) for _, body in _pricing._counts) == _pricing._cached_bytes
    assert ("cl100k_base", bodies[-1]) in _pricing._counts  # the newest stay
    assert ("cl100k_base", bodies[0]) not in _pricing._counts  # the oldest went
    assert count_tokens("o200k_base", bodies[-1]) == tokenizer("o200k_base").count(bodies[-1])


REQUEST = DecisionRequest(
    "The invoice is overdue by ten days.",
    {"act": Choice("What now?", {"remind": "send a reminder", "wait": None})},
)


@pytest.mark.parametrize(
    ("bound", "counted_by"),
    [({"max_concurrent": 2}, "bytes"), ({"tpm": 1_000_000}, "tokenizer")],
    ids=["gate", "bucket"],
)
async def test_the_record_says_what_was_counted_and_how(
    bound: dict[str, int], counted_by: str
) -> None:
    async with FakeSystemOneServer() as server:
        entry = server.entry(**bound)
        catalog = Catalog([entry], {"decision": entry.id})
        async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
            call = DecisionCall(Workflow(), REQUEST)
            assert (await dispatcher.run(call)).success
        (body,) = server.bodies
    (made,) = call.record.calls
    assert made.counted_by == counted_by
    count = tokenizer(entry.tokenizer).count(body)
    expected = len(body) if counted_by == "bytes" else count
    assert made.counted_input_tokens == expected
    assert expected >= count
