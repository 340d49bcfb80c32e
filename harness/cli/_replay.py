"""``harness replay RECORD MODULE:CLASS``: re-run a thinker offline from a run's record.

The record must keep each call's request body and reply (``harness run --bodies``, ``harness
demo --bodies``). The thinker runs again with every decision answered from the record (strictly:
a request the record does not hold stops the run; with ``--fallback ID`` that catalog entry
answers it instead, and each such request is reported), on the recorded input unless
``--input`` gives another. Exit 0 when the run takes the same turns and gives the same answer;
exit 1 with the first divergent turn side by side (and, when a request was not in the record,
what differs from the nearest recorded one) otherwise; exit 2 for a usage problem.
"""

from __future__ import annotations

import argparse
import asyncio
import json  # the stdlib: a value shown with json's default separators and escapes
from collections.abc import Sequence
from typing import Final

from harness.catalog import Catalog, CatalogEntry, CatalogError, TokenizerError, load_catalog
from harness.cli._common import (
    EXIT_FAILED,
    CliError,
    add_input_options,
    add_target_argument,
    artifact_from,
    check_record_path,
    input_text,
    say,
)
from harness.cli._journal import add_branch_option, branch_journal, branch_spec, replay_branch
from harness.providers import DecisionClient, client_for
from harness.record import (
    RecordedAnswer,
    RecordError,
    RunFailedError,
    RunRecord,
    counted,
    load_record,
    move_line,
    record_run,
)
from harness.replay import (
    AsEntry,
    CassetteError,
    ReplayClient,
    ReplayMissError,
    cassette_from_record,
    override,
)
from harness.runs import Seat, build_target, import_target, target_input_type
from harness.thinker import QUESTION_SCHEME_VERSIONS, DecisionThinker, DecisionTurn

__all__ = ["DESCRIPTION", "add_arguments", "replay"]

_FIX = "If the change is meant, record the run again (harness run --bodies --record FILE)."

_COLUMN = 56
"""Width of the recorded column of the side-by-side view."""


