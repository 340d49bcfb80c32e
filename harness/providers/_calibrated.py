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
from harness.decision._internal import checked_answers, slot_setter
from harness.providers._client import DecisionClient

__all__ = ["CalibratedDecisionClient", "CalibratedResponse", "calibrate", "calibrated_client"]


def _frozen(answers: Mapping[str, Answer]) -> Mapping[str, Answer]:
    return MappingProxyType(dict(answers))


@attrs.frozen
class CalibratedResponse(DecisionResponse):
    """A response whose answers went through the entry's calibration; ``raw_answers`` are the
    model's own, as it gave them."""

    raw_answers: Mapping[str, Answer] = attrs.field(factory=dict, converter=_frozen)


# each field's setter, as DecisionResponse's own __init__ sets it
_REQUEST, _ANSWERS, _INPUT_TOKENS, _MODEL, _REQUEST_ID, _LATENCY, _FAILURE, _READING = (
    slot_setter(DecisionResponse, field.name) for field in attrs.fields(DecisionResponse)
)
_RAW_ANSWERS = slot_setter(CalibratedResponse, "raw_answers")


def _calibrated_response(
    response: DecisionResponse, answers: Mapping[str, Answer]
) -> CalibratedResponse:
    """What ``CalibratedResponse(request=response.request, answers=answers, input_tokens=...,
    model=..., request_id=..., latency=..., raw_answers=response.answers)`` makes, without its
    checks: every value but ``answers`` comes from ``response``, a successful response its own
    constructor checked (``failure`` and ``reading`` left ``None``, as that call leaves them);
    ``answers`` are the calibration's answers to the same request, checked (see
    :func:`checked_answers`); the raw answers are ``response.answers``, immutable already (a
    frozen map: ``DecisionResponse`` makes them one), so they are shown read-only without a
    copy. ``tests/evals/test_calibration_client.py`` holds it equal to the constructor."""
    made = CalibratedResponse.__new__(CalibratedResponse)
    _REQUEST(made, response.request)
    _ANSWERS(made, answers)
    _INPUT_TOKENS(made, response.input_tokens)
    _MODEL(made, response.model)
    _REQUEST_ID(made, response.request_id)
    _LATENCY(made, response.latency)
    _FAILURE(made, None)
    _READING(made, None)
    _RAW_ANSWERS(made, MappingProxyType(response.answers))
    return made


def calibrate(response: DecisionResponse, entry: CatalogEntry) -> DecisionResponse:
    """``response`` with ``entry.calibration`` applied: a :class:`CalibratedResponse` holding
    the calibrated answers and the model's own, or ``response`` itself when the entry has no
    calibration, the call failed, or the answer came from another model than the one the
    calibration was fitted on (its ``model``)."""
    calibration = entry.calibration
    if calibration is None or response.failure is not None:  # not response.success
        return response
    fitted = calibration.model  # Calibration.applies_to, without a call of its own
    if fitted is not None and response.model != fitted:
        return response  # fitted on another model: its maps say nothing about this one
    asked = response.request
    # the maps keep each checked answer's kind, options and levels: not checked again
    return _calibrated_response(
        response, checked_answers(asked, calibration.apply(asked, response.answers))
    )


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
        return calibrate(await self.inner.decide(request, entry, timeout=timeout), entry)

    async def aclose(self) -> None:
        """The inner client belongs to whoever made it: nothing to close here."""


def calibrated_client(client: DecisionClient, entry: CatalogEntry) -> DecisionClient:
    """``client`` wrapped to apply ``entry``'s calibration, or ``client`` itself when the entry
    has none."""
    return client if entry.calibration is None else CalibratedDecisionClient(client)
