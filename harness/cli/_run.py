"""``harness run MODULE:CLASS``: run any thinker (or tool) on an input given as JSON."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from typing import Any, cast

from harness.artifacts import Artifact, ListArtifact, from_json
from harness.cli._common import (
    CliError,
    add_model_options,
    catalog_from,
    check_record_path,
    report_failed_run,
)
from harness.cli._journal import add_journal_options, approver_from, report_result, resume_run
from harness.palette import PaletteError
from harness.record import RunFailedError
from harness.runs import JournalError, ThinkerFactory
from harness.runs import run as run_thinker
from harness.scope import Budget
from harness.tools import DecisionTool, Workflow, runtime_class, tool_types

__all__ = ["add_parser", "import_tool", "run"]


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``harness run``."""
    parser = commands.add_parser(
        "run",
        help="run a thinker class on an input given as JSON",
        description=(
            "Import MODULE, build CLASS with its (parent) constructor, build its input artifact "
            "from JSON, run it through the catalog's decision model, print the answer (one "
            "compact JSON object per item) and what it used; with --record PATH, write the "
            "run's record there."
        ),
    )
    parser.add_argument(
        "target", metavar="MODULE:CLASS", nargs="?", help="e.g. mypackage.triage:Triage"
    )
    given = parser.add_mutually_exclusive_group()
    given.add_argument("--input", metavar="JSON", help="the input artifact as a JSON object")
    given.add_argument("--input-file", metavar="FILE", help="a file holding the input's JSON")
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
    parser.set_defaults(command=run)


def import_tool(target: str) -> type[DecisionTool[Any, Artifact]]:  # any tool's types
    """The tool class ``MODULE:CLASS`` names; :class:`CliError` says what is wrong."""
    module_name, colon, class_name = target.partition(":")
    if not colon or not module_name or not class_name:
        raise CliError(f"{target!r} is not MODULE:CLASS (e.g. mypackage.triage:Triage)")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: modules beside you import
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or module_name
        raise CliError(
            f"cannot import module {module_name!r}: no module named {missing!r}; run from the "
            "folder that holds it, or add that folder to PYTHONPATH"
        ) from None
    except Exception as error:
        raise CliError(
            f"importing module {module_name!r} failed: {type(error).__name__}: {error}"
        ) from None
    found = getattr(module, class_name, None)
    if found is None:
        raise CliError(f"module {module_name!r} has no attribute {class_name!r}")
    if not (isinstance(found, type) and issubclass(found, DecisionTool)):
        raise CliError(
            f"{target} is not a thinker or tool class (a DecisionTool subclass such as a "
            "DecisionThinker subclass)"
        )
    return found


def _input_text(args: argparse.Namespace) -> str:
    if args.input is not None:
        return str(args.input)
    try:
        with open(args.input_file, encoding="utf-8") as file:
            return file.read()
    except OSError as error:
        raise CliError(f"cannot read --input-file {args.input_file}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CliError(f"--input-file {args.input_file} is not UTF-8 text") from None


def run(args: argparse.Namespace) -> int:
    """Import, build, run, print, record."""
    if args.resume is not None:
        return resume_run(args, import_tool)
    if args.target is None or (args.input is None and args.input_file is None):
        raise CliError("pass MODULE:CLASS and --input JSON (or --input-file FILE), or --resume")
    tool_class = import_tool(args.target)
    try:
        input_type, _ = tool_types(tool_class)
    except (TypeError, ValueError) as error:
        raise CliError(f"{args.target}: cannot read its input type: {error}") from None
    if issubclass(runtime_class(input_type), ListArtifact):
        raise CliError(
            f"{args.target} takes a list; harness run builds one artifact from JSON: wrap the "
            "list in a thinker whose input is a single artifact"
        )
    try:
        given = from_json(input_type, _input_text(args))
    except (TypeError, ValueError) as error:
        raise CliError(f"bad --input for {args.target}: {error}") from None
    if args.record is not None:
        check_record_path(args.record)
    try:
        budget = Budget(args.max_decisions, args.max_input_tokens, args.max_cost)
    except ValueError as error:
        raise CliError(str(error)) from None
    catalog = catalog_from(args)
    try:
        tool_class(Workflow())  # built once first, so a broken constructor is named as such
    except PaletteError as error:
        raise CliError(f"{args.target}: {error}") from None
    except (TypeError, ValueError) as error:
        raise CliError(
            f"cannot build {args.target} from its parent alone: {error}; a thinker keeps the "
            "(parent) constructor"
        ) from None
    except Exception as error:  # the user's own constructor crashed: nothing ran
        raise CliError(f"building {args.target} failed: {type(error).__name__}: {error}") from None
    try:
        # Any tool runs here; a product that is not a list is answered as a list of one.
        factory = cast("ThinkerFactory[Artifact, Artifact]", tool_class)
        result = asyncio.run(
            run_thinker(
                factory,
                given,
                catalog=catalog,
                budget=budget,
                keep_bodies=args.bodies,
                journal=args.journal,
                approver=approver_from(args),
            )
        )
    except JournalError as error:
        raise CliError(str(error)) from None
    except RunFailedError as failed:
        return report_failed_run("run", failed, args.record)
    return report_result(result, args.record, args.journal, args.target)
