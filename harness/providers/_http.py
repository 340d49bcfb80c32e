"""A round trip to an HTTP decision server: the endpoint (its URL as messages show it, its key,
what its messages must never show) and the pooled transport that sends a body and reads the
reply, raising the failure a non-2xx reply or no reply means (``_http_failures.py``).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

import aiohttp
import attrs
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from harness.decision.systemone import REQUEST_ID_HEADER
from harness.errors import (
    ExternalServiceError,
    HarnessError,
    ReplyTooLargeError,
)

from ._http_failures import ERROR_BODY_BYTES, connection_failure, status_failure
from ._redact import MESSAGE_CHARS, Redaction

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.decision import DecisionRequest

__all__ = ["Endpoint", "HttpReply", "HttpTransport"]


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
