"""The one core of every server harness runs: ``harness serve``'s
:class:`~harness.serve.DecisionServer` and the test doubles
:class:`~harness.testing.FakeSystemOneServer` and :class:`~harness.testing.LogprobServer` (an
OpenAI double with routes of its own) are thin shells over it (:class:`~harness.serve.ServerShell`).

It owns what each would otherwise write: the routes and the codec table (System One at
``/v1/systemone``, OpenAI Decisions at ``/v1/decisions``), reading and checking a request body
(FastAPI-style 422 ``detail[]``), admission (at most ``max_in_flight`` answered at once, at most
``queue_limit`` waiting, 429 with ``Retry-After`` beyond), bearer-key authentication (403 without
a key, 401 with a wrong one, compared in constant time), the request id on every reply (the
header is :data:`harness.decision.systemone.REQUEST_ID_HEADER`, defined once with the wire) and
one access-log line per request (method, path, status, latency, request id; never a body), and
the listener (loopback, a port kept across restarts, connections counted). Its parts of their
own live beside it: the admission of requests (``_capacity.py``), the listener
(``_listener.py``) and the shell with its lifecycle (``_shell.py``).
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Final

import attrs
from aiohttp import web
from aiohttp.typedefs import Middleware

from harness.catalog import DEFAULT_PATHS
from harness.decision import DecisionRequest, JsonValue, RequestValidationError
from harness.decision import openai as openai_codec
from harness.decision import systemone as systemone_codec
from harness.decision._internal import load_json
from harness.decision.systemone import REQUEST_ID_HEADER
from harness.serve._capacity import Capacity
from harness.serve._listener import Listener

__all__ = [
    "CODECS",
    "REQUEST_ID_HEADER",
    "Codec",
    "ServerCore",
    "access_middleware",
    "add_codec_routes",
    "bearer_refusal",
    "busy_reply",
    "decode_request_body",
    "json_errors",
    "problem",
    "reply",
    "request_id_of",
]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@attrs.frozen
class Codec:
    """One wire a server speaks: how a request body decodes and how a reply encodes."""

    name: str
    decode_request: Callable[[object], tuple[DecisionRequest, str]]
    encode_reply: Callable[..., dict[str, JsonValue]]  # keyword-only model and token counts


CODECS: Final[Mapping[str, Codec]] = {
    "systemone": Codec("systemone", systemone_codec.decode_request, systemone_codec.encode_reply),
    "openai": Codec("openai", openai_codec.decode_request, openai_codec.encode_reply),
}
"""Every wire the servers speak, by name; a new wire format is one row here (and its codec in
:mod:`harness.decision`)."""

DEFAULT_ROUTES: Final[Mapping[str, str]] = {name: DEFAULT_PATHS[name] for name in CODECS}
"""The route of each codec unless a server is told another: the path a client of that wire
calls by default (the catalog's ``DEFAULT_PATHS``), so the two never disagree."""


def reply(
    status: int, body: object, request_id: str | None, headers: Mapping[str, str] | None = None
) -> web.Response:
    """A JSON reply carrying the request id."""
    sent = dict(headers or {})
    if request_id is not None:
        sent = {REQUEST_ID_HEADER: request_id, **sent}
    return web.json_response(body, status=status, headers=sent or None)


def problem(
    status: int,
    error_type: str,
    message: str,
    request_id: str | None,
    headers: Mapping[str, str] | None = None,
) -> web.Response:
    """An error reply: ``{"detail": {"error_type", "message"}}`` (the shape jevcompat asks)."""
    body = {"detail": {"error_type": error_type, "message": message}}
    return reply(status, body, request_id, headers)


def busy_reply(
    status: int, error_type: str, message: str, retry_after: float, request_id: str | None
) -> web.Response:
    """A refusal to come back later: ``status`` (429 or 503) with ``Retry-After``."""
    return problem(status, error_type, message, request_id, {"Retry-After": f"{retry_after:g}"})


def body_problem(message: str) -> dict[str, JsonValue]:
    """One ``detail[]`` item about the questions of a body."""
    return {"loc": ["body", "questions"], "msg": message, "type": "value_error"}


def decode_request_body(
    body: bytes, codec: Codec, request_id: str | None
) -> tuple[DecisionRequest, str] | web.Response:
    """The request and the model it names, or the 422 saying what is wrong with the body."""
    try:
        payload: object = load_json(body)
    except (ValueError, UnicodeDecodeError):
        found = {"loc": ["body"], "msg": "the body is not JSON", "type": "json_invalid"}
        return reply(422, {"detail": [found]}, request_id)
    try:
        return codec.decode_request(payload)
    except RequestValidationError as error:
        return reply(422, {"detail": error.detail()}, request_id)


def bearer_refusal(authorization: str | None, key: str | None) -> tuple[int, str] | None:
    """``None`` when ``authorization`` carries ``key`` (or no key is asked); else the status and
    message: 403 when no bearer token was sent, 401 when it is not the key."""
    if key is None:
        return None
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return 403, "no API key: send Authorization: Bearer <key>"
    if not hmac.compare_digest(token.encode("utf-8", "replace"), key.encode("utf-8")):
        return 401, "invalid API key: send the key this server was started with"
    return None


_REQUEST_ID_KEY: Final = web.RequestKey("request_id", str)


def request_id_of(request: web.Request) -> str | None:
    """The id :func:`access_middleware` gave ``request``, if any."""
    found = request.get(_REQUEST_ID_KEY)
    return found if isinstance(found, str) else None


def access_middleware(
    log: logging.Logger, new_id: Callable[[web.Request], str | None]
) -> Middleware:
    """A middleware giving every request an id (``new_id``; ``None`` gives none) carried on its
    reply, and logging one line on ``log`` per request: method, path, status, latency, id."""

    @web.middleware
    async def access(request: web.Request, handler: Handler) -> web.StreamResponse:
        request_id = new_id(request)
        if request_id is not None:
            request[_REQUEST_ID_KEY] = request_id
        started = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            if request_id is not None and not response.prepared:
                response.headers.setdefault(REQUEST_ID_HEADER, request_id)
            return response
        except web.HTTPException as error:
            status = error.status
            raise
        finally:
            log.info(
                "%s %s %d %.1fms %s",
                request.method,
                request.path,
                status,
                (time.perf_counter() - started) * 1000.0,
                request_id or "-",
            )

    return access


def add_codec_routes(
    app: web.Application,
    serve: Callable[[web.Request, Codec], Awaitable[web.StreamResponse]],
    paths: Mapping[str, str] = DEFAULT_ROUTES,
) -> None:
    """Route ``POST`` on each codec's path (``paths``: codec name -> path) to ``serve``."""
    for name, path in paths.items():
        codec = CODECS[name]

        async def handler(request: web.Request, codec: Codec = codec) -> web.StreamResponse:
            return await serve(request, codec)

        app.router.add_post(path, handler)


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
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


class ServerCore:
    """What every System One server shares: the listener, admission (:class:`Capacity`), the
    bearer key, the access log and the application with its codec routes. A shell (the real
    server, the test double) gives it a handler per request and answers behind it."""

    def __init__(
        self,
        listener: Listener,
        capacity: Capacity,
        api_key: str | None,
        access_log: logging.Logger,
        open_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.listener = listener
        self.capacity = capacity
        self.api_key = api_key
        self.access_log = access_log
        self.open_paths = open_paths

    def application(
        self,
        serve: Callable[[web.Request, Codec], Awaitable[web.StreamResponse]] | None,
        paths: Mapping[str, str] = DEFAULT_ROUTES,
        *,
        new_id: Callable[[web.Request], str | None],
        authenticate_all: bool,
        client_max_size: int = 8 * 1024 * 1024,
    ) -> web.Application:
        """The application: request ids and the access log, JSON errors, ``serve`` on each
        codec's route (``None``: no codec routes, for a server of another API), and (with
        ``authenticate_all``) the key checked on every route but :attr:`open_paths` before the
        handler runs; a shell that counts refused requests checks :meth:`refusal` itself."""
        middlewares: list[Middleware] = [access_middleware(self.access_log, new_id), json_errors]
        if authenticate_all:
            middlewares.append(self._authorise)
        app = web.Application(middlewares=middlewares, client_max_size=client_max_size)
        if serve is not None:
            add_codec_routes(app, serve, paths)
        return app

    def admitted(self, handler: Handler, retry_after: float) -> Handler:
        """``handler`` answering only within the capacity: a place, then a slot, held while it
        runs; a request beyond both gets :meth:`busy`. (A shell with work between the two, such
        as reading a body before it waits for a slot, uses :meth:`Capacity.place` and
        :meth:`Capacity.slot` itself.)"""

        async def admitted(request: web.Request) -> web.StreamResponse:
            capacity = self.capacity
            with capacity.place() as placed:
                if not placed:
                    return self.busy(retry_after, request_id_of(request))
                async with capacity.slot():
                    return await handler(request)

        return admitted

    def refusal(self, request: web.Request, request_id: str | None) -> web.Response | None:
        """The 403 or 401 for a request without the key, or ``None``."""
        refused = bearer_refusal(request.headers.get("Authorization"), self.api_key)
        if refused is None:
            return None
        return problem(refused[0], "authentication_error", refused[1], request_id)

    def busy(self, retry_after: float, request_id: str | None) -> web.Response:
        """The 429 for a request beyond the capacity (before its body is read)."""
        capacity = self.capacity
        message = (
            f"server busy: {capacity.max_in_flight} requests in flight and "
            f"{capacity.queue_limit} waiting; retry after {retry_after:g} s"
        )
        return busy_reply(429, "rate_limit_error", message, retry_after, request_id)

    @web.middleware
    async def _authorise(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self.api_key is None or request.path in self.open_paths:
            return await handler(request)
        refused = self.refusal(request, request_id_of(request))
        return refused if refused is not None else await handler(request)
