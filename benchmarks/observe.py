"""What OpenTelemetry tracing costs a thinker turn: the same runs with tracing off and on.

The contract thinker (split a note, judge its parts, finish: four decisions and three tool runs a
run) runs against the fake model answering at once, in rounds that alternate tracing off and on
(the SDK with a simple span processor and an in-memory exporter, plus an in-memory metric reader:
everything is built and exported, nothing leaves the process). Printed: the median time per turn
of each, and their ratio measured in the same run (machines of this kind differ several times in
speed, so only the ratio is comparable across machines). A script, not a test::

    python benchmarks/observe.py [--rounds 15] [--runs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness.observe
from harness.jobs import Dispatcher, Pacing
from harness.providers import FakeDecisionModel
from harness.thinker import ThinkerRun
from harness.tools import Workflow
from tests.thinker.notes import Note, Triage, fake_catalog, triage_policy

TURNS_PER_RUN = 4


async def _runs(count: int) -> float:
    """Seconds for ``count`` runs, one after the other, on one dispatcher."""
    model = FakeDecisionModel(triage_policy)
    async with Dispatcher(fake_catalog(), clients={"fake": model}, pacing=Pacing.immediate()) as d:
        began = time.perf_counter()
        for _ in range(count):
            await d.run(ThinkerRun(Workflow(), Triage(Workflow()), Note("alpha is due; beta")))
        return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--runs", type=int, default=40, help="runs per round")
    args = parser.parse_args()
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    asyncio.run(_runs(5))  # warm up imports and caches
    off: list[float] = []
    on: list[float] = []
    for _ in range(args.rounds):
        harness.observe.disable()
        off.append(asyncio.run(_runs(args.runs)))
        harness.observe.enable(tracer_provider=tracer_provider, meter_provider=meter_provider)
        on.append(asyncio.run(_runs(args.runs)))
        exporter.clear()
    harness.observe.disable()
    turns = args.runs * TURNS_PER_RUN
    off_ms = statistics.median(off) / turns * 1000
    on_ms = statistics.median(on) / turns * 1000
    print(f"turns per round: {turns} ({args.runs} runs x {TURNS_PER_RUN}), rounds: {args.rounds}")
    print(f"tracing off: {off_ms:.3f} ms a turn (median round)")
    print(f"tracing on:  {on_ms:.3f} ms a turn (SDK, in-memory export)")
    print(f"on / off: {on_ms / off_ms:.2f}  (added per turn: {on_ms - off_ms:.3f} ms)")


if __name__ == "__main__":
    main()
