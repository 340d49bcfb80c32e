"""``harness serve``: a System One server on 127.0.0.1 fronting a catalog entry."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

from harness.cli._common import CliError, add_model_options, catalog_from, say
from harness.serve import DecisionServer

__all__ = ["add_parser", "serve"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``harness serve``."""
    parser = commands.add_parser(
        "serve",
        help="serve a catalog entry as a System One server on 127.0.0.1",
        description=(
            "Serve POST /v1/systemone (and /v1/decisions, GET /v1/models) on 127.0.0.1, "
            "answering with a catalog entry (the embedded model by default) through the "
            "dispatcher, so the entry's admission applies. Beyond --max-in-flight requests "
            "answered at once and --queue waiting, requests get 429 with Retry-After."
        ),
    )
    parser.add_argument(
        "--port", type=int, default=8787, help="port on 127.0.0.1 (0 picks a free one)"
    )
    add_model_options(parser)
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=8,
        metavar="N",
        help="requests answered at once (default 8)",
    )
    parser.add_argument(
        "--queue", type=int, default=64, metavar="N", help="requests waiting beyond that (64)"
    )
    parser.set_defaults(command=serve)


async def _serve(server: DecisionServer, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on every platform
            loop.add_signal_handler(signum, stop.set)
    try:
        await server.start()
    except OSError as error:
        raise CliError(f"cannot listen on 127.0.0.1:{port}: {error.strerror}") from None
    entry = server.entry
    try:
        say(
            f"harness serve: entry {entry.id!r} ({entry.provider}, {entry.wire_model_id}) on "
            f"{server.root}/v1/systemone (max {server.max_in_flight} in flight, "
            f"{server.queue_limit} queued); Ctrl-C stops"
        )
        await stop.wait()
    finally:
        await server.stop()
        stats = server.stats
        say(
            f"harness serve: stopped after {stats.received} requests ({stats.answered} "
            f"answered, {stats.busy} busy, {stats.invalid} invalid, {stats.failed} failed)"
        )


def serve(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be in 0..65535 (0 picks a free one), got {args.port}")
    if args.max_in_flight < 1:
        raise CliError(f"--max-in-flight must be at least 1, got {args.max_in_flight}")
    if args.queue < 0:
        raise CliError(f"--queue must be 0 or more, got {args.queue}")
    catalog = catalog_from(args)
    server = DecisionServer(
        catalog, port=args.port, max_in_flight=args.max_in_flight, queue_limit=args.queue
    )
    asyncio.run(_serve(server, args.port))
    return 0
