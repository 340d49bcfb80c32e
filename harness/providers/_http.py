"""What an HTTP decision server's reply means for the dispatcher.

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
"""

from __future__ import annotations

import asyncio
import functools

# the stdlib's json: an error body read with NaN refused (parse_constant, which orjson has no hook
# for)
import json
import socket
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, NamedTuple

import aiohttp
import attrs
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from harness.decision.systemone import REQUEST_ID_HEADER
from harness.errors import (
    ExternalServiceError,
    HarnessError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitedError,
    ReplyTooLargeError,
    RetryableError,
    StatusError,
    TransientError,
    UnauthorizedError,
)

from ._redact import MESSAGE_CHARS, SCAN_CHARS, Redaction

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.decision import DecisionRequest

__all__ = [
    "Endpoint",
    "HttpReply",
    "HttpTransport",
    "connection_failure",
    "error_message",
    "retry_after",
    "status_failure",
]

ERROR_BODY_BYTES = 65_536
"""How much of an error body is parsed as JSON; a longer body is read as text."""


@functools.lru_cache(maxsize=256)
def _shown_url(url: str) -> str:
    """``url`` as messages show it (cached: every call of an entry names the same URL)."""
    try:
        parsed = URL(url)
        return str(parsed.with_user(None).with_query(None).with_fragment(None))
    except (ValueError, TypeError):
        return "<unparsable URL>"


@attrs.frozen
class Endpoint:
    """One URL of a decision server as the messages name it; the key is never shown."""

    service: str
    """What answers there, for messages: ``"System One server"``."""
    url: str
    api_key_env: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    redaction: Redaction | None = attrs.field(default=None, repr=False)
    """What this round trip must never show (the request's own text); the key is always added."""

    @property
    def shown_url(self) -> str:
        """The URL without user info, query or fragment (where a gateway might carry a key)."""
        return _shown_url(self.url)

    def headers(self) -> dict[str, str]:
        """The request headers: JSON, and a bearer token only when there is a key."""
        return dict(_prepared_headers(self.api_key))

    @classmethod
    def of(
        cls, service: str, entry: CatalogEntry, request: DecisionRequest | None = None
    ) -> Endpoint:
        """``entry``'s URL for ``service``, with the key its ``api_key_env`` holds now (always
        redacted); redacting ``request``'s text too when given (else a failure may add that,
        :meth:`with_redaction`)."""
        key = entry.api_key
        return cls(
            service=service,
            url=entry.url,
            api_key_env=entry.api_key_env,
            api_key=key,
            redaction=None if request is None else Redaction.of(request, key=key),
        )

    def with_redaction(self, redaction: Redaction | None) -> Endpoint:
        """This endpoint, its messages redacting ``redaction`` too (``None``: as it is)."""
        if redaction is None or redaction is self.redaction:
            return self
        return attrs.evolve(self, redaction=redaction)

    @property
    def redactor(self) -> Redaction:
        """The redaction of this round trip: its ``redaction`` with the key added."""
        base = self.redaction or Redaction()
        if self.api_key and self.api_key not in base.keys:
            return attrs.evolve(base, keys=(*base.keys, self.api_key))
        return base

    def redact(self, text: str, limit: int = MESSAGE_CHARS) -> str:
        """A server's (or a transport error's) ``text``: redacted first, then cut to ``limit``."""
        return self.redactor.message(text, limit)


@functools.lru_cache(maxsize=16)
def _prepared_headers(api_key: str | None) -> CIMultiDictProxy[str]:
    """The request headers for ``api_key``, built once and shared read-only by every call (a
    proxy, which aiohttp takes as it is instead of converting a dict on each request)."""
    headers = CIMultiDict({"Content-Type": "application/json", "Accept": "application/json"})
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return CIMultiDictProxy(headers)


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
    endpoint: Endpoint,
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
    endpoint: Endpoint,
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
    error: BaseException, endpoint: Endpoint, *, timeout: float | None = None
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


class HttpReply(NamedTuple):
    """A 2xx reply, read in full: its headers (looked up by any case of a name), the body, the
    round trip time. (A named tuple: one is made on every call, and a frozen attrs class costs
    three times as much to build.)"""

    status: int
    headers: Mapping[str, str]
    body: bytes
    latency: float
    """Seconds from sending the request to reading the last byte of the reply."""

    @property
    def request_id(self) -> str | None:
        """The server's ``x-typesafe-request-id``, when it sent one."""
        return self.headers.get(REQUEST_ID_HEADER) or None


