"""Instructions a call, counted by valgrind: a figure the machine's load does not move.

Runs a path twice under ``valgrind --tool=callgrind`` (``--small`` calls, default 100, and
``--calls``, default 600, each after the same warm-up) and prints the difference divided by the
difference in calls: start-up, imports and warm-up cancel out. ``PYTHONHASHSEED`` is fixed, so
two runs of the same build agree to a fraction of a percent, however loaded the machine is.

Paths (the client process only; the server of the HTTP paths runs in a child process, which
valgrind does not follow):

* ``embedded``: ``DecisionCall`` jobs one after another through a ``Dispatcher`` on the embedded
  entry, the model's answer canned (harness's own path: job, dispatcher, client, decoding);
* ``stack``: ``benchmarks/dispatch.py``'s whole stack, a distinct request per call;
* ``bare``: ``benchmarks/dispatch.py``'s bare aiohttp loop;
* ``real``: as ``embedded`` with the model itself asked (not canned);
* ``model``: sparrow-decider asked directly on the same request, the baseline of ``real``;
* ``floor``: ``benchmarks/_floor.py``'s floor path on the same request, the model asked.

``--caches`` runs the path under ``valgrind --tool=cachegrind`` instead, with caches simulated
at this machine's sizes (32 KiB instruction and data caches, a 1 MiB second level, each per
core), and prints the misses a call beside the instructions: ``real`` minus ``model`` is what
harness adds to a real call, its code and data fetched again after the model's run evicted them
(``embedded.py``'s canned way beside its real one measures the same in time).

Run: ``python benchmarks/instructions.py stack`` (minutes: valgrind runs Python about 50 times
slower). Needs valgrind (``apt-get install valgrind``). ``--profile`` instead runs the path
without valgrind under cProfile and prints its breakdown by part (``benchmarks/_breakdown.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

PATHS = ("embedded", "stack", "bare", "real", "model", "floor")
_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
WARM = 100


async def _embedded(
    calls: int, profiler: cProfile.Profile | None = None, way: str = "embedded"
) -> None:
    from embedded import SMALL, direct_call

    from harness.catalog import default_catalog
    from harness.jobs import Dispatcher
    from harness.providers import EmbeddedDecisionClient, _embedded
    from harness.thinker import DecisionCall
    from harness.tools import Workflow

    catalog = default_catalog()
    entry = catalog.resolve_decision(None, asked_by="benchmark")
    await EmbeddedDecisionClient().served_model(entry)  # the model loads outside any call
    real = _embedded._ask
    canned: dict[str, dict[str, object]] = {}

    def ask(model: object, entry: object, body: object) -> dict[str, object]:
        if "reply" not in canned:
            canned["reply"] = real(model, entry, body)  # type: ignore[arg-type]  # sparrow's own
        return dict(canned["reply"])

    if way == "embedded":
        _embedded._ask = ask  # the model's answer canned
    direct = direct_call(SMALL)
    if way == "floor":
        import sparrow_decider
        from _floor import Floor, temperature

        floor = Floor(sparrow_decider.Decider.load(), SMALL, temperature())
        for _ in range(WARM):
            await floor.call()
        if profiler is not None:
            profiler.enable()
        for _ in range(calls):
            await floor.call()
        if profiler is not None:
            profiler.disable()
        return
    async with Dispatcher(catalog) as dispatcher:
        workflow = Workflow()
        for _ in range(WARM):
            await dispatcher.run(DecisionCall(workflow, SMALL))
            direct()
        if profiler is not None:
            profiler.enable()
        if way == "model":
            for _ in range(calls):
                direct()
        else:
            for _ in range(calls):
                await dispatcher.run(DecisionCall(workflow, SMALL))
        if profiler is not None:
            profiler.disable()


async def _http(port: int, calls: int, way: str, profiler: cProfile.Profile | None = None) -> None:
    import aiohttp
    import dispatch

    from harness.catalog import Catalog
    from harness.decision import systemone
    from harness.jobs import Dispatcher, Pacing

    entry = dispatch.entry_for(port)
    catalog = Catalog([entry], {"decision": entry.id})
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session,
        Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher,
    ):
        for count in (WARM, calls):
            requests = dispatch.requests_for(count, False)
            if profiler is not None and count == calls:
                profiler.enable()
            if way == "stack":
                await dispatch.run_stack(dispatcher, requests, 0)
            else:
                bodies = [systemone.encode_body(r, entry.wire_model_id) for r in requests]
                await dispatch.run_bare(session, entry.url, bodies)
        if profiler is not None:
            profiler.disable()


def inner(path: str, calls: int, profiler: cProfile.Profile | None = None) -> None:
    """The counted process: warm up, then ``calls`` calls of ``path`` (profiled when given a
    profiler)."""
    if path in ("embedded", "real", "model", "floor"):
        asyncio.run(_embedded(calls, profiler, path))
        return
    import dispatch

    parent, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=dispatch._serve, args=(child, 0.0, 0), daemon=True
    )
    server.start()
    try:
        asyncio.run(_http(parent.recv(), calls, path, profiler))
        parent.send("stop")
        parent.recv()
    finally:
        server.join(timeout=10)


CACHES = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,16,64")
"""This machine's caches (AMD EPYC, per core): cachegrind's first level and its last, which
here stands for the second (the shared third, 32 MiB, is not simulated)."""
_MISSES = {"I1  misses": "I1 misses", "D1  misses": "D1 misses", "LL misses": "LL misses"}


def counted(path: str, calls: int, caches: bool = False) -> dict[str, int]:
    """What valgrind counted in a whole run of ``calls`` calls: ``instructions``, and with
    ``caches`` the simulated misses (see :data:`CACHES`)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    if caches:
        command = [valgrind, "--tool=cachegrind", "--cache-sim=yes", *CACHES]
        command += ["--cachegrind-out-file=/dev/null"]
    else:
        command = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    command += [sys.executable, __file__, "--inner", path, "--calls", str(calls)]
    # numpy's BLAS threads (sparrow-decider's model) spin while they wait for work, for as long
    # as the scheduler lets them: counted, they moved a count by 10-20 %. One thread: none.
    env = {**os.environ, "PYTHONHASHSEED": "0", **dict.fromkeys(_BLAS_THREADS, "1")}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the counted run failed:\n{done.stderr[-2000:]}")
    return _counts(done.stderr, caches)


