"""Resume a journalled run, or branch it at a turn: ``harness.resume`` and ``harness.branch``.

:func:`resume` reads the journal, checks that the thinker, its palette, objective, question
scheme, threshold, turn limit and model are the journalled ones (a mismatch is refused by
name), replays the journalled turns (no model asked, no tool run: products restored from the
journal) and goes on live, appending to the same journal. :func:`branch` replays the turns
before ``at``, forces ``move`` at ``at`` and goes on live, without touching the journal.
"""

from __future__ import annotations

import json  # the stdlib: an input's text as json.dumps writes it (separators, escapes)
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, cast

import attrs

from harness.admission import Admission
from harness.artifacts import Artifact
from harness.catalog import Catalog
from harness.jobs import DEFAULT_UPSTREAM_RETRIES, JobEvent
from harness.record import RECORD_FILE
from harness.runs._durable import Approver, JournalMismatchError, side_by_side
from harness.runs._fingerprint import changes, classes_of, fingerprint_of
from harness.runs._journal import JournalError, JournalledRun, read_journal
from harness.runs._model import ModelChoice, Seat, seat_for
from harness.runs._result import RunResult
from harness.runs._run import Durable, I, O, ThinkerFactory, blocking, execute
from harness.runs._target import TargetError
from harness.runs._typed_json import product_json, product_of
from harness.scope import Budget, Workflow
from harness.thinker import Approval, ApprovalRequiredError, DecisionTurn

__all__ = [
    "Branch",
    "branch",
    "branch_replayed",
    "journalled_turns",
    "move_text",
    "resume",
    "resume_sync",
    "run_journalled",
]


ACCEPT_FLAG = "accept_model_change=True (--accept-model-change)"


def _checked(
    thinker: ThinkerFactory[Any, Artifact],
    journal: JournalledRun,
    model: ModelChoice,
    catalog: Catalog | None,
    accept_model_change: bool,
) -> tuple[Any, Artifact, str | None]:  # the seat (typed by seat_for) and the input
    """The seat and the input to resume on, after the fingerprint check; and the journalled
    model when a changed one was accepted."""
    journalled = journal.fingerprint
    recorded_model = journalled.get("model")
    if model is None and isinstance(recorded_model, Mapping):
        if recorded_model.get("id") == "client":
            raise JournalMismatchError(
                f"{journal.path}: the run was journalled on a DecisionClient "
                f"({recorded_model.get('wire_model_id')}): pass model= that client again"
            )
        model = str(recorded_model.get("id"))
    seat = seat_for(model, catalog)
    built = thinker(Workflow())
    now = fingerprint_of(built, seat.entry)
    found = changes(journalled, now)
    model_changed = [c for c in found if c.startswith("model changed")]
    if found and not (accept_model_change and len(found) == len(model_changed)):
        fix = (
            f"; to resume on the new model, pass {ACCEPT_FLAG}"
            if model_changed and len(found) == len(model_changed)
            else "; resume with the journalled thinker, or start a new run with a new journal"
        )
        raise JournalMismatchError(f"{journal.path}: cannot resume: " + "; ".join(found) + fix)
    given = journal.header.get("input")
    if not isinstance(given, Mapping):
        raise JournalError(f"{journal.path}: the header holds no input")
    cannot = f"{journal.path}: cannot rebuild the journalled input {given.get('class') or 'list'}"
    try:
        input = product_of(given, classes_of(built))
    except TargetError as error:  # its class does not import: the one importer's line
        raise JournalError(f"{cannot}: {error}") from None
    except (AttributeError, TypeError, ValueError, KeyError) as error:
        raise JournalError(f"{cannot}: {type(error).__name__}: {error}") from None
    change = None
    if model_changed and isinstance(recorded_model, Mapping):
        change = f"{recorded_model.get('id')}:{recorded_model.get('wire_model_id')}"
    return seat, input, change


