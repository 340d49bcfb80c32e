"""CONTRACT.md "Demand"."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from harness.admission import Admission, AdmissionError
from harness.catalog import Catalog, CatalogEntry
from harness.decision import Answer, Choice, DecisionRequest
from harness.jobs import Dispatcher
from harness.providers import FakeDecisionModel
from harness.providers._fake import default_answers
from harness.thinker import DecisionCall
from harness.tools import Workflow

REQUEST = DecisionRequest("state", {"q": Choice("Pick", {"a": None, "b": None})})

GATED = CatalogEntry(
    id="gated", provider="fake", wire_model_id="m", max_context_tokens=10_000, max_concurrent=3
)
WINDOWED = CatalogEntry(
    id="windowed", provider="fake", wire_model_id="m", max_context_tokens=10_000, tpm=100_000
)


async def test_a_concurrency_bounded_entry_holds_one_permit_on_its_gate_during_the_call() -> None:
    admission = Admission()
    seen: list[tuple[str, int, int]] = []

    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        gate = admission.gate_for(GATED)
        seen.append((gate.name, gate.capacity, gate.in_use))
        return default_answers(request)

    catalog = Catalog([GATED], {"decision": "gated"})
    async with Dispatcher(
        catalog, clients={"gated": FakeDecisionModel(policy)}, admission=admission
    ) as dispatcher:
        await dispatcher.run(DecisionCall(Workflow(), REQUEST))
        await dispatcher.run(DecisionCall(Workflow(), REQUEST))
    assert seen == [("gated", 3, 1), ("gated", 3, 1)]
    gate = admission.gate_for(GATED)
    assert gate.in_use == 0
    assert gate.available == 3
    assert admission.gate_for(GATED) is gate


async def test_a_window_bounded_entry_demands_its_priced_tokens_on_its_bucket() -> None:
    now = [0.0]
    admission = Admission(clock=lambda: now[0])
    call = DecisionCall(Workflow(), REQUEST)
    catalog = Catalog([WINDOWED], {"decision": "windowed"})
    priced = call.requirements().bindings[0].price(WINDOWED).input_tokens
    async with Dispatcher(
        catalog, clients={"windowed": FakeDecisionModel()}, admission=admission
    ) as dispatcher:
        await dispatcher.run(call)
    bucket = admission.bucket_for(WINDOWED)
    assert bucket.level == pytest.approx(100_000 - priced)
    demand = admission.demand(WINDOWED, call.requirements().bindings[0].price(WINDOWED))
    assert (demand.kind, demand.name, demand.amount) == ("bucket", "windowed", priced)
    with pytest.raises(AdmissionError, match="window"):
        admission.gate_for(WINDOWED)
