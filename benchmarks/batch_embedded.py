"""A batch of small runs on the embedded model against the same runs called in a plain loop.

``--runs`` inputs (default 2,000), each a short ticket, run by ``tests.batch.thinkers:EchoTickets``
(two decisions a run: echo the ticket, then finish) on the shipped catalog's embedded model
(sparrow-decider, in-process), two ways in the same run, alternating, best of ``--passes``:

* **batch**: :func:`harness.batch.run_batch_async` over a JSONL file of the inputs, writing its
  results file (each input its own recorded run: record, result line, progress);
* **loop**: ``await harness.run(EchoTickets, ticket, model="embedded")`` for each input in a plain
  ``for`` loop (the run API: a dispatcher per run, the run's result and usage).

Both run the same thinker on the same inputs with the same model, so the model's time is the same
on both sides; the ratio (batch rate / loop rate) is what the batch machinery costs. Target: at
least 0.8. Printed with each side's CPU a run; ``--json FILE`` writes the results
(``benchmarks/_results.py``), ``--profile`` adds a breakdown of the batch's CPU by part.

Run from the repository's root: ``python benchmarks/batch_embedded.py [--runs 2000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _breakdown import breakdown, print_breakdown  # noqa: E402
from _results import conditions, target, write  # noqa: E402

from harness.batch import BatchSpec, run_batch_async  # noqa: E402
from harness.catalog import default_catalog  # noqa: E402
from harness.runs import run  # noqa: E402
from tests.batch.thinkers import EchoTickets, Ticket  # noqa: E402

TARGET = 0.8
THINKER = "tests.batch.thinkers:EchoTickets"


def texts_for(runs: int, round_: int) -> list[str]:
    """The tickets of one round (distinct per round, so nothing is cached across rounds)."""
    return [f"round {round_} ticket {n}: the invoice is wrong" for n in range(runs)]


async def run_batch_side(folder: Path, texts: list[str], name: str) -> tuple[float, float]:
    """Seconds and CPU seconds for the batch over ``texts``; every input must complete."""
    inputs = folder / f"{name}.jsonl"
    out = folder / f"{name}-results.jsonl"
    inputs.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    cpu = time.process_time()
    started = time.perf_counter()
    summary = await run_batch_async(
        BatchSpec(THINKER), inputs, out, catalog=default_catalog(), progress=io.StringIO()
    )
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    if summary.completed != len(texts):
        raise SystemExit(f"the batch completed {summary.completed} of {len(texts)}: void")
    return elapsed, cpu


async def run_loop_side(texts: list[str]) -> tuple[float, float]:
    """Seconds and CPU seconds for the same runs, one after another through the run API."""
    tickets = [Ticket(t) for t in texts]
    cpu = time.process_time()
    started = time.perf_counter()
    for ticket in tickets:
        result = await run(EchoTickets, ticket, model="embedded")
        if len(result.calls) != 2:
            raise SystemExit("a loop run did not make its two decisions: void")
    elapsed = time.perf_counter() - started
    return elapsed, time.process_time() - cpu


Timing = tuple[float, float]


async def measure(
    options: argparse.Namespace, folder: Path
) -> tuple[Timing, Timing, dict[str, float] | None]:
    """The best batch and loop timings (seconds, CPU seconds), and the batch's breakdown."""
    warm = texts_for(min(50, options.runs), -1)
    await run_batch_side(folder, warm, "warm")
    await run_loop_side(warm)
    batch: list[tuple[float, float]] = []
    loop: list[tuple[float, float]] = []
    for pass_ in range(options.passes):
        texts = texts_for(options.runs, pass_)
        if pass_ % 2 == 0:
            batch.append(await run_batch_side(folder, texts, f"batch-{pass_}"))
            loop.append(await run_loop_side(texts))
        else:
            loop.append(await run_loop_side(texts))
            batch.append(await run_batch_side(folder, texts, f"batch-{pass_}"))
    parts = None
    if options.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        await run_batch_side(folder, texts_for(options.runs, 99), "profiled")
        profiler.disable()
        parts = breakdown(profiler, options.runs)
    return min(batch), min(loop), parts


def main() -> None:
    """Parse the options, measure, print, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (- : stdout)")
    parser.add_argument("--profile", action="store_true", help="break the batch's CPU down")
    options = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        (batch_s, batch_cpu), (loop_s, loop_cpu), parts = asyncio.run(measure(options, Path(tmp)))
    runs = options.runs
    batch_rate, loop_rate = runs / batch_s, runs / loop_s
    ratio = batch_rate / loop_rate
    print(
        f"load average {load:.2f} on {os.cpu_count()} CPUs; {runs} runs, best of {options.passes}"
    )
    for name, rate, cpu in (
        ("plain loop (harness.run)", loop_rate, loop_cpu),
        ("batch", batch_rate, batch_cpu),
    ):
        print(f"{name:<24}: {rate:8.0f} runs/s  {cpu / runs * 1e3:6.3f} ms CPU a run")
    verdict = "met" if ratio >= TARGET else "missed"
    print(f"ratio batch/loop        : {ratio:8.2f}  (target >= {TARGET} {verdict})")
    if parts is not None:
        print_breakdown("batch, per run", parts, batch_cpu / runs * 1e6)
    write(
        options.json,
        "batch_embedded",
        conditions({"runs": runs, "passes": options.passes}, load),
        {
            "loop_runs_per_s": round(loop_rate, 2),
            "batch_runs_per_s": round(batch_rate, 2),
            "loop_cpu_ms_per_run": round(loop_cpu / runs * 1e3, 4),
            "batch_cpu_ms_per_run": round(batch_cpu / runs * 1e3, 4),
        },
        [target("batch / plain loop", ratio, TARGET, ">=", "the same runs in a plain loop")],
        parts,
    )


if __name__ == "__main__":
    main()
