"""Durable runs: the journal's hooks in the thinker's loop, the paused result and the errors.

(What a run depends on, its fingerprint and header, is :mod:`harness.runs._fingerprint`'s; the
journal file, :mod:`harness.runs._journal`'s; the shapes of its data,
:mod:`harness.runs._typed_json`'s.)

:func:`harness.run` with ``journal=PATH`` installs :class:`JournalHooks` on the run's top job:
each completed turn is appended to the journal before the next starts; a move below its approval
bar pauses the run (the journal keeps the question). :func:`harness.resume` reads the journal,
checks its fingerprint, and runs again with the journalled turns replayed (the model not asked,
the tools not run: their products restored from the journal) and the rest live.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs

from harness.artifacts import Artifact
from harness.decision import DecisionRequest, DecisionResponse
from harness.jobs import ModelCall
from harness.providers import wire_body
from harness.runs._fingerprint import classes_of
from harness.runs._journal import JournalError, JournalledRun, JournalWriter
from harness.runs._result import RunResult
from harness.runs._typed_json import (
    call_json,
    call_of,
    product_json,
    product_of,
    request_digest,
    response_json,
    response_of,
)
from harness.thinker import (
    Approval,
    ApprovalRequiredError,
    CompletedTurn,
    PendingApproval,
    ReplayedTurn,
)
from harness.tools import DecisionTool

if TYPE_CHECKING:
    from harness.record import RecordingDispatcher

from harness.replay import RecordedReply

__all__ = [
    "Approver",
    "JournalHooks",
    "JournalMismatchError",
    "PausedResult",
]

O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type

Approver = Callable[[PendingApproval], Approval | None]
"""Asked for each move below its approval bar: a verdict, or ``None`` to pause the run."""


class JournalMismatchError(JournalError):
    """A journal that does not fit the run resuming it: names each thing that changed and, for
    a changed model only, the flag that accepts it."""


class _Paused(Exception):
    """Raised by the hooks to stop a run waiting for a person (caught by the run API)."""

    def __init__(self, pending: PendingApproval) -> None:
        super().__init__(pending.question())
        self.pending = pending


@attrs.frozen(repr=False)
class PausedResult(RunResult[O], Generic[O]):
    """A run waiting for a person: the turns so far, the question (:attr:`pending`), and the
    journal that holds it. Continue with ``harness.resume(Thinker, journal, approval=...)``."""

    pending: PendingApproval | None = None
    journal: Path | None = None

    def __repr__(self) -> str:
        question = "?" if self.pending is None else self.pending.question()
        return f"PausedResult({self.thinker}: {question}; resume from {self.journal})"


def _decision_groups(
    dispatcher: RecordingDispatcher, start: int, keep_bodies: bool
) -> tuple[list[tuple[DecisionRequest | None, list[object]]], int]:
    """The decision calls submitted since ``start`` (each with its calls as journal JSON)."""
    found: list[tuple[DecisionRequest | None, list[object]]] = []
    decisions = dispatcher.decisions[start:]
    for decision in decisions:
        calls: list[object] = []
        for made in decision.record.calls:
            body = reply = None
            if keep_bodies and decision.request is not None:
                entry = dispatcher.catalog.entry(made.entry_id)
                body = _json(wire_body(decision.request, entry))
                if made.success:
                    answered = DecisionResponse(
                        decision.request,
                        made.answers,
                        input_tokens=made.input_tokens,
                        model=made.model,
                        request_id=made.request_id,
                    )
                    reply = RecordedReply.of(answered).to_json()
            calls.append(call_json(made, body, reply))
        found.append((decision.request, calls))
    return found, start + len(decisions)


def _json(body: bytes) -> object:
    from harness.decision._internal import load_json

    return load_json(body)


class JournalHooks:
    """The thinker-loop hooks of a durable run (see :class:`harness.thinker.TurnHooks`)."""

    def __init__(
        self,
        thinker: DecisionTool[Any, Artifact],
        *,
        run_id: str | None = None,
        writer: JournalWriter | None = None,
        journal: JournalledRun | None = None,
        keep_bodies: bool = False,
        forced: Mapping[int, str] | None = None,
        approval: Approval | None = None,
        approver: Approver | None = None,
    ) -> None:
        self._run_id = run_id or uuid.uuid4().hex
        self.writer = writer
        self.journal = journal
        self.keep_bodies = keep_bodies
        self._forced = dict(forced or {})
        self._branch_at = min(self._forced) if self._forced else None
        self._approval = approval
        self._approver = approver
        self._turns = journal.by_turn() if journal is not None else {}
        self._classes = classes_of(thinker)
        self.dispatcher: RecordingDispatcher | None = None
        self._mark = 0
        self.replayed_calls: list[list[ModelCall]] = []
        """The calls of the journalled turns replayed, one list per decision, in order."""
        self.replayed_bodies: list[object] = []
        self.replayed_replies: list[object] = []
        self.replayed_turns = 0
        self.asked_again = 0

    @property
    def run_id(self) -> str:
        """The run's id (kept across resumes)."""
        return self._run_id

    def bind(self, dispatcher: RecordingDispatcher) -> None:
        """The dispatcher whose decisions the journal reads after each turn."""
        self.dispatcher = dispatcher

    def _take(self, groups: object) -> None:
        if not isinstance(groups, list):
            return
        for group in groups:
            calls = []
            for data in group:
                call, body, reply = call_of(data)
                calls.append(call)
                self.replayed_bodies.append(body)
                self.replayed_replies.append(reply)
            self.replayed_calls.append(calls)

    # -- the TurnHooks protocol --------------------------------------------------------------

    def replayed(self, turn: int, request: DecisionRequest) -> ReplayedTurn | None:
        """The journalled turn ``turn``, checked against the request the run asks now."""
        entries = self._turns.get(turn)
        if not entries or (self._branch_at is not None and turn > self._branch_at):
            return None
        digest = request_digest(request)
        for entry in entries:
            if entry.data.get("request") != digest:
                assert self.journal is not None
                raise JournalMismatchError(
                    f"{self.journal.path}: turn {turn} asks the model something else than the "
                    "journalled turn did (the input, a tool's product or the thinker's code "
                    "changed): start the run again with a new journal"
                )
        first = entries[0].data
        response_data = first.get("response")
        assert isinstance(response_data, Mapping)
        response = response_of(request, response_data)
        done = next((e.data for e in entries if e.kind == "turn"), None)
        for entry in entries:
            self._take(entry.data.get("decision"))
        self.replayed_turns += 1
        if done is None or turn == self._branch_at:
            return ReplayedTurn(response, done=False)
        self._take(done.get("tool_calls"))
        approval_data = done.get("approval")
        approval = Approval.from_json(approval_data) if isinstance(approval_data, Mapping) else None
        product_data = done.get("product")
        product = None
        if isinstance(product_data, Mapping):
            product = product_of(product_data, self._classes)
        failure, line = done.get("failure"), done.get("line")
        return ReplayedTurn(
            response,
            approval=approval,
            product=product,
            failure=failure if isinstance(failure, str) else None,
            line=line if isinstance(line, str) else None,
        )

    def forced(self, turn: int) -> str | None:
        """The move forced at ``turn`` (a branch), if any."""
        return self._forced.get(turn)

    def approve(self, pending: PendingApproval, response: DecisionResponse) -> Approval:
        """The verdict given to resume, else the approver's, else pause (journalled)."""
        if self._approval is not None:
            approval, self._approval = self._approval, None
            return approval
        if self._approver is not None:
            verdict = self._approver(pending)
            if verdict is not None:
                return verdict
        if self.writer is None:
            raise ApprovalRequiredError(
                f"{pending.question()}: the run has no journal to pause in; pass "
                "journal=PATH (--journal FILE) or an approver (--approve yes|no)"
            )
        decision, tools = self._groups(response.request)
        self.writer.append(
            {
                "kind": "pending",
                "turn": pending.turn,
                "request": request_digest(response.request),
                "response": response_json(response),
                "decision": decision,
                "tool_calls": tools,
                "pending": pending.to_json(),
            }
        )
        raise _Paused(pending)

    async def completed(self, turn: CompletedTurn) -> None:
        """Append the turn to the journal (on disk before the next turn starts)."""
        decision, tools = self._groups(turn.request)
        if self.writer is None:
            return
        await self.writer.append_turn(
            {
                "kind": "turn",
                "turn": turn.turn,
                "request": request_digest(turn.request),
                "response": response_json(turn.response),
                "decision": decision,
                "tool_calls": tools,
                "tool": turn.tool,
                "artifact": turn.artifact,
                "approval": None if turn.approval is None else turn.approval.to_json(),
                "product": None if turn.product is None else product_json(turn.product),
                "failure": turn.failure,
                "line": turn.line,
                "decided": turn.decided.to_json(),
            }
        )

    async def synced(self) -> None:
        """The journal is on disk (the last turn's fsync done): a tool may run."""
        if self.writer is not None:
            await self.writer.synced()

    def _groups(self, request: DecisionRequest) -> tuple[list[list[object]], list[list[object]]]:
        """The decision calls since the last entry: the turn's own, and its tools'."""
        if self.dispatcher is None:
            return [], []
        groups, self._mark = _decision_groups(self.dispatcher, self._mark, self.keep_bodies)
        own = [calls for asked, calls in groups if asked is request]
        rest = [calls for asked, calls in groups if asked is not request]
        return own, rest


def side_by_side(
    left: Sequence[str], right: Sequence[str], *, at: int, titles: tuple[str, str]
) -> str:
    """Two runs' turns as two columns, the branching turn marked ``>``."""
    width = max([len(titles[0]), *(len(line) for line in left)]) + 2
    rows = [f"      {titles[0].ljust(width)}{titles[1]}"]
    for index in range(max(len(left), len(right))):
        one = left[index] if index < len(left) else "(no turn)"
        two = right[index] if index < len(right) else "(no turn)"
        mark = ">" if index + 1 == at else " "
        rows.append(f"{index + 1:>4} {mark} {one.ljust(width)}{two}")
    return "\n".join(rows)
