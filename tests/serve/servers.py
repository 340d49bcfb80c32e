"""Helpers for the server tests: `harness serve` as a subprocess, a slow counting client."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from harness.catalog import Catalog, CatalogEntry
from harness.decision import DecisionRequest, DecisionResponse
from harness.providers import FakeDecisionModel

URL = re.compile(r"http://127\.0\.0\.1:(\d+)/v1/systemone")


def offline_env() -> dict[str, str]:
    """The environment of a `harness` subprocess: no catalog override, no proxies."""
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_CATALOG"}
    env["NO_COLOR"] = "1"
    return env


@contextmanager
def harness_serve(
    *args: str, timeout: float = 15.0, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Start `python -m harness.cli serve --port 0 ARGS`, yield it and its root URL once it
    listens; interrupt it on exit. Its stderr goes to a file (a pipe nobody drains could fill
    and block the server), read only to explain a server that did not start."""
    errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 -- closed in the finally below
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env={**offline_env(), **(env or {})},
    )
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(process.stdout.readline()))  # type: ignore[union-attr]  # piped
    reader.start()
    reader.join(timeout)
    try:
        found = URL.search(first[0]) if first else None
        if found is None:
            process.kill()
            process.wait(timeout=5)
            errors.seek(0)
            err = errors.read()
            raise AssertionError(f"harness serve did not start: {first!r} {err[-2000:]}")
        yield process, f"http://127.0.0.1:{found.group(1)}"
    finally:
        if process.poll() is None:
            process.send_signal(2)  # SIGINT: the server stops cleanly
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        errors.close()


class CountingModel(FakeDecisionModel):
    """A fake model taking ``service_time`` per decision and counting how many run at once."""

    def __init__(self, service_time: float) -> None:
        super().__init__()
        self.service_time = service_time
        self.running = 0
        self.peak = 0

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.sleep(self.service_time)
            return await super().decide(request, entry, timeout=timeout)
        finally:
            self.running -= 1


def fake_catalog(max_concurrent: int = 1000) -> Catalog:
    """A catalog whose pinned entry is a fake model (admission wide open unless narrowed)."""
    entry = CatalogEntry(
        id="fake",
        provider="fake",
        wire_model_id="fake-decider",
        max_context_tokens=100_000,
        max_concurrent=max_concurrent,
    )
    return Catalog([entry], {"decision": "fake"})
