"""Spans and metrics built from a dispatcher's events and its jobs' records.

The dispatcher publishes an event for every step of every job (scheduled, admission wait,
started, progress, retry, and how it ended), each carrying the live job. This module turns them
into one span per job, parented along the job tree, plus one span per thinker turn:

    run <thinker>                      (ThinkerRun, or a nested thinker's ToolRun)
      turn 1
        decision <model>               (DecisionCall; retries are span events)
          admission wait               (only when the call waited)
        tool <name>                    (ToolRun; a nested thinker's run span is its tool span)
      turn 2 ...

A turn starts when its thinker's decision call is scheduled and ends when the thinker publishes
the turn (a progress event carrying ``OBS_TURNS``) or ends. A tool span is ended with the time
its job ended, but only once its turn is published, so it can carry the input and product refs.
Spans get explicit start and end times, so the tree is exact although it is built from events.
What a finished decision call writes on its span and the metrics is ``_decision_span.py``.
"""

from __future__ import annotations

import json  # the stdlib: a state shown with json's default separators, which orjson cannot write
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from harness.catalog import CatalogEntry
from harness.decision._internal import load_json
from harness.errors import HarnessError, RateLimitedError, RetryableError, StatusError
from harness.jobs import EventKind, JobEvent
from harness.observe import _names as n
from harness.observe._content import capturing
from harness.observe._decision_span import end_decision, gen_ai_system
from harness.thinker import OBS_TURNS, DecisionCall, DecisionThinker, DecisionTurn, ToolRun

if TYPE_CHECKING:
    from harness.jobs import Dispatcher
    from harness.observe._metrics import Instruments

__all__ = ["DispatcherObserver"]

_CONTENT_LIMIT = 4096
"""Characters of state or failure text kept on a span when content is captured."""

_OUTCOMES: Mapping[EventKind, str] = {
    EventKind.COMPLETED: "completed",
    EventKind.FAILED: "failed",
    EventKind.TIMED_OUT: "timed_out",
    EventKind.CANCELLED: "cancelled",
}


def _cut(text: str) -> str:
    return text if len(text) <= _CONTENT_LIMIT else text[: _CONTENT_LIMIT - 3] + "..."


@attrs.define
class _PendingTool:
    """A tool span whose job ended before its turn was published."""

    job_id: str
    span: Span
    ended: int
    failed: bool


@attrs.define
class _Run:
    """A thinker run being traced: its open turn and the tool spans waiting for that turn."""

    turns: int = 0
    turn: Span | None = None
    tools: list[_PendingTool] = attrs.Factory(list)


@attrs.define
class _Traced:
    span: Span
    kind: str  # "run", "decision", "tool" or "job"
    run_parent: str | None  # the job id of the thinker run this job is a step of
    capture: bool
    entry: CatalogEntry | None = None
    admission: Span | None = None
    waited_since: float | None = None
    in_flight: bool = False


