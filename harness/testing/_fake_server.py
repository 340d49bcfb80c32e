"""A real System One server on loopback for tests: answers, pacing, capacity and faults.

:class:`FakeSystemOneServer` is an aiohttp web server bound to ``127.0.0.1`` only, a thin shell
over the core of ``harness serve`` (:mod:`harness.serve`: routes, codecs, admission, auth, the
request id and the access log are the real server's), with a scripted or faulty model behind it
in place of a catalog entry. It serves
``POST /v1/systemone`` (System One), ``POST /v1/decisions`` (OpenAI Decisions) and
``GET /v1/models``, answers with an installable policy, and reports usage as one input token per
four bytes of request body, rounded up (output tokens 0). It can pace requests
(``service_time``), bound them (``max_in_flight`` plus a bounded queue, then 429 with
``Retry-After``) and inject faults (:class:`harness.testing.Fault`, ``_faults.py``), by script
(``fail_next``) or by request number (``faults``). Counters are cumulative across restarts.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from aiohttp import web

from harness.catalog import CatalogEntry
from harness.providers import Policy, default_answers
from harness.serve import (
    Codec,
    ServerShell,
    decode_request_body,
    request_id_of,
)
from harness.testing._faults import Fault, echo_reply

if TYPE_CHECKING:
    from harness.decision import Answer

__all__ = ["FakeSystemOneServer"]


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
        # same shape as RedisAdmission's settings: plain attributes, other settings
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
            return echo_reply(fault, request.headers.get("Authorization", ""), body)
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
        decoded = decode_request_body(body, codec, request_id)
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
