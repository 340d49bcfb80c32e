"""``harness serve``: a System One server (127.0.0.1 by default) fronting any catalog entry.

Each request is validated (:func:`harness.decision.systemone.decode_request`, a clear 422 with
``detail[]`` otherwise), then asked as a :class:`~harness.thinker.DecisionCall` pinned to the
entry through a :class:`~harness.jobs.Dispatcher`, so the entry's admission and the job record
apply exactly as in a run. The reply is :func:`~harness.decision.systemone.encode_reply` with
real usage: the request body counted under the entry's tokenizer.

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

import asyncio
import contextlib
import hmac
import itertools
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Final, Protocol, Self, runtime_checkable

import attrs
from aiohttp import web

from harness.catalog import DECISION, Catalog, CatalogError, ContextCeilingError
from harness.catalog import tokenizer as load_tokenizer
from harness.decision import (
    Answer,
    ChoiceAnswer,
    DecisionRequest,
    JsonValue,
    RequestValidationError,
    ScoreAnswer,
    choice_confidence,
    score_confidence,
)
from harness.decision import openai as openai_codec
from harness.decision import systemone as systemone_codec
from harness.errors import (
    HarnessError,
    StatusError,
    UpstreamThrottleError,
)
from harness.jobs import Dispatcher, JobTimeoutError
from harness.providers import DecisionClient, Redaction
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
access_log = logging.getLogger("harness.serve.access")

HOST: Final = "127.0.0.1"
"""The address ``harness serve`` binds unless told otherwise (``--host``)."""

API_KEY_ENV: Final = "HARNESS_SERVE_API_KEY"
"""The environment variable ``harness serve`` reads its key from when ``--api-key`` is absent."""

REQUEST_ID_HEADER: Final = "x-typesafe-request-id"
UPSTREAM_MODEL_HEADER: Final = "x-harness-upstream-model"
"""The model the entry's server said answered, when it said one (answers name the served one)."""

_OPEN_PATHS: Final = frozenset({"/health", "/v1/health"})


@runtime_checkable
class _NamesItsModel(Protocol):
    """A client that knows the name of the model it serves (the embedded one)."""

    async def served_model(self, entry: object) -> str: ...


_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@attrs.define
class ServerStats:
    """What the server has done so far (cumulative): requests, answers, refusals, and the
    in-flight count with its peak (never above ``max_in_flight``)."""

    received: int = 0
    answered: int = 0
    busy: int = 0
    invalid: int = 0
    failed: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    waiting: int = 0
    peak_waiting: int = 0


@attrs.frozen
class _Codec:
    name: str
    decode_request: Callable[[object], tuple[DecisionRequest, str]]
    encode_reply: Callable[..., dict[str, JsonValue]]  # keyword-only model and token counts


_SYSTEMONE = _Codec("systemone", systemone_codec.decode_request, systemone_codec.encode_reply)
_OPENAI = _Codec("openai", openai_codec.decode_request, openai_codec.encode_reply)


def _problem(status: int, error_type: str, message: str, request_id: str) -> web.Response:
    """An error reply: ``{"detail": {"error_type", "message"}}`` (the shape jevcompat asks)."""
    body = {"detail": {"error_type": error_type, "message": message}}
    return _reply(status, body, request_id)


