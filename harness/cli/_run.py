"""``harness run MODULE:CLASS``: run any thinker (or tool) on an input given as JSON."""

from __future__ import annotations

import argparse
import asyncio
from typing import Final, cast

from harness.artifacts import Artifact
from harness.cli._common import (
    CliError,
    TurnLines,
    add_input_options,
    add_model_options,
    add_quiet_option,
    add_target_argument,
    artifact_from,
    catalog_from,
    check_record_path,
    input_text,
    report_failed_run,
)
from harness.cli._journal import add_journal_options, approver_from, report_result, resume_run
from harness.record import RunFailedError
from harness.runs import (
    JournalError,
    ThinkerFactory,
    build_target,
    import_target,
    target_input_type,
)
from harness.runs import run as run_thinker
from harness.scope import Budget

__all__ = ["DESCRIPTION", "add_arguments", "run_command"]


DESCRIPTION: Final = (
    "Import MODULE, build CLASS with its (parent) constructor, build its input artifact "
    "from JSON, run it through the catalog's decision model, print the answer (one "
    "compact JSON object per item) and what it used; with --record PATH, write the "
    "run's record there."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness run``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    add_target_argument(parser, optional=True)
    add_input_options(parser)
    add_model_options(parser)
    parser.add_argument(
        "--record",
        default=None,
        metavar="PATH",
        help="write the run's record (JSON, read by `harness record`) to PATH; none by default",
    )
    parser.add_argument(
        "--bodies", action="store_true", help="keep each request's wire body in the record"
    )
    parser.add_argument("--max-decisions", type=int, metavar="N", help="budget: decision calls")
    parser.add_argument(
        "--max-input-tokens", type=int, metavar="N", help="budget: counted input tokens"
    )
    parser.add_argument("--max-cost", type=float, metavar="X", help="budget: cost of the run")
    add_journal_options(parser)
    add_quiet_option(parser)
    parser.set_defaults(command=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Import, build, run, print, record."""
    if args.resume is not None:
        return resume_run(args, import_target)
    text = input_text(args)
    if args.target is None or text is None:
        raise CliError("pass MODULE:CLASS and --input JSON (or --input-file FILE), or --resume")
    tool_class = import_target(args.target)
    input_type = target_input_type(tool_class, args.target)
    given = artifact_from(input_type, text, args, f"--input for {args.target}")
    if args.record is not None:
        check_record_path(args.record)
    try:
        budget = Budget(args.max_decisions, args.max_input_tokens, args.max_cost)
    except ValueError as error:
        raise CliError(str(error)) from None
    catalog = catalog_from(args)
    build_target(tool_class, args.target)  # built once first, so a broken one is named as such
    lines = TurnLines(tool_class, quiet=args.quiet)
    try:
        # Any tool runs here; a product that is not a list is answered as a list of one.
        factory = cast("ThinkerFactory[Artifact, Artifact]", lines.build)
        result = asyncio.run(
            run_thinker(
                factory,
                given,
                catalog=catalog,
                budget=budget,
                keep_bodies=args.bodies,
                journal=args.journal,
                approver=approver_from(args),
                on_progress=lines,
            )
        )
    except JournalError as error:
        raise CliError(str(error)) from None
    except RunFailedError as failed:
        return report_failed_run("run", failed, args.record)
    return report_result(result, args.record, args.journal, args.target)
