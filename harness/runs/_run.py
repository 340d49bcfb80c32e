"""One call to run a thinker: ``await run(Triage, note, model=...)`` or ``run_sync(...)``.

Built on the dispatcher (the way to run many jobs at once): the thinker is constructed with its
``(parent)`` constructor under a fresh :class:`~harness.scope.Workflow` (or yours), run as a
:class:`~harness.thinker.ThinkerRun` through a dispatcher over the run's catalog, and every
decision call it makes is read back from its job's record into the :class:`RunResult`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar, cast

import attrs

from harness.artifacts import Artifact, ArtifactRegistry, ListArtifact, TextFormatterRegistry
from harness.catalog import Catalog
from harness.errors import SyncRunInLoopError
from harness.jobs import DEFAULT_UPSTREAM_RETRIES, EventKind, JobEvent, ModelCall
from harness.record import RecordingDispatcher
from harness.runs._model import ModelChoice, seat_for
from harness.runs._result import RunFailedError, RunResult, Usage
from harness.scope import Budget, BudgetAccount, Identifiable, Identity, Workflow
from harness.thinker import DecisionThinker, ThinkerRun
from harness.tools import DecisionTool

__all__ = ["ThinkerFactory", "run", "run_sync"]

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the seed's name for the input type
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type

ThinkerFactory = Callable[[Identifiable], DecisionTool[I, ListArtifact[O]]]
"""A thinker class with the ``(parent)`` constructor, or any callable building one."""


@attrs.frozen
class _RunParent:
    """The parent of a run's top job: its workflow's identity, also charging the run's budget."""

    identity: Identity


async def run(
    thinker: ThinkerFactory[I, O],
    input: I,
    *,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    budget: Budget | None = None,
    workflow: Workflow | None = None,
    upstream_retries: int = DEFAULT_UPSTREAM_RETRIES,
    on_progress: Callable[[JobEvent], None] | None = None,
    keep_bodies: bool = False,
) -> RunResult[O]:
    """Run ``thinker`` on ``input`` and return its :class:`RunResult`.

    ``model``: an entry id, ``"embedded"``, ``"systemone:<wire model>"``, ``"openai:<model>"``
    or a :class:`~harness.providers.DecisionClient` (default: the configured catalog's pin).
    ``catalog``: the catalog to resolve through (default: :func:`harness.catalog.load_catalog`,
    which adds the environment's entries). ``budget`` limits this run; ``workflow`` (its own
    ``budget`` included) is shared by every run given it. ``on_progress`` sees each progress
    event of the run's top job. ``keep_bodies`` keeps each request's wire body for the record.

    A run that fails (a budget refusing a call before the wire, a model failing, a tool of yours
    crashing) raises :class:`RunFailedError` carrying the partial result and record.
    """
    seat = seat_for(model, catalog)
    workflow = workflow if workflow is not None else Workflow()
    identity = workflow.identity
    if budget is not None:
        identity = identity.spending_against(BudgetAccount(budget, "run"))
    parent = _RunParent(identity)
    tool = thinker(parent)
    job = ThinkerRun(parent, tool, input, upstream_retries=upstream_retries)
    dispatcher = RecordingDispatcher(seat.catalog, clients=dict(seat.clients))
    started = time.perf_counter()
    answer: ListArtifact[O] | None = None
    failure: Exception | None = None
    async with dispatcher:
        if on_progress is not None:
            top = job.identity.job_id
            dispatcher.subscribe(
                on_progress,
                lambda event: event.kind is EventKind.PROGRESS and event.job.job_id == top,
            )
        try:
            answer = await dispatcher.run(job)
        except Exception as error:  # the run's own failure: kept on the partial result
            failure = error
    wall = time.perf_counter() - started
    calls: list[ModelCall] = []
    retries = 0
    for decision in dispatcher.decisions:
        made = decision.record.calls
        calls.extend(made)
        retries += max(0, len(made) - 1)
    thinking = tool if isinstance(tool, DecisionThinker) else None
    registry = thinking.registry if thinking is not None else ArtifactRegistry()
    if not len(registry):
        registry.adopt(input)
    if answer is None:  # the run failed: an empty answer of the thinker's item type
        item_type = thinking.output_type if thinking is not None else Artifact
        answer = cast("ListArtifact[O]", ListArtifact(item_type, ()))  # O is that item type
    else:
        product: Artifact = answer
        if not isinstance(product, ListArtifact):  # a plain tool run untyped (the CLI's)
            if product not in registry:
                registry.adopt(product)
            answer = cast("ListArtifact[O]", ListArtifact(type(product), (product,)))
        if answer not in registry:
            registry.adopt(answer)
    result: RunResult[O] = RunResult(
        answer=answer,
        turns=thinking.turns() if thinking is not None else (),
        usage=Usage.of(tuple(calls), retries=retries, wall_seconds=wall),
        calls=tuple(calls),
        entry=seat.entry,
        thinker=job.tool_name or type(tool).__qualname__,
        objective=thinking.objective if thinking is not None else None,
        input=input,
        registry=registry,
        formatters=thinking.formatters if thinking is not None else TextFormatterRegistry(),
        failure=None if failure is None else f"{type(failure).__name__}: {failure}",
        bodies=tuple(c.body for c in dispatcher.recorded_calls(keep_bodies=True))
        if keep_bodies
        else None,
    )
    if failure is not None:
        raise RunFailedError(failure, result) from failure  # type: ignore[arg-type]  # RunResult[O] is a RunResult[Artifact]: O is only read
    return result


def run_sync(
    thinker: ThinkerFactory[I, O],
    input: I,
    *,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    budget: Budget | None = None,
    workflow: Workflow | None = None,
    upstream_retries: int = DEFAULT_UPSTREAM_RETRIES,
    on_progress: Callable[[JobEvent], None] | None = None,
    keep_bodies: bool = False,
) -> RunResult[O]:
    """:func:`run`, for code with no event loop (a script, a notebook cell with none running,
    a synchronous harness). Inside a running loop it refuses with
    :class:`~harness.errors.SyncRunInLoopError`: ``await run(...)`` there instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        name = getattr(thinker, "__qualname__", "the thinker")
        raise SyncRunInLoopError(
            f"run_sync({name}, ...) was called inside a running event loop, which it would "
            f"block: write `await harness.run({name}, ...)` in async code"
        )
    return asyncio.run(
        run(
            thinker,
            input,
            model=model,
            catalog=catalog,
            budget=budget,
            workflow=workflow,
            upstream_retries=upstream_retries,
            on_progress=on_progress,
            keep_bodies=keep_bodies,
        )
    )