def _reply(
    status: int, body: object, request_id: str, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.json_response(
        body, status=status, headers={REQUEST_ID_HEADER: request_id, **(headers or {})}
    )


_REQUEST_ID: Final = web.RequestKey("request_id", str)


def _request_id_of(request: web.Request) -> str:
    found = request.get(_REQUEST_ID)
    return found if isinstance(found, str) else "hs-unknown"


class DecisionServer:
    """A System One (and OpenAI Decisions) server on ``127.0.0.1`` fronting one catalog entry.

    ``entry_id`` names the entry (default: the catalog's decision pin). ``max_in_flight``
    bounds the requests answered at once, ``queue_limit`` the requests waiting for a slot;
    beyond both a request gets 429 with ``Retry-After: retry_after``. ``clients`` overrides the
    dispatcher's client per entry id (tests, benchmarks). ``upstream_retries`` is each call's
    retry budget (default 0: a throttled upstream answers the caller 503 with ``Retry-After``,
    who retries). Use as ``async with DecisionServer(...) as server``.
    """

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
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
        if queue_limit < 0:
            raise ValueError(f"queue_limit must be >= 0, got {queue_limit}")
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be in 0..65535 (0 picks a free one), got {port}")
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
        self.catalog = catalog
        self.max_in_flight = max_in_flight
        self.queue_limit = queue_limit
        self.retry_after = retry_after
        self.upstream_retries = upstream_retries
        self.stats = ServerStats()
        self._clients = dict(clients or {})
        self._tokenizer = load_tokenizer(self.entry.tokenizer)
        self._port = port
        self._ids = itertools.count(1)
        self._prefix = os.urandom(4).hex()
        self._slots: asyncio.Semaphore | None = None
        self._admitted = 0  # requests past the capacity check: reading, waiting or in flight
        self._dispatcher: Dispatcher | None = None
        self._runner: web.AppRunner | None = None
        self.host = host
        self._api_key = api_key
        self._model_name = model_name
        self._draining = False
        self._idle = asyncio.Event()

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._runner is None:
            raise RuntimeError("the server is not running: start it first")
        return self._port

    @property
    def root(self) -> str:
        """``http://<host>:<port>``: what ``jevcompat test`` and a catalog entry take."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def model_name(self) -> str:
        """The one name of the served model: in the listing and in every answer."""
        return self._model_name or self.entry.wire_model_id

    @property
    def authenticated(self) -> bool:
        """Whether requests need ``Authorization: Bearer <key>``."""
        return self._api_key is not None

    def application(self) -> web.Application:
        """The aiohttp application (routes; access log, request id, auth and JSON errors)."""
        app = web.Application(
            middlewares=[self._access, _json_errors, self._authorise],
            client_max_size=8 * 1024 * 1024,
        )
        app.router.add_post("/v1/systemone", self._serve_systemone)
        app.router.add_post("/v1/decisions", self._serve_decisions)
        app.router.add_get("/v1/models", self._serve_models)
        app.router.add_get("/v1/models/{model_id}", self._serve_model)
        app.router.add_get("/health", self._serve_health)
        app.router.add_get("/v1/health", self._serve_health)
        return app

    @web.middleware
    async def _access(self, request: web.Request, handler: _Handler) -> web.StreamResponse:
        """A request id for every request, and one access-log line (never a body)."""
        request_id = self._request_id()
        request[_REQUEST_ID] = request_id
        started = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            response.headers.setdefault(REQUEST_ID_HEADER, request_id)
            return response
        except web.HTTPException as error:
            status = error.status
            raise
        finally:
            access_log.info(
                "%s %s %d %.1fms %s",
                request.method,
                request.path,
                status,
                (time.perf_counter() - started) * 1000.0,
                request_id,
            )

    @web.middleware
    async def _authorise(self, request: web.Request, handler: _Handler) -> web.StreamResponse:
        """With a key: 403 when no bearer token was sent, 401 when it is not the key."""
        key = self._api_key
        if key is None or request.path in _OPEN_PATHS:
            return await handler(request)
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        request_id = _request_id_of(request)
        if scheme.lower() != "bearer" or not token:
            message = "no API key: send Authorization: Bearer <key>"
            return _problem(403, "authentication_error", message, request_id)
        if not hmac.compare_digest(token.encode("utf-8", "replace"), key.encode("utf-8")):
            message = "invalid API key: send the key this server was started with"
            return _problem(401, "authentication_error", message, request_id)
        return await handler(request)

    async def start(self) -> None:
        """Listen on ``host`` (the given port, or a free one when 0)."""
        if self._runner is not None:
            raise RuntimeError(f"the server already runs on port {self._port}")
        self._dispatcher = Dispatcher(self.catalog, clients=self._clients)
        self._slots = asyncio.Semaphore(self.max_in_flight)
        self._draining = False
        if self._model_name is None:
            client = self._dispatcher.client_for(self.entry)
            if isinstance(client, _NamesItsModel):
                try:
                    self._model_name = await client.served_model(self.entry)
                except HarnessError:
                    await self._dispatcher.aclose()
                    raise
        runner = web.AppRunner(self.application(), access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._port, backlog=2048)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            await self._dispatcher.aclose()
            raise
        self._port = int(runner.addresses[0][1])
        self._runner = runner

    @property
    def in_flight(self) -> int:
        """Requests past the capacity check: being read, waiting for a slot or being answered."""
        return self._admitted

    async def drain(self, grace: float = 10.0) -> int:
        """Stop taking requests (each new one gets 503 ``shutting_down`` with ``Connection:
        close``), wait up to ``grace`` seconds for those in flight to finish, then stop. Returns
        how many were still in flight when the grace ran out (they are cancelled)."""
        self._draining = True
        if self._admitted:
            self._idle.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), max(grace, 0.0))
        left = self._admitted
        await self.stop()
        return left

    async def stop(self) -> None:
        """Stop listening and close the dispatcher's clients; idempotent."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
        dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is not None:
            await dispatcher.aclose()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

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
        return _reply(200, listing, _request_id_of(request))

    async def _serve_model(self, request: web.Request) -> web.StreamResponse:
        asked = request.match_info["model_id"]
        if asked not in {self.model_name, self.entry.wire_model_id, self.entry.id}:
            return _problem(
                404,
                "not_found_error",
                f"no model {asked!r} here: this server serves {self.model_name!r}",
                _request_id_of(request),
            )
        return _reply(200, self._model_card(), _request_id_of(request))

    async def _serve_health(self, request: web.Request) -> web.StreamResponse:
        status = "draining" if self._draining else "ok"
        body = {"status": status, "model": self.model_name, "in_flight": self._admitted}
        return _reply(503 if self._draining else 200, body, _request_id_of(request))

    async def _serve_systemone(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, _SYSTEMONE)

    async def _serve_decisions(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, _OPENAI)

    def _request_id(self) -> str:
        return f"hs-{self._prefix}-{next(self._ids)}"

    async def _serve(self, request: web.Request, codec: _Codec) -> web.StreamResponse:
        request_id = _request_id_of(request)
        stats = self.stats
        stats.received += 1
        slots = self._slots
        assert slots is not None  # set by start()
        if self._draining:
            stats.busy += 1
            message = "the server is shutting down; retry on another instance"
            reply = _busy_reply(503, "shutting_down", message, self.retry_after, request_id)
            reply.headers["Connection"] = "close"
            return reply
        if self._admitted >= self.max_in_flight + self.queue_limit:
            stats.busy += 1  # refused before its body is read: a busy server reads nothing
            message = (
                f"server busy: {self.max_in_flight} requests in flight and {self.queue_limit} "
                f"waiting; retry after {self.retry_after} s"
            )
            return _busy_reply(429, "rate_limit_error", message, self.retry_after, request_id)
        self._admitted += 1
        try:
            return await self._admitted_request(request, codec, request_id, slots)
        finally:
            self._admitted -= 1
            if not self._admitted:
                self._idle.set()

    async def _admitted_request(
        self, request: web.Request, codec: _Codec, request_id: str, slots: asyncio.Semaphore
    ) -> web.StreamResponse:
        """A request within capacity: read and check its body, wait for a slot, answer it."""
        stats = self.stats
        body = await request.read()
        try:
            payload: object = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            stats.invalid += 1
            problem = {"loc": ["body"], "msg": "the body is not JSON", "type": "json_invalid"}
            return _reply(422, {"detail": [problem]}, request_id)
        try:
            decision, _ = codec.decode_request(payload)
        except RequestValidationError as error:
            stats.invalid += 1
            return _reply(422, {"detail": error.detail()}, request_id)
        if slots.locked():  # every slot taken: wait in the queue (its place is held)
            stats.waiting += 1
            stats.peak_waiting = max(stats.peak_waiting, stats.waiting)
            try:
                await slots.acquire()
            finally:
                stats.waiting -= 1
        else:
            await slots.acquire()  # a free slot: taken at once
        stats.in_flight += 1
        stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
        try:
            return await self._answer(decision, body, codec, request_id)
        finally:
            stats.in_flight -= 1
            slots.release()

    async def _answer(
        self, decision: DecisionRequest, body: bytes, codec: _Codec, request_id: str
    ) -> web.StreamResponse:
        dispatcher = self._dispatcher
        assert dispatcher is not None  # set by start()
        call = DecisionCall(Workflow(), decision, upstream_retries=self.upstream_retries)
        call.pin_model(self.entry)
        try:
            response = await dispatcher.run(call)
            answers = {qid: reference_confidence(a) for qid, a in response.answers.items()}
            reply = codec.encode_reply(
                answers,
                model=self.model_name,
                input_tokens=self._tokenizer.count(body),
                output_tokens=0,
            )
            upstream = response.model
        except ContextCeilingError as error:
            self.stats.invalid += 1
            return _reply(422, {"detail": [_body_problem(str(error))]}, request_id)
        except HarnessError as error:
            return self._failure(error, request_id, Redaction.of(decision, key=self.entry.api_key))
        except ValueError as error:  # an answer the codec cannot write (a refusal in System One)
            self.stats.failed += 1
            return _problem(502, "upstream_error", str(error), request_id)
        self.stats.answered += 1
        headers = {UPSTREAM_MODEL_HEADER: upstream} if upstream else None
        return _reply(200, reply, request_id, headers)

    def _failure(self, error: HarnessError, request_id: str, redaction: Redaction) -> web.Response:
        message = redaction.apply(error.message)  # never quote the caller's text or a key
        if isinstance(error, JobTimeoutError):
            self.stats.failed += 1
            return _problem(504, "timeout_error", message, request_id)
        if isinstance(error, UpstreamThrottleError):
            self.stats.failed += 1
            return _busy_reply(503, "overloaded_error", message, self.retry_after, request_id)
        if isinstance(error, StatusError):  # an upstream failure, its credentials included
            self.stats.failed += 1
            return _problem(502, "upstream_error", message, request_id)
        # Readable and about the request itself (too many options or levels for the entry, ...)
        self.stats.invalid += 1
        return _reply(422, {"detail": [_body_problem(message)]}, request_id)


def reference_confidence(answer: Answer) -> Answer:
    """``answer`` with the reference confidence (SYSTEM-ONE.md: five definitions circulate;
    the server writes the reference one, recomputed from the probabilities)."""
    if isinstance(answer, ChoiceAnswer):
        return attrs.evolve(answer, confidence=choice_confidence(answer.probabilities))
    if isinstance(answer, ScoreAnswer):
        return attrs.evolve(answer, confidence=score_confidence(answer.probabilities))
    return answer


def _body_problem(message: str) -> dict[str, JsonValue]:
    return {"loc": ["body", "questions"], "msg": message, "type": "value_error"}


def _busy_reply(
    status: int, error_type: str, message: str, retry_after: int, request_id: str
) -> web.Response:
    body = {"detail": {"error_type": error_type, "message": message}}
    return _reply(status, body, request_id, {"Retry-After": str(retry_after)})


@web.middleware
async def _json_errors(request: web.Request, handler: _Handler) -> web.StreamResponse:
    """aiohttp's own errors (404, 405, 413) as JSON bodies in the ``detail`` shape."""
    try:
        return await handler(request)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        kind = {404: "not_found_error", 405: "method_not_allowed", 413: "request_too_large"}
        body = {
            "detail": {
                "error_type": kind.get(error.status, "invalid_request_error"),
                "message": f"{error.reason}: {request.method} {request.path}",
            }
        }
        allow = {"Allow": error.headers["Allow"]} if "Allow" in error.headers else None
        return web.json_response(body, status=error.status, headers=allow)
