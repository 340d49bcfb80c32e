"""The durable-run options of ``harness run`` and ``harness replay`` (docs/durable.md).

``harness run ... --journal FILE`` journals each turn; ``harness run --resume FILE`` continues a
journalled run (the thinker named in the journal, or MODULE:CLASS); ``--approve yes|no`` answers
every approval a ``requires_approval`` bar asks (on a terminal you are asked; otherwise the run
pauses into its journal, exit 3); ``--accept-model-change`` resumes on another model.
``harness replay RECORD MODULE:CLASS --branch K=MOVE`` forces MOVE at turn K and goes on live on
the ``--fallback`` entry, showing the recorded and the branched turns side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

from harness.artifacts import Artifact, to_json
from harness.cli._common import (
    CliError,
    TurnLines,
    catalog_from,
    check_record_path,
    report_failed_run,
    say,
)
from harness.record import RunFailedError
from harness.runs import (
    Approval,
    ApprovalRequiredError,
    Approver,
    BranchError,
    JournalError,
    JournalMismatchError,
    PausedResult,
    PendingApproval,
    RunResult,
    Seat,
    ThinkerFactory,
    branch,
    read_journal,
    resume,
)
from harness.runs._internal import JOURNAL_FILE, branch_replayed, turns_side_by_side
from harness.thinker import DecisionTurn

__all__ = [
    "EXIT_PAUSED",
    "add_branch_option",
    "add_journal_options",
    "approver_from",
    "branch_journal",
    "branch_spec",
    "print_branch",
    "replay_branch",
    "report_result",
    "resume_run",
]

EXIT_PAUSED: Final = 3
"""``harness run`` paused for a person's approval (the journal holds the question)."""


def add_journal_options(parser: argparse.ArgumentParser) -> None:
    """``--journal``, ``--resume``, ``--approve`` and ``--accept-model-change``."""
    parser.add_argument(
        "--journal",
        metavar="FILE",
        help="journal each turn to FILE (a new file), so --resume FILE continues after a crash",
    )
    parser.add_argument(
        "--resume",
        metavar="FILE",
        help="continue the run journalled in FILE at its next turn (no --input needed)",
    )
    parser.add_argument(
        "--approve",
        choices=("yes", "no"),
        help="answer every approval a requires_approval bar asks (default: ask on a terminal, "
        "else pause into the journal)",
    )
    parser.add_argument(
        "--accept-model-change",
        action="store_true",
        help="with --resume: go on with a model other than the journalled one",
    )


def approver_from(args: argparse.Namespace) -> Approver | None:
    """What answers an approval: ``--approve``, else a person on the terminal, else nobody
    (the run pauses)."""
    if args.approve == "yes":
        return lambda pending: Approval.approve()
    if args.approve == "no":
        return lambda pending: Approval.reject()
    if sys.stdin.isatty() and sys.stderr.isatty():
        return _ask
    return None


def _ask(pending: PendingApproval) -> Approval | None:
    """Ask on the terminal: y, n, TOOL:REF, or empty to pause."""
    say(pending.question(), error=True)
    legal = "; ".join(f"{t} on {', '.join(refs)}" for t, refs in pending.moves.items())
    say(f"  legal moves: {legal}", error=True)
    while True:
        sys.stderr.write("  approve? [y]es / [n]o / TOOL:REF / empty to pause: ")
        sys.stderr.flush()
        answer = sys.stdin.readline().strip()
        if not answer:
            return None
        if answer.lower() in ("y", "yes"):
            return Approval.approve()
        if answer.lower() in ("n", "no"):
            return Approval.reject()
        tool, colon, ref = answer.partition(":")
        if colon and ref in pending.moves.get(tool, ()):
            return Approval.pick(tool, ref)
        say("  not a legal move; try again", error=True)


def report_result(
    result: RunResult[Artifact], record: str | None, journal: str | None, target: str
) -> int:
    """Print the answer (stdout) and what it used (stderr); a paused run says how to go on."""
    if isinstance(result, PausedResult):
        assert result.pending is not None
        say(f"paused: {result.pending.question()}", error=True)
        say(
            f"resume: harness run --resume {journal} --approve yes|no (or on a terminal)",
            error=True,
        )
        if record is not None:
            result.write_record(record, command="run")
        return EXIT_PAUSED
    for item in result.items:
        say(to_json(item))  # stdout: one JSON object per item, nothing else
    if not result.items:
        say("answer: nothing selected", error=True)
    say(f"used: {result.usage}", error=True)
    if record is not None:
        result.write_record(record, command="run")
        say(f"record: {record}", error=True)
    return 0


