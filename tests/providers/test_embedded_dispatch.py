"""The embedded model through the dispatcher: the default catalog's pin, admission included."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pytest

from harness.admission import Admission
from harness.catalog import CatalogEntry, default_catalog
from harness.decision import Choice, DecisionRequest, Noul
from harness.jobs import Dispatcher, EventKind, JobEvent
from harness.providers import _embedded
from harness.providers._embedded import INLINE_BYTES, EmbeddedDecisionClient
from harness.thinker import DecisionCall
from harness.tools import Workflow

REQUEST = DecisionRequest(
    "The board approved raising the Pro plan from 12 to 15 EUR per seat from 1 March.",
    {
        "topic": Choice(
            "What is this about?",
            {"price": "a price or a fee", "weather": "the weather", "sport": "a sports match"},
        ),
        "decided": Noul("Is a decision stated?"),
    },
)


@pytest.mark.parametrize("inline_bytes", [INLINE_BYTES, 0], ids=["on-the-loop", "on-workers"])
async def test_the_default_catalog_runs_the_embedded_model_under_its_gate(
    monkeypatch: pytest.MonkeyPatch, inline_bytes: int
) -> None:
    catalog = default_catalog()
    entry = catalog.pinned()
    assert entry.provider == "embedded"
    assert entry.max_concurrent is not None
    admission = Admission()
    gate = admission.gate_for(entry)
    peaks: list[int] = []
    events: list[JobEvent] = []
    real_ask = _embedded._ask

    def watched_ask(
        model: _embedded._Decider, entry: CatalogEntry, body: Mapping[str, object]
    ) -> dict[str, object]:
        # The gate as the model sees it, whether it runs on the loop's thread (a small request)
        # or on a worker: every model call must hold a permit, never more than the capacity.
        peaks.append(gate.in_use)
        return real_ask(model, entry, body)

    monkeypatch.setattr(_embedded, "_ask", watched_ask)

    client = EmbeddedDecisionClient(inline_bytes=inline_bytes)
    async with Dispatcher(catalog, admission=admission, clients={entry.id: client}) as dispatcher:
        dispatcher.subscribe(events.append, lambda e: e.kind is EventKind.ADMISSION_WAIT)
        calls = [DecisionCall(Workflow(), REQUEST) for _ in range(12)]
        handles = [dispatcher.submit(call) for call in calls]
        responses = await asyncio.gather(*(h.result() for h in handles))

    assert len(peaks) == 12
    assert max(peaks) <= entry.max_concurrent
    assert min(peaks) >= 1
    assert gate.in_use == 0
    await client.aclose()
    if not inline_bytes:  # on the loop's thread a call may end before the next one is admitted
        assert events, "12 calls on a gate of 2 on the workers must wait in line"
    for response, call in zip(responses, calls, strict=True):
        assert response.success
        assert response.choice("topic").choice == "price"
        assert 0.0 <= response.noul("decided").probability <= 1.0
        (record,) = call.record.calls
        assert record.success
        assert record.entry_id == entry.id
        assert record.input_tokens is None  # sparrow reports no usage: billed is unknown
        assert record.counted_input_tokens is not None
        assert record.counted_input_tokens > 0
