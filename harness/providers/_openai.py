"""The OpenAI Decisions client: ``POST {base_url}/v1/decisions``.

The same round trip, limits, one-option shortcut and status classification as the System One
client (:mod:`harness.providers._systemone`, :mod:`harness.providers._http`); the wire is
:mod:`harness.decision.openai` (questions as a list, ``predicate`` for a noul, a per-question
``refusal`` kept in the response as a :class:`harness.decision.RefusedAnswer`).
"""

from __future__ import annotations

from typing import ClassVar

from harness.decision import openai as openai_codec

from ._systemone import HttpDecisionClient, WireCodec

__all__ = ["OpenAIDecisionsClient"]


class OpenAIDecisionsClient(HttpDecisionClient):
    """A :class:`~harness.providers.DecisionClient` speaking OpenAI Decisions (``POST
    /v1/decisions``).

    A question the model refused comes back as a :class:`harness.decision.RefusedAnswer` under its
    id; the others are answered as usual. Bearer token, limits and classification as
    :class:`harness.providers.SystemOneClient`.
    """

    service: ClassVar[str] = "OpenAI Decisions server"
    codec: ClassVar[WireCodec] = openai_codec
