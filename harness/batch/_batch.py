"""``harness batch``: a thinker over every line of a JSONL file, resumable, local or on Ray."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TextIO

import attrs

from harness.admission._internal import shown_url
from harness.catalog import Catalog
from harness.providers import DecisionClient
from harness.runs import build_target, import_target, require_extra, target_input_type

from ._errors import BatchError
from ._inputs import BadLine, InputLine, read_inputs
from ._progress import Progress
from ._results import RETRIED, ResultsFile
from ._worker import BatchSpec, BatchWorker

__all__ = ["BatchSummary", "preflight", "run_batch", "run_batch_async"]


@attrs.frozen
class BatchSummary:
    """What a batch did: inputs in the file, already done before, run now, by outcome.

    Outcomes: ``completed`` (the run answered), ``failed`` (the run started and failed: a model
    error, a budget, a tool of yours crashing; run again when the batch is started again,
    unless ``retry_failed`` is off), ``invalid`` (the line is not an input; read again when the
    batch is started again, so a fixed line runs). ``already_done`` counts the inputs whose
    result was kept from before (completed ones; failed ones too when not retried).
    """

    inputs: int
    already_done: int
    ran: int
    completed: int
    failed: int
    invalid: int
    seconds: float
    out: Path
    unfinished: int = 0
    """Inputs of the file whose result (kept from before or written now) is not ``completed``."""

    @property
    def exit_code(self) -> int:
        """``0`` when every input of the file has a completed result, else ``1``."""
        return 0 if self.unfinished == 0 else 1


def preflight(spec: BatchSpec, *, ray: str | None = None) -> None:
    """Check, before any input runs, what the batch names: its ``MODULE:CLASS`` (imported and
    built once, so an illegal palette or a broken constructor stops the batch with one line),
    the optional dependencies its options need, and that the Redis of ``--admission`` answers."""
    tool_class = import_target(spec.target)
    target_input_type(tool_class, spec.target)
    build_target(tool_class, spec.target)
    if ray is not None:
        require_extra("ray", extra="ray", option="--ray")
    if spec.admission_url is not None:
        require_extra("redis", extra="redis", option="--admission redis://HOST:PORT")
        _ping_redis(spec.admission_url)


def _ping_redis(url: str) -> None:
    from redis import Redis
    from redis.exceptions import RedisError

    try:
        client = Redis.from_url(url, socket_connect_timeout=2.0, socket_timeout=2.0)
    except ValueError as error:
        raise BatchError(
            f"--admission {shown_url(url)} is not a Redis URL ({error}): give redis://HOST:PORT"
        ) from None
    try:
        client.ping()
    except (RedisError, OSError) as error:
        raise BatchError(
            f"the shared admission at {shown_url(url)} cannot be reached "
            f"({type(error).__name__}): start Redis there, or drop --admission"
        ) from None
    finally:
        client.close()


def _prepare(
    spec: BatchSpec,
    inputs: Path,
    out: Path,
    on_bad_line: Literal["skip", "fail"],
    retry_failed: bool,
) -> tuple[ResultsFile, list[InputLine], list[BadLine], int]:
    tool_class = import_target(spec.target)
    input_type = target_input_type(tool_class, spec.target)
    if not inputs.is_file():
        raise BatchError(f"no input file {inputs}: give a JSONL file, one input object a line")
    retried = RETRIED if retry_failed else RETRIED - {"failed"}
    try:
        results = ResultsFile(out, retry=retried)
    except ValueError as error:
        raise BatchError(str(error)) from None
    good: list[InputLine] = []
    bad: list[BadLine] = []
    for line in read_inputs(inputs, input_type, allow_extra=spec.allow_extra):
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
        retry_failed: bool = True,
    ) -> None:
        self.began = time.monotonic()
        self.out = out
        self.results, good, self.bad, self.total = _prepare(
            spec, inputs, out, on_bad_line, retry_failed
        )
        numbers = {line.number for line in good} | {b.number for b in self.bad}
        kept = {n: s for n, s in self.results.done.items() if n in numbers}
        self.already = len(kept)
        self.kept_unfinished = sum(1 for status in kept.values() if status != "completed")
        self.counts = {"completed": 0, "failed": 0, "invalid": 0}
        self.pending = [line for line in good if line.number not in self.results.done]
        todo = len(self.pending) + sum(b.number not in self.results.done for b in self.bad)
        self.meter = Progress(todo, progress or sys.stderr)

    def write(self, result: dict[str, object]) -> None:
        """Write ``result`` unless its line has one already, and count it."""
        if self.results.write(result):
            status = str(result["status"])
            self.counts[status] = self.counts.get(status, 0) + 1
            self.meter.advance(status)

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
            unfinished=self.kept_unfinished + self.counts["failed"] + self.counts["invalid"],
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
    retry_failed: bool = True,
) -> BatchSummary:
    """Run the batch in this process, ``spec.concurrency`` inputs at a time."""
    preflight(spec)
    tally = _Tally(spec, inputs, out, on_bad_line, progress, retry_failed)
    try:
        tally.write_bad_lines()
        worker = BatchWorker(spec, catalog=catalog, clients=clients)
        running: set[asyncio.Task[dict[str, object]]] = set()
        try:
            window = max(1, spec.concurrency) * 4
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
            for task in running:  # stopped early: no task is left unawaited
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
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
    retry_failed: bool = True,
) -> BatchSummary:
    """Run the batch: in this process, or on Ray when ``ray`` names a cluster (``auto``, an
    address, or ``local`` to start one here). Inputs that already have a completed result in
    ``out`` are not run again; failed ones are (unless ``retry_failed`` is off), and lines that
    were not inputs are read again. Everything the batch names is checked first
    (:func:`preflight`)."""
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
                retry_failed=retry_failed,
            )
        )
    from ._ray import run_on_ray

    preflight(spec, ray=ray)
    tally = _Tally(spec, inputs, out, on_bad_line, progress, retry_failed)
    try:
        tally.write_bad_lines()
        lines = [(line.number, line.text) for line in tally.pending]
        run_on_ray(spec, lines, ray, tally.write, chunk=chunk or max(1, spec.concurrency))
    finally:
        tally.results.close()
    return tally.summary()
