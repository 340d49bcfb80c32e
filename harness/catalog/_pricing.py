"""Pricing a decision request: its wire body counted under the entry's tokenizer, or bounded.

Two ways to price a body (``Reservation.counted_by`` says which one was used):

* ``"tokenizer"``: the body counted under the entry's tokenizer (:func:`price`). Exact, and
  about 0.1-0.3 ms for a few kilobytes; a window-bounded entry needs it to reserve, an entry with
  a price needs it to cost a call its server did not bill.
* ``"bytes"``: the body's UTF-8 byte length, an upper bound on its token count. Every token of
  the byte-level BPE tokenizers harness uses (cl100k_base, o200k_base) stands for at least one
  byte of the text, so a body of ``n`` bytes is at most ``n`` tokens (checked for both encodings
  by a property test). A concurrency-bounded entry without a price only needs the count for its
  context ceiling, and a body no longer than the ceiling in bytes cannot pass it in tokens: it
  need not be counted (:func:`reserve`).

Counts are cached per body (a re-run prices the same bytes again), bounded in total size.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Literal

import attrs

from harness.errors import HarnessError

from ._entry import CatalogEntry
from ._tokenizers import tokenizer

__all__ = [
    "ContextCeilingError",
    "CountedBy",
    "Reservation",
    "check_ceiling",
    "count_tokens",
    "count_with_model",
    "needs_count",
    "price",
    "reserve",
]

CountedBy = Literal["tokenizer", "bytes", "given"]
"""How a reservation's input tokens were found: counted under the entry's tokenizer, bounded by
the body's byte length (an upper bound), or given by the caller (a flat count)."""


def _not_negative(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0, not {value}")


@attrs.frozen
class Reservation:
    """The tokens a call reserves on its entry: the input counted, the output (free) 0.

    ``counted_by`` says how ``input_tokens`` was found (see :data:`CountedBy`); with
    ``"bytes"`` it is an upper bound, never below the real count.
    """

    input_tokens: int = attrs.field(validator=_not_negative)
    output_tokens: int = attrs.field(default=0, validator=_not_negative)
    counted_by: CountedBy = "tokenizer"

    @property
    def total(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    @property
    def exact(self) -> bool:
        """Whether ``input_tokens`` is a count (not the byte-length bound)."""
        return self.counted_by != "bytes"


class ContextCeilingError(HarnessError, ValueError):
    """A request is larger than its entry's context: names the count and the ceiling."""

    def __init__(self, entry_id: str, tokens: int, ceiling: int) -> None:
        super().__init__(
            f"decision request for entry {entry_id!r} is {tokens} tokens, which exceeds the "
            f"entry's max_context_tokens of {ceiling}: shorten the state or pick an entry with "
            "a larger context"
        )
        self.entry_id = entry_id
        self.tokens = tokens
        self.ceiling = ceiling


_CACHE_BYTES: Final = 8 * 1024 * 1024
"""The most body bytes whose counts are kept (least recently used out first)."""

_counts: OrderedDict[tuple[str, bytes], int] = OrderedDict()
_cached_bytes = 0
_lock = threading.Lock()


def count_tokens(encoding: str, body: bytes) -> int:
    """The token count of ``body`` under ``encoding``, cached per body (thread-safe)."""
    global _cached_bytes
    key = (encoding, body)
    with _lock:
        found = _counts.get(key)
        if found is not None:
            _counts.move_to_end(key)
            return found
    counted = tokenizer(encoding).count(body)
    if len(body) <= _CACHE_BYTES // 8:
        with _lock:
            if key not in _counts:
                _counts[key] = counted
                _cached_bytes += len(body)
                while _cached_bytes > _CACHE_BYTES:
                    (_, old), _ = _counts.popitem(last=False)
                    _cached_bytes -= len(old)
    return counted


_model_counters: dict[str, Callable[[CatalogEntry, bytes], int]] = {}


def count_with_model(provider: str, counter: Callable[[CatalogEntry, bytes], int]) -> None:
    """Count the bodies of ``provider``'s entries with ``counter`` (the model's own tokenizer:
    what a model run in this process counts, ``harness.providers``' ``llama``) instead of the
    entry's ``tokenizer``."""
    _model_counters[provider] = counter


def price(entry: CatalogEntry, body: bytes) -> Reservation:
    """The reservation of the encoded wire ``body`` on ``entry``: its token count, output 0."""
    counter = _model_counters.get(entry.provider)
    if counter is not None:
        return Reservation(input_tokens=counter(entry, body))
    return Reservation(input_tokens=count_tokens(entry.tokenizer, body))


def needs_count(entry: CatalogEntry) -> bool:
    """Whether every call of ``entry`` must be counted before admission: a window-bounded entry
    reserves its count, a priced one costs what its server did not bill."""
    return entry.tpm is not None or entry.input_price_per_million is not None


def reserve(entry: CatalogEntry, body: bytes) -> Reservation:
    """What a call of ``entry`` sending ``body`` reserves, counting only when it must.

    A concurrency-bounded entry without a price whose body is no longer in bytes than its
    context ceiling is priced at the byte length (``counted_by="bytes"``, an upper bound):
    nothing but the ceiling needs its count, and that bound cannot pass it. Anything else is
    counted under the entry's tokenizer (:func:`price`).
    """
    size = len(body)
    if (
        entry.tpm is None
        and entry.input_price_per_million is None  # needs_count(entry), inlined
        and size <= entry.max_context_tokens
    ):
        made = _by_bytes.get(size)
        if made is None:
            made = Reservation(input_tokens=size, counted_by="bytes")
            if size < _BY_BYTES_LENGTHS:
                _by_bytes[size] = made
        return made
    return price(entry, body)


_BY_BYTES_LENGTHS: Final = 16384
"""Byte-length reservations are made once per length below this (a reservation is a value)."""

_by_bytes: dict[int, Reservation] = {}


def check_ceiling(entry: CatalogEntry, reservation: Reservation) -> None:
    """Refuse a reservation over ``entry.max_context_tokens`` with :class:`ContextCeilingError`."""
    if reservation.total > entry.max_context_tokens:
        raise ContextCeilingError(entry.id, reservation.total, entry.max_context_tokens)
