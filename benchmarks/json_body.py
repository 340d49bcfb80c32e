"""JSON through orjson against the standard library's ``json``: a big turn's body, both ways.

The body is a System One request whose state holds ``--artifacts`` artifacts (default 1,000:
a ticket each, with its text, a few numbers and tags, some non-ASCII), what a thinker sends on a
long turn. Four pyperf benchmarks of the same run (``benchmarks/_perf.py``):

* **harness encode**: ``json_bytes(body, finite=True)`` as the codecs call it (orjson, with the
  checks that keep the standard library's bytes: harness/decision/_json.py; a request's state is
  checked finite when the request is made);
* **harness decode**: ``load_json`` (orjson, with the check that keeps its values);
* **json encode**, **json decode**: ``json.dumps(separators=(",", ":"), ensure_ascii=False,
  allow_nan=False).encode()`` and ``json.loads``, what harness used before.

Target: encode + decode through harness at least 3 times as fast as through ``json``. The bytes
are checked equal before anything is timed.

A script, not a test: ``python benchmarks/json_body.py [--artifacts 1000] [--fast]``;
``--json FILE`` writes the results (``benchmarks/_results.py``), ``-o FILE`` pyperf's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _perf import Means, runner
from _results import conditions, target, write

from harness.decision import Choice, DecisionRequest, systemone
from harness.decision._internal import json_bytes, load_json

TARGET = 3.0


def body_for(artifacts: int) -> object:
    """The request body of a turn whose state holds ``artifacts`` artifacts."""
    items = [
        {
            "ref": f"ticket#{n}",
            "kind": "Ticket",
            "text": f"Ticket {n}: the invoice for March is wrong, charged twice — refund? {n % 7}",
            "fields": {
                "priority": n % 5,
                "score": round(0.37 + n / 3001, 6),
                "seats": 12 + n,
                "tags": ["billing", "refund", "é"],
                "open": n % 3 == 0,
                "owner": None,
            },
        }
        for n in range(artifacts)
    ]
    request = DecisionRequest(
        {"goal": "answer every ticket", "artifacts": items},
        {"next": Choice("What next?", {"answer": None, "escalate": None, "finish": None})},
    )
    return load_json(systemone.encode_body(request, "sparrow-decider"))


def encode(value: object) -> bytes:
    """What the codecs call on a checked state."""
    return json_bytes(value, finite=True)


def stdlib_encode(value: object) -> bytes:
    """What harness used before."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


WAYS = ("harness encode", "harness decode", "json encode", "json decode")


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
    means.add("harness encode", perf.bench_func("harness encode", encode, value))
    means.add("harness decode", perf.bench_func("harness decode", load_json, body))
    means.add("json encode", perf.bench_func("json encode", stdlib_encode, value))
    means.add("json decode", perf.bench_func("json decode", json.loads, body))
    if options.worker or not means.complete(WAYS):
        return  # a worker: the main process sums up
    ours = means["harness encode"] + means["harness decode"]
    theirs = means["json encode"] + means["json decode"]
    ratio = theirs / ours
    print(f"load average: {load:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    print(f"a body of {options.artifacts} artifacts, {len(body)} bytes; means of pyperf's")
    for name in WAYS:
        print(f"  {name:<15}: {means[name] * 1e6:9.1f} µs")
    verdict = "meets" if ratio >= TARGET else "misses"
    print(f"encode + decode, json / harness: {ratio:.2f}x ({verdict} >= {TARGET}x)")
    figures: dict[str, object] = {
        "body_bytes": len(body),
        **{name.replace(" ", "_") + "_us": round(means[name] * 1e6, 3) for name in WAYS},
        "harness_bodies_per_s": round(1 / ours, 2),
        "json_bodies_per_s": round(1 / theirs, 2),
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
