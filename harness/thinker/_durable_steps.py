"""The loop's side of a durable run, step by step: the move a turn takes (the model's, a forced
one, or a person's verdict), a journalled tool step restored, a finishing turn journalled, and
the idempotency key of a turn's tool run. The interface a durable run gives the loop is
``_durable.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from harness.decision import DecisionRequest, DecisionResponse
from harness.thinker._durable import (
    Approval,
    ApprovalRequiredError,
    CompletedTurn,
    IdempotencyKey,
    PendingApproval,
    ReplayedTurn,
    TurnHooks,
    approval_bar,
    moves_of,
    parse_move,
    probability,
)
from harness.thinker._turn import FINISH, DecisionTurn
from harness.thinker._world import RunWorld

if TYPE_CHECKING:
    from harness.jobs import JobContext

__all__ = ["journal_finish", "restored_step", "steer", "tool_run_key"]


async def journal_finish(
    hooks: TurnHooks | None,
    replay: ReplayedTurn | None,
    number: int,
    request: DecisionRequest,
    response: DecisionResponse,
    turn: DecisionTurn,
) -> None:
    """Journal a live finishing turn (a replayed one is in the journal already)."""
    if hooks is not None and replay is None:
        await hooks.completed(
            CompletedTurn(number, request, response, FINISH, None, None, None, None, None, turn)
        )


def restored_step(
    world: RunWorld, number: int, tool: str, ref: str, replay: ReplayedTurn
) -> tuple[DecisionTurn, str]:
    """A journalled tool step: its product adopted as the run adopted it, or its failure."""
    if replay.product is None:
        failure = replay.failure or "failed"
        turn = DecisionTurn(number, None, tool, artifact=ref, failure=failure)
        return turn, replay.line or f"{tool} on {ref} failed: {failure}"
    result = world.adopt(replay.product)
    turn = DecisionTurn(number, None, tool, artifact=ref, result=result)
    return turn, replay.line or f"{tool} on {ref} produced {result}"


def tool_run_key(
    context: JobContext, hooks: TurnHooks | None, number: int, tool: str, ref: str
) -> IdempotencyKey:
    """The idempotency key of this turn's tool run: under the run's id for the top thinker,
    under the key of the tool run it executes in for a nested one."""
    within = getattr(context.job, "idempotency_key", None)
    if hooks is not None or not isinstance(within, IdempotencyKey):
        run_id = hooks.run_id if hooks is not None else context.job.identity.job_id
        return IdempotencyKey(run_id, number, tool, ref)
    return IdempotencyKey(within.run_id, number, tool, ref, within)


def steer(
    hooks: TurnHooks | None,
    replay: ReplayedTurn | None,
    number: int,
    response: DecisionResponse,
    moves: Sequence[tuple[str, type, Sequence[str]]],
    finishable: bool,
    thinker: type,
    input_id: Callable[[str], str],
) -> tuple[str, str | None, Approval | None]:
    """The move a turn takes: the model's, a forced one (branching), or a person's verdict on a
    move below its approval bar (the tool's, else the ``thinker`` class's). ``moves`` are the
    legal ones (tool name, tool class, refs); ``input_id`` names the question a tool's argument
    is read from. Returns the move, its ref if fixed, and the verdict."""
    chosen = response.choice("next")
    legal = moves_of([(name, refs) for name, _, refs in moves])
    forced = None if hooks is None else hooks.forced(number)
    if forced is not None:
        move, ref = parse_move(forced, number, chosen.probabilities, legal, finishable)
        return move, ref, None
    if chosen.choice == FINISH:
        return FINISH, None, None
    tool_class = next(cls for name, cls, _ in moves if name == chosen.choice)
    bar = approval_bar(tool_class) or approval_bar(thinker)
    p = probability(chosen.probabilities, chosen.choice)
    if bar is None or p >= bar:
        return chosen.choice, None, None
    ref = response.choice(input_id(chosen.choice)).choice
    if replay is not None and replay.approval is not None:
        approval = replay.approval
    elif hooks is None:
        raise ApprovalRequiredError(
            f"turn {number}: {chosen.choice} on {ref} needs a person's approval "
            f"({p:.2f} < {bar:.2f}); run with a journal (journal=PATH, --journal FILE) "
            "to pause, or give an approver (approver=..., --approve yes|no)"
        )
    else:
        pending = PendingApproval(
            number, chosen.choice, ref, p, bar, legal, dict(chosen.probabilities)
        )
        approval = hooks.approve(pending, response)
        pending.check(approval)
    if approval.kind == "pick":
        return str(approval.tool), approval.artifact, approval
    return chosen.choice, ref, approval