def resume_run(args: argparse.Namespace, import_tool: Callable[[str], type[Any]]) -> int:
    """``harness run [MODULE:CLASS] --resume FILE``."""
    if args.input is not None or args.input_file is not None:
        raise CliError("--resume takes the journalled input: drop --input / --input-file")
    if args.journal is not None:
        raise CliError("--resume appends to its own journal: drop --journal")
    try:
        journal = read_journal(args.resume)
    except JournalError as error:
        raise CliError(str(error)) from None
    target = args.target or str(journal.header.get("target", ""))
    tool_class = import_tool(target)
    if args.record is not None:
        check_record_path(args.record)
    catalog = catalog_from(args)
    approval = None
    if journal.pending is not None and args.approve is not None:
        approval = Approval.approve() if args.approve == "yes" else Approval.reject()
    approver = approver_from(args)  # --approve answers the later approvals too
    lines = TurnLines(tool_class, quiet=args.quiet)
    factory = cast("ThinkerFactory[Artifact, Artifact]", lines.build)  # any tool, as run does
    try:
        result = asyncio.run(
            resume(
                factory,
                args.resume,
                model=args.entry,
                catalog=catalog,
                approval=approval,
                approver=approver,
                accept_model_change=args.accept_model_change,
                on_progress=lines,
            )
        )
    except (JournalError, JournalMismatchError, ApprovalRequiredError) as error:
        raise CliError(str(error)) from None
    except RunFailedError as failed:
        return report_failed_run("run", failed, args.record)
    say(
        f"resumed: {result.replayed} of {len(result.turns)} turns replayed from {args.resume} "
        "(not asked again, their tools not run)",
        error=True,
    )
    return report_result(result, args.record, args.resume, target)


def add_branch_option(parser: argparse.ArgumentParser) -> None:
    """``--branch K=MOVE`` of ``harness replay``."""
    parser.add_argument(
        "--branch",
        metavar="K=MOVE",
        help="force MOVE (a tool, TOOL:REF, finish, or second: the model's second choice) at "
        "turn K and go on live on the --fallback entry; shows both runs' turns side by side. "
        "RECORD may then be a journal (harness run --journal): its turns before K are replayed "
        "without asking the model or running a tool",
    )


def branch_spec(text: str | None) -> dict[int, str]:
    """``K=MOVE`` as ``{K: MOVE}`` (empty without ``--branch``)."""
    if text is None:
        return {}
    turn, equals, move = text.partition("=")
    if not equals or not turn.strip().isdigit() or int(turn) < 1 or not move.strip():
        raise CliError(f"--branch {text!r} is not K=MOVE (e.g. --branch 2=judge_note or 2=second)")
    return {int(turn): move.strip()}


def print_branch(
    recorded: tuple[DecisionTurn, ...], branched: tuple[DecisionTurn, ...], at: int, move: str
) -> None:
    """The recorded and the branched turns side by side."""
    say(f"harness replay: branched at turn {at} ({move})")
    say(turns_side_by_side(recorded, branched, at, ("recorded", f"branch ({at}={move})")))


def branch_error(error: BranchError) -> CliError:
    """A forced move that is not legal, as a usage error."""
    return CliError(str(error))


def replay_branch(
    args: argparse.Namespace,
    recorded: tuple[DecisionTurn, ...],
    tool_class: type[Any],
    given: Artifact,
    seat: Seat,
    forced: dict[int, str],
    aclose: Callable[[], Awaitable[None]],
) -> int:
    """``harness replay RECORD MODULE:CLASS --branch K=MOVE``: the turns before K answered from
    the record, MOVE forced at K, the rest live on the ``--fallback`` entry."""
    ((at, move),) = forced.items()
    if args.fallback is None:
        raise CliError("--branch goes on live after the branch: pass --fallback ID (the entry)")

    async def branched() -> RunResult[Artifact]:
        try:
            return await branch_replayed(tool_class, given, seat, forced)
        finally:
            await aclose()

    try:
        result = asyncio.run(branched())
    except RunFailedError as failed:
        if isinstance(failed.error, BranchError):
            raise CliError(str(failed.error)) from None
        return report_failed_run("replay", failed, args.record)
    if args.record is not None:
        result.write_record(args.record, command="replay")
    print_branch(recorded, result.turns, at, move)
    return 0


def branch_journal(args: argparse.Namespace, import_tool: Callable[[str], type[Any]]) -> int | None:
    """``harness replay JOURNAL MODULE:CLASS --branch K=MOVE``: the turns before K replayed
    from the journal (nothing asked, no tool run), the rest live on ``--fallback`` (default:
    the journalled entry). ``None`` when the file is not a journal (a record: the caller's)."""
    forced = branch_spec(args.branch)
    if not forced or not JOURNAL_FILE.starts(args.file):
        return None  # a record (or no file: the record reader names the problem)
    ((at, move),) = forced.items()
    tool_class = import_tool(args.target)
    if args.record is not None:
        check_record_path(args.record)
    catalog = None
    if args.catalog is not None:
        from harness.catalog import CatalogError, load_catalog

        try:
            catalog = load_catalog(args.catalog)
        except CatalogError as error:
            raise CliError(str(error)) from None
    factory = cast("ThinkerFactory[Artifact, Artifact]", tool_class)  # any tool, as run does
    try:
        forked = asyncio.run(branch(factory, args.file, at=at, move=move, model=args.fallback,
                                    catalog=catalog))  # fmt: skip
    except (JournalError, ValueError) as error:
        raise CliError(str(error)) from None
    except RunFailedError as failed:
        if isinstance(failed.error, BranchError):
            raise CliError(str(failed.error)) from None
        return report_failed_run("replay", failed, args.record)
    if args.record is not None:
        forked.result.write_record(args.record, command="replay")
    say(f"harness replay: branched at turn {at} ({move})")
    say(forked.side_by_side())
    return 0
