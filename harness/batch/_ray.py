"""Ray as the engine across processes and machines (the ``ray`` extra).

Inputs go out as Ray tasks in chunks; each task builds its own :class:`BatchWorker` (its own
dispatcher per run, its own clients) and returns the chunk's result lines, which the driver
writes as tasks finish. A worker that dies mid-task has its task run again elsewhere (Ray's
``max_retries``); the driver writes each input's result once. Admission across the workers is
shared only through Redis (``--admission``): without it each task holds its own.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence

import attrs

from ._errors import BatchError
from ._worker import BatchSpec, BatchWorker

__all__ = ["run_on_ray"]


def _run_chunk(
    spec: dict[str, object], paths: list[str], lines: list[tuple[int, str]]
) -> list[dict[str, object]]:
    """A Ray task: run ``lines`` with a worker of its own; their result lines."""
    for path in reversed(paths):
        if path not in sys.path:
            sys.path.insert(0, path)

    async def chunk() -> list[dict[str, object]]:
        worker = BatchWorker(BatchSpec(**spec))  # type: ignore[arg-type]  # BatchSpec's fields
        try:
            return list(
                await asyncio.gather(*(worker.run_line(number, text) for number, text in lines))
            )
        finally:
            await worker.aclose()

    return asyncio.run(chunk())


def run_on_ray(
    spec: BatchSpec,
    lines: Sequence[tuple[int, str]],
    address: str,
    write: Callable[[dict[str, object]], None],
    *,
    chunk: int,
    max_retries: int = 3,
) -> None:
    """Run ``lines`` as Ray tasks on the cluster at ``address`` (``auto``: a running cluster,
    ``local``: start one here); ``write`` gets each result line as its task finishes."""
    try:
        import ray
    except ImportError:
        raise BatchError("--ray needs Ray: pip install 'harness[ray]'") from None
    started_here = False
    if not ray.is_initialized():
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started_here = True
    try:
        task = ray.remote(max_retries=max_retries, retry_exceptions=False)(_run_chunk)
        as_dict = attrs.asdict(spec)
        paths = [p for p in sys.path if p]
        chunks = [list(lines[i : i + chunk]) for i in range(0, len(lines), chunk)]
        cpus = ray.available_resources().get("CPU", 2)  # type: ignore[no-untyped-call]
        window = max(2, int(cpus) * 2)
        waiting: list[object] = []
        for part in chunks:
            waiting.append(task.remote(as_dict, paths, part))
            while len(waiting) >= window:
                waiting = _drain(ray, waiting, write, wait_for=1)
        while waiting:
            waiting = _drain(ray, waiting, write, wait_for=1)
    finally:
        if started_here:
            ray.shutdown()


def _drain(
    ray: object, waiting: list[object], write: Callable[[dict[str, object]], None], wait_for: int
) -> list[object]:
    ready, rest = ray.wait(waiting, num_returns=wait_for)  # type: ignore[attr-defined]
    for ref in ready:
        for result in ray.get(ref):  # type: ignore[attr-defined]
            write(result)
    return list(rest)
