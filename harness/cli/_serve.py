"""``harness serve``: a System One server (127.0.0.1 by default) fronting a catalog entry."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Iterator
from typing import Final

from harness.cli._common import CliError, add_model_options, catalog_from, say
from harness.serve import API_KEY_ENV, HOST, DecisionServer

__all__ = ["DESCRIPTION", "add_arguments", "serve"]


DESCRIPTION: Final = (
    "Serve POST /v1/systemone (and /v1/decisions, GET /v1/models) on 127.0.0.1, "
    "answering with a catalog entry (the embedded model by default) through the "
    "dispatcher, so the entry's admission applies. Beyond --max-in-flight requests "
    "answered at once and --queue waiting, requests get 429 with Retry-After. One "
    "access-log line per request goes to stderr. SIGTERM or Ctrl-C stops taking "
    "requests, lets those in flight finish (up to --grace seconds) and exits."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness serve``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    parser.add_argument(
        "--port", type=int, default=8787, help="port to listen on (0 picks a free one)"
    )
    parser.add_argument(
        "--host",
        default=HOST,
        help=f"address to listen on (default {HOST}; 0.0.0.0 exposes the server to the network)",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help=(
            f"require Authorization: Bearer KEY on every route but /health (default: "
            f"${API_KEY_ENV}; unset means no authentication)"
        ),
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long a stop waits for requests in flight (default 10)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no access log (one line per request on stderr)"
    )
    add_model_options(parser)
    parser.add_argument(
        "--upstream",
        metavar="ENTRY",
        help="the entry or model string to serve, e.g. 'openai-chat:<model>@<base_url>' or "
        "'openai-completions:<model>@<base_url>' (any OpenAI-compatible LLM with logprobs), "
        "'llama:<file.gguf or package>' (a GGUF run in this process), served as System One; "
        "the same as --model",
    )
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


class _Counter(logging.Handler):
    """Counts the access log's lines (one per HTTP request), printed or not."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.lines += 1


async def _serve(
    server: DecisionServer, port: int, grace: float, counter: _Counter | None = None
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on every platform
            loop.add_signal_handler(signum, stop.set)
    try:
        await server.start()
    except OSError as error:
        raise CliError(f"cannot listen on {server.host}:{port}: {error.strerror}") from None
    entry = server.entry
    left = 0
    try:
        auth = "Bearer key required" if server.authenticated else "no authentication"
        say(
            f"harness serve: entry {entry.id!r} ({entry.provider}, model "
            f"{server.model_name!r}) on {server.root}/v1/systemone (max "
            f"{server.max_in_flight} in flight, {server.queue_limit} queued; {auth}); Ctrl-C "
            "stops"
        )
        await stop.wait()
        left = await server.drain(grace)
    finally:
        await server.stop()
        stats = server.stats
        cut = f"; {left} cut off after the {grace:g} s grace" if left else ""
        total = max(counter.lines if counter is not None else 0, stats.received)
        others = total - stats.received
        say(
            f"harness serve: stopped after {total} requests (the access log's lines): "
            f"{stats.received} decision requests ({stats.answered} answered, {stats.busy} busy, "
            f"{stats.invalid} invalid, {stats.failed} failed{cut}), {others} others (health, "
            "models, refused)"
        )


def serve(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be in 0..65535 (0 picks a free one), got {args.port}")
    if args.max_in_flight < 1:
        raise CliError(f"--max-in-flight must be at least 1, got {args.max_in_flight}")
    if args.queue < 0:
        raise CliError(f"--queue must be 0 or more, got {args.queue}")
    if not args.grace >= 0:
        raise CliError(f"--grace must be 0 or more seconds, got {args.grace}")
    key = args.api_key if args.api_key is not None else os.environ.get(API_KEY_ENV) or None
    if key is not None and (not key.strip() or key != key.strip()):
        raise CliError(
            f"the API key (--api-key or ${API_KEY_ENV}) is blank or has surrounding spaces; "
            "give the key itself"
        )
    if args.upstream is not None:
        if args.entry is not None and args.entry != args.upstream:
            raise CliError(
                f"--upstream {args.upstream} and --model {args.entry} name different models: "
                "give one (--upstream and --entry are --model's other names)"
            )
        args.entry = args.upstream
    catalog = catalog_from(args)
    server = DecisionServer(
        catalog,
        port=args.port,
        host=args.host,
        max_in_flight=args.max_in_flight,
        queue_limit=args.queue,
        api_key=key,
    )
    with _access_log(enabled=not args.quiet) as counter:
        asyncio.run(_serve(server, args.port, args.grace, counter))
    return 0


@contextlib.contextmanager
def _access_log(*, enabled: bool) -> Iterator[_Counter]:
    """While serving: the access log (``harness.serve.access``, INFO) as one line a request on
    stderr (unless not ``enabled``), and a count of its lines, so the closing count of requests
    is the log's; the logger is left as it was found afterwards (the library installs none)."""
    counter = _Counter()
    handlers: list[logging.Handler] = [counter]
    if enabled:
        shown = logging.StreamHandler(sys.stderr)
        shown.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        handlers.append(shown)
    access = logging.getLogger("harness.serve.access")
    level, propagate = access.level, access.propagate
    for handler in handlers:
        access.addHandler(handler)
    access.setLevel(logging.INFO)
    access.propagate = False
    try:
        yield counter
    finally:
        for handler in handlers:
            access.removeHandler(handler)
        access.setLevel(level)
        access.propagate = propagate