DESCRIPTION: Final = (
    "Re-run MODULE:CLASS with every decision answered from RECORD (written with "
    "--bodies), offline. Exit 0 when the run takes the same turns and gives the same "
    "answer, 1 with the first divergent turn side by side otherwise."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness replay``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    parser.add_argument("file", metavar="RECORD", help="a record written with --bodies")
    add_target_argument(parser)
    add_input_options(parser, default="the recorded one")
    parser.add_argument(
        "--record", metavar="FILE", help="also write the replayed run's record to FILE"
    )
    parser.add_argument(
        "--fallback",
        metavar="ID",
        help="lenient: ask catalog entry ID what the record lacks (reported) instead of stopping",
    )
    parser.add_argument(
        "--catalog",
        metavar="FILE",
        help="the catalog --fallback names an entry of (default: $HARNESS_CATALOG, else shipped)",
    )
    add_branch_option(parser)
    parser.set_defaults(command=replay)


def _fallback(args: argparse.Namespace) -> DecisionClient | None:
    """The client of the ``--fallback`` entry, asking as that entry, or None."""
    if args.fallback is None:
        return None
    try:
        target = load_catalog(args.catalog).entry(args.fallback)
    except (CatalogError, TokenizerError) as error:
        raise CliError(str(error)) from None
    return AsEntry(client_for(target), target, owns=True)


def _input_text(args: argparse.Namespace, record: RunRecord) -> str:
    given = input_text(args)
    return json.dumps(record.input_value) if given is None else given


def _replay_entry(record: RunRecord, catalog_path: str | None = None) -> CatalogEntry:
    """The recorded entry, answered by nothing but the record (so its wire model id, which the
    requests name, is the recorded one), with the calibration the catalog gives that entry (the
    run's answers went through it, so the replay's must too)."""
    entry_id = record.entry.get("id", "recorded")
    calibration = None
    try:
        known = load_catalog(catalog_path).entries.get(entry_id)
    except (CatalogError, TokenizerError):
        known = None
    if known is not None:
        calibration = known.calibration
    return CatalogEntry(
        id=entry_id,
        provider="fake",
        wire_model_id=record.entry.get("wire_model_id", "recorded"),
        max_context_tokens=1 << 30,
        max_concurrent=8,
        calibration=calibration,
    )


def replay(args: argparse.Namespace) -> int:
    """Load, replay, compare, report."""
    branched = branch_journal(args, import_target)  # --branch on a journal
    if branched is not None:
        return branched
    tool_class = import_target(args.target)  # the target first: its mistakes read as in `run`
    input_type = target_input_type(tool_class, args.target)
    tool = build_target(tool_class, args.target)
    try:
        record = load_record(args.file)
        cassette = cassette_from_record(record, args.file)
    except (RecordError, CassetteError) as error:
        raise CliError(str(error)) from None
    given = artifact_from(input_type, _input_text(args, record), args, f"input for {args.target}")
    if args.record is not None:
        check_record_path(args.record)
    for line in _use_recorded_settings(tool, record, args.target):
        say(line)
    entry = _replay_entry(record, args.catalog)
    catalog = Catalog([entry], {"decision": entry.id})
    fallback = _fallback(args)
    client = ReplayClient(cassette, source=args.file, fix=_FIX, fallback=fallback)

    async def aclose() -> None:
        if fallback is not None:
            await fallback.aclose()

    forced = branch_spec(args.branch)
    if forced:
        seat = Seat(catalog, {entry.id: client})
        with override(model=client):
            return replay_branch(args, record.turns, tool_class, given, seat, forced, aclose)

    async def run() -> RunRecord:
        try:
            outcome = await record_run(
                tool,
                given,
                catalog=catalog,
                command="replay",
                keep_bodies=True,
                clients={entry.id: client},
                upstream_retries=0,
            )
            return outcome.record
        finally:
            if fallback is not None:
                await fallback.aclose()

    miss: ReplayMissError | None = None
    failure: str | None = None
    with override(model=client):
        try:
            replayed = asyncio.run(run())
        except RunFailedError as failed:
            replayed = failed.record
            failure = replayed.failure
            if isinstance(failed.error, ReplayMissError):
                miss = failed.error
    if args.record is not None:
        replayed.write(args.record)
    code = _report(args.file, record, replayed, miss, failure, client)
    for asked in client.misses:
        say(f"not in the record, answered by entry {args.fallback!r}: {asked.headline}")
    return code


def _use_recorded_settings(tool: object, record: RunRecord, target: str) -> list[str]:
    """Give the thinker the settings it ran with (a ``--max-turns 3`` demo replays 3 turns);
    one line per setting that differs from what ``target`` builds."""
    if not isinstance(tool, DecisionThinker):
        return []
    said = []
    wanted = record.settings
    attributes = {  # the threshold is recorded too, but the entry's calibration decides it
        "max_turns": "max_turns",
        "question_scheme": "scheme",
    }
    for key, attribute in attributes.items():
        value = wanted.get(key)
        if value is None or getattr(tool, attribute) == value:
            continue
        if key == "question_scheme" and value not in QUESTION_SCHEME_VERSIONS:
            raise CliError(
                f"record {record.command!r} names question scheme {value!r}, which this harness "
                f"does not know ({', '.join(QUESTION_SCHEME_VERSIONS)}): re-record the run"
            )
        said.append(
            f"harness replay: {key} {value!r} as recorded ({target} builds "
            f"{getattr(tool, attribute)!r})"
        )
        setattr(tool, attribute, value)
    return said


def _turn_json(turns: Sequence[DecisionTurn], index: int) -> object:
    return turns[index].to_json() if index < len(turns) else None


def _answer_key(answer: Sequence[RecordedAnswer]) -> list[object]:
    return [(item.ref, item.alias, item.probability, item.value) for item in answer]


def _report(
    source: str,
    record: RunRecord,
    replayed: RunRecord,
    miss: ReplayMissError | None,
    failure: str | None,
    client: ReplayClient,
) -> int:
    recorded_turns, new_turns = record.turns, replayed.turns
    diverged = next(
        (
            i
            for i in range(max(len(recorded_turns), len(new_turns)))
            if _turn_json(recorded_turns, i) != _turn_json(new_turns, i)
        ),
        None,
    )
    same_end = failure == record.failure
    same_answer = _answer_key(record.answer) == _answer_key(replayed.answer)
    if diverged is None and same_end and same_answer:
        say(
            f"harness replay: same turns and answer as {source} "
            f"({counted(len(new_turns), 'turn')}, "
            f"{counted(client.played, 'decision')} answered from the record, "
            f"{counted(len(replayed.answer), 'answer item')})"
        )
        return 0
    if diverged is None:
        diverged = len(new_turns)  # the turns agree: the run ended (or answered) otherwise
    number = diverged + 1
    say(f"harness replay: the run diverges from {source} at turn {number}")
    say(f"      {'recorded'.ljust(_COLUMN)}  replayed")
    for index in range(max(len(recorded_turns), len(new_turns), number)):
        left = _shown(recorded_turns, index, "(no turn)")
        right = _shown(new_turns, index, _missing(miss, failure))
        mark = ">" if index == diverged else " "
        say(f"{index + 1:>4} {mark} {left[:_COLUMN].ljust(_COLUMN)}  {right}")
        if index >= diverged:
            break
    if miss is not None:
        say(f"turn {number} asked a request the record does not hold:")
        for line in miss.details.splitlines():
            say(f"  {line}")
    elif failure is not None and failure != record.failure:
        say(f"the replayed run failed: {failure}")
    if not same_answer:
        say(f"answer: recorded {_refs(record.answer)}, replayed {_refs(replayed.answer)}")
    return EXIT_FAILED


def _shown(turns: Sequence[DecisionTurn], index: int, absent: str) -> str:
    if index >= len(turns):
        return absent
    return move_line(turns[index]).split(": ", 1)[1]


def _missing(miss: ReplayMissError | None, failure: str | None) -> str:
    if miss is not None:
        return "(no turn: its request is not in the record)"
    if failure is not None:
        return "(no turn: the run failed)"
    return "(no turn)"


def _refs(answer: Sequence[RecordedAnswer]) -> str:
    return "[" + ", ".join(item.ref for item in answer) + "]" if answer else "nothing"
