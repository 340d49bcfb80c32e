"""A batch of small runs on the embedded model against the same runs called in a plain loop.

``--runs`` inputs a loop (default 200), each a short ticket, run by
``tests.batch.thinkers:EchoTickets`` (two decisions a run: echo the ticket, then finish) on the
shipped catalog's embedded model (sparrow-decider, in-process), two ways, each a pyperf
benchmark of the same run (``benchmarks/_perf.py``: calibrated loops, worker processes,
warm-ups; a way's mean time a run):

* **batch**: :func:`harness.batch.run_batch_async` over a JSONL file of the inputs, writing its
  results file (each input its own recorded run: record, result line, progress);
* **loop**: ``await harness.run(EchoTickets, ticket, model="embedded")`` for each input in a plain
  ``for`` loop (the run API: a dispatcher per run, the run's result and usage).

Both run the same thinker on the same inputs with the same model, so the model's time is the same
on both sides; the ratio (batch rate / loop rate) is what the batch machinery costs. Target: at
least 0.8. The **batch (CPU)** and **loop (CPU)** ways time the same by the process's CPU clock.
``--json FILE`` writes the results (``benchmarks/_results.py``), ``-o FILE`` pyperf's,
``--breakdown`` adds a breakdown of the batch's CPU by part.

Run from the repository's root: ``python benchmarks/batch_embedded.py [--runs 200] [--fast]``.
"""

from __future__ import annotations

import argparse
import atexit
import cProfile
import io
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _breakdown import breakdown, print_breakdown  # noqa: E402
from _perf import Means, finish, runner, worker_loop  # noqa: E402
from _results import conditions, one_run, target, write  # noqa: E402

from harness.batch import BatchSpec, run_batch_async  # noqa: E402
from harness.catalog import default_catalog  # noqa: E402
from harness.decision._internal import json_bytes  # noqa: E402
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
    inputs.write_bytes(b"".join(json_bytes({"text": t}) + b"\n" for t in texts))
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


_folder: list[Path] = []
_rounds = itertools.count()


def _tmp() -> Path:
    """This worker's folder for the batch's files (removed when it exits)."""
    if not _folder:
        made = tempfile.TemporaryDirectory()
        atexit.register(made.cleanup)
        _folder.append(Path(made.name))
    return _folder[0]


def way(name: str, runs: int, cpu: bool) -> Callable[[int], float]:
    """A pyperf time function: ``loops`` rounds of ``runs`` runs the way ``name`` (``batch`` or
    ``loop``), by the wall clock or, with ``cpu``, the process's CPU clock."""

    def time_func(loops: int) -> float:
        loop = worker_loop()
        total = 0.0
        for _ in range(loops):
            round_ = next(_rounds)
            texts = texts_for(runs, round_)
            if name == "batch":  # files of its own: a results file found would be resumed
                spent = loop.run_until_complete(run_batch_side(_tmp(), texts, f"batch-{round_}"))
            else:
                spent = loop.run_until_complete(run_loop_side(texts))
            total += spent[1 if cpu else 0]
        return total

    return time_func


WAYS = ("loop", "batch", "loop (CPU)", "batch (CPU)")


def own_options(parser: argparse.ArgumentParser) -> None:
    """The script's own options (pyperf's are its own: --fast, --rigorous, -p, -n, -l, -o)."""
    parser.add_argument("--runs", type=int, default=200, help="runs a loop")
    parser.add_argument("--breakdown", action="store_true", help="break the batch's CPU down")


def main() -> None:
    """Run every way as a pyperf benchmark; in the main process, print and write the ratio."""
    load = os.getloadavg()[0]
    perf, options = runner(own_options, ("runs",), processes=3, values=3)
    runs = options.runs
    means = Means()
    for name in WAYS:
        found = perf.bench_time_func(
            name, way(name.split(" ")[0], runs, "CPU" in name), inner_loops=runs
        )
        means.add(name, found)
    finish()  # the worker's loop and what it holds, closed
    if options.worker or not means.complete(WAYS):
        return  # a worker: the main process sums up
    parts = None
    if options.breakdown:
        profiler = cProfile.Profile()
        profiler.enable()
        worker_loop().run_until_complete(run_batch_side(_tmp(), texts_for(runs, -1), "profiled"))
        profiler.disable()
        parts = breakdown(profiler, runs)
    batch_rate, loop_rate = 1 / means["batch"], 1 / means["loop"]
    batch_cpu, loop_cpu = means["batch (CPU)"], means["loop (CPU)"]
    ratio = batch_rate / loop_rate
    print(f"load average: {load:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    print(f"{runs} runs a loop; medians of pyperf's values")
    for name, rate, cpu in (
        ("plain loop (harness.run)", loop_rate, loop_cpu),
        ("batch", batch_rate, batch_cpu),
    ):
        print(f"{name:<24}: {rate:8.0f} runs/s  {cpu * 1e3:6.3f} ms CPU a run")
    print(f"ratio batch/loop        : {ratio:8.2f}  ({one_run(ratio, TARGET, '>=')})")
    if parts is not None:
        print_breakdown("batch, per run", parts, batch_cpu * 1e6)
    write(
        options.json,
        "batch_embedded",
        conditions(
            {
                "runs": runs,
                "processes": options.processes,
                "values": options.values,
                "loops": options.loops,
            },
            load,
        ),
        {
            "loop_runs_per_s": round(loop_rate, 2),
            "batch_runs_per_s": round(batch_rate, 2),
            "loop_cpu_ms_per_run": round(loop_cpu * 1e3, 4),
            "batch_cpu_ms_per_run": round(batch_cpu * 1e3, 4),
            "values": dict(means.values),
            "stdev_us": {name: round(spread * 1e6, 3) for name, spread in means.spread.items()},
        },
        [target("batch / plain loop", ratio, TARGET, ">=", "the same runs in a plain loop")],
        parts,
    )


if __name__ == "__main__":
    main()
