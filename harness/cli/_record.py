"""``harness record FILE``: show a recorded run turn by turn, or write it as an HTML page."""

from __future__ import annotations

import argparse
from typing import Final

from harness.cli._common import CliError, say, write_output
from harness.record import RecordError, load_record, render_html, render_text

__all__ = ["DESCRIPTION", "add_arguments", "show_record"]


DESCRIPTION: Final = (
    "Read a record written by `harness demo` or `harness run` and print it turn by turn "
    "with each distribution as bars; --html writes one self-contained page instead."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness record``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    parser.add_argument("file", help="the record file (JSON)")
    parser.add_argument("--html", metavar="OUT", help="write a self-contained HTML page to OUT")
    parser.set_defaults(command=show_record)


def show_record(args: argparse.Namespace) -> int:
    """Print the record, or write its page."""
    try:
        record = load_record(args.file)
    except RecordError as error:
        raise CliError(str(error)) from None
    if args.html is None:
        say(render_text(record))
        return 0
    write_output(args.html, render_html(record))
    say(f"wrote {args.html} ({len(record.turns)} turns)")
    return 0
