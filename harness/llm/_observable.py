"""Puts every decision call, answered or failed, on its job's record."""

from __future__ import annotations

import asyncio
import logging
import time
from types import MappingProxyType

from harness.decision import DecisionRequest, DecisionResponse
from harness.jobs import JobRecord, ModelCall
from harness.llm._client import DecisionClient
from harness.models import CatalogEntry

__all__ = ["ObservableDecisionClient"]

log = logging.getLogger("harness.llm")


class ObservableDecisionClient:
    """A decision client that records each call on ``record``: its answers or its reason, billed
    and counted input tokens, latency, served model, request id, and cost where the entry has a
    price. It never logs a state or a key."""

    def __init__(
        self,
        inner: DecisionClient,
        record: JobRecord,
        *,
        counted_input_tokens: int | None = None,
    ) -> None:
        self._inner = inner
        self._record = record
        self._counted = counted_input_tokens

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        """Ask the inner client and record the outcome, then return or re-raise it."""
        start = time.perf_counter()
        try:
            response = await self._inner.decide(request, entry, timeout=timeout)
        except BaseException as error:
            latency = time.perf_counter() - start
            reason = "cancelled" if isinstance(error, asyncio.CancelledError) else str(error)
            self._add(entry, None, reason or type(error).__name__, latency)
            log.info("decision on %s failed after %.3f s: %s", entry.id, latency, reason)
            raise
        self._add(entry, response, response.failure, response.latency)
        log.debug(
            "decision on %s answered in %.3f s (model %s)",
            entry.id,
            response.latency,
            response.model,
        )
        return response

    def _add(
        self,
        entry: CatalogEntry,
        response: DecisionResponse | None,
        reason: str | None,
        latency: float,
    ) -> None:
        billed = response.input_tokens if response is not None else None
        tokens = billed if billed is not None else self._counted
        price = entry.input_price_per_million
        cost = None if price is None or tokens is None else tokens * price / 1_000_000
        self._record.add(
            ModelCall(
                entry_id=entry.id,
                provider=entry.provider,
                success=response is not None and response.success,
                answers=response.answers if response is not None else MappingProxyType({}),
                reason=reason,
                input_tokens=billed,
                counted_input_tokens=self._counted,
                latency=latency,
                model=response.model if response is not None else None,
                request_id=response.request_id if response is not None else None,
                cost=cost,
            )
        )

    async def aclose(self) -> None:
        """The inner client belongs to the dispatcher: nothing to close here."""
