"""A decision call records its own calls (no recording and calibrating clients wrapped around
its client, each a layer of calls on every decision); ``ObservableDecisionClient`` around
``CalibratedDecisionClient`` still writes the same record for any other caller: answered
(the model's answers and the calibrated ones) and failed (the reason redacted)."""

from __future__ import annotations

import contextlib

import attrs

from harness.catalog import CatalogEntry, default_catalog
from harness.decision import DecisionRequest, DecisionResponse
from harness.errors import ExternalServiceError
from harness.jobs import Dispatcher, JobRecord, ModelCall, ObservableDecisionClient
from harness.providers import CalibratedDecisionClient, DecisionClient
from harness.testing import FakeDecisionModel
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .stack import REQUEST


class _Refusing:
    """A client whose server refuses, echoing the request's state (as servers do)."""

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        raise ExternalServiceError(f"HTTP 400: cannot read state {request.state!r}", status=400)

    async def aclose(self) -> None:
        """Nothing to close."""


def _comparable(call: ModelCall) -> ModelCall:
    """The call without what differs between two calls of one request: the time it took and the
    fake server's request id (a counter)."""
    return attrs.evolve(call, latency=0.0, request_id=None)


async def _both_ways(client: DecisionClient) -> tuple[ModelCall, ModelCall]:
    catalog = default_catalog()
    entry = catalog.resolve_decision(None, asked_by="test")
    assert entry.calibration is not None  # the shipped entry's maps apply
    call = DecisionCall(Workflow(), REQUEST)
    async with Dispatcher(catalog, clients={entry.id: client}) as dispatcher:
        with contextlib.suppress(ExternalServiceError):
            await dispatcher.run(call)
    (own,) = call.record.calls
    record = JobRecord()
    wrapped = ObservableDecisionClient(
        CalibratedDecisionClient(client),
        record,
        counted_input_tokens=own.counted_input_tokens,
        counted_by=own.counted_by,
    )
    with contextlib.suppress(ExternalServiceError):
        await wrapped.decide(REQUEST, entry)
    (theirs,) = record.calls
    return own, theirs


async def test_an_answered_call_is_recorded_alike_both_ways() -> None:
    served = default_catalog().resolve_decision(None, asked_by="test").calibration
    assert served is not None
    own, theirs = await _both_ways(FakeDecisionModel(model=served.model))
    assert own.success
    assert own.calibrated is not None  # calibrated: the record keeps both
    assert own.calibrated != own.answers
    assert _comparable(own) == _comparable(theirs)


async def test_a_failed_call_is_recorded_alike_both_ways_its_reason_redacted() -> None:
    own, theirs = await _both_ways(_Refusing())
    assert not own.success
    assert own.reason is not None
    assert "HTTP 400" in own.reason
    assert str(REQUEST.state) not in own.reason
    assert _comparable(own) == _comparable(theirs)
