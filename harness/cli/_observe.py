"""``--otel-console`` (or ``HARNESS_OTEL_CONSOLE=1``): print a run's OpenTelemetry spans as a tree
on stderr when it ends. Loads OpenTelemetry only when asked."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator

from harness.cli._common import CliError

__all__ = ["add_option", "console_if_asked"]

ENVIRONMENT = "HARNESS_OTEL_CONSOLE"


def add_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--otel-console`` to a command that runs thinkers."""
    parser.add_argument(
        "--otel-console",
        action="store_true",
        help=f"print the run's OpenTelemetry spans as a tree on stderr (or set {ENVIRONMENT}=1; "
        "needs pip install 'harness[otel]')",
    )


@contextlib.contextmanager
def console_if_asked(args: argparse.Namespace) -> Iterator[None]:
    """Record spans within the block and print them at its end, when the user asked."""
    asked = getattr(args, "otel_console", False) or os.environ.get(ENVIRONMENT, "") not in (
        "",
        "0",
    )
    if not asked:
        yield
        return
    try:
        from harness.observe._console import ConsoleTree
    except ImportError:
        raise CliError("--otel-console needs OpenTelemetry: pip install 'harness[otel]'") from None
    tree = ConsoleTree()
    try:
        yield
    finally:
        tree.close()
