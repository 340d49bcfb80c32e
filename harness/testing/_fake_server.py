"""A real System One server on loopback for tests: answers, pacing, capacity and faults.

:class:`FakeSystemOneServer` is an aiohttp web server bound to ``127.0.0.1`` only, a thin shell
over the core of ``harness serve`` (:mod:`harness.serve`: routes, codecs, admission, auth, the
request id and the access log are the real server's), with a scripted or faulty model behind it
in place of a catalog entry. It serves
``POST /v1/systemone`` (System One), ``POST /v1/decisions`` (OpenAI Decisions) and
``GET /v1/models``, answers with an installable policy, and reports usage as one input token per
four bytes of request body, rounded up (output tokens 0). It can pace requests
(``service_time``), bound them (``max_in_flight`` plus a bounded queue, then 429 with
``Retry-After``) and inject faults (:class:`harness.testing.Fault`), by script (``fail_next``) or
by request number (``faults``). Counters are cumulative across restarts.
"""

from __future__ import annotations

import asyncio
import inspect

# the stdlib's json: replies as the reference server writes them (json's separators), which orjson
# cannot
import json
import logging
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import TYPE_CHECKING, ClassVar, Literal
from urllib.parse import quote

import attrs
from aiohttp import web

from harness.catalog import CatalogEntry
from harness.providers import Policy, default_answers
from harness.serve import (
    Codec,
    ServerShell,
    decode_body,
    request_id_of,
)

if TYPE_CHECKING:
    from harness.decision import Answer

__all__ = ["ECHO_SHAPES", "EchoShape", "ErrorShape", "FakeSystemOneServer", "Fault", "error_body"]

ErrorShape = Literal["error", "error_object", "message", "detail", "detail_object", "detail_list"]
"""The error body shapes in circulation (SYSTEM-ONE.md "Errors")."""


EchoShape = Literal[
    "error", "error_object", "message", "detail", "detail_object", "detail_list", "text"
]
"""An echoing fault's body: an :data:`ErrorShape` (``detail_list`` also quotes the request under
``input``, as FastAPI's 422 does), or ``text`` (not JSON: a gateway's page)."""

ECHO_SHAPES: tuple[EchoShape, ...] = (
    "error",
    "error_object",
    "message",
    "detail",
    "detail_object",
    "detail_list",
    "text",
)


def error_body(shape: ErrorShape, message: str) -> bytes:
    """An error body of ``shape`` carrying ``message``.

    ``error``: ``{"error": msg}``; ``error_object``: ``{"error": {"message": msg}}``;
    ``message``: ``{"message": msg}``; ``detail``: ``{"detail": msg}``; ``detail_object``:
    ``{"detail": {"message": msg}}``; ``detail_list``: ``{"detail": [{"loc": ["body",
    "questions"], "msg": msg}]}``.
    """
    payloads: dict[str, object] = {
        "error": {"error": message},
        "error_object": {"error": {"message": message, "type": "invalid_request_error"}},
        "message": {"message": message},
        "detail": {"detail": message},
        "detail_object": {"detail": {"message": message}},
        "detail_list": {"detail": [{"loc": ["body", "questions"], "msg": message}]},
    }
    return json.dumps(payloads[shape]).encode()


@attrs.frozen
class _StatusFault:
    """A :class:`Fault` factory for one status: called with a message (or none, for the usual
    words), it makes :meth:`Fault.http` of that status."""

    status: int
    default: str

    def __call__(self, message: str | None = None) -> Fault:
        return Fault.http(self.status, self.default if message is None else message)


