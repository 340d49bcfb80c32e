"""A real redis-server on a free loopback port (no persistence), and helpers for batch tests."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.catalog import CatalogEntry


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    server = shutil.which("redis-server")
    assert server is not None, "redis-server is not installed: .ci/run installs it (apt-get)"
    port = _free_port()
    process = subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def write_inputs(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    return path


def read_results(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def catalog_file(path: Path, entry: CatalogEntry, **extra: object) -> Path:
    """A TOML catalog with ``entry`` pinned (for processes started by a test)."""
    fields = {
        "id": entry.id,
        "provider": entry.provider,
        "wire_model_id": entry.wire_model_id,
        "base_url": entry.base_url,
        "max_context_tokens": entry.max_context_tokens,
        **({"max_concurrent": entry.max_concurrent} if entry.max_concurrent else {}),
        **({"tpm": entry.tpm} if entry.tpm else {}),
        **extra,
    }
    lines = ["[[entries]]"]
    for key, value in fields.items():
        lines.append(f"{key} = {json.dumps(value)}")
    lines += ["", "[pins]", f'decision = "{entry.id}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
