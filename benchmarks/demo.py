"""The demo as a benchmark: answer quality, where the time goes, and `harness serve` throughput.

Three figures, in one run, offline, on the embedded model (sparrow-decider):

* **quality**: the demo's recall and precision of the planted price decisions
  (``harness/demo/answer_key.json``: file and sentence of each), plus how many planted decisions
  the run reached at all (split into statements, so they were candidates);
* **time**: the demo's wall time split into model time (the latency each decision call's job
  record holds, summed) and framework time (the rest: dispatch, admission, tools, digests,
  tokenizing, the thinker's bookkeeping);
* **throughput**: the demo's own decision requests (their wire bodies, kept in the record)
  replayed through `harness serve` (the server in this process, a loopback aiohttp client at a
  fixed concurrency) and, for comparison, through a dispatcher calling the embedded model
  in-process: decisions per second each way.

Answer quality is a figure to improve, not something to tune the corpus to.

Run: ``python benchmarks/demo.py [--max-turns N] [--requests N] [--concurrency N]`` (about
a minute on two cores: the demo's large requests take the embedded model 10-150 ms each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import statistics
import time
from collections.abc import Sequence

import aiohttp

from harness.deciding import DecisionCall
from harness.decision import Choice, DecisionRequest, Noul, Score, systemone
from harness.demo import corpus_path
from harness.demo._run import relative_source, run_demo
from harness.demo._thinker import DEMO_MAX_TURNS
from harness.jobs import Dispatcher
from harness.models import default_catalog
from harness.record import RunRecord
from harness.serve import DecisionServer
from harness.tools import Workflow

ANSWER_KEY = pathlib.Path(__file__).parents[1] / "harness" / "demo" / "answer_key.json"


def planted() -> set[tuple[str, str]]:
    """The planted decisions as (file relative to the corpus, sentence)."""
    key = json.loads(ANSWER_KEY.read_text(encoding="utf-8"))
    return {(d["file"], d["sentence"]) for d in key["decisions"]}


def statements_of(record: RunRecord, folder: str, refs: Sequence[str]) -> list[tuple[str, str]]:
    """(file, text) of the statements ``refs`` name, read from the answer or the world."""
    by_ref = {item.ref: item.value for item in record.answer}
    found = []
    for ref in refs:
        value = by_ref.get(ref)
        if isinstance(value, dict):
            found.append((relative_source(str(value["source"]), folder), str(value["text"])))
    return found


def candidate_texts(record: RunRecord) -> set[str]:
    """The text of every statement that was an output candidate (its digest words)."""
    texts = set()
    for ref, line in record.artifacts.items():
        if ref.startswith("statement#"):
            texts.add(line.split("): ", 1)[1] if "): " in line else line)
    return texts


async def replay_through_server(bodies: Sequence[bytes], requests: int, concurrency: int) -> float:
    """Decisions per second of ``bodies`` (cycled) posted to an in-process `harness serve`."""
    async with DecisionServer(
        default_catalog(), max_in_flight=concurrency, queue_limit=requests
    ) as server:
        url = server.root + "/v1/systemone"
        gate = asyncio.Semaphore(concurrency)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

            async def one(body: bytes) -> None:
                async with gate, session.post(url, data=body) as reply:
                    await reply.read()
                    if reply.status != 200:
                        raise RuntimeError(f"harness serve answered {reply.status}")

            await one(bodies[0])  # load the model before the clock starts
            started = time.perf_counter()
            await asyncio.gather(*(one(bodies[i % len(bodies)]) for i in range(requests)))
            return requests / (time.perf_counter() - started)


async def replay_in_process(
    decisions: Sequence[DecisionRequest], requests: int, concurrency: int
) -> float:
    """Decisions per second of the same requests through a dispatcher, embedded in-process."""
    catalog = default_catalog()
    async with Dispatcher(catalog) as dispatcher:
        gate = asyncio.Semaphore(concurrency)

        async def one(request: DecisionRequest) -> None:
            async with gate:
                await dispatcher.run(DecisionCall(Workflow(), request))

        await one(decisions[0])
        started = time.perf_counter()
        await asyncio.gather(*(one(decisions[i % len(decisions)]) for i in range(requests)))
        return requests / (time.perf_counter() - started)


SMALL = DecisionRequest(
    "Hi, I was charged twice for my March invoice, please refund the second charge.",
    {
        "refund": Noul("Does the customer ask for a refund?"),
        "team": Choice("Which team should answer?", {"billing": None, "tech": None, "sales": None}),
        "anger": Score("How upset is the customer?", ["calm", "annoyed", "angry"]),
    },
)
"""A ticket-sized request: the kind sparrow-decider answers in a couple of milliseconds."""


async def main(max_turns: int, requests: int, concurrency: int, repeat: int, rounds: int) -> None:
    """Run the demo ``repeat`` times, then the throughput replay; print the figures."""
    folder = str(corpus_path())
    walls, models = [], []
    run = None
    for _ in range(repeat):
        run = await run_demo(max_turns=max_turns, keep_bodies=True)
        walls.append(run.record.wall_seconds)
        models.append(run.record.model_seconds)
    assert run is not None
    record = run.record
    key = planted()
    answered = set(statements_of(record, folder, [item.ref for item in record.answer]))
    hits = answered & key
    reached = {sentence for _, sentence in key} & candidate_texts(record)
    recall = len(hits) / len(key)
    precision = len(hits) / len(answered) if answered else 0.0
    wall = statistics.median(walls)
    model = statistics.median(models)
    print(f"demo: {len(record.turns)} turns, {len(record.calls)} decisions, max_turns {max_turns}")
    print(f"  candidates: {sum(1 for r in record.artifacts if r.startswith('statement#'))}")
    print(f"  planted decisions reached (split into statements): {len(reached)}/{len(key)}")
    print(f"  answer: {len(answered)} statements, {len(hits)} planted")
    print(f"  recall {recall:.3f}  precision {precision:.3f}")
    print(
        f"  wall {wall * 1000:.0f} ms (median of {repeat}): model {model * 1000:.0f} ms, "
        f"framework {(wall - model) * 1000:.0f} ms ({(wall - model) / wall:.0%})"
    )
    bodies = [json.dumps(call.body).encode() for call in record.calls if call.body is not None]
    sizes = [len(body) for body in bodies]
    small = systemone.encode_body(SMALL, "jev-latest")
    workloads = [
        (f"the demo's {len(bodies)} requests ({min(sizes)}..{max(sizes)} bytes)", bodies, requests),
        (f"a small request ({len(small)} bytes, 3 questions)", [small], requests * 5),
    ]
    for name, workload, count in workloads:
        decisions = [systemone.decode_request(json.loads(body))[0] for body in workload]
        served, direct = 0.0, 0.0
        for _ in range(rounds):  # alternate, keep the best of each: the machine is shared
            direct = max(direct, await replay_in_process(decisions, count, concurrency))
            served = max(served, await replay_through_server(workload, count, concurrency))
        print(f"replay of {name}: {count} requests, concurrency {concurrency}, best of {rounds}")
        print(f"  harness serve (loopback HTTP): {served:.0f} decisions/s")
        print(f"  in-process dispatcher:         {direct:.0f} decisions/s")
        print(f"  serve / in-process:            {served / direct:.2f}")


def parse() -> argparse.Namespace:
    """The options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--max-turns", type=int, default=DEMO_MAX_TURNS)
    parser.add_argument(
        "--requests", type=int, default=200, help="replayed demo requests (5x for the small one)"
    )
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5, help="demo runs (median time)")
    parser.add_argument("--rounds", type=int, default=2, help="replay rounds (best kept)")
    return parser.parse_args()


if __name__ == "__main__":
    options = parse()
    asyncio.run(
        main(
            options.max_turns, options.requests, options.concurrency, options.repeat, options.rounds
        )
    )
