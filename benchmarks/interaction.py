"""How harness's path and the embedded model slow each other down, measured apart.

Harness's path runs 2-3 times slower right after the model than back to back: the model leaves
the CPU's caches holding its own code and data. This script measures the other half and what
the cold path consists of:

* **the model inside harness**: sparrow-decider's ``ask`` timed inside harness's calls (the
  embedded client's model call wrapped in two clock reads) against the same ``ask`` called
  directly in a plain loop, in interleaved blocks of ``--block`` calls: awaited one at a time,
  and submitted a block at once. What the model loses is harness's footprint in the caches, and
  the benchmarks count it as harness's own time, rightly: a user waits for it.
* **which cache**: harness's whole path with the model's answer canned, timed right after
  another such call (back to back), right after the model ran, and right after a sweep over a
  numpy array of 1, 4, 16 and 64 MiB (summed: read once, nothing else). The sweep that slows
  the path as much as the model does says which level of the caches the path loses to it.
* **code or data**: ``--functions`` distinct small functions called in a chain (each a few
  additions), against one function with the same lines, timed back to back and right after the
  model ran. If the number of functions a call runs through made harness's path cold, the chain
  would lose more than the single function after the model.

Medians over ``--rounds`` calls. ``--json FILE`` writes the results (``benchmarks/_results.py``).

A script, not a test: ``python benchmarks/interaction.py [--rounds 600] [--blocks 20]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import conditions, write
from embedded import SMALL, direct_call

from harness.catalog import default_catalog
from harness.jobs import Dispatcher
from harness.providers import _embedded
from harness.thinker import DecisionCall
from harness.tools import Workflow


async def model_inside(blocks: int, block: int) -> dict[str, float]:
    """The model's median time directly, inside awaited harness calls and inside submitted
    ones, in interleaved blocks; and each way's whole time per call (µs)."""
    ask = direct_call(SMALL)
    inside: list[float] = []
    real = _embedded._ask

    def timed(model: object, entry: object, body: object) -> dict[str, object]:
        started = time.perf_counter()
        try:
            return real(model, entry, body)  # type: ignore[arg-type]  # sparrow's own types
        finally:
            inside.append(time.perf_counter() - started)

    direct: list[float] = []
    awaited: list[float] = []
    submitted: list[float] = []
    whole = {"direct": 0.0, "awaited": 0.0, "submitted": 0.0}
    _embedded._ask = timed
    try:
        async with Dispatcher(default_catalog()) as dispatcher:
            workflow = Workflow()
            for _ in range(50):
                await dispatcher.run(DecisionCall(workflow, SMALL))
                ask()
            inside.clear()
            for round_ in range(blocks):
                for offset in range(3):
                    way = (round_ + offset) % 3
                    started = time.perf_counter()
                    if way == 0:
                        for _ in range(block):
                            called = time.perf_counter()
                            ask()
                            direct.append(time.perf_counter() - called)
                        whole["direct"] += time.perf_counter() - started
                    elif way == 1:
                        for _ in range(block):
                            await dispatcher.run(DecisionCall(workflow, SMALL))
                        whole["awaited"] += time.perf_counter() - started
                        awaited += inside
                    else:
                        handles = [
                            dispatcher.submit(DecisionCall(workflow, SMALL)) for _ in range(block)
                        ]
                        await asyncio.gather(*(h.result() for h in handles))
                        whole["submitted"] += time.perf_counter() - started
                        submitted += inside
                    inside.clear()
    finally:
        _embedded._ask = real
    calls = blocks * block
    if len(awaited) != calls or len(submitted) != calls:
        raise SystemExit("the model was not timed in every harness call: the figures are void")
    return {
        "model_direct_us": statistics.median(direct) * 1e6,
        "model_inside_awaited_us": statistics.median(awaited) * 1e6,
        "model_inside_submitted_us": statistics.median(submitted) * 1e6,
        "direct_whole_us": whole["direct"] / calls * 1e6,
        "awaited_whole_us": whole["awaited"] / calls * 1e6,
        "submitted_whole_us": whole["submitted"] / calls * 1e6,
    }


SWEEPS_MIB = (1, 4, 16, 64)


