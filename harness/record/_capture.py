"""Running a thinker (or any tool) through the dispatcher and recording it as a :class:`RunRecord`.

:func:`record_run` runs the tool as a :class:`~harness.thinker.ThinkerRun` through a
:class:`RecordingDispatcher`, which keeps every :class:`~harness.thinker.DecisionCall` the run
submits; each call's job record (:class:`~harness.jobs.ModelCall`: billed and counted input
tokens, latency, served model, reason) becomes the run record's calls, so nothing is counted a
second time. Progress events of the run's job go to a callback as they happen. A run that fails
still leaves its record: :class:`RunFailedError` carries the turns so far and the failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Generic

import attrs
from typing_extensions import TypeVar

from harness.admission import Admission
from harness.artifacts import (
    Artifact,
    ArtifactRegistry,
    ListArtifact,
    TextFormatterRegistry,
    artifact_converter,
)
from harness.catalog import DECISION, Catalog, CatalogEntry
from harness.decision import DecisionRequest
from harness.decision._internal import load_json
from harness.errors import HarnessError
from harness.jobs import Dispatcher, EventKind, Job, JobEvent, JobHandle, ModelCall
from harness.providers import DecisionClient, Redaction, client_for, wire_body
from harness.record._format import RecordedAnswer, RecordedCall, RunRecord
from harness.replay import RecordedReply, answers_json
from harness.thinker import FINISH, DecisionCall, DecisionThinker, ThinkerRun
from harness.tools import DecisionTool, Workflow

__all__ = [
    "RecordedRun",
    "RecordingDispatcher",
    "RunFailedError",
    "pinned_copy",
    "provider_client",
    "record_run",
    "thinker_settings",
]

R = TypeVar("R")

provider_client = client_for
"""A fresh client for an entry's provider (see :func:`harness.providers.client_for`)."""


