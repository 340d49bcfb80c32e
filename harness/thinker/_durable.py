"""What the thinker's loop offers a durable run: idempotency keys, approval, and turn hooks.

The loop stays what it was; a run that journals itself (``harness.run(..., journal=PATH)``)
gives its top job (a ``ThinkerRun``) a :class:`TurnHooks`, and the loop asks it, each turn:

* :meth:`TurnHooks.replayed`: a turn already journalled (its decision, approval and product),
  replayed instead of asking the model and running the tool;
* :meth:`TurnHooks.forced`: a move forced at this turn (branching);
* :meth:`TurnHooks.approve`: a person's verdict on a move below its approval bar (or a pause);
* :meth:`TurnHooks.completed`: a live turn is done: journal it before the next one starts.

Every tool run gets an :class:`IdempotencyKey` (``idempotency_key(context)`` in the tool), the
same each time that turn runs again, so a tool can apply its effect once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeVar

import attrs

from harness.artifacts import Artifact
from harness.decision import DecisionRequest, DecisionResponse
from harness.errors import HarnessError
from harness.thinker._turn import DecisionTurn

if TYPE_CHECKING:
    from harness.jobs import JobContext

__all__ = [
    "APPROVAL_ATTR",
    "Approval",
    "ApprovalRequiredError",
    "BranchError",
    "CompletedTurn",
    "IdempotencyKey",
    "PendingApproval",
    "ReplayedTurn",
    "TurnHooks",
    "approval_bar",
    "idempotency_key",
    "moves_of",
    "parse_move",
    "probability",
    "requires_approval",
    "second_choice",
    "turn_hooks",
]

APPROVAL_ATTR: Final = "__harness_approval_below__"

T = TypeVar("T", bound=type)


@attrs.frozen
class IdempotencyKey:
    """Names one tool run of one run: the run's id, the turn, the tool and the artifact ref.

    The same turn run again (after a crash, before it was journalled) gets the same key; a tool
    inside a nested thinker gets a key ``within`` its thinker's. ``str(key)`` is the key as one
    string (``"3f2a.../2/split_note/note#1"``), for a store keyed by strings.
    """

    run_id: str
    turn: int
    tool: str
    artifact: str
    within: IdempotencyKey | None = None

    def __str__(self) -> str:
        own = f"{self.turn}/{self.tool}/{self.artifact}"
        return f"{self.within}/{own}" if self.within is not None else f"{self.run_id}/{own}"


def idempotency_key(context: JobContext) -> IdempotencyKey | None:
    """The idempotency key of the tool run ``context`` belongs to (``None`` outside a
    thinker's turn, such as a tool run on its own)."""
    key = getattr(context.job, "idempotency_key", None)
    return key if isinstance(key, IdempotencyKey) else None


def requires_approval(*, below: float) -> Callable[[T], T]:
    """A class decorator for a tool or a thinker: a move whose probability (the model's ``next``
    answer) is below ``below`` waits for a person's approval.

    On a tool, the bar holds when that tool is chosen; on a thinker, for every tool move. A run
    with a journal pauses (its result is a :class:`~harness.runs.PausedResult`) until
    ``harness.resume(..., approval=...)`` gives the verdict.
    """
    if isinstance(below, bool) or not isinstance(below, int | float) or not 0.0 < below <= 1.0:
        raise ValueError(f"requires_approval(below=...) takes a number in (0, 1], got {below!r}")

    def mark(cls: T) -> T:
        setattr(cls, APPROVAL_ATTR, float(below))
        return cls

    return mark


def approval_bar(cls: type) -> float | None:
    """The approval bar ``requires_approval`` set on ``cls``, ``None`` without one."""
    value = getattr(cls, APPROVAL_ATTR, None)
    return value if isinstance(value, float) else None


ApprovalKind = Literal["approve", "reject", "pick"]


@attrs.frozen
class Approval:
    """A person's verdict on a paused move: :meth:`approve`, :meth:`reject` or :meth:`pick`."""

    kind: ApprovalKind
    tool: str | None = None
    artifact: str | None = None
    reason: str | None = None

    @classmethod
    def approve(cls) -> Approval:
        """Run the move the model chose."""
        return cls("approve")

    @classmethod
    def reject(cls, reason: str = "rejected by a person") -> Approval:
        """Do not run it: the pair is spent as with a readable failure, ``reason`` its
        message (the model reads it on the next turn)."""
        return cls("reject", reason=reason)

    @classmethod
    def pick(cls, tool: str, artifact: str) -> Approval:
        """Run another legal move instead: ``tool`` on the artifact ref ``artifact``."""
        return cls("pick", tool=tool, artifact=artifact)

    def to_json(self) -> dict[str, object]:
        """The verdict as JSON (what the journal keeps)."""
        return {
            "kind": self.kind,
            "tool": self.tool,
            "artifact": self.artifact,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Approval:
        """Read :meth:`to_json`'s shape back."""
        kind = data.get("kind")
        if kind == "approve":
            return cls.approve()
        if kind == "reject":
            reason = data.get("reason")
            return cls.reject(reason if isinstance(reason, str) else "rejected by a person")
        tool, artifact = data.get("tool"), data.get("artifact")
        if kind == "pick" and isinstance(tool, str) and isinstance(artifact, str):
            return cls.pick(tool, artifact)
        raise ValueError(f"not an approval: {dict(data)!r}")


@attrs.frozen
class PendingApproval:
    """A move waiting for a person: the turn, the chosen tool and artifact, the model's
    probability for it, the bar it fell below, and every legal move (tool, refs)."""

    turn: int
    tool: str
    artifact: str
    probability: float
    below: float
    moves: Mapping[str, tuple[str, ...]]
    next: Mapping[str, float]

    def question(self) -> str:
        """The question as one line, for a person."""
        return (
            f"turn {self.turn}: run {self.tool} on {self.artifact}? the model gives it "
            f"{self.probability:.2f}, below the bar {self.below:.2f}"
        )

    def to_json(self) -> dict[str, object]:
        """The pending question as JSON (what the journal keeps)."""
        return {
            "turn": self.turn,
            "tool": self.tool,
            "artifact": self.artifact,
            "probability": self.probability,
            "below": self.below,
            "moves": {k: list(v) for k, v in self.moves.items()},
            "next": dict(self.next),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> PendingApproval:
        """Read :meth:`to_json`'s shape back."""
        moves = data["moves"]
        nexts = data["next"]
        assert isinstance(moves, Mapping)
        assert isinstance(nexts, Mapping)
        return cls(
            turn=int(str(data["turn"])),
            tool=str(data["tool"]),
            artifact=str(data["artifact"]),
            probability=float(str(data["probability"])),
            below=float(str(data["below"])),
            moves={str(k): tuple(str(r) for r in v) for k, v in moves.items()},
            next={str(k): float(v) for k, v in nexts.items()},
        )

    def check(self, approval: Approval) -> None:
        """Refuse a pick that is not a legal move, naming the legal ones."""
        if approval.kind != "pick":
            return
        assert approval.tool is not None
        assert approval.artifact is not None
        if approval.artifact not in self.moves.get(approval.tool, ()):
            legal = "; ".join(f"{t} on {', '.join(r)}" for t, r in self.moves.items())
            raise ApprovalRequiredError(
                f"turn {self.turn}: {approval.tool} on {approval.artifact} is not a legal move; "
                f"pick one of: {legal}"
            )


class ApprovalRequiredError(HarnessError, ValueError):
    """A paused run resumed without an approval, or with one that does not fit the question."""


@attrs.frozen
class ReplayedTurn:
    """A journalled turn: the decision's response, the approval given (if any), and what the
    tool gave (its product, or its readable failure and the line the model read)."""

    response: DecisionResponse
    approval: Approval | None = None
    product: Artifact | None = None
    failure: str | None = None
    line: str | None = None
    done: bool = True
    """False for a turn whose decision was journalled but not its tool (a pending approval)."""


@attrs.frozen
class CompletedTurn:
    """A live turn, done: what the journal appends."""

    turn: int
    request: DecisionRequest
    response: DecisionResponse
    tool: str
    artifact: str | None
    approval: Approval | None
    product: Artifact | None
    failure: str | None
    line: str | None
    decided: DecisionTurn
    """The turn as it lands on the run's record."""


class TurnHooks(Protocol):
    """What a durable run installs for its top thinker (see the module's notes)."""

    @property
    def run_id(self) -> str:
        """The run's id (kept across resumes): the root of every idempotency key."""
        ...

    def replayed(self, turn: int, request: DecisionRequest) -> ReplayedTurn | None:
        """The journalled turn ``turn`` (checked against ``request``), ``None`` when live."""
        ...

    def forced(self, turn: int) -> str | None:
        """The move forced at ``turn`` (``tool``, ``tool:ref`` or ``finish``), if any."""
        ...

    def approve(self, pending: PendingApproval, response: DecisionResponse) -> Approval:
        """A person's verdict on ``pending``; raises to pause the run."""
        ...

    async def completed(self, turn: CompletedTurn) -> None:
        """Journal a finished live turn before the next one starts."""
        ...

    async def synced(self) -> None:
        """Return once the journalled turns are on disk (awaited before a tool runs)."""
        ...


def turn_hooks(context: JobContext) -> TurnHooks | None:
    """The hooks of the durable run whose top job ``context`` belongs to (a
    :class:`~harness.thinker.ThinkerRun` given ``turn_hooks``); nested thinkers get none."""
    hooks: TurnHooks | None = getattr(context.job, "turn_hooks", None)
    return hooks


def second_choice(next_: Mapping[str, float]) -> str:
    """The option with the second highest probability (ties in option order)."""
    ranked = sorted(next_, key=lambda k: -next_[k])
    return ranked[1] if len(ranked) > 1 else ranked[0]


def moves_of(moves: Sequence[tuple[str, Sequence[str]]]) -> dict[str, tuple[str, ...]]:
    """The legal moves by tool, as :class:`PendingApproval` keeps them."""
    return {tool: tuple(refs) for tool, refs in moves}


def probability(next_: Mapping[str, float] | None, move: str) -> float:
    """``next_``'s probability for ``move``, ``nan`` when not answered."""
    return math.nan if next_ is None else float(next_.get(move, math.nan))


class BranchError(HarnessError, ValueError):
    """A move forced at a turn that is not legal there (names the legal moves)."""


def parse_move(
    spec: str,
    turn: int,
    next_: Mapping[str, float],
    legal: Mapping[str, tuple[str, ...]],
    finishable: bool,
) -> tuple[str, str | None]:
    """Read a forced move: ``tool``, ``tool:ref``, ``finish`` or ``second`` (the model's second
    choice); a move not legal at ``turn`` is refused naming the legal ones."""
    if spec == "second":
        spec = second_choice(next_)
    tool, colon, ref = spec.partition(":")
    shown = "; ".join(f"{t} on {', '.join(r)}" for t, r in legal.items())
    shown += "; finish" if finishable else ""
    if tool == "finish" and not colon:
        if not finishable:
            raise BranchError(f"turn {turn}: finish is not legal yet (no candidate); pick {shown}")
        return "finish", None
    if tool not in legal or (colon and ref not in legal[tool]):
        raise BranchError(f"turn {turn}: {spec!r} is not a legal move there; legal: {shown}")
    return tool, (ref if colon else None)
