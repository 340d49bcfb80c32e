"""A server's listener: an aiohttp application on a host and port (kept across restarts), its
connections counted."""

from __future__ import annotations

import asyncio

from aiohttp import web

__all__ = ["Listener"]


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
