"""Pricing: the wire body counted under the entry's tokenizer; the context ceiling."""

from __future__ import annotations

import json

import pytest

from harness.catalog import (
    CatalogEntry,
    ContextCeilingError,
    Reservation,
    check_ceiling,
    price,
    tokenizer,
)


def _entry(tokenizer_name: str = "cl100k_base", ceiling: int = 64) -> CatalogEntry:
    return CatalogEntry(
        id="small",
        provider="fake",
        wire_model_id="fake-1",
        tokenizer=tokenizer_name,
        max_context_tokens=ceiling,
        max_concurrent=1,
    )


BODY = json.dumps(
    {
        "model": "fake-1",
        "state": "alpha is due; beta can wait",
        "questions": {"next": {"type": "choice", "instructions": "pick", "criteria": {"a": None}}},
    },
    separators=(",", ":"),
).encode("utf-8")


def test_price_counts_the_body_under_the_entry_tokenizer() -> None:
    reservation = price(_entry(), BODY)
    assert reservation == Reservation(input_tokens=tokenizer("cl100k_base").count(BODY))
    assert reservation.input_tokens > 0
    assert reservation.output_tokens == 0
    hello = price(_entry(), b'"hello world"')
    assert hello.input_tokens == 4  # '"', 'hello', ' world', '"'


def test_price_depends_on_the_tokenizer() -> None:
    text = "Привет, как дела? नमस्ते दुनिया".encode()
    assert price(_entry("cl100k_base"), text).input_tokens == 22
    assert price(_entry("o200k_base"), text).input_tokens == 10


def test_reservation_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="input_tokens must be >= 0"):
        Reservation(-1)
    with pytest.raises(ValueError, match="output_tokens must be >= 0"):
        Reservation(1, -1)
    assert Reservation(5, 2).total == 7


def test_at_the_ceiling_passes() -> None:
    check_ceiling(_entry(ceiling=64), Reservation(64))


def test_over_the_ceiling_names_exceeds_the_count_and_the_ceiling() -> None:
    entry = _entry(ceiling=32768)
    with pytest.raises(ContextCeilingError) as caught:
        check_ceiling(entry, Reservation(40123))
    message = str(caught.value)
    assert "exceeds" in message
    assert "40123" in message
    assert "32768" in message
    assert "'small'" in message
    assert (caught.value.tokens, caught.value.ceiling) == (40123, 32768)
    assert isinstance(caught.value, ValueError)


def test_a_priced_body_past_the_ceiling_is_refused_without_quoting_the_state() -> None:
    secret_state = "confidential " * 100
    body = json.dumps({"model": "fake-1", "state": secret_state}).encode()
    entry = _entry(ceiling=50)
    reservation = price(entry, body)
    assert reservation.input_tokens > 50
    with pytest.raises(ContextCeilingError, match=f"is {reservation.input_tokens} tokens") as c:
        check_ceiling(entry, reservation)
    assert "confidential" not in str(c.value)
