"""A headless Chromium driven over the DevTools protocol, for tests that look at a page.

A tiny client: the browser is started with ``--remote-debugging-port=0`` (it prints its own
``ws://127.0.0.1:<port>/...`` endpoint on stderr), one page is opened and attached to, and
commands go over one aiohttp websocket. The browser is the system's (Debian's ``chromium``,
installed by ``.ci/run``); nothing is downloaded, and the browser is kept off the network: no
background services, every host name but loopback resolves to nothing.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import pathlib
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final, cast

import aiohttp

CANDIDATES: Final = ("chromium", "chromium-headless-shell", "chromium-browser", "google-chrome")
"""Browser executables looked for on ``PATH`` (``$HARNESS_CHROMIUM`` wins when set)."""

START_SECONDS: Final = 60.0
COMMAND_SECONDS: Final = 60.0

_ENDPOINT: Final = re.compile(r"DevTools listening on (ws://\S+)")

FLAGS: Final = (
    "--headless=new",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
)

JsonObject = dict[str, object]


def chromium_executable() -> str:
    """The browser to drive; a missing one fails naming the fix."""
    given = os.environ.get("HARNESS_CHROMIUM")
    if given:
        return given
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError(
        "no Chromium found for the record page's browser test: install Debian's chromium "
        "(apt-get update && apt-get install -y chromium; .ci/run does it) or set "
        "HARNESS_CHROMIUM to a Chromium executable"
    )


class BrowserError(RuntimeError):
    """A DevTools command that failed, or a browser that did not start."""


class Page:
    """One attached page: send commands, wait for events."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse, session: str) -> None:
        self._socket = socket
        self._session = session
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[JsonObject]] = {}
        self._events: dict[str, asyncio.Event] = {}

    async def call(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """Send ``method`` to the page's session and return its result."""
        return await _send(self._socket, self._pending, self._ids, method, params, self._session)

    def expect(self, event: str) -> asyncio.Event:
        """An event to await, armed before the command that causes it."""
        flag = asyncio.Event()
        self._events[event] = flag
        return flag

    def dispatch(self, message: JsonObject) -> None:
        """A message from the browser: a reply settles its command, an event sets its flag."""
        if "id" in message:
            future = self._pending.pop(cast(int, message["id"]), None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(BrowserError(str(message["error"])))
                else:
                    future.set_result(cast(JsonObject, message.get("result", {})))
        elif message.get("method") in self._events:
            self._events[cast(str, message["method"])].set()

    async def open(self, path: pathlib.Path, *, width: int, height: int) -> None:
        """Load the file at ``path`` (absolute) in a ``width`` x ``height`` viewport, wait for
        it."""
        await self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        await self.call("Page.enable")
        loaded = self.expect("Page.loadEventFired")
        await self.call("Page.navigate", {"url": path.as_uri()})
        await asyncio.wait_for(loaded.wait(), COMMAND_SECONDS)

    async def evaluate(self, expression: str) -> object:
        """The JSON value of ``expression`` evaluated in the page."""
        result = await self.call(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"the page's script failed: {result['exceptionDetails']}")
        return cast(JsonObject, result["result"]).get("value")

    async def screenshot(self, path: pathlib.Path) -> None:
        """A PNG of the whole page (beyond the viewport) written to ``path``."""
        result = await self.call(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
        )
        data = base64.b64decode(cast(str, result["data"]))
        await asyncio.to_thread(path.write_bytes, data)


async def _send(
    socket: aiohttp.ClientWebSocketResponse,
    pending: dict[int, asyncio.Future[JsonObject]],
    ids: itertools.count[int],
    method: str,
    params: JsonObject | None,
    session: str | None,
) -> JsonObject:
    number = next(ids)
    message: JsonObject = {"id": number, "method": method, "params": params or {}}
    if session is not None:
        message["sessionId"] = session
    future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
    pending[number] = future
    await socket.send_json(message)
    return await asyncio.wait_for(future, COMMAND_SECONDS)


async def _endpoint(process: asyncio.subprocess.Process) -> str:
    assert process.stderr is not None
    seen: list[str] = []
    while True:
        line = await process.stderr.readline()
        if not line:
            raise BrowserError("chromium exited before it listened: " + " | ".join(seen[-5:]))
        text = line.decode("utf-8", "replace").strip()
        seen.append(text)
        found = _ENDPOINT.search(text)
        if found:
            return found.group(1)


async def _drain(stream: asyncio.StreamReader | None) -> None:
    while stream is not None and await stream.readline():
        pass  # keep the pipe empty so the browser never blocks on its own logging


@asynccontextmanager
async def browser_page() -> AsyncIterator[Page]:
    """A fresh headless Chromium (own profile folder) with one page attached; closed after."""
    executable = chromium_executable()
    with tempfile.TemporaryDirectory(prefix="harness-chromium-") as profile:
        process = await asyncio.create_subprocess_exec(
            executable,
            *FLAGS,
            f"--user-data-dir={profile}",
            "about:blank",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        drain: asyncio.Task[None] | None = None
        try:
            url = await asyncio.wait_for(_endpoint(process), START_SECONDS)
            if not url.startswith("ws://127.0.0.1:"):
                raise BrowserError(f"chromium listens on {url}, not on loopback")
            drain = asyncio.create_task(_drain(process.stderr))
            async with (
                aiohttp.ClientSession() as http,
                http.ws_connect(url, max_msg_size=0) as socket,
            ):
                pending: dict[int, asyncio.Future[JsonObject]] = {}
                ids = itertools.count(1)
                pages: list[Page] = []

                async def read() -> None:
                    async for frame in socket:
                        if frame.type is not aiohttp.WSMsgType.TEXT:
                            break
                        message = cast(JsonObject, frame.json())
                        if "sessionId" in message and pages:
                            pages[0].dispatch(message)
                        elif "id" in message:
                            future = pending.pop(cast(int, message["id"]), None)
                            if future is not None and not future.done():
                                if "error" in message:
                                    future.set_exception(BrowserError(str(message["error"])))
                                else:
                                    future.set_result(cast(JsonObject, message.get("result", {})))

                reader = asyncio.create_task(read())
                try:
                    target = await _send(
                        socket, pending, ids, "Target.createTarget", {"url": "about:blank"}, None
                    )
                    attached = await _send(
                        socket,
                        pending,
                        ids,
                        "Target.attachToTarget",
                        {"targetId": target["targetId"], "flatten": True},
                        None,
                    )
                    page = Page(socket, cast(str, attached["sessionId"]))
                    pages.append(page)
                    yield page
                finally:
                    reader.cancel()
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()
            if drain is not None:
                drain.cancel()
