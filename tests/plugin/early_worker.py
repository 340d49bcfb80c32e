"""A mypy build worker that answers before it has imported mypy (test support).

mypy 2.4's parallel mode (``--num-workers``) spawns each worker as ``sys.executable -m
mypy.build_worker`` and gives it 3 s (``WORKER_START_TIMEOUT``, compiled into mypy) to write a
status file naming its socket. Importing mypy alone takes 0.2 s of CPU; on an overloaded
machine (measured: 4 s of wall time for that import at a load average of 12 on 2 cores) no
worker makes it, and mypy exits 2 with no diagnostics, which is what made
``test_parallel_run_matches_cold_serial_run`` flaky.

This worker binds its socket and writes the status file with the standard library alone (a few
ms), then imports mypy and serves exactly as ``mypy.build_worker.worker.main`` does, on that
socket: the coordinator's connection waits in the socket's backlog meanwhile, and every later
step of the protocol (its 10 s answers, the type checking itself) is mypy's own code. The test
makes mypy spawn it by running the coordinator with ``sys.executable`` pointing at a launcher
script that ``exec``s this module (so the pid mypy checks is unchanged).

Run as ``python early_worker.py -m mypy.build_worker --status-file=... --options-data=...``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile


def _arguments(argv: list[str]) -> dict[str, str]:
    if argv[:2] != ["-m", "mypy.build_worker"]:
        raise SystemExit(f"early_worker: expected '-m mypy.build_worker ...', got {argv!r}")
    out: dict[str, str] = {}
    for arg in argv[2:]:
        name, _, value = arg.partition("=")
        out[name] = value
    return out


def main(argv: list[str]) -> None:
    """Bind and announce first; then mypy's own worker setup and loop."""
    arguments = _arguments(argv)
    directory = tempfile.mkdtemp()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(os.path.join(directory, "build_worker.sock"))
    listener.listen(1)
    with open(arguments["--status-file"], "w") as status:
        json.dump({"pid": os.getpid(), "connection_name": listener.getsockname()}, status)
        status.write("\n")
    _serve(listener, directory, arguments["--options-data"])


def _serve(listener: socket.socket, directory: str, options_data: str) -> None:
    """``mypy.build_worker.worker.main`` after its status file, on ``listener``."""
    import gc
    import platform
    import shutil

    from librt.internal import ReadBuffer
    from mypy import util
    from mypy.build_worker import worker
    from mypy.cache import read_json
    from mypy.defaults import RECURSION_LIMIT, WORKER_CONNECTION_TIMEOUT
    from mypy.error_formatter import OUTPUT_CHOICES
    from mypy.errors import Errors, report_internal_error
    from mypy.fscache import FileSystemCache
    from mypy.ipc import IPCException, IPCServer
    from mypy.options import Options
    from mypy.util import read_py_file

    sys.setrecursionlimit(RECURSION_LIMIT)
    if platform.python_implementation() == "CPython":
        gc.set_threshold(200 * 1000, 30, 30)
    with open(options_data, "rb") as f:  # exists for the whole build: written before spawning
        buf = ReadBuffer(f.read())
    options_dict = read_json(buf)
    disable_error_code = options_dict.pop("disable_error_code", [])
    enable_error_code = options_dict.pop("enable_error_code", [])
    options = Options().apply_changes(options_dict)

    server = IPCServer(worker.CONNECTION_NAME, WORKER_CONNECTION_TIMEOUT)
    server.sock.close()  # serve on the socket announced above instead
    shutil.rmtree(server.sock_directory, ignore_errors=True)
    listener.settimeout(WORKER_CONNECTION_TIMEOUT)
    server.sock = listener
    server.sock_directory = directory

    fscache = FileSystemCache()
    fscache.set_package_root(options.package_root)
    cached_read = fscache.read
    error_formatter = None if options.output is None else OUTPUT_CHOICES.get(options.output)
    errors = Errors(
        options,
        read_source=lambda path: read_py_file(path, cached_read),
        error_formatter=error_formatter,
    )
    ctx = worker.ServerContext(options, disable_error_code, enable_error_code, errors, fscache)
    try:
        with server:
            worker.serve(server, ctx)
    except (OSError, IPCException) as exc:
        if options.verbosity >= 1:
            print("Error communicating with coordinator:", exc)
    except Exception as exc:
        report_internal_error(exc, errors.file, 0, errors, options)
    finally:
        server.cleanup()
    if options.fast_exit:
        util.hard_exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
