"""What an HTTP decision server's reply means for the dispatcher, when it is not a 2xx one.

The decision clients make one round trip and classify its outcome (ARCHITECTURE.md section 4,
SYSTEM-ONE.md "Errors" and "Headers"):

* 408, 500, 502, 504 and no answer at all -> :class:`TransientError`;
* 429 -> :class:`RateLimitedError`; 503, 529 -> :class:`OverloadedError`; every signal carries the
  server's hint (``retry-after-ms`` wins over ``Retry-After``, seconds or an HTTP date);
* 401 -> :class:`UnauthorizedError`, 403 -> :class:`PermissionDeniedError`, any other status ->
  :class:`ExternalServiceError` naming the status and the server's message;
* an unknown host -> :class:`ExternalServiceError` at once (no re-run finds it).

Messages name the service and the URL (without credentials or query). Every text a server or a
transport error produced goes through the endpoint's :class:`~harness.providers._redact.Redaction`
before it is cut, raised or logged: the key in any form becomes ``***``, any run of the request's
own text ``[request text]`` (:mod:`harness.providers._redact`).

One concern: classifying a reply (or its absence) into the error the dispatcher acts on. The
transport that makes the round trip is ``_http.py``.
"""

from __future__ import annotations

import json  # the stdlib: NaN refused in an error body (parse_constant; orjson has no hook)
import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Protocol

import aiohttp
from yarl import URL

from harness.decision.systemone import REQUEST_ID_HEADER
from harness.errors import (
    ExternalServiceError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitedError,
    RetryableError,
    StatusError,
    TransientError,
    UnauthorizedError,
)

from ._redact import SCAN_CHARS, Redaction

__all__ = [
    "ERROR_BODY_BYTES",
    "Where",
    "connection_failure",
    "error_message",
    "retry_after",
    "status_failure",
]

ERROR_BODY_BYTES = 65_536
"""How much of an error body is parsed as JSON; a longer body is read as text."""


class Where(Protocol):
    """What a failure's message says of the endpoint that failed (an
    :class:`~harness.providers._http.Endpoint`): declared here so this module needs nothing of
    the transport's, which imports it."""

    @property
    def service(self) -> str:
        """What answers there, for messages."""
        ...

    @property
    def url(self) -> str:
        """The URL called."""
        ...

    @property
    def shown_url(self) -> str:
        """The URL as messages show it."""
        ...

    @property
    def api_key_env(self) -> str | None:
        """The environment variable the key comes from."""
        ...

    @property
    def api_key(self) -> str | None:
        """The key sent, if any (never shown)."""
        ...

    @property
    def redactor(self) -> Redaction:
        """What a message must never show."""
        ...

    def redact(self, text: str, limit: int = ...) -> str:
        """``text`` redacted, then cut to ``limit``."""
        ...


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, candidate in headers.items():
        if key.lower() == lowered:
            return candidate
    return None


def retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The server's pause hint in seconds, never negative; ``None`` when it gave none.

    ``retry-after-ms`` (milliseconds) wins over ``Retry-After``, which is either seconds or an
    HTTP date taken relative to ``now`` (the current time by default). Unreadable values are
    ignored.
    """
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        try:
            value = float(millis.strip())
        except ValueError:
            value = float("nan")
        if value == value and value not in (float("inf"), float("-inf")):
            return max(0.0, value / 1000.0)
    raw = _header(headers, "retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        pass
    else:
        if seconds == seconds and seconds not in (float("inf"), float("-inf")):
            return max(0.0, seconds)
        return None
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    reference = now if now is not None else datetime.now(UTC)
    if reference.tzinfo is None:
        reference = reference.replace(tzinfo=UTC)
    return max(0.0, (when - reference).total_seconds())


def _detail_entry(entry: object) -> str:
    if isinstance(entry, Mapping):
        loc = entry.get("loc")
        msg = entry.get("msg", entry.get("message"))
        where = ".".join(_part(part) for part in loc) if isinstance(loc, list | tuple) else loc
        if where is not None and isinstance(msg, str):
            return f"{_part(where)}: {msg}"
        if isinstance(msg, str):
            return msg
        return "(a problem without a message)"
    return entry if isinstance(entry, str) else "(a problem without a message)"


def _part(part: object) -> str:
    """A ``loc`` part as text: strings and integers as they are, anything else by its kind (a
    server may put a refused value there)."""
    if isinstance(part, str):
        return part
    if isinstance(part, int) and not isinstance(part, bool) and abs(part) < 10**9:
        return str(part)
    return "?"


_MESSAGE_PLACES: tuple[tuple[str, str | None], ...] = (
    ("error", None),
    ("error", "message"),
    ("error", "msg"),
    ("message", None),
    ("detail", None),
    ("detail", "message"),
)
"""Where an error body carries its message, first found wins: a non-empty string at the key, or
a string in the object at the key under the field."""


def _message_from(payload: object) -> str | None:
    if not isinstance(payload, Mapping):
        return None
    for key, field in _MESSAGE_PLACES:
        value = payload.get(key)
        if field is None and isinstance(value, str) and value:
            return value
        if field is not None and isinstance(value, Mapping) and isinstance(value.get(field), str):
            return str(value[field])
    detail = payload.get("detail")
    if isinstance(detail, list) and detail:
        return "; ".join(_detail_entry(entry) for entry in detail[:20])
    return None


def error_message(body: bytes, redaction: Redaction | None = None) -> str:
    """The server's message from an error body, in SYSTEM-ONE.md's order of the four shapes,
    redacted (``redaction``: the key and the request's text) and only then cut.

    ``error`` (a string or ``error.message``), then ``message``, then ``detail`` (a string,
    ``detail.message`` or a ``detail[]`` list rendered ``loc: msg; ...``, never its ``input``);
    otherwise the raw body. The result is at most about 200 characters.
    """
    text = body[:ERROR_BODY_BYTES].decode("utf-8", errors="replace")
    payload: object = None
    if len(body) <= ERROR_BODY_BYTES:
        try:
            payload = json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            payload = None
    found = _message_from(payload)
    if found is None:
        found = text[:SCAN_CHARS] if text.strip() else "(empty body)"
    return (redaction or Redaction()).message(found)


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def status_failure(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    endpoint: Where,
    *,
    now: datetime | None = None,
) -> RetryableError | StatusError:
    """The exception a non-2xx reply becomes; see the module docstring for the table. It carries
    the reply's ``x-typesafe-request-id`` as ``request_id`` (for the record)."""
    failure = _status_failure(status, headers, body, endpoint, now=now)
    failure.request_id = _header(headers, REQUEST_ID_HEADER)
    return failure


def _status_failure(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    endpoint: Where,
    *,
    now: datetime | None,
) -> RetryableError | StatusError:
    message = error_message(body, endpoint.redactor)
    where = f"{endpoint.service} at {endpoint.shown_url}"
    if status in (408, 429) or status >= 500:
        said = f"{endpoint.service} answered HTTP {status}: {message} ({endpoint.shown_url})"
        hint = retry_after(headers, now)
        if status == 429:
            return RateLimitedError(said, retry_after=hint, status=status)
        if status in (503, 529):
            return OverloadedError(said, retry_after=hint, status=status)
        return TransientError(said, retry_after=hint, status=status)
    if not endpoint.api_key_env:
        key_hint = "the catalog entry names no api_key_env, so no key was sent"
    elif not endpoint.api_key:
        key_hint = f"the environment variable {endpoint.api_key_env} is not set, so no key was sent"
    else:
        key_hint = f"check that the environment variable {endpoint.api_key_env} holds a valid key"
    if status == 401:
        return UnauthorizedError(
            f"{where} refused the credentials (HTTP 401): {message}; {key_hint}", status=401
        )
    if status == 403:
        sent = "a key was sent" if endpoint.api_key else "no key was sent"
        return PermissionDeniedError(
            f"{where} refused the request (HTTP 403, {sent}): {message}; {key_hint}, "
            "and that the key may use this model",
            status=403,
        )
    fix = {
        404: "check the entry's base_url, path and wire_model_id",
        413: "the request is too large for this server; send a smaller state",
    }.get(status, "the server refused this request; no re-run will change that")
    return ExternalServiceError(f"{where} answered HTTP {status}: {message}; {fix}", status=status)


def _is_unknown_host(error: BaseException) -> bool:
    if isinstance(error, aiohttp.ClientConnectorDNSError | socket.gaierror):
        return True
    if isinstance(error, aiohttp.ClientConnectorError):
        return isinstance(error.os_error, socket.gaierror)
    return False


def connection_failure(
    error: BaseException, endpoint: Where, *, timeout: float | None = None
) -> RetryableError | StatusError:
    """The exception a round trip without a reply becomes.

    A client-side timeout and a connection that failed (refused, reset, disconnected, a broken
    payload) are transient; an unknown host is not (no re-run resolves it).
    """
    if _is_unknown_host(error):
        host = URL(endpoint.url).host if endpoint.url else None
        return ExternalServiceError(
            f"{endpoint.service} host {host!r} is unknown (the name does not resolve); check the "
            "catalog entry's base_url",
        )
    if isinstance(error, TimeoutError):
        within = f"{timeout:g} s" if timeout is not None else "the connection's time limit"
        return TransientError(
            f"{endpoint.service} at {endpoint.shown_url} did not answer within {within}"
        )
    reason = endpoint.redact(str(error) or type(error).__name__, 120)
    return TransientError(
        f"{endpoint.service} at {endpoint.shown_url} could not be reached: {reason}"
    )
