"""A run's spans printed as a tree when it ends (``harness run --otel-console``): the span tree a
collector would show, without a collector. Needs the OpenTelemetry SDK (in the ``otel`` extra)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from harness.observe import _names as n
from harness.observe._enable import disable, enable

__all__ = ["ConsoleTree", "render_tree"]

_SHOWN = (
    (n.GEN_AI_REQUEST_MODEL, "model"),
    (n.GEN_AI_RESPONSE_MODEL, "served"),
    (n.QUESTIONS, "questions"),
    (n.GEN_AI_INPUT_TOKENS, "billed_tokens"),
    (n.COUNTED_TOKENS, "counted_tokens"),
    (n.COST, "cost"),
    (n.RETRIES, "retries"),
    (n.MAX_TURNS, "max_turns"),
    (n.TURNS, "turns"),
    (n.MOVE, "move"),
    (n.CHOSEN_REF, "ref"),
    (n.INPUT_REF, "input"),
    (n.PRODUCT_REF, "product"),
    (n.FAILED, "failed"),
    (n.OUTCOME, "outcome"),
    (n.ERROR_TYPE, "error"),
)
"""The attributes a tree line shows, in this order (the rest stay in the exporter's JSON)."""


def _line(span: ReadableSpan) -> str:
    took = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
    attributes = span.attributes or {}
    shown = []
    for key, label in _SHOWN:
        if key in attributes:
            value = attributes[key]
            text = f"{value:.6g}" if isinstance(value, float) else str(value)
            shown.append(f"{label}={text}")
    retries = sum(1 for event in span.events if event.name == "retry")
    if retries and n.RETRIES not in attributes:
        shown.append(f"retries={retries}")
    return f"{span.name}  {took:.1f} ms" + (f"  [{' '.join(shown)}]" if shown else "")


def render_tree(spans: Sequence[ReadableSpan]) -> list[str]:
    """``spans`` as indented lines, children under their parents in start order."""
    ids = {span.context.span_id for span in spans if span.context is not None}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in ids else None, []).append(span)
    lines: list[str] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: s.start_time or 0):
            lines.append("  " * depth + _line(span))
            if span.context is not None:
                walk(span.context.span_id, depth + 1)

    walk(None, 0)
    return lines


class _Collect(SpanExporter):
    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


class ConsoleTree:
    """Turns the instrumentation on with an in-process SDK; :meth:`close` prints the tree."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out if out is not None else sys.stderr
        self._collected = _Collect()
        self._tracer_provider = TracerProvider()
        self._tracer_provider.add_span_processor(SimpleSpanProcessor(self._collected))
        self._meter_provider = MeterProvider()
        enable(tracer_provider=self._tracer_provider, meter_provider=self._meter_provider)

    def close(self) -> None:
        """Stop recording and print the spans recorded so far."""
        disable()
        self._tracer_provider.shutdown()
        self._meter_provider.shutdown()
        lines = render_tree(self._collected.spans)
        print("spans (OpenTelemetry):", file=self._out)
        for line in lines or ["(none)"]:
            print("  " + line, file=self._out)
        self._out.flush()