async def resume(
    thinker: ThinkerFactory[I, O],
    journal: str | os.PathLike[str],
    *,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    budget: Budget | None = None,
    workflow: Workflow | None = None,
    upstream_retries: int = DEFAULT_UPSTREAM_RETRIES,
    on_progress: Callable[[JobEvent], None] | None = None,
    approval: Approval | None = None,
    approver: Approver | None = None,
    accept_model_change: bool = False,
) -> RunResult[O]:
    """Continue the run ``journal`` holds, at its next turn. The parameters it shares with
    :func:`~harness.runs.run` are written out again, not forwarded as ``**kwargs``: a public
    signature is what a type checker and a reader see.

    ``model`` defaults to the journalled entry id (a run on a ``DecisionClient`` needs the
    client again). The thinker, palette, objective, question scheme, threshold, turn limit and
    model must be the journalled ones (:class:`JournalMismatchError` names what changed; a
    changed model alone is accepted with ``accept_model_change=True``, and the record's entry
    then says ``journalled_with``). The journalled turns are replayed without asking the model
    or running a tool; the run goes on live, appending to the journal. A run paused for a
    person needs ``approval`` (or an ``approver``). The result and record equal an
    uninterrupted run's, timing aside.
    """
    read = read_journal(journal)
    seat, input, change = _checked(thinker, read, model, catalog, accept_model_change)
    pending = read.pending
    if pending is not None and approval is None and approver is None:
        question = pending.data.get("pending")
        shown = question if not isinstance(question, Mapping) else _question(question)
        raise ApprovalRequiredError(
            f"{read.path}: the run is paused at turn {pending.turn} ({shown}): pass "
            "approval=Approval.approve() / .reject() / .pick(tool, ref) (--approve yes|no)"
        )
    if pending is None and approval is not None:
        raise ApprovalRequiredError(
            f"{read.path}: the run is not paused: resume it without an approval"
        )
    durable = Durable(resumed=read, approval=approval, approver=approver, model_change=change)
    return await execute(
        cast("ThinkerFactory[Artifact, O]", thinker),  # I is the journalled input's type
        input,
        seat=seat,
        budget=budget,
        workflow=workflow,
        upstream_retries=upstream_retries,
        on_progress=on_progress,
        keep_bodies=read.keep_bodies,
        durable=durable,
    )


def _question(data: Mapping[str, object]) -> str:
    return (
        f"{data.get('tool')} on {data.get('artifact')} at {data.get('probability')}, "
        f"below {data.get('below')}"
    )


resume_sync = blocking(resume, """:func:`resume` for code with no event loop.""")


def move_text(turn: DecisionTurn) -> str:
    """A turn's move in a few words: ``split_note on note#1 -> list#2``, ``finish [verdict#3]``."""
    if turn.tool == "finish":
        kept = [ref for ref, p in turn.selection.items() if p >= 0.5]
        return "finish [" + ", ".join(kept) + "]"
    text = f"{turn.tool} on {turn.artifact}"
    if turn.result is not None:
        text += f" -> {turn.result}"
    if turn.failure is not None:
        text += " failed"
    return text


def journalled_turns(journal: JournalledRun) -> tuple[DecisionTurn, ...]:
    """The turns a journal holds, as they landed on the run's record."""
    found = []
    for entry in journal.entries:
        decided = entry.data.get("decided")
        if entry.kind == "turn" and isinstance(decided, Mapping):
            found.append(DecisionTurn.from_json(decided))
    return tuple(found)


@attrs.frozen
class Branch(Generic[O]):
    """A run branched at turn ``at`` with ``move`` forced there: the journalled turns
    (:attr:`original`) and the branch's result, side by side with :meth:`side_by_side`."""

    at: int
    move: str
    original: tuple[DecisionTurn, ...]
    result: RunResult[O]
    source: str = "journalled"
    """What :attr:`original` came from: ``"journalled"`` or ``"recorded"``."""

    def side_by_side(self) -> str:
        """Both runs' turns, one per row, the branching turn marked ``>``."""
        return side_by_side(
            [move_text(t) for t in self.original],
            [move_text(t) for t in self.result.turns],
            at=self.at,
            titles=(self.source, f"branch ({self.at}={self.move})"),
        )


async def branch(
    thinker: ThinkerFactory[I, O],
    source: str | os.PathLike[str],
    *,
    at: int,
    move: str,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    budget: Budget | None = None,
    accept_model_change: bool = False,
) -> Branch[O]:
    """Re-run a journalled or recorded run with ``move`` forced at turn ``at``, continuing live.

    ``move`` is a tool's name (on the artifact the model chose for it), ``tool:ref``,
    ``finish``, or ``second`` (the model's second choice). From a journal, the turns before
    ``at`` are replayed (nothing asked, no tool run) and the rest is live on ``model`` (default:
    the journalled entry). From a record written with its bodies (``keep_bodies=True``,
    ``--bodies``), the turns before ``at`` are answered from the record (their tools run again)
    and the rest by ``model`` (default: the catalog's pin). Neither file is changed.
    """
    if isinstance(at, bool) or not isinstance(at, int) or at < 1:
        raise ValueError(f"at must be a turn number >= 1, got {at!r}")
    if RECORD_FILE.starts(source):  # else a journal (read_journal names any problem)
        return await _branch_record(thinker, Path(source), at, move, model, catalog, budget)
    read = read_journal(source)
    original = journalled_turns(read)
    if at > len(original) + (1 if read.pending is not None else 0):
        raise ValueError(
            f"{read.path} holds {len(original)} turns: branch at one of 1..{len(original)}"
        )
    seat, input, change = _checked(thinker, read, model, catalog, accept_model_change)
    durable = Durable(resumed=read, forced={at: move}, model_change=change)
    result = await execute(
        cast("ThinkerFactory[Artifact, O]", thinker),  # I is the journalled input's type
        input,
        seat=seat,
        budget=budget,
        keep_bodies=read.keep_bodies,
        durable=durable,
    )
    return Branch(at, move, original, result)


