"""One call to run a thinker: ``await run(Triage, note, model=...)`` or ``run_sync(...)``.

Built on the dispatcher (the way to run many jobs at once): the thinker is constructed with its
``(parent)`` constructor under a fresh :class:`~harness.scope.Workflow` (or yours), run as a
:class:`~harness.thinker.ThinkerRun` through a dispatcher over the run's catalog, and every
decision call it makes is read back from its job's record into the :class:`RunResult`.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, ParamSpec, TypeVar, cast

import attrs

from harness.admission import Admission
from harness.artifacts import Artifact, ArtifactRegistry, ListArtifact, TextFormatterRegistry
from harness.catalog import Catalog
from harness.errors import SyncRunInLoopError
from harness.jobs import DEFAULT_UPSTREAM_RETRIES, JobEvent, ModelCall
from harness.record import RecordingDispatcher, RunFailedError, thinker_settings
from harness.runs._durable import Approver, JournalHooks, PausedResult, _Paused
from harness.runs._fingerprint import header_of
from harness.runs._journal import JournalledRun, JournalWriter
from harness.runs._model import ModelChoice, Seat, seat_for
from harness.runs._result import RunResult, Usage
from harness.scope import Budget, BudgetAccount, Identifiable, Identity, Workflow
from harness.thinker import Approval, DecisionThinker, PendingApproval, ThinkerRun
from harness.tools import DecisionTool

__all__ = ["Durable", "ThinkerFactory", "blocking", "execute", "run", "run_sync"]

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the seed's name for the input type
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type
P = ParamSpec("P")
R = TypeVar("R")

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
    journal: str | os.PathLike[str] | None = None,
    approver: Approver | None = None,
) -> RunResult[O]:
    """Run ``thinker`` on ``input`` and return its :class:`RunResult`.

    ``model``: an entry id, ``"embedded"``, ``"systemone:<wire model>"``, ``"openai:<model>"``,
    ``"openai-chat:<model>[@<base url>]"``, ``"openai-completions:<model>[@<base url>]"``
    or a :class:`~harness.providers.DecisionClient` (default: the configured catalog's pin).
    ``catalog``: the catalog to resolve through (default: :func:`harness.catalog.load_catalog`,
    which adds the environment's entries). ``budget`` limits this run; ``workflow`` (its own
    ``budget`` included) is shared by every run given it. ``on_progress`` sees each progress
    event of the run's top job. ``keep_bodies`` keeps each request's wire body for the record.

    ``journal`` appends each completed turn to that file (a new one) before the next turn
    starts, so :func:`harness.resume` can continue the run after a crash (docs/durable.md).
    ``approver`` is asked about each move below its ``requires_approval`` bar; when it answers
    ``None`` (or without one) a journalled run pauses and returns a :class:`PausedResult`.

    A run that fails (a budget refusing a call before the wire, a model failing, a tool of yours
    crashing) raises :class:`RunFailedError` carrying the partial result and record.
    """
    durable = None
    if journal is not None or approver is not None:
        durable = Durable(journal=journal, approver=approver)
    return await execute(
        thinker,
        input,
        seat=seat_for(model, catalog),
        budget=budget,
        workflow=workflow,
        upstream_retries=upstream_retries,
        on_progress=on_progress,
        keep_bodies=keep_bodies,
        durable=durable,
    )


@attrs.define
class Durable:
    """How a run is durable: a new journal, a journal resumed, moves forced, a verdict given."""

    journal: str | os.PathLike[str] | None = None
    approver: Approver | None = None
    resumed: JournalledRun | None = None
    forced: Mapping[int, str] = attrs.Factory(dict)
    approval: Approval | None = None
    model_change: str | None = None

    def hooks(
        self, tool: DecisionTool[Any, Artifact], input: Artifact, seat: Seat, keep_bodies: bool
    ) -> JournalHooks:
        """The hooks of the run, its journal opened (created, or reopened to append)."""
        writer = None
        run_id = None if self.resumed is None else self.resumed.run_id
        if self.resumed is not None and not self.forced:
            writer = JournalWriter.reopen(self.resumed)
        elif self.journal is not None:
            run_id = run_id or uuid.uuid4().hex
            writer = JournalWriter.create(
                self.journal, header_of(tool, input, seat.entry, run_id, keep_bodies)
            )
        return JournalHooks(
            tool,
            run_id=run_id,
            writer=writer,
            journal=self.resumed,
            keep_bodies=keep_bodies,
            forced=self.forced,
            approval=self.approval,
            approver=self.approver,
        )


async def execute(
    thinker: ThinkerFactory[I, O],
    input: I,
    *,
    seat: Seat,
    budget: Budget | None = None,
    workflow: Workflow | None = None,
    upstream_retries: int = DEFAULT_UPSTREAM_RETRIES,
    on_progress: Callable[[JobEvent], None] | None = None,
    keep_bodies: bool = False,
    durable: Durable | None = None,
    admission: Admission | None = None,
) -> RunResult[O]:
    """:func:`run` on a seat, durable or not (:func:`harness.resume`, :func:`harness.branch`
    and a batch's journalled runs go through here too); the defaults are :func:`run`'s."""
    workflow = workflow if workflow is not None else Workflow()
    identity = workflow.identity
    if budget is not None:
        identity = identity.spending_against(BudgetAccount(budget, "run"))
    parent = _RunParent(identity)
    tool = thinker(parent)
    hooks = None if durable is None else durable.hooks(tool, input, seat, keep_bodies)
    job = ThinkerRun(parent, tool, input, upstream_retries=upstream_retries, turn_hooks=hooks)
    dispatcher = RecordingDispatcher(seat.catalog, clients=dict(seat.clients), admission=admission)
    if hooks is not None:
        hooks.bind(dispatcher)
    started = time.perf_counter()
    paused: PendingApproval | None = None
    try:
        async with dispatcher:
            outcome = await dispatcher.run_top(job, on_progress)  # a failure: kept on the result
    finally:
        if hooks is not None and hooks.writer is not None:
            await hooks.writer.aclose()
    answer, failure = outcome
    if isinstance(failure, _Paused):  # waiting for a person: the journal holds the question
        paused, failure = failure.pending, None
    wall = time.perf_counter() - started
    calls: list[ModelCall] = []
    retries = 0
    bodies: list[object] = []
    if hooks is not None:  # the journalled turns' calls come first, as they were made
        for group in hooks.replayed_calls:
            calls.extend(group)
            retries += max(0, len(group) - 1)
        bodies.extend(hooks.replayed_bodies)
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
    replies: list[object] = [] if hooks is None else list(hooks.replayed_replies)
    if keep_bodies:
        for recorded in dispatcher.recorded_calls(keep_bodies=True):
            bodies.append(recorded.body)
            replies.append(recorded.reply)
    fields = dict(
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
        bodies=tuple(bodies) if keep_bodies else None,
        replies=tuple(replies) if keep_bodies else None,
        model_change=None if durable is None else durable.model_change,
        replayed=0 if hooks is None else hooks.replayed_turns,
        threshold=None if thinking is None else thinking.selection_threshold,
        settings=thinker_settings(tool),
    )
    result: RunResult[O]
    if paused is not None:
        journal = None if hooks is None or hooks.writer is None else hooks.writer.path
        result = PausedResult(pending=paused, journal=journal, **fields)  # type: ignore[arg-type]  # the fields above, typed there
    else:
        result = RunResult(**fields)  # type: ignore[arg-type]  # the fields above, typed there
    if failure is not None:
        raise RunFailedError(failure, result.record(), result) from failure
    return result


def blocking(
    coroutine_function: Callable[P, Coroutine[Any, Any, R]],
    doc: str,
    *,
    name: str | None = None,
    calls: Callable[[tuple[object, ...], dict[str, object]], tuple[str, str]] | None = None,
) -> Callable[P, R]:
    """The form of ``coroutine_function`` (:func:`run`, :func:`harness.resume`,
    :func:`harness.evals.evaluate`) for code with no event loop, with its parameters:
    ``asyncio.run`` of it, named ``name`` (``<name>_sync`` by default). Inside a running loop it
    refuses with :class:`~harness.errors.SyncRunInLoopError`, naming the awaitable form to write:
    ``calls(args, kwargs)`` gives the call as made and the awaited call to write instead
    (by default ``<name>_sync(Thinker, ...)`` and ``harness.<name>(Thinker, ...)``)."""
    awaitable = coroutine_function.__name__
    sync_name = name or f"{awaitable}_sync"

    def thinker_calls(args: tuple[object, ...], kwargs: dict[str, object]) -> tuple[str, str]:
        thinker = args[0] if args else kwargs.get("thinker")
        shown = getattr(thinker, "__qualname__", "the thinker")
        return f"{sync_name}({shown}, ...)", f"harness.{awaitable}({shown}, ...)"

    @functools.wraps(coroutine_function)
    def blocking_form(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            made, awaited = (calls or thinker_calls)(args, kwargs)
            raise SyncRunInLoopError(
                f"{made} was called inside a running event loop, which it would block: "
                f"write `await {awaited}` in async code"
            )
        return asyncio.run(coroutine_function(*args, **kwargs))

    blocking_form.__name__ = blocking_form.__qualname__ = sync_name
    blocking_form.__doc__ = doc
    return blocking_form


run_sync = blocking(
    run,
    """:func:`run`, for code with no event loop (a script, a notebook cell with none running,
    a synchronous harness). Inside a running loop it refuses with
    :class:`~harness.errors.SyncRunInLoopError`: ``await run(...)`` there instead.""",
)
