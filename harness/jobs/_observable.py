"""Puts every decision call, answered or failed, on its job's record."""

from __future__ import annotations

import asyncio
import logging
import time
from types import MappingProxyType

from harness.catalog import CatalogEntry
from harness.decision import DecisionRequest, DecisionResponse
from harness.jobs._record import JobRecord, ModelCall
from harness.providers import CalibratedResponse, DecisionClient, Redaction

__all__ = ["ObservableDecisionClient", "record_answered", "record_failed"]

log = logging.getLogger("harness.jobs")


class ObservableDecisionClient:
    """A decision client that records each call on ``record``: its answers or its reason, billed
    and counted input tokens, latency, served model, request id, and cost where the entry has a
    price. It never logs a state or a key."""

    __slots__ = ("_counted", "_counted_by", "_inner", "_record")

    def __init__(
        self,
        inner: DecisionClient,
        record: JobRecord,
        *,
        counted_input_tokens: int | None = None,
        counted_by: str | None = None,
    ) -> None:
        self._inner = inner
        self._record = record
        self._counted = counted_input_tokens
        self._counted_by = counted_by  # how the count was found (harness.catalog.CountedBy)

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        """Ask the inner client and record the outcome, then return or re-raise it."""
        start = time.perf_counter()
        try:
            response = await self._inner.decide(request, entry, timeout=timeout)
        except BaseException as error:
            record_failed(
                self._record,
                entry,
                request,
                error,
                time.perf_counter() - start,
                self._counted,
                self._counted_by,
            )
            raise
        record_answered(self._record, entry, response, self._counted, self._counted_by)
        return response

    async def aclose(self) -> None:
        """The inner client belongs to the dispatcher: nothing to close here."""


def record_failed(
    record: JobRecord,
    entry: CatalogEntry,
    request: DecisionRequest,
    error: BaseException,
    latency: float,
    counted: int | None,
    counted_by: str | None,
) -> None:
    """Put a call that raised ``error`` after ``latency`` seconds on ``record``, its reason
    redacted (our clients redact at the source; any other client's text is redacted here)."""
    if isinstance(error, asyncio.CancelledError):
        reason = "cancelled before an answer (the job timed out or was cancelled)"
    else:
        reason = Redaction.of(request, key=entry.api_key).apply(str(error) or type(error).__name__)
    request_id = getattr(error, "request_id", None)
    record._add_made(
        _model_call,
        entry,
        None,
        reason,
        latency,
        request_id if isinstance(request_id, str) else None,
        counted,
        counted_by,
    )
    log.info("decision on %s failed after %.3f s: %s", entry.id, latency, reason)


def record_answered(
    record: JobRecord,
    entry: CatalogEntry,
    response: DecisionResponse,
    counted: int | None,
    counted_by: str | None,
) -> None:
    """Put the call ``response`` answered (or refused) on ``record``."""
    record._add_made(
        _model_call,
        entry,
        response,
        response.failure,
        response.latency,
        response.request_id,
        counted,
        counted_by,
    )
    if log.isEnabledFor(logging.DEBUG):
        log.debug(
            "decision on %s answered in %.3f s (model %s)",
            entry.id,
            response.latency,
            response.model,
        )


def _model_call(
    entry: CatalogEntry,
    response: DecisionResponse | None,
    reason: str | None,
    latency: float,
    request_id: str | None,
    counted: int | None,
    counted_by: str | None,
) -> ModelCall:
    """The record of one call (made when the record is read: everything here is a value)."""
    # An in-process model bills nothing: its call carries no billed count, whatever the client
    # put in the response (one rule for every view, catalog.IN_PROCESS_PROVIDERS).
    billed = response.input_tokens if response is not None and not entry.in_process else None
    answered = response is not None and response.success
    calibrated = response if isinstance(response, CalibratedResponse) else None
    # A call is priced by what the server billed, else by harness's own count of the body it
    # answered; a call that failed is never priced.
    tokens = billed if billed is not None else counted
    cost = entry.cost(tokens) if answered and tokens is not None else None
    return ModelCall(
        entry_id=entry.id,
        provider=entry.provider,
        success=answered,
        answers=(
            calibrated.raw_answers
            if calibrated is not None
            else response.answers
            if response is not None
            else MappingProxyType({})
        ),
        reason=reason,
        input_tokens=billed,
        counted_input_tokens=counted,
        latency=latency,
        model=response.model if response is not None else None,
        request_id=request_id,
        cost=cost,
        counted_by=counted_by,
        reading=response.reading if response is not None else None,
        calibrated=calibrated.answers if calibrated is not None else None,
    )
