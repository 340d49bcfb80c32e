"""``harness serve``: a System One server on 127.0.0.1 fronting any catalog entry.

Each request is validated (:func:`harness.decision.systemone.decode_request`, a clear 422 with
``detail[]`` otherwise), then asked as a :class:`~harness.deciding.DecisionCall` pinned to the
entry through a :class:`~harness.jobs.Dispatcher`, so the entry's admission and the job record
apply exactly as in a run. The reply is :func:`~harness.decision.systemone.encode_reply` with
real usage: the request body counted under the entry's tokenizer.

Capacity: at most ``max_in_flight`` requests are answered at once and at most ``queue_limit``
wait for a slot; any request beyond that gets 429 with ``Retry-After`` at once, before its body
is read (a body may be 8 MB: a busy server neither reads nor validates it). A request holds its
place from that check on, while its body is read and checked, so the bound holds exactly. Every
reply
carries ``x-typesafe-request-id``. ``POST /v1/decisions`` speaks the OpenAI Decisions codec the
same way; ``GET /v1/models`` lists the served model.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Final, Self

import attrs
from aiohttp import web

from harness.deciding import DecisionCall
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
from harness.llm import DecisionClient
from harness.models import DECISION, Catalog, CatalogError, ContextCeilingError
from harness.models import tokenizer as load_tokenizer
from harness.tools import Workflow

__all__ = ["HOST", "REQUEST_ID_HEADER", "DecisionServer", "ServerStats"]

log = logging.getLogger("harness.serve")

HOST: Final = "127.0.0.1"
"""The only address ``harness serve`` binds."""

REQUEST_ID_HEADER: Final = "x-typesafe-request-id"

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
    ) -> None:
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
        if queue_limit < 0:
            raise ValueError(f"queue_limit must be >= 0, got {queue_limit}")
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be in 0..65535 (0 picks a free one), got {port}")
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

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (known once started)."""
        if self._runner is None:
            raise RuntimeError("the server is not running: start it first")
        return self._port

    @property
    def root(self) -> str:
        """``http://127.0.0.1:<port>``: what ``jevcompat test`` and a catalog entry take."""
        return f"http://{HOST}:{self.port}"

    def application(self) -> web.Application:
        """The aiohttp application (routes and the JSON error middleware)."""
        app = web.Application(middlewares=[_json_errors], client_max_size=8 * 1024 * 1024)
        app.router.add_post("/v1/systemone", self._serve_systemone)
        app.router.add_post("/v1/decisions", self._serve_decisions)
        app.router.add_get("/v1/models", self._serve_models)
        return app

    async def start(self) -> None:
        """Listen on 127.0.0.1 (the given port, or a free one when 0)."""
        if self._runner is not None:
            raise RuntimeError(f"the server already runs on port {self._port}")
        self._dispatcher = Dispatcher(self.catalog, clients=self._clients)
        self._slots = asyncio.Semaphore(self.max_in_flight)
        runner = web.AppRunner(self.application(), access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, HOST, self._port, backlog=2048)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            await self._dispatcher.aclose()
            raise
        self._port = int(runner.addresses[0][1])
        self._runner = runner

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

    async def _serve_models(self, request: web.Request) -> web.StreamResponse:
        entry = self.entry
        listing = {
            "object": "list",
            "models": [
                {
                    "name": entry.wire_model_id,
                    "description": f"catalog entry {entry.id!r} ({entry.provider}) via harness",
                    "release_date": "unknown",  # a catalog entry states no release date
                }
            ],
        }
        return _reply(200, listing, self._request_id())

    async def _serve_systemone(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, _SYSTEMONE)

    async def _serve_decisions(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, _OPENAI)

    def _request_id(self) -> str:
        return f"hs-{self._prefix}-{next(self._ids)}"

    async def _serve(self, request: web.Request, codec: _Codec) -> web.StreamResponse:
        request_id = self._request_id()
        stats = self.stats
        stats.received += 1
        slots = self._slots
        assert slots is not None  # set by start()
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
                model=response.model or self.entry.wire_model_id,
                input_tokens=self._tokenizer.count(body),
                output_tokens=0,
            )
        except ContextCeilingError as error:
            self.stats.invalid += 1
            return _reply(422, {"detail": [_body_problem(str(error))]}, request_id)
        except HarnessError as error:
            return self._failure(error, request_id)
        except ValueError as error:  # an answer the codec cannot write (a refusal in System One)
            self.stats.failed += 1
            return _problem(502, "upstream_error", str(error), request_id)
        self.stats.answered += 1
        return _reply(200, reply, request_id)

    def _failure(self, error: HarnessError, request_id: str) -> web.Response:
        message = error.message
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
