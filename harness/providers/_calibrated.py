"""Applies a catalog entry's calibration to its answers before a thinker reads them.

:class:`CalibratedDecisionClient` wraps any client (a provider's, a fake, a cassette's replay):
it asks the inner client, then puts each answer through the map of its question's role in the
entry's ``calibration`` (:class:`harness.catalog.Calibration`). Its response reads as the
calibrated answers and keeps the model's own as :attr:`CalibratedResponse.raw_answers`, so the
job's record holds both (:class:`harness.jobs.ModelCall`: ``answers`` as the model gave them,
``calibrated`` as the thinker read them) and a cassette keeps what the model said: a replay
applies the calibration again.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from harness.catalog import CatalogEntry
from harness.decision import Answer, DecisionRequest, DecisionResponse
from harness.decision._internal import checked_answers
from harness.providers._client import DecisionClient

__all__ = ["CalibratedDecisionClient", "CalibratedResponse", "calibrated"]


def _frozen(answers: Mapping[str, Answer]) -> Mapping[str, Answer]:
    return MappingProxyType(dict(answers))


@attrs.frozen
class CalibratedResponse(DecisionResponse):
    """A response whose answers went through the entry's calibration; ``raw_answers`` are the
    model's own, as it gave them."""

    raw_answers: Mapping[str, Answer] = attrs.field(factory=dict, converter=_frozen)


class CalibratedDecisionClient:
    """A decision client applying ``entry.calibration`` (when the entry has one) to the inner
    client's answers; a failed call, an entry without one, or an answer from another model than
    the one the calibration was fitted on (its ``model``) passes through unchanged."""

    def __init__(self, inner: DecisionClient) -> None:
        self.inner = inner

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        """Ask the inner client, then calibrate its answers with the entry's maps."""
        response = await self.inner.decide(request, entry, timeout=timeout)
        calibration = entry.calibration
        if calibration is None or not response.success:
            return response
        if not calibration.applies_to(response.model):
            return response  # fitted on another model: its maps say nothing about this one
        asked = response.request
        return CalibratedResponse(
            request=asked,
            # the maps keep each checked answer's kind, options and levels: not checked again
            answers=checked_answers(asked, calibration.apply(asked, response.answers)),
            input_tokens=response.input_tokens,
            model=response.model,
            request_id=response.request_id,
            latency=response.latency,
            raw_answers=response.answers,
        )

    async def aclose(self) -> None:
        """The inner client belongs to whoever made it: nothing to close here."""


def calibrated(client: DecisionClient, entry: CatalogEntry) -> DecisionClient:
    """``client`` wrapped to apply ``entry``'s calibration, or ``client`` itself when the entry
    has none."""
    return client if entry.calibration is None else CalibratedDecisionClient(client)
