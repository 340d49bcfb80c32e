"""Running a thinker (or any tool) through the dispatcher and recording it as a :class:`RunRecord`.

:class:`CallLog` sits between the dispatcher and the entry's client and keeps every decision call
as the job's record sees it (answers aside); :func:`record_run` runs the tool as a
:class:`~harness.deciding.ThinkerRun`, hands each progress event of that job to a callback as it
happens, and builds the record from the thinker's turns, world and answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from harness.artifacts import (
    Artifact,
    ArtifactRegistry,
    ListArtifact,
    TextFormatterRegistry,
    artifact_converter,
    digest_line,
)
from harness.deciding import FINISH, DecisionThinker, ThinkerRun
from harness.decision import DecisionRequest, DecisionResponse
from harness.jobs import Dispatcher, EventKind, JobEvent
from harness.llm import DecisionClient, client_for, wire_body
from harness.models import DECISION, Catalog, CatalogEntry, tokenizer
from harness.record._format import RecordedAnswer, RecordedCall, RunRecord
from harness.tools import DecisionTool, Workflow

__all__ = ["CallLog", "RecordedRun", "provider_client", "record_run"]


provider_client = client_for
"""A fresh client for an entry's provider (see :func:`harness.llm.client_for`)."""


class CallLog:
    """A :class:`~harness.llm.DecisionClient` that keeps each call it passes on.

    ``latency`` is the one the job's record stores (the response's, else the time to the
    failure); ``counted_input_tokens`` is the wire body counted under the entry's tokenizer;
    ``body`` is kept only with ``keep_bodies``.
    """

    def __init__(self, inner: DecisionClient, *, keep_bodies: bool = False) -> None:
        self.inner = inner
        self.keep_bodies = keep_bodies
        self.calls: list[RecordedCall] = []

    async def decide(
        self,
        request: DecisionRequest,
        entry: CatalogEntry,
        *,
        timeout: float | None = None,
    ) -> DecisionResponse:
        """Ask the inner client and keep the call, answered or failed."""
        body = wire_body(request, entry)
        counted = tokenizer(entry.tokenizer).count(body)
        kept = json.loads(body) if self.keep_bodies else None
        started = time.perf_counter()
        try:
            response = await self.inner.decide(request, entry, timeout=timeout)
        except BaseException as error:
            latency = time.perf_counter() - started
            reason = str(error) or type(error).__name__
            self.calls.append(RecordedCall(False, latency, None, None, counted, reason, kept))
            raise
        self.calls.append(
            RecordedCall(
                response.success,
                response.latency if response.latency is not None else 0.0,
                response.model,
                response.input_tokens,
                counted,
                response.failure,
                kept,
            )
        )
        return response

    async def aclose(self) -> None:
        """Close the inner client."""
        await self.inner.aclose()


@attrs.frozen
class RecordedRun:
    """What :func:`record_run` returns: the tool's product and the run's record."""

    product: Artifact
    record: RunRecord


def _json_value(artifact: Artifact) -> object:
    return artifact_converter.unstructure(artifact)


def _world(
    tool: DecisionTool[Any, Artifact], input: Artifact, product: Artifact
) -> tuple[ArtifactRegistry, TextFormatterRegistry]:
    if isinstance(tool, DecisionThinker):
        return tool.registry, tool.formatters
    world = ArtifactRegistry()
    world.adopt(input)
    world.adopt(product)
    return world, TextFormatterRegistry()


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
) -> RecordedRun:
    """Run ``tool`` on ``input`` through a dispatcher over ``catalog`` and record the run.

    ``entry_id`` pins that catalog entry to the decision seat first (an unknown or non-decision
    entry raises :class:`~harness.models.CatalogError`). ``on_progress`` gets each progress event
    of the run's top job as it happens. ``clients`` overrides the client of an entry id (tests,
    benchmarks); any other entry gets :func:`provider_client`.
    """
    if entry_id is not None:
        catalog.pin(DECISION, entry_id)
    entry = catalog.pinned(DECISION)
    given = dict(clients or {})
    inner = given.get(entry.id) or provider_client(entry)
    log = CallLog(inner, keep_bodies=keep_bodies)
    job = ThinkerRun(Workflow(), tool, input, upstream_retries=upstream_retries)
    started = time.perf_counter()
    async with Dispatcher(catalog, clients={**given, entry.id: log}) as dispatcher:
        if on_progress is not None:
            top = job.identity.job_id
            dispatcher.subscribe(
                on_progress,
                lambda event: event.kind is EventKind.PROGRESS and event.job.job_id == top,
            )
        try:
            product = await dispatcher.run(job)
        finally:
            if entry.id not in given:
                await log.aclose()
    wall = time.perf_counter() - started
    world, formatters = _world(tool, input, product)
    turns = tool.turns() if isinstance(tool, DecisionThinker) else ()
    selection: Mapping[str, float] = next(
        (t.selection for t in reversed(turns) if t.tool == FINISH), {}
    )
    items = product.iterands if isinstance(product, ListArtifact) else (product,)
    answer = []
    for item in items:
        ref = world.ref(item) if item in world else world.adopt(item)
        answer.append(RecordedAnswer(ref, type(item).alias, selection.get(ref), _json_value(item)))
    record = RunRecord(
        command=command,
        thinker=job.tool_name or type(tool).__qualname__,
        objective=tool.objective if isinstance(tool, DecisionThinker) else None,
        entry={"id": entry.id, "provider": entry.provider, "wire_model_id": entry.wire_model_id},
        input_alias=type(input).alias,
        input_value=_json_value(input),
        artifacts={ref: digest_line(ref, a, formatters) for ref, a in world.world()},
        turns=turns,
        answer=tuple(answer),
        calls=tuple(log.calls),
        wall_seconds=wall,
        model_seconds=sum(call.latency for call in log.calls),
    )
    return RecordedRun(product, record)