class HttpTransport:
    """Pooled :class:`aiohttp.ClientSession` objects, one per pool (a catalog entry), each
    created lazily inside the running loop and reused across calls.

    ``request`` makes one round trip and raises the classified failure (see the module
    docstring) for anything but a 2xx reply. A pool holds at most ``connections`` sockets (the
    entry's :attr:`~harness.catalog.CatalogEntry.connection_limit`, sized from its admission, so a
    gate-bounded entry never queues here); ``0`` means no bound. A 2xx body is read up to
    ``max_bytes`` (:class:`~harness.errors.ReplyTooLargeError` past it, before the rest is read);
    an error body up to :data:`ERROR_BODY_BYTES`.
    """

    def __init__(self, *, max_connections: int = 0) -> None:
        self._max_connections = max_connections
        self._sessions: dict[str, aiohttp.ClientSession] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def _current_session(self, pool: str, connections: int) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            for stale in self._sessions.values():
                if not stale.closed:
                    stale.detach()  # bound to a loop that is gone; its sockets go with it
            self._sessions = {}
            self._loop = loop
        session = self._sessions.get(pool)
        if session is not None and not session.closed:
            return session
        limit = connections or self._max_connections
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=limit, limit_per_host=0),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30),
        )
        self._sessions[pool] = session
        return session

    def pools(self) -> dict[str, int]:
        """The open pools and their connection limits (0: unbounded), for tests and logs."""
        return {
            pool: session.connector.limit if session.connector is not None else 0
            for pool, session in self._sessions.items()
            if not session.closed
        }

    async def request(
        self,
        method: str,
        endpoint: Endpoint,
        entry: CatalogEntry,
        body: bytes | None,
        *,
        timeout: float | None = None,
        redaction: Redaction | None = None,
        asked: DecisionRequest | None = None,
    ) -> HttpReply:
        """Send ``body`` (None: none) to ``endpoint`` for ``entry`` and read the 2xx reply (at
        most the entry's ``max_reply_bytes``), or raise its classified failure.

        ``timeout`` (seconds) bounds the whole round trip; passing it is the caller's deadline.
        The entry has its own connection pool (``connection_limit`` sockets at most, 0: no bound).
        ``redaction`` is what this round trip's messages must never show besides the key (the
        request's own text); it is applied only when there is a failure to describe, so an
        endpoint can be built once and shared by every call. ``asked`` is the same for a
        decision request (its text, and the key), the redaction built only on a failure, so a
        call that succeeds builds none (``redaction`` wins when both are given).
        """
        max_bytes, pool = entry.max_reply_bytes, entry.id
        session = self._sessions.get(pool) if self._loop is asyncio.get_running_loop() else None
        if session is None or session.closed:
            session = self._current_session(pool, entry.connection_limit)
        limit = aiohttp.ClientTimeout(total=max(timeout, 0.001)) if timeout is not None else None
        started = time.perf_counter()
        try:
            async with session.request(
                method,
                endpoint.url,
                data=body,
                headers=_prepared_headers(endpoint.api_key),
                timeout=limit,
            ) as reply:
                status = reply.status
                headers: Mapping[str, str] = reply.headers
                ok = 200 <= status < 300
                length = reply.content_length
                if ok and length is not None and length <= max_bytes:
                    payload = await reply.read()  # the usual reply: its length known and in bounds
                else:
                    payload = await _read(reply, max_bytes if ok else ERROR_BODY_BYTES, cut=not ok)
        except aiohttp.InvalidURL:
            raise ExternalServiceError(  # the URL may carry a key: its error stays out of the chain
                f"{endpoint.service} URL {endpoint.shown_url!r} is not a valid URL; check the "
                "catalog entry's base_url and path"
            ) from None
        except _TooLarge as error:
            raise ReplyTooLargeError(
                f"{endpoint.service} at {endpoint.shown_url} answered HTTP {status} with a body "
                f"of {error.size} bytes, more than the entry's max_reply_bytes ({max_bytes}); "
                "raise max_reply_bytes if the server is right",
                status=status,
                request_id=headers.get(REQUEST_ID_HEADER) or None,
            ) from None
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            described = endpoint.with_redaction(_redaction(endpoint, redaction, asked))
            raise connection_failure(error, described, timeout=timeout) from error
        latency = time.perf_counter() - started
        if not ok:
            lowered = {name.lower(): value for name, value in headers.items()}
            described = endpoint.with_redaction(_redaction(endpoint, redaction, asked))
            raise status_failure(status, lowered, payload, described)
        return HttpReply(status=status, headers=headers, body=payload, latency=latency)

    async def aclose(self) -> None:
        """Close the pooled connections; idempotent."""
        sessions, self._sessions, self._loop = self._sessions, {}, None
        for session in sessions.values():
            if not session.closed:
                await session.close()


def _redaction(
    endpoint: Endpoint, redaction: Redaction | None, asked: DecisionRequest | None
) -> Redaction | None:
    """What a failure of this round trip must not show: ``redaction``, else ``asked``'s text
    and the endpoint's key (built here, on the failure, not on every call)."""
    if redaction is None and asked is not None:
        return Redaction.of(asked, key=endpoint.api_key)
    return redaction


class _TooLarge(HarnessError):
    """A reply past its byte limit, turned into ReplyTooLargeError by the transport."""

    def __init__(self, size: str) -> None:
        super().__init__(f"a body of {size} bytes")
        self.size = size


async def _read(reply: aiohttp.ClientResponse, limit: int, *, cut: bool) -> bytes:
    """The body, at most ``limit`` bytes: past it, ``_TooLarge`` (or, with ``cut``, the first
    ``limit`` bytes; the rest is never read and the connection is not reused)."""
    length = reply.content_length
    if length is not None and length <= limit:
        return await reply.read()
    if length is not None and not cut:
        raise _TooLarge(str(length))
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await reply.content.read(65_536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
    if cut:
        reply.close()
        return b"".join(chunks)[:limit]
    reply.close()
    raise _TooLarge(f"more than {limit}")
