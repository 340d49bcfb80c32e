"""What a job needs before it runs: its model bindings, priced and admitted by the dispatcher."""

from __future__ import annotations

import attrs

from harness.catalog import CatalogEntry, Reservation, price, reserve
from harness.decision import DecisionRequest
from harness.providers import wire_body

__all__ = ["DecisionBinding", "Requirements", "ResolvedBinding"]


@attrs.frozen
class DecisionBinding:
    """A decision seat: resolved to ``pinned`` when given, else to the catalog's decision pin.

    The reservation is the request's wire body as the resolved entry would receive it, counted
    under the entry's tokenizer, with no output; ``flat_tokens`` prices a known count as given.
    The dispatcher asks :meth:`reserve`, which counts only what admission or the record needs.
    """

    pinned: str | None = None
    request: DecisionRequest | None = None
    flat_tokens: int | None = None
    seat: str = "decision"

    def __attrs_post_init__(self) -> None:
        if self.request is None and self.flat_tokens is None:
            raise ValueError("a decision binding prices a request or a flat token count: give one")
        if self.flat_tokens is not None and self.flat_tokens < 0:
            raise ValueError(f"flat_tokens must be >= 0, got {self.flat_tokens}")

    def wire_body(self, entry: CatalogEntry) -> bytes | None:
        """The body ``entry`` would receive, or ``None`` for a flat binding."""
        if self.request is None:
            return None
        return wire_body(self.request, entry)

    def price(self, entry: CatalogEntry) -> Reservation:
        """The reservation this binding demands of ``entry``, its body counted exactly."""
        if self.flat_tokens is not None:
            return Reservation(self.flat_tokens, counted_by="given")
        body = self.wire_body(entry)
        assert body is not None
        return price(entry, body)

    def reserve(self, entry: CatalogEntry) -> Reservation:
        """What the dispatcher reserves for this binding on ``entry``: counted when the entry
        needs a count, else the body's byte length (an upper bound; see
        :func:`harness.catalog.reserve`)."""
        if self.flat_tokens is not None:
            return Reservation(self.flat_tokens, counted_by="given")
        assert self.request is not None
        return reserve(entry, wire_body(self.request, entry))


@attrs.frozen
class Requirements:
    """A job's model bindings, read-only; most jobs need none."""

    bindings: tuple[DecisionBinding, ...] = ()

    @classmethod
    def none(cls) -> Requirements:
        """A job that calls no model."""
        return _NONE if cls is Requirements else cls(())

    @classmethod
    def decision(cls, request: DecisionRequest, pinned: str | None = None) -> Requirements:
        """One decision binding pricing ``request``, resolved to ``pinned`` when given: what a
        decision call requires (equal to ``Requirements((DecisionBinding(pinned=pinned,
        request=request),))``, made without attrs' generic steps: a request needs no check)."""
        if cls is not Requirements or request is None:
            return cls((DecisionBinding(pinned=pinned, request=request),))
        binding = _new(DecisionBinding)
        _set_pinned(binding, pinned)
        _set_request(binding, request)
        _set_flat_tokens(binding, None)
        _set_seat(binding, "decision")
        requirements = _new(Requirements)
        _set_bindings(requirements, (binding,))
        return requirements


_NONE: Requirements = Requirements(())
"""The requirements of every job that calls no model (a value, so one is enough)."""

# The frozen classes here are made on every call: their slots are set directly (what attrs'
# __init__ does through object.__setattr__, a generic call per field), where no field needs a
# check. tests/jobs/test_call_cost.py holds each way equal to the public constructor.
_new = object.__new__
_set_pinned = DecisionBinding.__dict__["pinned"].__set__
_set_request = DecisionBinding.__dict__["request"].__set__
_set_flat_tokens = DecisionBinding.__dict__["flat_tokens"].__set__
_set_seat = DecisionBinding.__dict__["seat"].__set__
_set_bindings = Requirements.__dict__["bindings"].__set__


@attrs.frozen
class ResolvedBinding:
    """A binding as the dispatcher resolved it: the entry and the priced reservation."""

    binding: DecisionBinding
    entry: CatalogEntry
    reservation: Reservation


_set_binding = ResolvedBinding.__dict__["binding"].__set__
_set_entry = ResolvedBinding.__dict__["entry"].__set__
_set_reservation = ResolvedBinding.__dict__["reservation"].__set__


def resolved(
    binding: DecisionBinding, entry: CatalogEntry, reservation: Reservation
) -> ResolvedBinding:
    """``ResolvedBinding(binding, entry, reservation)``, its slots set directly (the dispatcher's
    way: one a call)."""
    made = _new(ResolvedBinding)
    _set_binding(made, binding)
    _set_entry(made, entry)
    _set_reservation(made, reservation)
    return made
