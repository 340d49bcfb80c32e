"""Where harness's own time on an embedded call goes: is the model slower inside the stack?

``benchmarks/embedded.py`` measures harness's own time on a small embedded decision as the
difference between a call through harness and sparrow-decider asked directly. With the model's
answer canned, harness's path costs far less than that difference, which leaves two readings:
the model runs slower inside harness's call (its caches cold after harness's steps), or
harness's own steps run slower next to the real model (theirs cold after the model's). This
script tells them apart. It times the model's ``ask`` *inside* each harness call (the embedded
client's one round trip, wrapped for this script only) beside the same ``ask`` on the same
loaded model called directly, interleaved, and prints:

* the model directly and the model inside harness's call (medians, microseconds), and their
  ratio: near 1 means the model is not slowed by the stack;
* harness's own time measured two ways, through - direct and through - inside, each as a share
  of the model's time (the ``embedded.py`` target is <= 0.2).

A diagnostic, not a target: ``python benchmarks/embedded_inside.py [--rounds 1000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded import SMALL

import harness.providers._embedded as embedded_client  # the one round trip, wrapped below
from harness.catalog import CatalogEntry, default_catalog
from harness.decision import systemone
from harness.jobs import Dispatcher
from harness.thinker import DecisionCall
from harness.tools import Workflow


async def measure(rounds: int, warm: int) -> tuple[list[float], list[float], list[float]]:
    """Seconds of each direct ask, each ask inside a harness call, each harness call."""
    inside: list[float] = []
    round_trip = embedded_client._ask

    def timed(
        model: embedded_client._Decider, entry: CatalogEntry, body: Mapping[str, object]
    ) -> dict[str, object]:
        started = time.perf_counter()
        try:
            return round_trip(model, entry, body)
        finally:
            inside.append(time.perf_counter() - started)

    embedded_client._ask = timed  # this script's wrapper, taken off below
    model = embedded_client._load("embedded", "sparrow-decider")  # the instance harness asks
    body = systemone.encode_request(SMALL, "sparrow-decider")
    questions = body["questions"]
    assert isinstance(questions, dict)
    workflow = Workflow()
    direct: list[float] = []
    through: list[float] = []
    try:
        async with Dispatcher(default_catalog()) as dispatcher:
            for round_ in range(rounds + warm):
                for way in (0, 1) if round_ % 2 == 0 else (1, 0):
                    started = time.perf_counter()
                    if way == 0:
                        model.ask(body["state"], questions)
                    else:
                        response = await dispatcher.run(DecisionCall(workflow, SMALL))
                        if not response.success:
                            raise SystemExit(f"a harness call failed: {response.failure}")
                    elapsed = time.perf_counter() - started
                    if round_ >= warm:
                        (direct if way == 0 else through).append(elapsed)
    finally:
        embedded_client._ask = round_trip
    return direct, inside[-len(through) :], through


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--warm", type=int, default=200)
    options = parser.parse_args()
    load = os.getloadavg()[0]
    direct, inside, through = asyncio.run(measure(options.rounds, options.warm))
    d, i, t = (statistics.median(xs) * 1e6 for xs in (direct, inside, through))
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs; {options.rounds} interleaved rounds")
    print(f"the model, asked directly          : {d:7.1f} us")
    print(f"the model, inside harness's call   : {i:7.1f} us  (inside / direct {i / d:.2f})")
    print(f"a call through harness             : {t:7.1f} us")
    print(f"harness's own, through - direct    : {t - d:7.1f} us = {(t - d) / d:.2f} of the model")
    print(f"harness's own, through - inside    : {t - i:7.1f} us = {(t - i) / i:.2f} of the model")


if __name__ == "__main__":
    main()