async def _branch_record(
    thinker: ThinkerFactory[I, O],
    path: Path,
    at: int,
    move: str,
    model: ModelChoice,
    catalog: Catalog | None,
    budget: Budget | None,
) -> Branch[O]:
    """:func:`branch` from a record: answered from it before ``at``, by ``model`` after."""
    from harness.artifacts import from_json
    from harness.catalog import CatalogEntry
    from harness.providers import client_for
    from harness.record import load_record
    from harness.replay import AsEntry, ReplayClient, cassette_from_record, override
    from harness.tools import tool_types

    record = load_record(path)
    cassette = cassette_from_record(record, str(path))
    live = seat_for(model, catalog)
    fallback = live.clients.get(live.entry.id) or client_for(live.entry)
    owned = live.entry.id not in live.clients
    recorded = CatalogEntry(
        id=record.entry.get("id", "recorded"),
        provider="fake",
        wire_model_id=record.entry.get("wire_model_id", "recorded"),
        max_context_tokens=1 << 30,
        max_concurrent=8,
    )
    client = ReplayClient(
        cassette, source=str(path), fallback=AsEntry(fallback, live.entry, owns=owned)
    )
    input_type, _ = tool_types(type(thinker(Workflow())))
    given = from_json(input_type, json.dumps(record.input_value))
    seat = Seat(Catalog([recorded], {"decision": recorded.id}), {recorded.id: client})
    try:
        with override(model=client):
            result = await branch_replayed(thinker, given, seat, {at: move}, budget=budget)
    finally:
        await client.aclose()
    return Branch(at, move, record.turns, result, source="recorded")


async def branch_replayed(
    thinker: ThinkerFactory[Any, O],
    given: Artifact,
    seat: Seat,
    forced: Mapping[int, str],
    *,
    budget: Budget | None = None,
) -> RunResult[O]:
    """A run on ``seat``, whose client answers from a record (no retries: a replay has nothing
    to retry), with the ``forced`` moves, keeping each call's body: what a branch from a record
    runs (:func:`branch` on a record, ``harness replay RECORD --branch``)."""
    return await execute(
        cast("ThinkerFactory[Artifact, O]", thinker),  # the recorded input's type
        given,
        seat=seat,
        budget=budget,
        upstream_retries=0,
        keep_bodies=True,
        durable=Durable(forced=forced),
    )


def turns_side_by_side(
    left: Sequence[DecisionTurn], right: Sequence[DecisionTurn], at: int, titles: tuple[str, str]
) -> str:
    """Two runs' turns side by side (the record's or the journal's), ``at`` marked."""
    return side_by_side(
        [move_text(t) for t in left], [move_text(t) for t in right], at=at, titles=titles
    )


def _journalled(path: Path) -> bool:
    """Whether a journal has been started at ``path``."""
    return path.exists() and path.stat().st_size > 0


async def run_journalled(
    thinker: ThinkerFactory[I, O],
    input: I,
    journal: str | os.PathLike[str],
    *,
    seat: Seat,
    admission: Admission | None = None,
    upstream_retries: int = DEFAULT_UPSTREAM_RETRIES,
    keep_bodies: bool = False,
) -> RunResult[O]:
    """Run ``thinker`` on ``input`` with ``journal``, or resume it when the journal is there
    (a batch item whose worker died goes on at its next turn). A journal of another run (its
    fingerprint or its input differ) is refused with :class:`JournalMismatchError`."""
    path = Path(journal)
    durable = Durable(journal=path)
    if _journalled(path):
        read = read_journal(path)
        built = thinker(Workflow())
        found = changes(read.fingerprint, fingerprint_of(built, seat.entry))
        given = read.header.get("input")
        if given != product_json(input):
            found.append("the input changed")
        if found:
            raise JournalMismatchError(f"{path}: cannot resume: " + "; ".join(found))
        durable, keep_bodies = Durable(resumed=read), read.keep_bodies
    return await execute(
        thinker,
        input,
        seat=seat,
        upstream_retries=upstream_retries,
        keep_bodies=keep_bodies,
        durable=durable,
        admission=admission,
    )
