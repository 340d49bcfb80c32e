"""The one core of every server harness runs: ``harness serve``'s
:class:`~harness.serve.DecisionServer` and the test doubles
:class:`~harness.testing.FakeSystemOneServer` and :class:`~harness.testing.LogprobServer` (an
OpenAI double with routes of its own) are thin shells over it (:class:`ServerShell`).

It owns what each would otherwise write: the routes and the codec table (System One at
``/v1/systemone``, OpenAI Decisions at ``/v1/decisions``), reading and checking a request body
(FastAPI-style 422 ``detail[]``), admission (at most ``max_in_flight`` answered at once, at most
``queue_limit`` waiting, 429 with ``Retry-After`` beyond), bearer-key authentication (403 without
a key, 401 with a wrong one, compared in constant time), the request id on every reply (the
header is :data:`harness.decision.systemone.REQUEST_ID_HEADER`, defined once with the wire) and
one access-log line per request (method, path, status, latency, request id; never a body), and
the listener (loopback, a port kept across restarts, connections counted).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from types import TracebackType
from typing import ClassVar, Final, Self

import attrs
from aiohttp import web
from aiohttp.typedefs import Middleware

from harness.decision import DecisionRequest, JsonValue, RequestValidationError
from harness.decision import openai as openai_codec
from harness.decision import systemone as systemone_codec
from harness.decision.systemone import REQUEST_ID_HEADER

__all__ = [
    "CODECS",
    "REQUEST_ID_HEADER",
    "Capacity",
    "Codec",
    "Listener",
    "ServerCore",
    "ServerShell",
    "access_middleware",
    "add_codec_routes",
    "bearer_refusal",
    "busy_reply",
    "decode_body",
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

DEFAULT_PATHS: Final[Mapping[str, str]] = {"systemone": "/v1/systemone", "openai": "/v1/decisions"}
"""The route of each codec unless a server is told another."""


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


def decode_body(
    body: bytes, codec: Codec, request_id: str | None
) -> tuple[DecisionRequest, str] | web.Response:
    """The request and the model it names, or the 422 saying what is wrong with the body."""
    try:
        payload: object = json.loads(body)
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


class Capacity:
    """Admission for requests: at most ``max_in_flight`` answered at once (``None``: no bound)
    and at most ``queue_limit`` waiting for a slot; :meth:`admit` says whether one more may come
    in (else it gets 429). An admitted request holds its place until :meth:`leave`, so the bound
    holds exactly."""

    def __init__(self, max_in_flight: int | None, queue_limit: int) -> None:
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(
                f"max_in_flight must be >= 1 (or None for no bound), got {max_in_flight}"
            )
        if queue_limit < 0:
            raise ValueError(f"queue_limit must be >= 0, got {queue_limit}")
        self.max_in_flight = max_in_flight
        self.queue_limit = queue_limit
        self.admitted = 0
        """Requests past :meth:`admit`: being read, waiting for a slot or being answered."""
        self.in_flight = 0
        self.peak_in_flight = 0
        self.waiting = 0
        self.peak_waiting = 0
        self._slots = asyncio.Semaphore(max_in_flight) if max_in_flight else None
        self._idle = asyncio.Event()
        self._idle.set()

    def admit(self) -> bool:
        """Take a place if one is left (a slot or the queue); ``False`` means refuse (429)."""
        bound = self.max_in_flight
        if bound is not None and self.admitted >= bound + self.queue_limit:
            return False
        self.admitted += 1
        self._idle.clear()
        return True

    def leave(self) -> None:
        """Give back the place :meth:`admit` took."""
        self.admitted -= 1
        if not self.admitted:
            self._idle.set()

    async def enter(self) -> None:
        """Wait for a slot (in the queue when every slot is taken), then count it in flight."""
        slots = self._slots
        if slots is not None:
            if slots.locked():
                self.waiting += 1
                self.peak_waiting = max(self.peak_waiting, self.waiting)
                try:
                    await slots.acquire()
                finally:
                    self.waiting -= 1
            else:
                await slots.acquire()
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def exit(self) -> None:
        """Give back the slot :meth:`enter` took."""
        self.in_flight -= 1
        if self._slots is not None:
            self._slots.release()

    @contextlib.contextmanager
    def place(self) -> Iterator[bool]:
        """A place (:meth:`admit`) held for the block, given back after it; ``False`` when none
        was left (the request gets 429 and holds nothing)."""
        admitted = self.admit()
        try:
            yield admitted
        finally:
            if admitted:
                self.leave()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """A slot (:meth:`enter`, in the queue while every slot is taken) held for the block."""
        await self.enter()
        try:
            yield
        finally:
            self.exit()

    async def idle(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for every admitted request to leave."""
        if self.admitted:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), max(grace, 0.0))


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


