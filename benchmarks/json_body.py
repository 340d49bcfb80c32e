"""JSON through orjson against the standard library's ``json``: a big turn's body, both ways.

The body is what a thinker sends on a turn over a world of ``--artifacts`` artifacts (default
1,000; ``benchmarks/_turn_body.py``'s world and thinker: its state's digest, the moves and
candidates as questions). Four pyperf benchmarks of the same run (``benchmarks/_perf.py``):

* **harness encode**: ``json_bytes(body, finite=True)`` as the codecs call it (orjson, with the
  checks that keep the standard library's bytes: harness/decision/_json.py; a request's state is
  checked finite when the request is made);
* **harness decode**: ``load_json`` (orjson, with the check that keeps its values);
* **json encode**, **json decode**: ``json.dumps(separators=(",", ":"), ensure_ascii=False,
  allow_nan=False).encode()`` and ``json.loads``, what harness used before;
* **orjson encode**, **orjson decode**: ``orjson.dumps`` and ``orjson.loads`` alone, without the
  checks that keep the standard library's bytes and values: what those checks cost.

Each is timed by the process's CPU clock (one thread's work: what another process on a shared
machine does not add to). Target: encode + decode through harness at least 3 times as fast as
through ``json``. The bytes are checked equal before anything is timed.

A script, not a test: ``python benchmarks/json_body.py [--artifacts 1000] [--fast]``;
``--json FILE`` writes the results (``benchmarks/_results.py``), ``-o FILE`` pyperf's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
from _perf import Means, runner
from _results import conditions, one_run, target, write

from harness.decision._internal import json_bytes, load_json

TARGET = 3.0


def body_for(artifacts: int) -> object:
    """The request body of a thinker's first turn over a world of ``artifacts`` artifacts
    (``benchmarks/_turn_body.py``'s: a list of items and a palette of five tools), as decoded."""
    from _turn_body import first_turn_body

    return load_json(first_turn_body(artifacts))


def encode(value: object) -> bytes:
    """What the codecs call on a checked state."""
    return json_bytes(value, finite=True)


def stdlib_encode(value: object) -> bytes:
    """What harness used before."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def cpu(way: Callable[[Any], object], value: object) -> Callable[[int], float]:
    """A pyperf time function: ``loops`` calls of ``way(value)`` by the process's CPU clock (the
    work is one thread's: the clock another process on the machine does not add to)."""

    def time_func(loops: int) -> float:
        started = time.process_time()
        for _ in range(loops):
            way(value)
        return time.process_time() - started

    return time_func


WAYS = (
    "harness encode",
    "harness decode",
    "json encode",
    "json decode",
    "orjson encode",
    "orjson decode",
)


def own_options(parser: argparse.ArgumentParser) -> None:
    """The script's own options (pyperf's are its own: --fast, --rigorous, -p, -n, -l, -o)."""
    parser.add_argument("--artifacts", type=int, default=1000, help="artifacts in the state")


def main() -> None:
    """Run the four ways as pyperf benchmarks; in the main process, print and write the ratio."""
    load = os.getloadavg()[0]
    perf, options = runner(own_options, ("artifacts",), processes=4, values=5)
    value = body_for(options.artifacts)
    body = encode(value)
    if body != stdlib_encode(value) or load_json(body) != json.loads(body):
        raise SystemExit("harness's JSON differs from the standard library's: the figures are void")
    means = Means()
    means.add("harness encode", perf.bench_time_func("harness encode", cpu(encode, value)))
    means.add("harness decode", perf.bench_time_func("harness decode", cpu(load_json, body)))
    means.add("json encode", perf.bench_time_func("json encode", cpu(stdlib_encode, value)))
    means.add("json decode", perf.bench_time_func("json decode", cpu(json.loads, body)))
    means.add("orjson encode", perf.bench_time_func("orjson encode", cpu(orjson.dumps, value)))
    means.add("orjson decode", perf.bench_time_func("orjson decode", cpu(orjson.loads, body)))
    if options.worker or not means.complete(WAYS):
        return  # a worker: the main process sums up
    ours = means["harness encode"] + means["harness decode"]
    theirs = means["json encode"] + means["json decode"]
    ratio = theirs / ours
    bare = means["orjson encode"] + means["orjson decode"]
    print(f"load average: {load:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    print(f"a body of {options.artifacts} artifacts, {len(body)} bytes; CPU a call, pyperf's")
    for name in WAYS:
        print(f"  {name:<15}: {means[name] * 1e6:9.1f} µs")
    print(f"encode + decode, json / harness: {ratio:.2f}x ({one_run(ratio, TARGET, '>=')})")
    print(
        f"  orjson alone, without the checks that keep json's bytes and values: "
        f"{theirs / bare:.2f}x; the checks cost {(ours - bare) * 1e6:.1f} µs a body"
    )
    figures: dict[str, object] = {
        "body_bytes": len(body),
        **{name.replace(" ", "_") + "_us": round(means[name] * 1e6, 3) for name in WAYS},
        "harness_bodies_per_s": round(1 / ours, 2),
        "json_bodies_per_s": round(1 / theirs, 2),
        "orjson_alone_bodies_per_s": round(1 / bare, 2),
        "checks_us": round((ours - bare) * 1e6, 3),
        "values": dict(means.values),
    }
    write(
        options.json,
        "json_body",
        conditions(
            {
                "artifacts": options.artifacts,
                "processes": options.processes,
                "values": options.values,
                "loops": options.loops,
            },
            load,
        ),
        figures,
        [
            target(
                "JSON encode + decode: harness (orjson) / the standard library's speed",
                ratio,
                TARGET,
                ">=",
                "json.dumps and json.loads on the same body, the same run",
            )
        ],
        None,
    )


if __name__ == "__main__":
    main()