class DispatcherObserver:
    """Subscribed to one dispatcher; turns its events into spans and metric points."""

    def __init__(
        self, dispatcher: Dispatcher, tracer: trace.Tracer, instruments: Instruments
    ) -> None:
        self._dispatcher = dispatcher
        self._tracer = tracer
        self._metrics = instruments
        self._jobs: dict[str, _Traced] = {}
        self._runs: dict[str, _Run] = {}

    def on_event(self, event: JobEvent) -> None:
        """The dispatcher's subscriber callback."""
        kind = event.kind
        if kind is EventKind.SCHEDULED:
            self._scheduled(event)
        elif kind is EventKind.ADMISSION_WAIT:
            self._admission_wait(event)
        elif kind is EventKind.STARTED:
            self._started(event)
        elif kind is EventKind.PROGRESS:
            self._progress(event)
        elif kind is EventKind.RETRY:
            self._retry(event)
        elif kind.terminal:
            self._ended(event)

    # -- a job begins --------------------------------------------------------------------

    def _scheduled(self, event: JobEvent) -> None:
        job = event.live_job
        snapshot = event.job
        parent = self._jobs.get(snapshot.parent_id) if snapshot.parent_id else None
        run_parent = snapshot.parent_id if parent is not None and parent.kind == "run" else None
        capture = capturing()
        now = time.time_ns()
        parent_span = parent.span if parent is not None else None
        if run_parent is not None and isinstance(job, DecisionCall):
            parent_span = self._open_turn(run_parent, now)
        elif run_parent is not None:
            run = self._runs[run_parent]
            parent_span = run.turn if run.turn is not None else parent_span
        context = trace.set_span_in_context(parent_span) if parent_span is not None else None
        attributes: dict[str, str | int | float | bool] = {
            n.JOB_ID: snapshot.job_id,
            n.WORKFLOW_ID: snapshot.workflow_id,
        }
        entry: CatalogEntry | None = None
        span_kind = SpanKind.INTERNAL
        if isinstance(job, DecisionCall):
            kind = "decision"
            span_kind = SpanKind.CLIENT
            entry = self._entry_of(job)
            attributes[n.GEN_AI_OPERATION] = n.OPERATION_DECISION
            request = job.request
            if request is not None:
                attributes[n.QUESTIONS] = len(request.questions)
            if entry is not None:
                attributes[n.GEN_AI_SYSTEM] = gen_ai_system(entry)
                attributes[n.GEN_AI_REQUEST_MODEL] = entry.wire_model_id
                attributes[n.ENTRY] = entry.id
                attributes[n.PROVIDER] = entry.provider
            if capture and request is not None:
                attributes[n.STATE] = _cut(json.dumps(request.state, ensure_ascii=False))
            model = entry.wire_model_id if entry is not None else "model"
            name = f"{n.OPERATION_DECISION} {model}"
        elif isinstance(job, ToolRun) and isinstance(job.tool, DecisionThinker):
            kind = "run"
            thinker = job.tool
            attributes[n.THINKER] = snapshot.tool_name or type(thinker).__qualname__
            attributes[n.OBJECTIVE] = thinker.objective
            attributes[n.MAX_TURNS] = thinker.max_turns
            name = f"run {attributes[n.THINKER]}"
            self._runs[snapshot.job_id] = _Run()
        elif isinstance(job, ToolRun):
            kind = "tool"
            attributes[n.TOOL] = snapshot.tool_name or type(job.tool).__qualname__
            name = f"tool {attributes[n.TOOL]}"
        else:
            kind = "job"
            name = f"job {snapshot.job_class}"
        if kind == "run" and run_parent is not None:
            attributes[n.TOOL] = snapshot.tool_name or ""
        span = self._tracer.start_span(
            name, context=context, kind=span_kind, attributes=attributes, start_time=now
        )
        self._jobs[snapshot.job_id] = _Traced(span, kind, run_parent, capture, entry)

    def _entry_of(self, job: DecisionCall) -> CatalogEntry | None:
        try:
            return self._dispatcher.catalog.resolve_decision(job.pinned, asked_by=job.describe())
        except HarnessError:  # the dispatcher reports it on the job; the span says no entry
            return None

    def _open_turn(self, run_id: str, now: int) -> Span | None:
        run = self._runs.get(run_id)
        traced = self._jobs.get(run_id)
        if run is None or traced is None:
            return None
        if run.turn is not None:  # a turn the thinker never published (a failed tool, ...)
            self._close_turn(run, None, now)
        run.turns += 1
        run.turn = self._tracer.start_span(
            f"turn {run.turns}",
            context=trace.set_span_in_context(traced.span),
            attributes={n.TURN: run.turns},
            start_time=now,
        )
        return run.turn

    def _admission_wait(self, event: JobEvent) -> None:
        traced = self._jobs.get(event.job.job_id)
        if traced is None or traced.admission is not None:
            return
        traced.waited_since = time.monotonic()
        traced.admission = self._tracer.start_span(
            "admission wait",
            context=trace.set_span_in_context(traced.span),
            attributes={n.ADMISSION_WAITED_FOR: event.message or ""},
        )

    def _started(self, event: JobEvent) -> None:
        traced = self._jobs.get(event.job.job_id)
        if traced is None:
            return
        self._end_admission(traced)
        if traced.kind == "decision" and traced.entry is not None and not traced.in_flight:
            traced.in_flight = True
            self._metrics.in_flight.add(1, {n.ENTRY: traced.entry.id})

    def _end_admission(self, traced: _Traced) -> None:
        if traced.admission is not None and traced.waited_since is not None:
            waited = time.monotonic() - traced.waited_since
            entry = {n.ENTRY: traced.entry.id} if traced.entry is not None else {}
            self._metrics.admission_wait.record(waited, entry)
            traced.admission.end()
            traced.admission = None
            traced.waited_since = None

    # -- a job goes on -------------------------------------------------------------------

    def _retry(self, event: JobEvent) -> None:
        traced = self._jobs.get(event.job.job_id)
        if traced is None:
            return
        error = event.error
        status = error.status if isinstance(error, StatusError) else None
        kind = type(error).__name__ if isinstance(error, RetryableError) else "retry"
        attributes: dict[str, str | int | float | bool] = {n.ATTEMPT: event.attempt}
        if event.delay is not None:
            attributes[n.DELAY] = event.delay
        if status is not None:
            attributes[n.HTTP_STATUS] = status
        attributes[n.RETRY_KIND] = kind
        if traced.capture and event.message:
            attributes[n.FAILURE] = _cut(event.message)
        traced.span.add_event("retry", attributes)
        labels: dict[str, str | int] = {n.RETRY_KIND: kind}
        if status is not None:
            labels[n.HTTP_STATUS] = status
        if traced.entry is not None:
            labels[n.ENTRY] = traced.entry.id
        self._metrics.retries.add(1, labels)
        if isinstance(error, RateLimitedError):
            self._metrics.throttles.add(1, labels)

    def _progress(self, event: JobEvent) -> None:
        run = self._runs.get(event.job.job_id)
        if run is None or run.turn is None:
            return
        turn = _last_turn(event.job.metadata)
        if turn is not None and turn.turn == run.turns:
            self._close_turn(run, turn, time.time_ns())

    def _close_turn(self, run: _Run, turn: DecisionTurn | None, now: int) -> None:
        span = run.turn
        if span is None:
            return
        end = max([now, *(pending.ended for pending in run.tools)])
        if turn is not None:
            span.set_attribute(n.MOVE, turn.tool)
            if turn.artifact is not None:
                span.set_attribute(n.CHOSEN_REF, turn.artifact)
        for pending in run.tools:
            if turn is not None and turn.artifact is not None:
                pending.span.set_attribute(n.INPUT_REF, turn.artifact)
                if turn.result is not None:
                    pending.span.set_attribute(n.PRODUCT_REF, turn.result)
                if turn.failure is not None:
                    pending.span.set_attribute(n.FAILED, True)
                    if self._capture_of(pending.job_id):
                        pending.span.set_attribute(n.FAILURE, _cut(turn.failure))
            pending.span.end(end_time=pending.ended)
            self._jobs.pop(pending.job_id, None)
        run.tools.clear()
        span.end(end_time=end)
        run.turn = None

    def _capture_of(self, job_id: str) -> bool:
        traced = self._jobs.get(job_id)
        return traced is not None and traced.capture

    # -- a job ends ----------------------------------------------------------------------

    def _ended(self, event: JobEvent) -> None:
        snapshot = event.job
        traced = self._jobs.get(snapshot.job_id)
        if traced is None:
            return
        now = time.time_ns()
        self._end_admission(traced)
        span = traced.span
        outcome = _OUTCOMES.get(event.kind, event.kind.value)
        span.set_attribute(n.OUTCOME, outcome)
        error = event.error
        if event.kind in (EventKind.FAILED, EventKind.TIMED_OUT):
            error_type = type(error).__qualname__ if error is not None else outcome
            span.set_attribute(n.ERROR_TYPE, error_type)
            shown = _cut(str(error)) if traced.capture and error is not None else error_type
            span.set_status(Status(StatusCode.ERROR, shown))
        if traced.kind == "decision":
            entry = traced.entry
            if entry is not None and traced.in_flight:
                self._metrics.in_flight.add(-1, {n.ENTRY: entry.id})
                traced.in_flight = False
            end_decision(span, entry, event, self._metrics)
        run = self._runs.pop(snapshot.job_id, None)
        if run is not None:
            turns = _turns(snapshot.metadata)
            last = turns[-1] if turns else None
            if run.turn is not None:
                self._close_turn(run, last if last and last.turn == run.turns else None, now)
            span.set_attribute(n.TURNS, run.turns)
        if traced.run_parent is not None and traced.kind in ("tool", "run"):
            parent_run = self._runs.get(traced.run_parent)
            if parent_run is not None and parent_run.turn is not None:
                failed = event.kind is not EventKind.COMPLETED
                parent_run.tools.append(_PendingTool(snapshot.job_id, span, now, failed))
                return  # ended when the parent publishes the turn
        span.end(end_time=now)
        self._jobs.pop(snapshot.job_id, None)


def _turns(metadata: Mapping[str, str]) -> tuple[DecisionTurn, ...]:
    text = metadata.get(OBS_TURNS)
    if not text:
        return ()
    try:
        data = load_json(text)
    except ValueError:
        return ()
    if not isinstance(data, list):
        return ()
    return tuple(DecisionTurn.from_json(item) for item in data if isinstance(item, dict))


def _last_turn(metadata: Mapping[str, str]) -> DecisionTurn | None:
    turns = _turns(metadata)
    return turns[-1] if turns else None
