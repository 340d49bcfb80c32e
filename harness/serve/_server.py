"""``harness serve``: a System One server (127.0.0.1 by default) fronting any catalog entry.

Each request is validated (:func:`harness.decision.systemone.decode_request`, a clear 422 with
``detail[]`` otherwise), then asked as a :class:`~harness.thinker.DecisionCall` pinned to the
entry through a :class:`~harness.jobs.Dispatcher`, so the entry's admission and the job record
apply exactly as in a run. The reply is :func:`~harness.decision.systemone.encode_reply` with
real usage: the request body counted under the entry's tokenizer.

It is a shell over :class:`~harness.serve.ServerCore` (routes, codecs, admission, auth, request
ids, access log), shared with the test double :class:`~harness.testing.FakeSystemOneServer`.

Capacity: at most ``max_in_flight`` requests are answered at once and at most ``queue_limit``
wait for a slot; any request beyond that gets 429 with ``Retry-After`` at once, before its body
is read (a body may be 8 MB: a busy server neither reads nor validates it). A request holds its
place from that check on, while its body is read and checked, so the bound holds exactly. Every
reply
carries ``x-typesafe-request-id``. ``POST /v1/decisions`` speaks the OpenAI Decisions codec the
same way; ``GET /v1/models`` lists the served model and ``GET /v1/models/{id}`` describes it.

One model name everywhere: :attr:`DecisionServer.model_name` (the embedded model's own name, or
the entry's ``wire_model_id``) is what the listing shows and what every answer says; a request
may name it, the entry's alias, or anything else (``jev-latest``): the entry answers. With an
``api_key`` every route but ``GET /health`` needs ``Authorization: Bearer <key>``: none gets 403,
a wrong one 401, both ``{"detail": {"error_type": "authentication_error", ...}}``. Every request
logs one line on ``harness.serve.access`` (method, path, status, latency, request id; never a
body). :meth:`DecisionServer.drain` stops taking requests (503 ``shutting_down``) and lets those
in flight finish; ``harness serve`` calls it on SIGTERM and SIGINT.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Mapping
from typing import Final, Protocol, runtime_checkable

import attrs
from aiohttp import web

from harness.catalog import DECISION, Catalog, CatalogError, ContextCeilingError
from harness.catalog import tokenizer as load_tokenizer
from harness.decision import (
    Answer,
    ChoiceAnswer,
    DecisionRequest,
    JsonValue,
    ScoreAnswer,
    choice_confidence,
    score_confidence,
)
from harness.decision.systemone import REQUEST_ID_HEADER
from harness.errors import (
    HarnessError,
    StatusError,
    UpstreamThrottleError,
)
from harness.jobs import Dispatcher, JobTimeoutError
from harness.providers import DecisionClient, Redaction
from harness.serve._capacity import Capacity
from harness.serve._core import (
    Codec,
    body_problem,
    busy_reply,
    decode_request_body,
    problem,
    reply,
    request_id_of,
)
from harness.serve._shell import ServerShell
from harness.thinker import DecisionCall
from harness.tools import Workflow

__all__ = [
    "API_KEY_ENV",
    "HOST",
    "REQUEST_ID_HEADER",
    "UPSTREAM_MODEL_HEADER",
    "DecisionServer",
    "ServerStats",
]

log = logging.getLogger("harness.serve")

HOST: Final = "127.0.0.1"
"""The address ``harness serve`` binds unless told otherwise (``--host``)."""

API_KEY_ENV: Final = "HARNESS_SERVE_API_KEY"
"""The environment variable ``harness serve`` reads its key from when ``--api-key`` is absent."""

UPSTREAM_MODEL_HEADER: Final = "x-harness-upstream-model"
"""The model the entry's server said answered, when it said one (answers name the served one)."""

_OPEN_PATHS: Final = frozenset({"/health", "/v1/health"})


@runtime_checkable
class _NamesItsModel(Protocol):
    """A client that knows the name of the model it serves (the embedded one)."""

    async def served_model(self, entry: object) -> str: ...


@attrs.define
class ServerStats:
    """What the server has done so far (cumulative): requests, answers, refusals, and the
    in-flight count with its peak (never above ``max_in_flight``), read from its admission."""

    _capacity: Capacity
    received: int = 0
    answered: int = 0
    busy: int = 0
    invalid: int = 0
    failed: int = 0

    @property
    def in_flight(self) -> int:
        """Requests being answered now."""
        return self._capacity.in_flight

    @property
    def peak_in_flight(self) -> int:
        """The most answered at once."""
        return self._capacity.peak_in_flight

    @property
    def waiting(self) -> int:
        """Requests waiting for a slot now."""
        return self._capacity.waiting

    @property
    def peak_waiting(self) -> int:
        """The most waiting at once."""
        return self._capacity.peak_waiting