async def after_sweeps(rounds: int) -> dict[str, float]:
    """Median µs of harness's path (the model's answer canned) back to back, right after the
    model, and right after each sweep of :data:`SWEEPS_MIB`."""
    import numpy

    ask = direct_call(SMALL)
    real = _embedded._ask
    reply: dict[str, object] = {}

    def canned(model: object, entry: object, body: object) -> dict[str, object]:
        if not reply:  # the model's first answer, kept
            reply.update(real(model, entry, body))  # type: ignore[arg-type]  # sparrow's own
        return dict(reply)

    arrays = {mib: numpy.ones(mib * (1 << 20) // 8) for mib in SWEEPS_MIB}
    found: dict[str, float] = {}
    _embedded._ask = canned
    try:
        async with Dispatcher(default_catalog()) as dispatcher:
            workflow = Workflow()

            async def call() -> None:
                await dispatcher.run(DecisionCall(workflow, SMALL))

            # what runs, untimed, right before the timed call
            before: dict[str, Callable[[], object]] = {"back to back": call, "model": ask}
            for mib, array in arrays.items():
                before[f"{mib} MiB sweep"] = array.sum
            for _ in range(50):
                await call()
            times: dict[str, list[float]] = {name: [] for name in before}
            for _ in range(rounds):  # the conditions interleaved, call by call
                for name, first in before.items():
                    done = first()
                    if asyncio.iscoroutine(done):
                        await done
                    started = time.perf_counter()
                    await dispatcher.run(DecisionCall(workflow, SMALL))
                    times[name].append(time.perf_counter() - started)
            found = {name: statistics.median(spent) * 1e6 for name, spent in times.items()}
    finally:
        _embedded._ask = real
    return found


def chain(functions: int, lines: int) -> Callable[[int], int]:
    """``functions`` distinct functions of ``lines`` additions each, each calling the next."""
    source = []
    for index in range(functions):
        following = f"f{index + 1}(x)" if index + 1 < functions else "x"
        body = "\n".join(f"    x = x + {j}" for j in range(lines))
        source.append(f"def f{index}(x):\n{body}\n    return {following}\n")
    space: dict[str, object] = {}
    exec("\n".join(source), space)  # code made here, of additions only
    made = space["f0"]
    assert callable(made)
    return made


def warm_and_cold(work: Callable[[int], int], rounds: int) -> tuple[float, float]:
    """Median µs of ``work`` back to back, and each right after the model ran."""
    ask = direct_call(SMALL)
    for _ in range(50):
        work(0)
        ask()
    warm, cold = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        work(0)
        warm.append(time.perf_counter() - started)
    for _ in range(rounds):
        ask()
        started = time.perf_counter()
        work(0)
        cold.append(time.perf_counter() - started)
    return statistics.median(warm) * 1e6, statistics.median(cold) * 1e6


def main() -> None:
    """Parse the options, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=600, help="calls of each code shape")
    parser.add_argument("--blocks", type=int, default=20, help="rounds of the three ways")
    parser.add_argument("--block", type=int, default=50, help="calls a block")
    parser.add_argument("--functions", type=int, default=70, help="functions in the chain")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (- : stdout)")
    options = parser.parse_args()
    load = os.getloadavg()[0]
    found = asyncio.run(model_inside(options.blocks, options.block))
    model = found["model_direct_us"]
    print(f"load average: {load:.2f} on {os.cpu_count()} CPUs")
    print(f"the model's median time, {options.blocks} rounds of {options.block} calls each way:")
    print(f"  asked directly in a loop      : {model:8.1f} µs")
    for way in ("awaited", "submitted"):
        inside = found[f"model_inside_{way}_us"]
        print(
            f"  inside harness's {way:<9} calls: {inside:8.1f} µs = {inside / model:.3f} of it "
            f"(the call as a whole: {found[f'{way}_whole_us']:.1f} µs a call)"
        )
    figures: dict[str, float] = {key: round(value, 3) for key, value in found.items()}
    swept = asyncio.run(after_sweeps(options.rounds))
    print("harness's path, the model's answer canned (median µs a call), right after:")
    for name, micros in swept.items():
        print(f"  {name:<14}: {micros:7.1f} µs")
        key = name.replace(" ", "_").lower()
        figures[f"path_after_{key}_us"] = round(micros, 3)
    shapes: Mapping[str, Callable[[int], int]] = {
        "chain": chain(options.functions, 5),
        "single": chain(1, 5 * options.functions),
    }
    print(f"code or data: {options.functions} functions of 5 additions, or one of as many:")
    for name, work in shapes.items():
        warm, cold = warm_and_cold(work, options.rounds)
        print(f"  {name:<6}: back to back {warm:6.2f} µs, after the model {cold:6.2f} µs")
        figures[f"{name}_warm_us"] = round(warm, 3)
        figures[f"{name}_after_model_us"] = round(cold, 3)
    write(
        options.json,
        "interaction",
        conditions(
            {
                "rounds": options.rounds,
                "blocks": options.blocks,
                "block": options.block,
                "functions": options.functions,
            },
            load,
        ),
        figures,
        [],
    )


if __name__ == "__main__":
    main()