class RecordingDispatcher(Dispatcher):
    """A :class:`~harness.jobs.Dispatcher` that keeps every decision call submitted to it, in
    submission order (:attr:`decisions`), so a run's record reads their job records."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # Any: Dispatcher's own parameters
        super().__init__(*args, **kwargs)
        self.decisions: list[DecisionCall] = []

    def submit(self, job: Job[R]) -> JobHandle[R]:
        """Keep ``job`` when it is a decision call, then schedule it as the dispatcher does."""
        if isinstance(job, DecisionCall):
            self.decisions.append(job)
        return super().submit(job)

    async def run(self, job: Job[R]) -> R:
        """Keep ``job`` when it is a decision call, then run it as the dispatcher does (a
        thinker's decisions come here: they run in the thinker's task)."""
        if isinstance(job, DecisionCall):
            self.decisions.append(job)
        return await super().run(job)

    async def run_top(
        self, job: Job[R], on_progress: Callable[[JobEvent], None] | None = None
    ) -> tuple[R | None, Exception | None]:
        """Run ``job`` (a run's top job), giving ``on_progress`` each of its progress events;
        its product, or its own failure (caught, so the run's record can still be written)."""
        if on_progress is not None:
            top = job.identity.job_id
            self.subscribe(
                on_progress,
                lambda event: event.kind is EventKind.PROGRESS and event.job.job_id == top,
            )
        try:
            return await self.run(job), None
        except Exception as error:  # the run's own failure: recorded by the caller
            return None, error

    def recorded_calls(self, *, keep_bodies: bool = False) -> tuple[RecordedCall, ...]:
        """Every model call of every kept decision, as its job's record holds it (re-runs
        included, in order); the request's wire body too with ``keep_bodies``."""
        calls: list[RecordedCall] = []
        for decision in self.decisions:
            for made in decision.record.calls:
                body = reply = None
                if keep_bodies:
                    body = self._body(decision, made)
                    if made.success and decision.request is not None:
                        reply = _reply(decision.request, made)
                calls.append(RecordedCall.of(made, body, reply))
        return tuple(calls)

    def _body(self, decision: DecisionCall, made: ModelCall) -> object:
        if decision.request is None:
            return None
        return load_json(wire_body(decision.request, self.catalog.entry(made.entry_id)))


def _reply(request: DecisionRequest, made: ModelCall) -> object:
    """What the model answered ``request``, as a cassette holds it (for ``harness replay``)."""
    reply = RecordedReply(answers_json(request, made.answers), made.model, made.request_id)
    return attrs.evolve(reply, input_tokens=made.input_tokens).to_json()


PartialResult = TypeVar("PartialResult", default=Any)  # Any: the run API's RunResult sits above


def thinker_settings(tool: object) -> dict[str, object]:
    """What a record keeps of a thinker's settings so a replay takes the same turns and a page
    draws the same threshold (empty for a plain tool)."""
    if not isinstance(tool, DecisionThinker):
        return {}
    return {
        "max_turns": tool.max_turns,
        "selection_threshold": tool.selection_threshold,
        "question_scheme": tool.scheme,
    }


class RunFailedError(HarnessError, Generic[PartialResult]):
    """A run that started and failed (a budget refused a call, a model failed, a tool of yours
    crashed): the one error for it, from :func:`record_run` and from ``harness.run``.

    ``error`` is the failure (also ``__cause__``); ``record`` the partial record (the turns so
    far, the calls made, ``failure`` naming the error); ``result`` the partial
    :class:`~harness.runs.RunResult` when the run API raised it (turns so far, usage, calls; an
    empty answer), ``None`` from :func:`record_run`."""

    def __init__(self, error: Exception, record: RunRecord, result: PartialResult) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error
        self.record = record
        self.result = result


def pinned_copy(catalog: Catalog, entry_id: str) -> Catalog:
    """A copy of ``catalog`` with ``entry_id`` pinned to the decision seat; ``catalog`` itself
    is left as it was (an unknown or non-decision entry raises
    :class:`~harness.catalog.CatalogError`)."""
    return Catalog(
        catalog.entries.values(), {**catalog.pins, DECISION: entry_id}, source=catalog.source
    )


@attrs.frozen
class RecordedRun:
    """What :func:`record_run` returns: the tool's product and the run's record."""

    product: Artifact
    record: RunRecord


def _world(
    tool: DecisionTool[Any, Artifact], input: Artifact, product: Artifact | None
) -> ArtifactRegistry:
    """The run's world: a thinker's own (as far as it got), else the input and the product."""
    if isinstance(tool, DecisionThinker) and len(tool.registry):
        return tool.registry
    world = ArtifactRegistry()
    world.adopt(input)
    if product is not None:
        world.adopt(product)
    return world


def _failure_text(failure: Exception, entry: CatalogEntry) -> str:
    """The run's failure for the record: its type and message with the entry's key redacted in
    any form (clients already redact what servers said; this covers every other error)."""
    return Redaction.of(key=entry.api_key).apply(f"{type(failure).__name__}: {failure}")


async def record_run(
    tool: DecisionTool[Any, Artifact],  # any tool: a thinker gives turns, others only a product
    input: Artifact,
    *,
    catalog: Catalog,
    command: str,
    entry_id: str | None = None,
    on_progress: Callable[[JobEvent], None] | None = None,
    keep_bodies: bool = False,
    clients: Mapping[str, DecisionClient] | None = None,
    upstream_retries: int = 3,
    admission: Admission | None = None,
) -> RecordedRun:
    """Run ``tool`` on ``input`` through a dispatcher over ``catalog`` and record the run.

    ``entry_id`` pins that catalog entry to the decision seat of a copy of ``catalog`` (the
    caller's catalog is not changed; an unknown or non-decision entry raises
    :class:`~harness.catalog.CatalogError`). ``on_progress`` gets each progress event of the
    run's top job as it happens. ``admission`` shares gates and buckets with other runs (a batch
    runs many at once under one admission). ``clients`` overrides the client of an entry id (tests,
    benchmarks); any other entry gets its provider's client. A run that fails raises
    :class:`RunFailedError` carrying the partial record.
    """
    if entry_id is not None:
        catalog = pinned_copy(catalog, entry_id)
    entry = catalog.pinned(DECISION)
    job = ThinkerRun(Workflow(), tool, input, upstream_retries=upstream_retries)
    started = time.perf_counter()
    dispatcher = RecordingDispatcher(catalog, clients=dict(clients or {}), admission=admission)
    async with dispatcher:
        outcome = await dispatcher.run_top(job, on_progress)  # a failure: recorded, then raised
    product, failure = outcome
    wall = time.perf_counter() - started
    world = _world(tool, input, product)
    formatters = tool.formatters if isinstance(tool, DecisionThinker) else TextFormatterRegistry()
    turns = tool.turns() if isinstance(tool, DecisionThinker) else ()
    selection: Mapping[str, float] = next(
        (t.selection for t in reversed(turns) if t.tool == FINISH), {}
    )
    answer = []
    if product is not None:
        items = product.iterands if isinstance(product, ListArtifact) else (product,)
        for item in items:
            ref = world.ref(item) if item in world else world.adopt(item)
            answer.append(RecordedAnswer.of(ref, item, selection))
    calls = dispatcher.recorded_calls(keep_bodies=keep_bodies)
    record = RunRecord(
        command=command,
        thinker=job.tool_name or type(tool).__qualname__,
        objective=tool.objective if isinstance(tool, DecisionThinker) else None,
        entry=RunRecord.entry_of(entry),
        input_alias=type(input).alias,
        input_value=artifact_converter.unstructure(input),
        artifacts=RunRecord.artifacts_of(world, formatters),
        turns=turns,
        answer=tuple(answer),
        calls=calls,
        wall_seconds=wall,
        model_seconds=sum(call.latency for call in calls),
        failure=None if failure is None else _failure_text(failure, entry),
        threshold=tool.selection_threshold if isinstance(tool, DecisionThinker) else None,
        settings=thinker_settings(tool),
    )
    if failure is not None:
        raise RunFailedError(failure, record, None) from failure
    assert product is not None
    return RecordedRun(product, record)
