"""The System One client: ``POST {base_url}{path}`` over one pooled aiohttp session.

The wire itself (bodies and replies) is :mod:`harness.decision.systemone`; this module sends it,
times it and classifies what comes back (:mod:`harness.providers._http`). The entry's limits are
checked and one-option choices answered here with certainty, as every provider does
(:mod:`harness.providers._client`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar, Protocol

import attrs

from harness.decision import Answer, DecisionRequest, DecisionResponse
from harness.decision import systemone as systemone_codec
from harness.decision._internal import load_reply
from harness.errors import ExternalServiceError, NotAnAnswerError, RetryableError

from ._client import CheckedClient, local_answers
from ._http import Endpoint, HttpTransport
from ._http_failures import error_message
from ._redact import Redaction

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.decision.systemone import WireReply

__all__ = ["HttpDecisionClient", "SystemOneClient", "WireCodec"]


class WireCodec(Protocol):
    """The two functions of a wire codec module a client needs."""

    def encode_body(self, request: DecisionRequest, model: str) -> bytes:
        """The request body for ``request`` asking ``model``."""
        ...

    def decode_reply(self, request: DecisionRequest, payload: object) -> WireReply:
        """The answers in a decoded reply; raises NotAnAnswerError."""
        ...

    def decode_body(
        self, request: DecisionRequest, body: bytes, *, max_bytes: int, max_depth: int
    ) -> WireReply:
        """The answers in a reply body (any bytes); raises NotAnAnswerError (or a subclass)."""
        ...


class HttpDecisionClient(CheckedClient):
    """A decision client for one wire codec over HTTP; subclasses name the codec and service.

    One pooled session per client, created lazily in the running loop; ``decide`` is one round
    trip (the dispatcher re-runs on a :class:`harness.errors.RetryableError`).
    """

    service: ClassVar[str] = "decision server"
    codec: ClassVar[WireCodec]

    def __init__(self, *, max_connections: int = 0) -> None:
        self._transport = HttpTransport(max_connections=max_connections)
        self._endpoints: dict[str, tuple[CatalogEntry, str | None, Endpoint]] = {}

    def _shared_endpoint(self, entry: CatalogEntry) -> Endpoint:
        """``entry``'s decision endpoint, built once per entry and key (the key is read from the
        environment on every call, so a changed key is sent at once)."""
        key = entry.api_key
        cached = self._endpoints.get(entry.id)
        if cached is not None and cached[0] is entry and cached[1] == key:
            return cached[2]
        endpoint = Endpoint.of(self.service, entry)
        self._endpoints[entry.id] = (entry, endpoint.api_key, endpoint)
        return endpoint

    async def answer(
        self, request: DecisionRequest, entry: CatalogEntry, timeout: float | None
    ) -> DecisionResponse:
        """One round trip for the questions a model must answer; see
        :class:`~harness.providers.DecisionClient`."""
        settled = local_answers(request)
        asked = request
        if settled:
            remote = {qid: q for qid, q in request.questions.items() if qid not in settled}
            if not remote:
                return DecisionResponse(
                    request=request,
                    answers=settled,
                    input_tokens=0,
                    model=entry.wire_model_id,
                    request_id=None,
                    latency=0.0,
                    failure=None,
                )
            asked = DecisionRequest(request.state, remote)
        endpoint = self._shared_endpoint(entry)
        body = self.codec.encode_body(asked, entry.wire_model_id)
        # ``asked``'s text and the key are redacted from any failure (built on a failure only)
        reply = await self._transport.request(
            "POST", endpoint, entry, body, timeout=timeout, asked=asked
        )
        try:
            wire = self.codec.decode_body(
                asked, reply.body, max_bytes=entry.max_reply_bytes, max_depth=entry.max_reply_depth
            )
        except NotAnAnswerError as error:
            # The codec's message names what is wrong without quoting the body; a body that is
            # not JSON at all is shown as the server's text, redacted before it is cut.
            endpoint = endpoint.with_redaction(Redaction.of(asked, key=endpoint.api_key))
            where = f"{self.service} at {endpoint.shown_url} answered HTTP {reply.status}"
            said = error.message
            if said.startswith("not an answer: the reply body cannot be read"):
                said += f"; it reads: {error_message(reply.body, endpoint.redactor)}"
            failure = type(error)(
                f"{where} with a body that is not an answer: {endpoint.redact(said, 400)}",
                status=reply.status,
                request_id=reply.request_id,
            )
            raise failure from None
        answers: Mapping[str, Answer] = wire.answers  # the codec checked them: not again
        if settled:
            answers = {
                qid: settled[qid] if qid in settled else wire.answers[qid]
                for qid in request.questions
            }
        return DecisionResponse(
            request=request,
            answers=answers,
            input_tokens=wire.input_tokens,
            model=wire.model or entry.wire_model_id,
            request_id=reply.request_id,
            latency=reply.latency,
            failure=None,
        )

    async def list_models(self, entry: CatalogEntry) -> list[str] | None:
        """The model names ``GET {base_url}/v1/models`` lists; None when unknown, never fatal.

        A missing listing (404, another status, no server, a body that is not a listing) is
        "unknown". Reads ``{"models": [{"name": ...}]}`` and OpenAI's ``{"data": [{"id": ...}]}``.
        """
        if entry.base_url is None:
            return None
        listing = entry.url_of("/v1/models")
        endpoint = attrs.evolve(Endpoint.of(self.service, entry), url=listing)
        try:
            reply = await self._transport.request("GET", endpoint, entry, None, timeout=10.0)
            payload: object = load_reply(
                reply.body, max_bytes=entry.max_reply_bytes, max_depth=entry.max_reply_depth
            )
        except (RetryableError, ExternalServiceError):
            return None
        return _listed_names(payload)

    async def aclose(self) -> None:
        """Close the pooled connections; idempotent."""
        await self._transport.aclose()


def _listed_names(payload: object) -> list[str] | None:
    if not isinstance(payload, Mapping):
        return None
    for key, name_key in (("models", "name"), ("data", "id")):
        listing = payload.get(key)
        if isinstance(listing, list):
            names = [
                item[name_key]
                for item in listing
                if isinstance(item, Mapping) and isinstance(item.get(name_key), str)
            ]
            return names
    return None


class SystemOneClient(HttpDecisionClient):
    """A :class:`harness.providers.DecisionClient` speaking System One (``POST /v1/systemone``).

    ``Authorization: Bearer <key>`` is sent only when the entry's ``api_key_env`` holds a key;
    ``x-typesafe-request-id`` becomes the response's request id; the entry's ``max_options`` and
    ``max_levels`` are checked before sending (:class:`harness.errors.InvalidInputError`).
    """

    service: ClassVar[str] = "System One server"
    codec: ClassVar[WireCodec] = systemone_codec
