"""Faults the fake server serves instead of an answer, and the error bodies they carry.

One concern: what a misbehaving server sends (a status with an error body in each shape in
circulation, a reset, a hang, a body that quotes the request and its key back). The server that
serves them is ``_fake_server.py``.
"""

from __future__ import annotations

import json  # the stdlib: replies with json's default separators, as the reference writes them
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import ClassVar, Literal
from urllib.parse import quote

import attrs
from aiohttp import web

__all__ = ["ECHO_SHAPES", "EchoShape", "ErrorShape", "Fault", "echo_reply", "error_body"]

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


def echo_reply(fault: Fault, authorization: str, body: bytes) -> web.Response:
    """The reply of an echoing ``fault``: the request ``body`` and the ``authorization`` header
    quoted back in the fault's shape (see :meth:`Fault.echo`)."""
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
