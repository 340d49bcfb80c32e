"""Pricing a decision request: its wire body counted under the entry's tokenizer."""

from __future__ import annotations

import attrs

from harness.errors import HarnessError

from ._entry import CatalogEntry
from ._tokenizers import tokenizer

__all__ = ["ContextCeilingError", "Reservation", "check_ceiling", "price"]


def _not_negative(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0, not {value}")


@attrs.frozen
class Reservation:
    """The tokens a call reserves on its entry: the input counted, the output (free) 0."""

    input_tokens: int = attrs.field(validator=_not_negative)
    output_tokens: int = attrs.field(default=0, validator=_not_negative)

    @property
    def total(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


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


def price(entry: CatalogEntry, body: bytes) -> Reservation:
    """The reservation of the encoded wire ``body`` on ``entry``: its token count, output 0."""
    return Reservation(input_tokens=tokenizer(entry.tokenizer).count(body))


def check_ceiling(entry: CatalogEntry, reservation: Reservation) -> None:
    """Refuse a reservation over ``entry.max_context_tokens`` with :class:`ContextCeilingError`."""
    if reservation.total > entry.max_context_tokens:
        raise ContextCeilingError(entry.id, reservation.total, entry.max_context_tokens)
