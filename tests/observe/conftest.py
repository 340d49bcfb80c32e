"""An in-memory OpenTelemetry SDK per test: spans and metrics read back after the run."""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import harness.observe


@attrs.define
class Telemetry:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    harness.observe.enable(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        yield Telemetry(exporter, reader, tracer_provider, meter_provider)
    finally:
        harness.observe.disable()
        tracer_provider.shutdown()
        meter_provider.shutdown()
