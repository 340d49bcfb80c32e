"""CONTRACT.md "Resolution"."""

from __future__ import annotations

import re

import pytest

from harness.catalog import Catalog, CatalogEntry, CatalogError, ContextCeilingError
from harness.decision import Choice, DecisionRequest
from harness.jobs import DecisionBinding, Dispatcher
from harness.providers import FakeDecisionModel
from harness.thinker import DecisionCall
from harness.tools import Workflow

REQUEST = DecisionRequest("state", {"q": Choice("Pick", {"a": None, "b": None})})


def entry(entry_id: str, *, kind: str = "decision", ceiling: int = 100_000) -> CatalogEntry:
    return CatalogEntry(
        id=entry_id,
        provider="fake",
        kind=kind,
        wire_model_id=f"{entry_id}-model",
        max_context_tokens=ceiling,
        max_concurrent=2,
    )


async def test_the_catalog_pin_resolves_and_a_new_pin_changes_the_entry() -> None:
    catalog = Catalog([entry("one"), entry("two")], {"decision": "one"})
    model = FakeDecisionModel()
    async with Dispatcher(catalog, clients={"one": model, "two": model}) as dispatcher:
        first = DecisionCall(Workflow(), REQUEST)
        await dispatcher.run(first)
        catalog.pin("decision", "two")
        second = DecisionCall(Workflow(), REQUEST)
        await dispatcher.run(second)
    assert first.record.calls[0].entry_id == "one"
    assert second.record.calls[0].entry_id == "two"


async def test_no_decision_entry_is_refused_naming_the_job() -> None:
    catalog = Catalog([entry("chat", kind="chat")], {})
    call = DecisionCall(Workflow(), REQUEST)
    async with Dispatcher(catalog) as dispatcher:
        with pytest.raises(CatalogError, match=call.identity.job_id):
            await dispatcher.run(call)


async def test_a_decision_seat_never_resolves_to_a_non_decision_entry_and_the_reverse() -> None:
    catalog = Catalog([entry("chat", kind="chat"), entry("dec")], {"decision": "dec"})
    with pytest.raises(CatalogError, match="not a decision entry"):
        catalog.pin("decision", "chat")
    with pytest.raises(CatalogError, match="chat"):
        catalog.pin("chat", "dec")
    call = DecisionCall(Workflow(), REQUEST).pin_model("chat")
    async with Dispatcher(catalog, clients={"chat": FakeDecisionModel()}) as dispatcher:
        with pytest.raises(CatalogError, match="not a decision entry"):
            await dispatcher.run(call)


def test_a_flat_binding_prices_as_given_and_a_counted_one_above_zero() -> None:
    e = entry("one")
    assert DecisionBinding(pinned="one", flat_tokens=1234).price(e).input_tokens == 1234
    assert DecisionBinding(request=REQUEST).price(e).input_tokens > 0


async def test_a_state_past_the_ceiling_fails_at_resolution_and_sends_nothing() -> None:
    catalog = Catalog([entry("small", ceiling=50)], {"decision": "small"})
    model = FakeDecisionModel()
    big = DecisionRequest("word " * 500, {"q": Choice("Pick", {"a": None, "b": None})})
    count = DecisionBinding(request=big).price(catalog.entry("small")).input_tokens
    async with Dispatcher(catalog, clients={"small": model}) as dispatcher:
        with pytest.raises(ContextCeilingError) as refused:
            await dispatcher.run(DecisionCall(Workflow(), big))
    message = str(refused.value)
    assert "exceeds" in message
    assert str(count) in message
    assert re.search(r"\b50\b", message)
    assert model.requests == []
