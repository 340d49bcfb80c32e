"""The suite's network guard (tests/conftest.py): loopback and unix sockets only."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest


def test_non_loopback_connect_fails_at_once() -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
        pytest.raises(ConnectionRefusedError, match="disabled in the test suite"),
    ):
        sock.connect(("192.0.2.1", 80))


def test_non_loopback_name_lookup_fails_at_once() -> None:
    with pytest.raises(socket.gaierror, match="disabled in the test suite"):
        socket.getaddrinfo("example.com", 443)
    with pytest.raises(OSError, match="disabled in the test suite"):
        socket.create_connection(("example.com", 443), timeout=1)


def test_loopback_connects_where_the_network_is_off() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("localhost", port), timeout=2) as client:
            peer, _ = server.accept()
            with peer:
                client.sendall(b"ping")
                assert peer.recv(4) == b"ping"


async def test_asyncio_loopback_and_unix_sockets_work(tmp_path: Path) -> None:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.readexactly(4))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"pong")
    assert await reader.readexactly(4) == b"pong"
    writer.close()
    server.close()
    await server.wait_closed()

    path = os.fspath(tmp_path / "s.sock")
    unix_server = await asyncio.start_unix_server(echo, path)
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(b"unix")
    assert await reader.readexactly(4) == b"unix"
    writer.close()
    unix_server.close()
    await unix_server.wait_closed()


async def test_asyncio_non_loopback_fails_at_once() -> None:
    with pytest.raises(OSError, match="disabled in the test suite"):
        await asyncio.wait_for(asyncio.open_connection("192.0.2.1", 80), timeout=2)


def test_tiktoken_cache_is_an_empty_temp_dir() -> None:
    cache = os.environ["TIKTOKEN_CACHE_DIR"]
    assert os.path.isdir(cache)
    assert os.listdir(cache) == []
