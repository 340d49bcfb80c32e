"""Fixtures for the interop tests: third-party peers started on 127.0.0.1, stopped afterwards."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import pytest

from .peers import Peer

StartPeer = Callable[..., Peer]


@pytest.fixture
def start_peer() -> Iterator[StartPeer]:
    """Start a peer: ``start_peer("jevcompat", "mock", "--fault", "xssi-200")``; every peer
    started is terminated when the test ends, whatever its outcome."""
    started: list[Peer] = []

    def start(
        name: str, *argv: str, env: Mapping[str, str] | None = None, port: int | None = None
    ) -> Peer:
        peer = Peer(name, argv, env=env, port=port)
        started.append(peer)
        return peer.start()

    try:
        yield start
    finally:
        for peer in started:
            peer.stop()


@pytest.fixture(scope="module")
def jevcompat_mock() -> Iterator[Peer]:
    """``jevcompat mock`` without faults, shared by a module's tests (it keeps no state that
    matters between requests: its answers are a function of the request)."""
    peer = Peer("jevcompat", ("mock",))
    try:
        yield peer.start()
    finally:
        peer.stop()


@pytest.fixture(scope="module")
def sparrow_server() -> Iterator[Peer]:
    """``sparrow-decider serve``: a tiny real model behind HTTP, shared by a module's tests."""
    peer = Peer("sparrow-decider", ("serve",))
    try:
        yield peer.start()
    finally:
        peer.stop()