class Listener:
    """An aiohttp application listening on ``host``: the given port, or a free one kept for
    :meth:`restart`; counts the connections it accepts and how many are open at once."""

    def __init__(self, host: str, port: int, *, shutdown_timeout: float = 1.0) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be in 0..65535 (0 picks a free one), got {port}")
        self.host = host
        self.port = port
        self.shutdown_timeout = shutdown_timeout
        self.connections = 0
        self.open_connections = 0
        self.peak_connections = 0
        self._runner: web.AppRunner | None = None

    @property
    def running(self) -> bool:
        """Whether it is listening."""
        return self._runner is not None

    async def start(self, app: web.Application) -> None:
        """Listen with ``app``."""
        if self._runner is not None:
            raise RuntimeError(f"the server already runs on port {self.port}")
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=self.shutdown_timeout)
        await runner.setup()
        self._count_connections(runner.server)
        site = web.TCPSite(runner, self.host, self.port, backlog=2048)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self.port = int(runner.addresses[0][1])
        self._runner = runner

    async def stop(self) -> None:
        """Stop listening; idempotent."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    def _count_connections(self, server: web.Server | None) -> None:
        if server is None:
            return
        made, lost = server.connection_made, server.connection_lost

        def connection_made(handler: web.RequestHandler, transport: asyncio.Transport) -> None:
            self.connections += 1
            self.open_connections += 1
            self.peak_connections = max(self.peak_connections, self.open_connections)
            made(handler, transport)

        def connection_lost(handler: web.RequestHandler, exc: BaseException | None = None) -> None:
            self.open_connections -= 1
            lost(handler, exc)

        server.connection_made = connection_made  # type: ignore[method-assign]  # a counting hook
        server.connection_lost = connection_lost  # type: ignore[method-assign]  # a counting hook


def add_codec_routes(
    app: web.Application,
    serve: Callable[[web.Request, Codec], Awaitable[web.StreamResponse]],
    paths: Mapping[str, str] = DEFAULT_PATHS,
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
        paths: Mapping[str, str] = DEFAULT_PATHS,
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


class ServerShell(abc.ABC):
    """A server over the core. It owns one :class:`ServerCore` (built from the options every
    server takes and the class's :attr:`access_log`, :attr:`shutdown_timeout` and
    :attr:`open_paths`) and its lifecycle: :meth:`start`, :meth:`stop`, :meth:`restart` (on the
    same port), or ``async with``. A shell writes :meth:`application` (the core's, plus its own
    routes) and, when it has more to open and close than the listener, :meth:`_open` and
    :meth:`_close`."""

    access_log: ClassVar[logging.Logger]
    """Where the shell's access lines go (one logger per kind of server)."""
    shutdown_timeout: ClassVar[float] = 1.0
    """How long a stop waits for requests still being answered."""
    open_paths: ClassVar[frozenset[str]] = frozenset()
    """Routes answered without the key."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_in_flight: int | None = None,
        queue_limit: int = 0,
        api_key: str | None = None,
    ) -> None:
        self._core = ServerCore(
            Listener(host, port, shutdown_timeout=self.shutdown_timeout),
            Capacity(max_in_flight, queue_limit),
            api_key,
            self.access_log,
            self.open_paths,
        )

    @property
    def host(self) -> str:
        """The address it listens on."""
        return self._core.listener.host

    @property
    def port(self) -> int:
        """The bound port (known once started; kept for :meth:`restart`)."""
        if self._core.listener.port == 0:
            raise RuntimeError(f"{type(self).__name__} has no port yet: start it first")
        return self._core.listener.port

    @property
    def root(self) -> str:
        """``http://<host>:<port>``: the base URL a catalog entry or a client takes."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def running(self) -> bool:
        """Whether it is listening."""
        return self._core.listener.running

    @property
    def max_in_flight(self) -> int | None:
        """The most requests answered at once (``None``: no bound)."""
        return self._core.capacity.max_in_flight

    @property
    def queue_limit(self) -> int:
        """The most requests waiting for a slot before the next gets 429."""
        return self._core.capacity.queue_limit

    @property
    def api_key(self) -> str | None:
        """The bearer key requests must carry (``None``: none asked)."""
        return self._core.api_key

    @api_key.setter
    def api_key(self, key: str | None) -> None:
        self._core.api_key = key

    @abc.abstractmethod
    def application(self) -> web.Application:
        """The aiohttp application: :meth:`ServerCore.application` and the shell's own routes."""

    async def _open(self) -> None:  # noqa: B027  (a hook: most shells open nothing more)
        """What the shell opens before it listens (nothing here)."""

    async def _close(self) -> None:  # noqa: B027  (a hook: most shells close nothing more)
        """What the shell closes once it stopped listening, or when it could not start."""

    async def start(self) -> None:
        """Listen on the host (the given port, the one kept from before, or a free one)."""
        if self.running:
            raise RuntimeError(f"{type(self).__name__} already runs on port {self.port}")
        try:
            await self._open()
            await self._core.listener.start(self.application())
        except BaseException:
            await self._close()
            raise

    async def stop(self) -> None:
        """Stop listening (requests still answered get :attr:`shutdown_timeout`); idempotent."""
        await self._core.listener.stop()
        await self._close()

    async def restart(self) -> None:
        """Stop, then listen again on the same port."""
        await self.stop()
        await self.start()

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
