"""The ``harness`` command: ``serve``, ``demo``, ``run`` and ``record``.

Usage problems (an unknown entry, bad JSON input, a missing module or file) print one line and
exit with 2, with no traceback; a run that starts and fails (a tool of yours crashing, a model
that fails) prints the error's type and message, writes the partial record and exits with 1;
``HARNESS_DEBUG=1`` shows the traceback of a failed run or of an unexpected error.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from harness.cli import _batch, _demo, _record, _run, _serve
from harness.cli._common import EXIT_FAILED, EXIT_USAGE, CliError, debugging

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``harness`` argument parser with one subcommand per module."""
    from harness import __version__

    parser = argparse.ArgumentParser(
        prog="harness",
        description="Agents driven by decision models: run the demo, a thinker, a server.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    commands = parser.add_subparsers(dest="name", required=True, metavar="COMMAND")
    _demo.add_parser(commands)
    _run.add_parser(commands)
    _record.add_parser(commands)
    _serve.add_parser(commands)
    _batch.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``harness`` command; returns the exit code."""
    args = build_parser().parse_args(argv)
    name = f"harness {args.name}"
    try:
        code: int = args.command(args)
    except CliError as error:
        print(f"{name}: error: {error}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr, flush=True)
        return 130
    except BrokenPipeError:
        return EXIT_FAILED
    except Exception as error:
        if debugging():
            traceback.print_exc()
        else:
            print(
                f"{name}: unexpected error: {type(error).__name__}: {error} (set HARNESS_DEBUG=1 "
                "for the traceback, and please report it)",
                file=sys.stderr,
                flush=True,
            )
        return EXIT_FAILED
    return code
