"""Suite-wide setup: no network beyond loopback, no downloads, hypothesis profiles.

Any connection or name lookup outside loopback (127.0.0.0/8, ::1, ``localhost``) fails at once
with :class:`NetworkDisabledError`; unix sockets work. ``TIKTOKEN_CACHE_DIR`` points at an empty
directory, so a tiktoken download attempt would have to reach the network, and fails.
Hypothesis profiles: ``dev`` (default) and ``ci``, chosen by ``$HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import shutil
import socket
import tempfile

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=200, print_blob=True)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


class NetworkDisabledError(ConnectionRefusedError):
    """The test suite reached for a host outside loopback."""


def _is_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", errors="replace")
    if not isinstance(host, str):
        return False
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _refuse(host: object) -> NetworkDisabledError:
    return NetworkDisabledError(
        f"network access to {host!r} is disabled in the test suite: only loopback "
        "(127.0.0.1, ::1, localhost) and unix sockets are allowed"
    )


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _guard(sock: socket.socket, address: object) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0] if isinstance(address, tuple) and address else address
        if not _is_loopback(host):
            raise _refuse(host)


def _connect(self: socket.socket, address: object) -> None:
    _guard(self, address)
    _real_connect(self, address)  # type: ignore[arg-type]  # any address shape the family takes


def _connect_ex(self: socket.socket, address: object) -> int:
    _guard(self, address)
    return _real_connect_ex(self, address)  # type: ignore[arg-type]  # as above


def _getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
    if host is not None and not _is_loopback(host):
        raise socket.gaierror(socket.EAI_NONAME, str(_refuse(host)))
    return _real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]  # passed through


def _go_offline() -> None:
    """No downloads and no network beyond loopback, from collection on, for the whole session."""
    cache = tempfile.mkdtemp(prefix="tiktoken-cache-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    socket.socket.connect = _connect  # type: ignore[method-assign, assignment]  # the guard
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign, assignment]  # the guard
    socket.getaddrinfo = _getaddrinfo  # type: ignore[assignment]  # the guard itself


_go_offline()
