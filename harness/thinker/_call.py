"""The decision call: a job whose input is a decision request and whose output is the response."""

from __future__ import annotations

from time import perf_counter
from typing import ClassVar, Final

from harness.catalog import DEFAULT_DECISION_TIMEOUT, CatalogEntry
from harness.decision import DecisionRequest, DecisionResponse
from harness.errors import HarnessError
from harness.jobs import (
    DEFAULT_TIMEOUT,
    DEFAULT_UPSTREAM_RETRIES,
    DefaultTimeout,
    Job,
    JobContext,
    Requirements,
    RetryPolicy,
)
from harness.jobs._internal import record_answered, record_failed
from harness.providers import calibrate
from harness.tools import Identifiable

__all__ = ["DECISION_TIMEOUT", "DecisionCall", "MissingRequestError"]

DECISION_TIMEOUT: Final = DEFAULT_DECISION_TIMEOUT
"""A decision's limit when neither the call nor its entry (``decision_timeout_s``) sets one."""


class MissingRequestError(HarnessError, RuntimeError):
    """The requirements of a decision call were captured before its request was set."""


class DecisionCall(Job[DecisionResponse]):
    """Asks a decision model one request, one round trip.

    It carries no tool name, so no model can call it. ``pin_model(entry)`` binds that exact
    catalog entry; otherwise the catalog's decision pin resolves it. Its requirements price the
    request, so they cannot be captured before the request is set.

    ``timeout`` bounds the call over all its attempts and pauses (monotonic clock; waiting for
    admission does not count); left out, the resolved entry's ``decision_timeout_s`` does
    (:data:`DECISION_TIMEOUT`, 60 s, when the entry sets none). ``retry`` replaces the entry's
    retry policy for this call; ``upstream_retries`` sets the number of re-runs of whichever
    policy applies.
    """

    default_timeout: ClassVar[float | None] = DECISION_TIMEOUT
    timeout_from_entry: ClassVar[bool] = True
    kind: ClassVar[str] = "decision"
    runs_inline: ClassVar[bool] = True

    def __init__(
        self,
        parent: Identifiable,
        request: DecisionRequest | None = None,
        *,
        upstream_retries: int | None = DEFAULT_UPSTREAM_RETRIES,
        timeout: float | DefaultTimeout | None = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(parent, timeout=timeout, upstream_retries=upstream_retries, retry=retry)
        self.request = request
        self._pinned: str | None = None

    def limit_by(self, entry: CatalogEntry) -> float | None:
        """The entry's decision limit (``decision_timeout_s``, else 60 s)."""
        return entry.decision_timeout

    def pin_model(self, entry: CatalogEntry | str) -> DecisionCall:
        """Bind this call to ``entry`` (an entry or its id); returns the call."""
        self._pinned = entry if isinstance(entry, str) else entry.id
        return self

    @property
    def pinned(self) -> str | None:
        """The pinned entry id, ``None`` when the catalog's pin decides."""
        return self._pinned

    def requirements(self) -> Requirements:
        """One decision binding pricing the request."""
        if self.request is None:
            raise MissingRequestError(
                f"{self.describe()} has no request: set the decision request before its "
                "requirements are captured (they price the request)"
            )
        return Requirements.decision(self.request, self._pinned)

    async def run(self, context: JobContext) -> DecisionResponse:
        """Send the request to the resolved entry's client, apply the entry's calibration when
        it has one, and put the call on the job's record, answered or failed (what
        :class:`~harness.jobs.ObservableDecisionClient` around
        :class:`~harness.providers.CalibratedDecisionClient` does, in one frame)."""
        request = self.request
        assert request is not None
        (resolved,) = context.resolved
        entry = resolved.entry
        reservation = resolved.reservation
        client = context.dispatcher.client_for(entry)
        start = perf_counter()
        try:
            response = await client.decide(request, entry, timeout=context.remaining())
            if entry.calibration is not None:
                response = calibrate(response, entry)
        except BaseException as error:
            record_failed(
                self.record,
                entry,
                request,
                error,
                perf_counter() - start,
                reservation.input_tokens,
                reservation.counted_by,
            )
            raise
        record_answered(
            self.record, entry, response, reservation.input_tokens, reservation.counted_by
        )
        return response
