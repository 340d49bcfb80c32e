"""``harness batch MODULE:CLASS INPUTS.jsonl --out RESULTS.jsonl``: a thinker over many inputs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Final

from harness.cli._common import (
    CliError,
    add_allow_extra_option,
    add_choice_option,
    add_model_options,
    add_scale_options,
    add_target_argument,
    catalog_from,
    check_concurrency,
    say,
)

__all__ = ["DESCRIPTION", "add_arguments", "batch"]


DESCRIPTION: Final = (
    "Run MODULE:CLASS on each line of INPUTS (one input object a line) and write one "
    "result line per input to --out: its answer, refs, usage and status (completed, "
    "failed or invalid). Started again with the same arguments, it runs the inputs that "
    "have no completed result yet (failed ones too, unless --no-retry-failed). Exit 0 "
    "when every input has a completed result, 1 when some failed or are invalid, 2 when "
    "nothing could start (a usage problem)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness batch``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    add_target_argument(parser)
    parser.add_argument("inputs", metavar="INPUTS.jsonl", help="one input object a line")
    parser.add_argument("--out", required=True, metavar="RESULTS.jsonl", help="result lines")
    parser.add_argument("--records", metavar="DIR", help="write each input's run record here")
    parser.add_argument(
        "--journals",
        metavar="DIR",
        help="journal each input's run here: started again, a run cut short resumes mid-run",
    )
    add_scale_options(parser, "inputs")
    add_choice_option(
        parser,
        "--on-bad-line",
        ("skip", "fail"),
        "a line that is not an input: report it as an 'invalid' result and go on (skip, "
        "the default), or stop before running anything (fail)",
    )
    parser.add_argument(
        "--admission",
        metavar="redis://HOST:PORT",
        help="share each entry's gate and bucket through Redis with every other process",
    )
    parser.add_argument(
        "--retry-failed",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="started again, run the inputs whose result is 'failed' again (the default); "
        "--no-retry-failed keeps those results",
    )
    add_allow_extra_option(parser, "an input line")
    parser.add_argument(
        "--retries", type=int, default=3, metavar="N", help="retries per decision (default 3)"
    )
    add_model_options(parser)
    parser.set_defaults(command=batch)


def batch(args: argparse.Namespace) -> int:
    """Run the batch and print its summary."""
    from harness.batch import BatchError, BatchSpec, run_batch

    check_concurrency(args)
    catalog_from(args)  # an unknown entry or a broken catalog fails before anything runs
    spec = BatchSpec(
        target=args.target,
        catalog_path=args.catalog,
        entry_id=args.entry,
        admission_url=args.admission,
        records_dir=args.records,
        concurrency=args.concurrency,
        contexts=args.contexts,
        upstream_retries=args.retries,
        journals_dir=args.journals,
        allow_extra=args.allow_extra,
    )
    try:
        summary = run_batch(
            spec,
            Path(args.inputs),
            Path(args.out),
            on_bad_line=args.on_bad_line,
            ray=args.ray,
            retry_failed=args.retry_failed,
        )
    except BatchError as error:
        raise CliError(str(error)) from None
    say(
        f"batch: {summary.ran} run ({summary.completed} completed, {summary.failed} failed, "
        f"{summary.invalid} invalid), {summary.already_done} already done, "
        f"{summary.seconds:.1f} s; results: {summary.out}",
        error=True,
    )
    if summary.unfinished:
        retry = "" if args.retry_failed else " (pass --retry-failed to run the failed ones)"
        say(
            f"batch: {summary.unfinished} of {summary.inputs} inputs have no completed result; "
            f"run the same command again to run them again{retry}",
            error=True,
        )
    return summary.exit_code
