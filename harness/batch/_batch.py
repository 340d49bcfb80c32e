"""``harness batch``: a thinker over every line of a JSONL file, resumable, local or on Ray."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TextIO

import attrs

from harness.catalog import Catalog
from harness.providers import DecisionClient

from ._inputs import BadLine, InputLine, read_inputs
from ._progress import Progress
from ._results import ResultsFile
from ._target import BatchError, import_target, input_type_of
from ._worker import BatchSpec, BatchWorker

__all__ = ["BatchSummary", "run_batch", "run_batch_async"]


@attrs.frozen
class BatchSummary:
    """What a batch did: inputs in the file, already done before, run now, by outcome."""

    inputs: int
    already_done: int
    ran: int
    completed: int
    failed: int
    invalid: int
    seconds: float
    out: Path


def _prepare(
    spec: BatchSpec, inputs: Path, out: Path, on_bad_line: Literal["skip", "fail"]
) -> tuple[ResultsFile, list[InputLine], list[BadLine], int]:
    tool_class = import_target(spec.target)
    input_type = input_type_of(tool_class, spec.target)
    if not inputs.is_file():
        raise BatchError(f"no input file {inputs}: give a JSONL file, one input object a line")
    try:
        results = ResultsFile(out)
    except ValueError as error:
        raise BatchError(str(error)) from None
    good: list[InputLine] = []
    bad: list[BadLine] = []
    for line in read_inputs(inputs, input_type):
        if isinstance(line, InputLine):
            good.append(line)
        else:
            bad.append(line)
    if bad and on_bad_line == "fail":
        results.close()
        shown = "; ".join(f"line {b.number}: {b.reason}" for b in bad[:5])
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise BatchError(
            f"{inputs}: {len(bad)} line(s) are not inputs of {spec.target}: {shown}{more}; fix "
            "them, or pass --on-bad-line skip to report them in the results and run the rest"
        )
    total = len(good) + len(bad)
    return results, good, bad, total


class _Tally:
    """A batch under way: its results file, what is left to run, the counts by status and the
    progress, as result lines come in (the same for every engine)."""

    def __init__(
        self,
        spec: BatchSpec,
        inputs: Path,
        out: Path,
        on_bad_line: Literal["skip", "fail"],
        progress: TextIO | None,
    ) -> None:
        self.began = time.monotonic()
        self.out = out
        self.results, good, self.bad, self.total = _prepare(spec, inputs, out, on_bad_line)
        self.already = len(self.results.done)
        self.counts = {"completed": 0, "failed": 0, "invalid": 0}
        self.pending = [line for line in good if line.number not in self.results.done]
        todo = len(self.pending) + sum(b.number not in self.results.done for b in self.bad)
        self.meter = Progress(todo, progress or sys.stderr)

    def write(self, result: dict[str, object]) -> None:
        """Write ``result`` unless its line has one already, and count it."""
        if self.results.write(result):
            status = str(result["status"])
            self.counts[status] = self.counts.get(status, 0) + 1
            self.meter.advance(failed=status != "completed")

    def write_bad_lines(self) -> None:
        """An ``invalid`` result for every line that is not an input."""
        for wrong in self.bad:
            self.write({"line": wrong.number, "status": "invalid", "error": wrong.reason})

    def summary(self) -> BatchSummary:
        """What the batch did."""
        return BatchSummary(
            inputs=self.total,
            already_done=self.already,
            ran=sum(self.counts.values()),
            completed=self.counts["completed"],
            failed=self.counts["failed"],
            invalid=self.counts["invalid"],
            seconds=time.monotonic() - self.began,
            out=self.out,
        )


async def run_batch_async(
    spec: BatchSpec,
    inputs: Path,
    out: Path,
    *,
    on_bad_line: Literal["skip", "fail"] = "skip",
    catalog: Catalog | None = None,
    clients: Mapping[str, DecisionClient] | None = None,
    progress: TextIO | None = None,
) -> BatchSummary:
    """Run the batch in this process, ``spec.concurrency`` inputs at a time."""
    tally = _Tally(spec, inputs, out, on_bad_line, progress)
    try:
        tally.write_bad_lines()
        worker = BatchWorker(spec, catalog=catalog, clients=clients)
        try:
            window = max(1, spec.concurrency) * 4
            running: set[asyncio.Task[dict[str, object]]] = set()
            queue = iter(tally.pending)
            while True:
                for line in queue:
                    running.add(asyncio.create_task(worker.run_line(line.number, line.text)))
                    if len(running) >= window:
                        break
                if not running:
                    break
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    tally.write(task.result())
        finally:
            await worker.aclose()
    finally:
        tally.results.close()
    return tally.summary()


def run_batch(
    spec: BatchSpec,
    inputs: Path,
    out: Path,
    *,
    on_bad_line: Literal["skip", "fail"] = "skip",
    ray: str | None = None,
    chunk: int | None = None,
    progress: TextIO | None = None,
    catalog: Catalog | None = None,
    clients: Mapping[str, DecisionClient] | None = None,
) -> BatchSummary:
    """Run the batch: in this process, or on Ray when ``ray`` names a cluster (``auto``, an
    address, or ``local`` to start one here). Inputs that already have a result in ``out`` are
    not run again."""
    if ray is None:
        return asyncio.run(
            run_batch_async(
                spec,
                inputs,
                out,
                on_bad_line=on_bad_line,
                catalog=catalog,
                clients=clients,
                progress=progress,
            )
        )
    from ._ray import run_on_ray

    tally = _Tally(spec, inputs, out, on_bad_line, progress)
    try:
        tally.write_bad_lines()
        lines = [(line.number, line.text) for line in tally.pending]
        run_on_ray(spec, lines, ray, tally.write, chunk=chunk or max(1, spec.concurrency))
    finally:
        tally.results.close()
    return tally.summary()
