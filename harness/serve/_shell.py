"""The shell every server is: one :class:`~harness.serve.ServerCore` and its lifecycle (see
:class:`ServerShell`)."""

from __future__ import annotations

import abc
import logging
from typing import ClassVar, Self

from aiohttp import web

from harness.serve._capacity import Capacity
from harness.serve._core import ServerCore
from harness.serve._listener import Listener

__all__ = ["ServerShell"]


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

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