def _counts(report: str, caches: bool) -> dict[str, int]:
    """The totals of valgrind's report (its stderr)."""

    def total(label: str) -> int:
        found = re.search(label + r"\s*:\s*([\d,]+)", report)
        if found is None:
            raise SystemExit(f"valgrind reported no {label!r}:\n{report[-2000:]}")
        return int(found.group(1).replace(",", ""))

    if not caches:
        return {"instructions": total("Collected")}
    counts = {"instructions": total("I +refs")}
    for label, name in _MISSES.items():
        counts[name] = total(label)
    return counts


def main() -> None:
    """Parse the options, count, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("path", choices=PATHS)
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help="a cProfile breakdown instead")
    parser.add_argument("--caches", action="store_true", help="simulated cache misses as well")
    options = parser.parse_args()
    if options.inner:
        inner(options.path, options.calls)
        return
    if options.profile:
        from _breakdown import breakdown, print_breakdown

        profiler = cProfile.Profile()
        inner(options.path, options.calls, profiler)
        parts = breakdown(profiler, options.calls)
        print_breakdown(f"{options.path}, per call", parts, None)
        return
    if options.calls <= options.small:
        raise SystemExit("--calls must be more than --small")
    small = counted(options.path, options.small, options.caches)
    large = counted(options.path, options.calls, options.caches)
    calls = options.calls - options.small
    for name, count in large.items():
        print(f"{options.path}: {(count - small[name]) / calls:,.0f} {name} a call")


if __name__ == "__main__":
    main()