class DecisionServer(ServerShell):
    """A System One (and OpenAI Decisions) server on ``127.0.0.1`` fronting one catalog entry.

    ``entry_id`` names the entry (default: the catalog's decision pin). ``max_in_flight``
    bounds the requests answered at once, ``queue_limit`` the requests waiting for a slot;
    beyond both a request gets 429 with ``Retry-After: retry_after``. ``clients`` overrides the
    dispatcher's client per entry id (tests, benchmarks). ``upstream_retries`` is each call's
    retry budget (default 0: a throttled upstream answers the caller 503 with ``Retry-After``,
    who retries). Use as ``async with DecisionServer(...) as server``.
    """

    access_log = logging.getLogger("harness.serve.access")
    shutdown_timeout = 2.0
    open_paths = _OPEN_PATHS

    def __init__(
        self,
        catalog: Catalog,
        *,
        entry_id: str | None = None,
        port: int = 0,
        max_in_flight: int = 8,
        queue_limit: int = 64,
        retry_after: int = 1,
        clients: Mapping[str, DecisionClient] | None = None,
        upstream_retries: int = 0,
        host: str = HOST,
        api_key: str | None = None,
        model_name: str | None = None,
    ) -> None:
        if api_key is not None and (not api_key.strip() or api_key != api_key.strip()):
            raise ValueError(
                "api_key must be a non-blank string without surrounding spaces (or None for no "
                "authentication)"
            )
        self.entry = catalog.entry(entry_id) if entry_id is not None else catalog.pinned(DECISION)
        if self.entry.kind != DECISION:
            raise CatalogError(
                f"catalog entry {self.entry.id!r} is not a decision entry (its kind is "
                f"{self.entry.kind!r}): serve a decision entry"
            )
        super().__init__(
            host=host,
            port=port,
            max_in_flight=max_in_flight,
            queue_limit=queue_limit,
            api_key=api_key,
        )
        self.catalog = catalog
        self.retry_after = retry_after
        self.upstream_retries = upstream_retries
        self.stats = ServerStats(self._core.capacity)
        self._clients = dict(clients or {})
        self._tokenizer = load_tokenizer(self.entry.tokenizer)
        self._ids = itertools.count(1)
        self._prefix = os.urandom(4).hex()
        self._dispatcher: Dispatcher | None = None
        self._model_name = model_name
        self._draining = False

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        """The one name of the served model: in the listing and in every answer."""
        return self._model_name or self.entry.wire_model_id

    @property
    def authenticated(self) -> bool:
        """Whether requests need ``Authorization: Bearer <key>``."""
        return self._core.api_key is not None

    def application(self) -> web.Application:
        """The aiohttp application (routes; access log, request id, auth and JSON errors)."""
        app = self._core.application(
            self._serve, new_id=lambda request: self._request_id(), authenticate_all=True
        )
        app.router.add_get("/v1/models", self._serve_models)
        app.router.add_get("/v1/models/{model_id}", self._serve_model)
        app.router.add_get("/health", self._serve_health)
        app.router.add_get("/v1/health", self._serve_health)
        return app

    async def _open(self) -> None:
        """The dispatcher (and the embedded model's own name) before listening."""
        self._dispatcher = Dispatcher(self.catalog, clients=self._clients)
        self._draining = False
        if self._model_name is None:
            client = self._dispatcher.client_for(self.entry)
            if isinstance(client, _NamesItsModel):
                self._model_name = await client.served_model(self.entry)

    async def _close(self) -> None:
        """Close the dispatcher's clients."""
        dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is not None:
            await dispatcher.aclose()

    @property
    def in_flight(self) -> int:
        """Requests past the capacity check: being read, waiting for a slot or being answered."""
        return self._core.capacity.admitted

    async def drain(self, grace: float = 10.0) -> int:
        """Stop taking requests (each new one gets 503 ``shutting_down`` with ``Connection:
        close``), wait up to ``grace`` seconds for those in flight to finish, then stop. Returns
        how many were still in flight when the grace ran out (they are cancelled)."""
        self._draining = True
        await self._core.capacity.idle(grace)
        left = self._core.capacity.admitted
        await self.stop()
        return left

    # -- handlers ------------------------------------------------------------------------------

    def _model_card(self) -> dict[str, JsonValue]:
        entry = self.entry
        return {
            "name": self.model_name,
            "id": self.model_name,
            "object": "model",
            "description": f"catalog entry {entry.id!r} ({entry.provider}) via harness",
            "aliases": sorted({entry.wire_model_id, entry.id} - {self.model_name}),
            "release_date": "unknown",  # a catalog entry states no release date
        }

    async def _serve_models(self, request: web.Request) -> web.StreamResponse:
        listing = {"object": "list", "models": [self._model_card()]}
        return reply(200, listing, request_id_of(request))

    async def _serve_model(self, request: web.Request) -> web.StreamResponse:
        asked = request.match_info["model_id"]
        if asked not in {self.model_name, self.entry.wire_model_id, self.entry.id}:
            return problem(
                404,
                "not_found_error",
                f"no model {asked!r} here: this server serves {self.model_name!r}",
                request_id_of(request),
            )
        return reply(200, self._model_card(), request_id_of(request))

    async def _serve_health(self, request: web.Request) -> web.StreamResponse:
        status = "draining" if self._draining else "ok"
        body = {"status": status, "model": self.model_name, "in_flight": self.in_flight}
        return reply(503 if self._draining else 200, body, request_id_of(request))

    def _request_id(self) -> str:
        return f"hs-{self._prefix}-{next(self._ids)}"

    async def _serve(self, request: web.Request, codec: Codec) -> web.StreamResponse:
        request_id = request_id_of(request)
        stats = self.stats
        stats.received += 1
        capacity = self._core.capacity
        if self._draining:
            stats.busy += 1
            message = "the server is shutting down; retry on another instance"
            refused = busy_reply(503, "shutting_down", message, self.retry_after, request_id)
            refused.headers["Connection"] = "close"
            return refused
        with capacity.place() as admitted:
            if not admitted:
                stats.busy += 1  # refused before its body is read: a busy server reads nothing
                return self._core.busy(self.retry_after, request_id)
            body = await request.read()
            decoded = decode_request_body(body, codec, request_id)
            if isinstance(decoded, web.StreamResponse):
                stats.invalid += 1
                return decoded
            async with capacity.slot():  # a free slot at once, else wait in the queue
                return await self._answer(decoded[0], body, codec, request_id)

    async def _answer(
        self, decision: DecisionRequest, body: bytes, codec: Codec, request_id: str | None
    ) -> web.StreamResponse:
        dispatcher = self._dispatcher
        assert dispatcher is not None  # set by start()
        call = DecisionCall(Workflow(), decision, upstream_retries=self.upstream_retries)
        call.pin_model(self.entry)
        try:
            response = await dispatcher.run(call)
            answers = {qid: reference_confidence(a) for qid, a in response.answers.items()}
            encoded = codec.encode_reply(
                answers,
                model=self.model_name,
                input_tokens=self._tokenizer.count(body),
                output_tokens=0,
            )
            upstream = response.model
        except ContextCeilingError as error:
            self.stats.invalid += 1
            return reply(422, {"detail": [body_problem(str(error))]}, request_id)
        except HarnessError as error:
            return self._failure(error, request_id, Redaction.of(decision, key=self.entry.api_key))
        except ValueError as error:  # an answer the codec cannot write (a refusal in System One)
            self.stats.failed += 1
            return problem(502, "upstream_error", str(error), request_id)
        self.stats.answered += 1
        headers = {UPSTREAM_MODEL_HEADER: upstream} if upstream else None
        return reply(200, encoded, request_id, headers)

    def _failure(
        self, error: HarnessError, request_id: str | None, redaction: Redaction
    ) -> web.Response:
        message = redaction.apply(error.message)  # never quote the caller's text or a key
        if isinstance(error, JobTimeoutError):
            self.stats.failed += 1
            return problem(504, "timeout_error", message, request_id)
        if isinstance(error, UpstreamThrottleError):
            self.stats.failed += 1
            return busy_reply(503, "overloaded_error", message, self.retry_after, request_id)
        if isinstance(error, StatusError):  # an upstream failure, its credentials included
            self.stats.failed += 1
            return problem(502, "upstream_error", message, request_id)
        # Readable and about the request itself (too many options or levels for the entry, ...)
        self.stats.invalid += 1
        return reply(422, {"detail": [body_problem(message)]}, request_id)


def reference_confidence(answer: Answer) -> Answer:
    """``answer`` with the reference confidence (SYSTEM-ONE.md: five definitions circulate;
    the server writes the reference one, recomputed from the probabilities)."""
    if isinstance(answer, ChoiceAnswer):
        return attrs.evolve(answer, confidence=choice_confidence(answer.probabilities))
    if isinstance(answer, ScoreAnswer):
        return attrs.evolve(answer, confidence=score_confidence(answer.probabilities))
    return answer
