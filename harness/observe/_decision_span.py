"""What a finished decision call writes on its span and the metrics.

One concern: the GenAI attributes of a decision (system, models, response id, a logprob
provider's reading) and its points (duration per call, tokens, cost). The span tree is
``_observer.py``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from opentelemetry.trace import Span

from harness.catalog import CatalogEntry
from harness.errors import StatusError
from harness.jobs import JobEvent
from harness.observe import _names as n
from harness.thinker import DecisionCall

if TYPE_CHECKING:
    from harness.jobs import ModelCall
    from harness.observe._metrics import Instruments

__all__ = ["end_decision", "gen_ai_system"]

_SYSTEMS: Mapping[str, str] = {"systemone": "typesafe", "openai": "openai", "embedded": "harness"}
"""``gen_ai.system`` by catalog provider (System One is TypeSafe's API)."""


def gen_ai_system(entry: CatalogEntry) -> str:
    """The ``gen_ai.system`` value for an entry's provider."""
    return _SYSTEMS.get(entry.provider, entry.provider)


def end_decision(
    span: Span, entry: CatalogEntry | None, event: JobEvent, metrics: Instruments
) -> None:
    """Write a decision call's end on its ``span`` and the metrics: its retries, status, the
    last reply's model, id and reading, and the tokens and cost of every call it made."""
    job = event.live_job
    calls: tuple[ModelCall, ...] = job.record.calls if isinstance(job, DecisionCall) else ()
    labels: dict[str, str] = {}
    if entry is not None:
        labels = {
            n.GEN_AI_SYSTEM: gen_ai_system(entry),
            n.GEN_AI_REQUEST_MODEL: entry.wire_model_id,
            n.GEN_AI_OPERATION: n.OPERATION_DECISION,
            n.ENTRY: entry.id,
        }
    span.set_attribute(n.RETRIES, max(0, len(calls) - 1))
    error = event.error
    if isinstance(error, StatusError) and error.status is not None:
        span.set_attribute(n.HTTP_STATUS, error.status)
    for call in calls:
        point = dict(labels)
        if not call.success:
            point[n.ERROR_TYPE] = "failed"
        metrics.duration.record(call.latency, point)
    last = calls[-1] if calls else None
    if last is None:
        return
    if last.model is not None:
        span.set_attribute(n.GEN_AI_RESPONSE_MODEL, last.model)
    if last.request_id is not None:
        span.set_attribute(n.GEN_AI_RESPONSE_ID, last.request_id)
    span.set_attribute(n.GEN_AI_OUTPUT_TOKENS, 0)
    reading = last.reading
    if reading is not None:
        _set_reading(span, reading)
    billed = sum(call.input_tokens or 0 for call in calls)
    counted = sum(call.counted_input_tokens or 0 for call in calls)
    cost = sum(call.cost or 0.0 for call in calls)
    if any(call.input_tokens is not None for call in calls):
        span.set_attribute(n.GEN_AI_INPUT_TOKENS, billed)
        metrics.token_usage.record(billed, {**labels, n.GEN_AI_TOKEN_TYPE: "input"})
        metrics.input_tokens.add(billed, {**labels, n.TOKEN_KIND: "billed"})
    if any(call.counted_input_tokens is not None for call in calls):
        span.set_attribute(n.COUNTED_TOKENS, counted)
        metrics.input_tokens.add(counted, {**labels, n.TOKEN_KIND: "counted"})
    if any(call.cost is not None for call in calls):
        span.set_attribute(n.COST, cost)
        metrics.cost.add(cost, labels)


def _set_reading(span: Span, reading: Mapping[str, object]) -> None:
    """The reading of a logprob provider on the decision span (method, calls, least mass)."""
    method = reading.get("method")
    if isinstance(method, str):
        span.set_attribute(n.READING_METHOD, method)
    calls = reading.get("upstream_calls")
    if isinstance(calls, int):
        span.set_attribute(n.READING_UPSTREAM_CALLS, calls)
    mass = reading.get("mass")
    if isinstance(mass, Mapping):
        shares = [float(v) for v in mass.values() if isinstance(v, int | float)]
        if shares:
            span.set_attribute(n.READING_MASS, min(shares))