@attrs.frozen
class Fault:
    """What the fake server does instead of answering one request. Build with the factories.

    ``kind`` is ``"reply"`` (a canned status, headers and body), ``"reset"`` (close the
    connection without a reply), ``"hang"`` (never answer; the connection drops when the server
    stops) or ``"echo"`` (``status`` with a body quoting the request back: see :meth:`echo`).
    ``retry_after_date`` renders a ``Retry-After`` HTTP date that many seconds after the moment
    the reply is sent.
    """

    kind: Literal["reply", "reset", "hang", "echo"]
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: Mapping[str, str] = attrs.field(factory=dict)
    retry_after_date: float | None = None
    echo_shape: EchoShape = "error_object"

    def rendered_headers(self) -> dict[str, str]:
        """The reply headers, the HTTP date (if any) computed now."""
        headers = dict(self.headers)
        if self.retry_after_date is not None:
            when = datetime.now(UTC) + timedelta(seconds=self.retry_after_date)
            headers["Retry-After"] = format_datetime(when, usegmt=True)
        return headers

    @classmethod
    def http(
        cls,
        status: int,
        message: str = "injected failure",
        *,
        shape: ErrorShape = "error_object",
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """A reply with ``status`` and an error body of ``shape`` carrying ``message``."""
        return cls("reply", status, error_body(shape, message), headers=dict(headers or {}))

    @classmethod
    def rate_limited(
        cls,
        retry_after: float | None = 1,
        *,
        as_date: bool = False,
        retry_after_ms: float | None = None,
        message: str = "rate limit reached",
    ) -> Fault:
        """429 with ``Retry-After`` in seconds (or as an HTTP date) and/or ``retry-after-ms``."""
        headers: dict[str, str] = {}
        if retry_after is not None and not as_date:
            headers["Retry-After"] = f"{retry_after:g}"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = f"{retry_after_ms:g}"
        body = error_body("error_object", message)
        date = retry_after if as_date else None
        return cls("reply", 429, body, headers=headers, retry_after_date=date)

    unavailable: ClassVar[_StatusFault] = _StatusFault(503, "loading")
    """``Fault.unavailable(message="loading")``: 503, the model loading."""
    overloaded: ClassVar[_StatusFault] = _StatusFault(529, "overloaded")
    """``Fault.overloaded(message="overloaded")``: 529, the server overloaded."""
    server_error: ClassVar[_StatusFault] = _StatusFault(500, "internal error")
    """``Fault.server_error(message="internal error")``: 500."""
    request_timeout: ClassVar[_StatusFault] = _StatusFault(408, "request timeout")
    """``Fault.request_timeout(message="request timeout")``: 408."""
    unauthorized: ClassVar[_StatusFault] = _StatusFault(401, "invalid API key")
    """``Fault.unauthorized(message="invalid API key")``: 401."""
    forbidden: ClassVar[_StatusFault] = _StatusFault(403, "this key may not use this model")
    """``Fault.forbidden(message="this key may not use this model")``: 403."""

    @classmethod
    def bad_request(cls, message: str, *, shape: ErrorShape, status: int = 400) -> Fault:
        """400 (or 422, 404, ...) with an error body of ``shape``."""
        return cls.http(status, message, shape=shape)

    @classmethod
    def echo(cls, status: int, shape: EchoShape) -> Fault:
        """``status`` with a body of ``shape`` that quotes the request back, as careless servers
        do: the whole request body, then the ``Authorization`` header whole, the key
        URL-encoded, cut after 39 characters and upper cased (so a cut at about 200 characters
        lands in or near the key). ``detail_list`` also carries the body under ``input``."""
        return cls("echo", status, content_type="text/plain", echo_shape=shape)

    @classmethod
    def connection_reset(cls) -> Fault:
        """Close the connection without a reply."""
        return cls("reset")

    @classmethod
    def hang(cls) -> Fault:
        """Never answer; the connection drops when the server stops."""
        return cls("hang")

    @classmethod
    def not_an_answer(cls, payload: object = None) -> Fault:
        """200 with JSON that is not an answer (default ``{"ok": true}``)."""
        body = json.dumps({"ok": True} if payload is None else payload).encode()
        return cls("reply", 200, body)

    @classmethod
    def not_json(cls, text: str = "<html><body>gateway says hello</body></html>") -> Fault:
        """200 with a body that is not JSON."""
        return cls("reply", 200, text.encode(), content_type="text/html")


class FakeSystemOneServer(ServerShell):
    """A System One (and OpenAI Decisions) server on ``127.0.0.1`` for tests.

    Use it as ``async with FakeSystemOneServer() as server:`` or call :meth:`start` /
    :meth:`stop`; :meth:`restart` comes back on the same port. ``policy`` answers each decoded
    request (default :func:`harness.testing.default_answers`: the first option of every choice at
    0.9, every noul 0.5, every score its middle level); it may be async and may be swapped at any
    time. ``model`` is the served model id (default: echo the request's). With ``api_key`` set,
    a request without a bearer token gets 403 and a wrong one 401, as live servers do.
    """

    access_log = logging.getLogger("harness.testing.access")

    def __init__(
        self,
        *,
        port: int = 0,
        policy: Policy = default_answers,
        model: str | None = None,
        service_time: float = 0.0,
        max_in_flight: int | None = None,
        queue_limit: int = 0,
        busy_retry_after: int = 1,
        api_key: str | None = None,
        systemone_path: str = "/v1/systemone",
        decisions_path: str = "/v1/decisions",
        models: Sequence[str] | None = ("fake-decider",),
    ) -> None:
        super().__init__(
            port=port, max_in_flight=max_in_flight, queue_limit=queue_limit, api_key=api_key
        )
        self.policy = policy
        self.model = model
        self.service_time = service_time
        self.busy_retry_after = busy_retry_after
        self.systemone_path = systemone_path
        self.decisions_path = decisions_path
        self.models = models
        """The names ``GET /v1/models`` lists; ``None`` answers 404 (no listing)."""
        self.faults: Callable[[int], Fault | None] | None = None
        """A fault by request number (1-based, across restarts), after ``fail_next``'s queue."""
        self.requests = 0
        self.answered = 0
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._queued_faults: deque[Fault] = deque()
        self._stopping: asyncio.Event | None = None

    # -- what the core counts ------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Requests being answered now (faults included)."""
        return self._core.capacity.in_flight

    @property
    def peak_in_flight(self) -> int:
        """The most requests answered at once so far (across restarts)."""
        return self._core.capacity.peak_in_flight

    @property
    def connections(self) -> int:
        """Connections accepted (cumulative across restarts)."""
        return self._core.listener.connections

    @property
    def open_connections(self) -> int:
        """Connections open now."""
        return self._core.listener.open_connections

    @property
    def peak_connections(self) -> int:
        """The most connections open at once."""
        return self._core.listener.peak_connections

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The System One endpoint."""
        return self.root + self.systemone_path

    def application(self) -> web.Application:
        """The core's application on this server's paths, and ``GET /v1/models``."""
        app = self._core.application(
            self._serve,
            {"systemone": self.systemone_path, "openai": self.decisions_path},
            new_id=self._new_id,
            authenticate_all=False,
        )
        app.router.add_get("/v1/models", self._serve_models)
        return app

    async def _open(self) -> None:
        """A fresh signal for the requests a :meth:`Fault.hang` holds until the next stop."""
        self._stopping = asyncio.Event()

    async def stop(self) -> None:
        """Stop listening; requests left hanging lose their connection. Idempotent."""
        if self._stopping is not None:
            self._stopping.set()
        await super().stop()

    # -- configuration -------------------------------------------------------------------------

    def fail_next(self, fault: Fault, times: int = 1) -> None:
        """Answer the next ``times`` decision requests with ``fault`` (after earlier ones)."""
        self._queued_faults.extend([fault] * times)

    def entry(self, **overrides: object) -> CatalogEntry:
        """A catalog entry pointing at this server (``max_concurrent = 8`` unless overridden)."""
        fields: dict[str, object] = {
            "id": "fake-systemone",
            "provider": "systemone",
            "wire_model_id": "fake-decider",
            "base_url": self.root,
            "max_context_tokens": 65_536,
        }
        fields.update(overrides)
        if "tpm" not in fields and "max_concurrent" not in fields:
            fields["max_concurrent"] = 8
        return CatalogEntry(**fields)  # type: ignore[arg-type]  # overrides are the caller's

    # -- the model behind the core ---------------------------------------------------------------

    def _new_id(self, request: web.Request) -> str | None:
        """Decision requests are numbered (``fake-<n>``, across restarts); others get no id."""
        if request.method != "POST" or request.path not in (
            self.systemone_path,
            self.decisions_path,
        ):
            return None
        self.requests += 1
        return f"fake-{self.requests}"

    async def _serve_models(self, request: web.Request) -> web.StreamResponse:
        if self.models is None:
            return web.json_response({"error": {"message": "no model listing here"}}, status=404)
        listing = [
            {"name": name, "description": "fake", "release_date": None} for name in self.models
        ]
        return web.json_response({"models": listing})

    def _next_fault(self, number: int) -> Fault | None:
        if self._queued_faults:
            return self._queued_faults.popleft()
        return self.faults(number) if self.faults is not None else None

    async def _serve(self, request: web.Request, codec: Codec) -> web.StreamResponse:
        request_id = request_id_of(request) or "fake-0"
        number = int(request_id.removeprefix("fake-"))
        body = await request.read()
        self.bodies.append(body)
        self.headers.append(dict(request.headers))
        self.paths.append(request.path)
        core = self._core
        refused = core.refusal(request, request_id)
        if refused is not None:
            return refused
        with core.capacity.place() as admitted:
            if not admitted:
                return core.busy(self.busy_retry_after, request_id)
            fault = self._next_fault(number)
            async with core.capacity.slot():
                if fault is not None:
                    return await self._serve_fault(request, fault, body)
                if self.service_time > 0:
                    await asyncio.sleep(self.service_time)
                return await self._answer(body, codec, request_id)

    async def _serve_fault(
        self, request: web.Request, fault: Fault, body: bytes = b""
    ) -> web.StreamResponse:
        if fault.kind == "echo":
            return _echo(fault, request.headers.get("Authorization", ""), body)
        if fault.kind == "hang":
            assert self._stopping is not None
            await self._stopping.wait()
        if fault.kind in ("hang", "reset"):
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=500)  # never written: the connection is gone
        return web.Response(
            status=fault.status,
            body=fault.body,
            content_type=fault.content_type,
            headers=fault.rendered_headers(),
        )

    async def _answer(self, body: bytes, codec: Codec, request_id: str) -> web.StreamResponse:
        decoded = decode_body(body, codec, request_id)
        if isinstance(decoded, web.StreamResponse):
            return decoded
        decision, model = decoded
        try:
            produced = self.policy(decision)
            answers: Mapping[str, Answer] = (
                await produced if inspect.isawaitable(produced) else produced
            )
            reply = codec.encode_reply(
                answers,
                model=self.model or model,
                input_tokens=math.ceil(len(body) / 4),
                output_tokens=0,
            )
        except Exception as error:  # a broken test policy: say so in a 500
            message = f"fake server policy failed: {type(error).__name__}: {error}"
            return web.json_response(
                {"error": {"message": message[:300]}},
                status=500,
            )
        self.answered += 1
        return web.json_response(reply)


def _echo(fault: Fault, authorization: str, body: bytes) -> web.Response:
    token = authorization.removeprefix("Bearer ")
    text = body.decode("utf-8", errors="replace")
    said = (
        f"refused {text}; you sent Authorization: {authorization}, key "
        f"{quote(token, safe='')}, first part {token[:39]}, shouted {token.upper()}"
    )
    shape = fault.echo_shape
    if shape == "text":
        raw, content_type = f"<html><body>{said}</body></html>".encode(), "text/html"
    elif shape == "detail_list":  # FastAPI's 422 also quotes the request under ``input``
        quoted = [
            {"loc": ["body", "questions", "q1", "criteria"], "msg": said, "input": text},
            {"loc": ["header", "authorization"], "msg": "bad key", "input": authorization},
        ]
        raw, content_type = json.dumps({"detail": quoted}).encode(), "application/json"
    else:
        raw, content_type = error_body(shape, said), "application/json"
    return web.Response(
        status=fault.status,
        body=raw,
        content_type=content_type,
        headers={"Retry-After": "0"},
    )
