"""``harness demo``: find the statements that decide a price change, offline, with no setup."""

from __future__ import annotations

import argparse
import asyncio
import os

from harness.cli._common import (
    DEFAULT_RECORD,
    CliError,
    add_model_options,
    catalog_from,
    check_record_path,
    report_failed_run,
    say,
)
from harness.demo._run import demo_folder, relative_source, run_demo
from harness.demo._thinker import DEMO_MAX_TURNS, DEMO_OBJECTIVE
from harness.record import RunFailedError, counted

__all__ = ["add_parser", "demo"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``harness demo``."""
    parser = commands.add_parser(
        "demo",
        help="find the statements that decide a price change in a folder (offline, no setup)",
        description=(
            "Run the demo thinker: it lists the folder, reads documents, splits them into "
            "statements and selects those that decide a price change and say from when it "
            "applies. With no folder it reads the folder of documents shipped with harness."
        ),
    )
    parser.add_argument("folder", nargs="?", help="folder to search (default: the shipped one)")
    parser.add_argument("--objective", default=DEMO_OBJECTIVE, help="what to look for")
    add_model_options(parser)
    parser.add_argument(
        "--record",
        default=DEFAULT_RECORD,
        metavar="FILE",
        help=f"where to write the run's record (default: {DEFAULT_RECORD})",
    )
    parser.add_argument(
        "--max-turns",
        type=int,
        default=DEMO_MAX_TURNS,
        metavar="N",
        help=f"turn budget of the thinker (default: {DEMO_MAX_TURNS})",
    )
    parser.add_argument(
        "--bodies", action="store_true", help="keep each request's wire body in the record"
    )
    parser.set_defaults(command=demo)


def demo(args: argparse.Namespace) -> int:
    """Run the demo, print its progress and answer, write its record."""
    if args.max_turns < 1:
        raise CliError(f"--max-turns must be at least 1, got {args.max_turns}")
    if not args.objective.strip():
        raise CliError("--objective must not be blank: say what to look for")
    if args.folder is not None and not os.path.isdir(args.folder):
        what = "does not exist" if not os.path.exists(args.folder) else "is not a folder"
        raise CliError(f"folder {args.folder} {what}: give the path of a folder of documents")
    check_record_path(args.record)
    catalog = catalog_from(args)
    entry = catalog.pinned()
    folder = demo_folder(args.folder)
    shipped = " (shipped with harness)" if args.folder is None else ""
    say(f"harness demo: {args.objective}")
    say(f"  folder: {folder}{shipped}")
    say(
        f"  model: entry {entry.id!r} ({entry.provider}, {entry.wire_model_id}), "
        f"at most {args.max_turns} turns"
    )
    try:
        run = asyncio.run(
            run_demo(
                folder,
                objective=args.objective,
                max_turns=args.max_turns,
                catalog=catalog,
                on_progress=say,
                keep_bodies=args.bodies,
            )
        )
    except RunFailedError as failed:
        return report_failed_run("demo", failed, args.record)
    record = run.record
    count = len(record.answer)
    say(f"answer: {counted(count, 'statement')}" if count else "answer: nothing selected")
    for item in record.answer:
        value = item.value if isinstance(item.value, dict) else {}
        source = relative_source(str(value.get("source", "")), folder)
        shown = "  -  " if item.probability is None else f"{item.probability:.3f}"
        say(f"  {shown}  {source}: {value.get('text', '')}")
    record.write(args.record)
    say(
        f"record: {args.record} ({counted(len(record.turns), 'turn')}, "
        f"{counted(len(record.calls), 'decision')}, "
        f"{record.wall_seconds:.2f} s, {record.model_seconds:.2f} s in the model); "
        f"show it with: harness record {args.record}"
    )
    return 0
