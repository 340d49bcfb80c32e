"""Third-party System One servers from PyPI, started as real processes on 127.0.0.1.

A peer runs its console script from this interpreter's environment on a free loopback port
(bound to port 0 to pick one, then released) and is polled until it accepts connections. A peer
that cannot start fails the test with its output: a missing peer is a broken environment, never
a reason to skip.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.catalog import CatalogEntry

__all__ = ["LOOPBACK", "Peer", "PeerStartError", "free_port", "peer_entry", "script"]

LOOPBACK = "127.0.0.1"
"""The only address a peer may bind."""

STARTUP_SECONDS = 30.0
"""How long a peer may take to accept connections before the test fails."""


class PeerStartError(RuntimeError):
    """A peer did not start: names the command, the fix and what the process printed."""


def free_port() -> int:
    """A TCP port that was free on loopback a moment ago (bind port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


def script(name: str) -> str:
    """The path of console script ``name`` installed beside this interpreter."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise PeerStartError(
            f"{name} is not installed in {Path(sys.executable).parent}: install the test extra "
            "(pip install -e '.[test]'); the interop tests need it and do not skip"
        )
    return str(path)


class Peer:
    """One third-party server process on ``127.0.0.1:port``; :meth:`stop` ends it (idempotent).

    ``argv`` is the console script's arguments without ``--host`` and ``--port`` (every peer
    used here takes both; they are always given, so nothing binds beyond loopback).
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        port: int | None = None,
    ) -> None:
        self.name = name
        self.port = port if port is not None else free_port()
        self.argv = [script(name), *argv, "--host", LOOPBACK, "--port", str(self.port)]
        self._env = {**os.environ, **(env or {})}
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 -- closed in stop()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def root(self) -> str:
        """``http://127.0.0.1:<port>``: a catalog entry's ``base_url``."""
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> Peer:
        """Start the process and wait until it accepts connections; fail with its output."""
        self._process = subprocess.Popen(
            self.argv, stdout=self._log, stderr=subprocess.STDOUT, env=self._env
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise PeerStartError(
                    f"{self.name} exited with code {self._process.returncode} before it "
                    f"answered on {self.root} ({' '.join(self.argv)}): {self.output()}"
                )
            if self._accepts():
                return self
            time.sleep(0.02)
        printed = self.output()
        self.stop()
        raise PeerStartError(
            f"{self.name} did not accept connections on {self.root} within "
            f"{STARTUP_SECONDS:g} s ({' '.join(self.argv)}): {printed}"
        )

    def _accepts(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.settimeout(0.5)
            return probe.connect_ex((LOOPBACK, self.port)) == 0

    def output(self) -> str:
        """What the process printed so far (the last 2,000 characters)."""
        if self._log.closed:
            return "(log closed)"
        self._log.seek(0)
        text = self._log.read().decode("utf-8", errors="replace")
        return text[-2000:] or "(nothing)"

    def log_count(self, text: str) -> int:
        """How many lines the process printed so far contain ``text`` (e.g. an access-log
        line ``"POST /v1/systemone``: the requests it received)."""
        if self._log.closed:
            return 0
        self._log.seek(0)
        printed = self._log.read().decode("utf-8", errors="replace")
        return sum(1 for line in printed.splitlines() if text in line)

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        """Terminate the process (kill it after 5 s) and close its log."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if not self._log.closed:
            self._log.close()


def peer_entry(root: str, **overrides: object) -> CatalogEntry:
    """A System One catalog entry at ``root`` (``max_concurrent = 4`` unless overridden)."""
    fields: dict[str, object] = {
        "id": "peer",
        "provider": "systemone",
        "wire_model_id": "jev-latest",
        "base_url": root,
        "max_context_tokens": 32_768,
    }
    fields.update(overrides)
    if "tpm" not in fields and "max_concurrent" not in fields:
        fields["max_concurrent"] = 4
    return CatalogEntry(**fields)  # type: ignore[arg-type]  # the overrides are the caller's
