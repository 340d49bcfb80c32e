"""The fitted deciders' speed and memory, each target a ratio or a bound measured in one run.

* **tfidf against the embedded model**: the same request (a thinker's finishing request, 8
  selections over a state of 30 digest lines) answered by a ``tfidf`` fitted file and by the
  embedded model, alternating, ``--rounds`` rounds of ``--calls`` calls; the ratio of their
  mean times per round. Target: at most 1 (a ``tfidf`` decision costs no more than the embedded
  model's).
* **minilm against its own encode**: the same request answered by a ``minilm`` fitted file,
  against ``MiniLM.encode`` of the request's 8 digest lines alone. Target: at most 1.2.
* **load**: a fresh process loading a ``minilm`` fitted file and its encoder, its wall time and
  peak RSS. Targets: at most 2 s and 400 MB.
* **fit**: ``fit_decider`` on the shipped packs' 198 dev decisions (9 heads), on one core (BLAS
  held to one thread). Target: under 60 s a fit, for each encoder.

Each ratio is shown with a 95 % bootstrap interval over its rounds and a verdict from the
interval, in the words and by the idle rule of the other reference benchmarks (``_campaign.py``):
``met`` only when the interval's worse end meets the target, ``missed`` when its better end does
not, else ``cannot tell``; a run on a machine doing other work (a load average of 1 or more
before it, or after it less the benchmark's own busy process) never gives ``met``.

A script, not a test: ``python benchmarks/fitted.py [--rounds 20] [--calls 20] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _campaign import Machine
from _campaign import verdict as judged
from _results import measured, target, write

from harness.catalog import CatalogEntry, default_catalog, entry_for_model
from harness.decision import DecisionRequest, Noul
from harness.evals import metrics
from harness.evals.data import data_path
from harness.fit import fit_decider, read_source
from harness.providers import DecisionClient, client_for

NOTES = [
    "renew the gym card right now",
    "no rush to send the invoice to Acme",
    "pay the water bill today",
    "the garden looks fine",
    "call the bank about the card",
    "maybe book the dentist next month",
]


def lines(salt: int) -> list[str]:
    """30 digest lines, each naming ``salt``: texts no encoder has seen yet (a ``minilm``
    encoder keeps what it encoded, as a thinker's lines recur; here every call is new)."""
    return [
        f'verdict#{n} (verdict): {{"note":"{NOTES[n % 6]}, {salt}-{n}",'
        f'"urgent":{"true" if n % 3 else "false"}}}'
        for n in range(30)
    ]


def request(selections: int = 8, salt: int = 0) -> DecisionRequest:
    """A thinker's finishing request: 30 digest lines, ``selections`` of them asked about."""
    shown = lines(salt)
    state = {"objective": "keep what needs action", "artifacts": shown, "done": ["x"]}
    refs = [line.split(" ")[0] for line in shown[:selections]]
    return DecisionRequest(
        state, {f"select_{ref}": Noul(f"Does {ref} belong in the answer?") for ref in refs}
    )


async def _timed(
    client: DecisionClient, entry: CatalogEntry, asked: DecisionRequest, calls: int
) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await client.decide(asked, entry)
    return (time.perf_counter() - started) / calls


def ratios(first: CatalogEntry, second: CatalogEntry, rounds: int, calls: int) -> list[float]:
    """Per round, the mean time of ``first`` over ``second`` on the same request."""
    asked = request()

    async def go() -> list[float]:
        a, b = client_for(first), client_for(second)
        await a.decide(asked, first)
        await b.decide(asked, second)
        found = []
        for k in range(rounds):
            if k % 2:
                tb, ta = await _timed(b, second, asked, calls), await _timed(a, first, asked, calls)
            else:
                ta, tb = await _timed(a, first, asked, calls), await _timed(b, second, asked, calls)
            found.append(ta / tb)
        await a.aclose()
        await b.aclose()
        return found

    return asyncio.run(go())


def encode_ratios(fitted: CatalogEntry, rounds: int, calls: int) -> list[float]:
    """Per round, a ``minilm`` file's request over ``MiniLM.encode`` of its 8 lines, every call
    on lines never encoded before."""
    from harness.providers._fitted._minilm import MiniLM

    model = MiniLM.load()
    salts = iter(range(1, 10**9))

    async def go() -> list[float]:
        client = client_for(fitted)
        await client.decide(request(salt=next(salts)), fitted)
        found = []
        for _ in range(rounds):
            asked = [request(salt=next(salts)) for _ in range(calls)]
            started = time.perf_counter()
            for one in asked:
                await client.decide(one, fitted)
            with_request = (time.perf_counter() - started) / calls
            raw = [lines(next(salts))[:8] for _ in range(calls)]
            started = time.perf_counter()
            for texts in raw:
                model.encode(texts)
            found.append(with_request / ((time.perf_counter() - started) / calls))
        await client.aclose()
        return found

    return asyncio.run(go())


LOAD = r"""
import json, resource, sys, time
started = time.perf_counter()
from harness.providers import load_fitted
model = load_fitted(sys.argv[1])
model.encoder.encode(["warm"])
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def verdict(values: list[float], limit: float, loaded: bool) -> tuple[dict[str, object], str]:
    """The mean with its 95 % bootstrap interval, and the verdict against ``<= limit``."""
    estimate = metrics.bootstrap(values, statistics.fmean, resamples=2000)
    low, high = estimate.low, estimate.high
    shown: dict[str, object] = {"mean": estimate.value, "low": low, "high": high, "n": len(values)}
    interval = None if low is None or high is None else (low, high)
    return shown, judged(interval, limit, "<=", loaded)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    machine = Machine(busy=1.0)
    figures: dict[str, object] = {}
    targets = []
    with tempfile.TemporaryDirectory() as scratch:
        packs = [read_source(str(data_path("decisions.jsonl")))]
        for encoder in ("tfidf", "minilm"):
            started = time.perf_counter()
            fit_decider(packs, Path(scratch) / f"packs-{encoder}.json", encoder=encoder)
            took = time.perf_counter() - started
            figures[f"fit_198_{encoder}_s"] = round(took, 2)
            print(f"fit 198 decisions ({encoder}): {took:.1f} s (target < 60 s)", flush=True)
        triage = [read_source(str(data_path("selections-triage.jsonl")))]
        made = fit_decider(triage, Path(scratch) / "minilm.json", encoder="minilm").path
        tfidf = default_catalog().entry("triage-fitted")
        minilm = entry_for_model(f"fitted:{made}")
        embedded = default_catalog().entry("embedded")
        assert minilm is not None
        for name, values, limit in (
            ("tfidf / embedded", ratios(tfidf, embedded, args.rounds, args.calls), 1.0),
            ("minilm request / its encode", encode_ratios(minilm, args.rounds, args.calls), 1.2),
        ):
            machine.stop()
            shown, said = verdict(values, limit, machine.loaded)
            figures[name] = shown
            print(
                f"{name}: {shown['mean']:.3f} [{shown['low']:.3f}, {shown['high']:.3f}] over "
                f"{len(values)} rounds (target <= {limit}): {said}",
                flush=True,
            )
            mean = shown["mean"]
            assert isinstance(mean, float)
            targets.append(target(name, mean, limit, "<=", name.split(" / ")[1]))
        probe = subprocess.run(
            [sys.executable, "-c", LOAD, str(made)], capture_output=True, text=True, check=True
        )
        load = json.loads(probe.stdout)
        figures["load"] = load
        print(
            f"load a minilm fitted file and its encoder: {load['seconds']:.2f} s (target <= 2), "
            f"peak {load['peak_mb']:.0f} MB (target <= 400)",
            flush=True,
        )
    machine.stop()
    print(machine.line())
    sizes = {"rounds": args.rounds, "calls": args.calls}
    write(args.json, "fitted", measured(sizes, machine), figures, targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
