"""The demo as a benchmark: answer quality, where the time goes, and `harness serve` throughput.

Three figures, in one run, offline:

* **quality**, side by side for three models of the shipped corpus: the embedded model
  (sparrow-decider), the answer-key policy (the perfect model: it reads the files of
  ``harness/demo/answer_key.json`` and keeps their planted sentences) and a policy picking
  uniformly at random (pooled over ``--seeds`` seeds): recall and precision of the planted price
  decisions, how many planted decisions the runs reached at all (read into statements, so they
  were candidates), and the share of tool turns that failed (0 when the palette's types rule
  out every move on a file that cannot be read);
* **time**: the embedded demo's wall time split into model time (the latency each decision
  call's job record holds, summed) and framework time (the rest: dispatch, admission, tools,
  digests, tokenizing, the thinker's bookkeeping);
* **throughput**: the embedded demo's own decision requests (their wire bodies, kept in the
  record) replayed through `harness serve` (the server in this process, a loopback aiohttp
  client at a fixed concurrency) and, for comparison, through a dispatcher calling the embedded
  model in-process: decisions per second each way.

Answer quality is a figure to improve, not something to tune the corpus to.

Run: ``python benchmarks/demo.py [--max-turns N] [--seeds N] [--requests N] [--concurrency N]``
(``--no-replay`` skips the throughput part; the whole run takes a minute or two on two cores:
the demo's large requests take the embedded model 10-150 ms each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Sequence

import aiohttp
import attrs

from harness.catalog import default_catalog
from harness.decision import Choice, DecisionRequest, Noul, Score, systemone
from harness.demo import (
    DEMO_MAX_TURNS,
    AnswerKey,
    AnswerKeyPolicy,
    UniformRandomPolicy,
    answer_key,
    answer_statements,
    run_demo,
    run_demo_with,
    score_answer,
)
from harness.jobs import Dispatcher
from harness.record import RunRecord
from harness.serve import DecisionServer
from harness.thinker import FINISH, DecisionCall
from harness.tools import Workflow


@attrs.frozen
class Quality:
    """The pooled figures of some runs of one model on the shipped corpus."""

    model: str
    runs: int
    tool_turns: int
    failed_turns: int
    planted: int
    reached: int
    selected: int
    found: int

    @property
    def recall(self) -> float:
        return self.found / self.planted if self.planted else 0.0

    @property
    def precision(self) -> float | None:
        return self.found / self.selected if self.selected else None

    @property
    def failed_share(self) -> float:
        return self.failed_turns / self.tool_turns if self.tool_turns else 0.0


def candidate_texts(record: RunRecord) -> set[str]:
    """The text of every statement that was an output candidate (its digest words)."""
    texts = set()
    for ref, line in record.artifacts.items():
        if ref.startswith("statement#"):
            texts.add(line.split("): ", 1)[1] if "): " in line else line)
    return texts


def quality(model: str, records: Sequence[RunRecord], key: AnswerKey) -> Quality:
    """Pool ``records`` (runs of one model) into one :class:`Quality`."""
    tool_turns = failed = reached = selected = found = 0
    for record in records:
        turns = [turn for turn in record.turns if turn.tool != FINISH]
        tool_turns += len(turns)
        failed += sum(1 for turn in turns if turn.failure is not None)
        reached += len(key.sentences & candidate_texts(record))
        score = score_answer(answer_statements(record), key)
        selected += score.selected
        found += score.found
    planted = len(key.decisions) * len(records)
    return Quality(model, len(records), tool_turns, failed, planted, reached, selected, found)


def print_quality(rows: Sequence[Quality], max_turns: int) -> None:
    """The quality table, one row per model."""
    print(f"quality on the shipped corpus (7 planted decisions), max_turns {max_turns}:")
    print(
        f"  {'model':<28} {'runs':>4} {'tool turns':>10} {'failed':>7} {'reached':>8} "
        f"{'selected':>8} {'found':>6} {'recall':>7} {'precision':>9}"
    )
    for row in rows:
        precision = "-" if row.precision is None else f"{row.precision:.3f}"
        print(
            f"  {row.model:<28} {row.runs:>4} {row.tool_turns / row.runs:>10.1f} "
            f"{row.failed_share:>7.1%} {row.reached / row.runs:>6.1f}/7 "
            f"{row.selected / row.runs:>8.1f} {row.found / row.runs:>6.1f} "
            f"{row.recall:>7.3f} {precision:>9}"
        )
    print("  (per run: tool turns, reached, selected, found; pooled: recall, precision, failed)")


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


async def main(
    max_turns: int, seeds: int, requests: int, concurrency: int, repeat: int, rounds: int
) -> None:
    """Run the three models, time the embedded demo, then the throughput replay; print."""
    key = answer_key()
    walls, models = [], []
    run = None
    for _ in range(repeat):
        run = await run_demo(max_turns=max_turns, keep_bodies=True)
        walls.append(run.record.wall_seconds)
        models.append(run.record.model_seconds)
    assert run is not None
    record = run.record
    perfect = await run_demo_with(AnswerKeyPolicy(key), max_turns=max_turns)
    randoms = [
        (await run_demo_with(UniformRandomPolicy(seed), max_turns=max_turns)).record
        for seed in range(seeds)
    ]
    print_quality(
        [
            quality("embedded (sparrow-decider)", [record], key),
            quality("answer-key policy", [perfect.record], key),
            quality(f"uniform random ({seeds} seeds)", randoms, key),
        ],
        max_turns,
    )
    wall = statistics.median(walls)
    model = statistics.median(models)
    print(
        f"embedded demo: {len(record.turns)} turns, {len(record.calls)} decisions, "
        f"{sum(1 for r in record.artifacts if r.startswith('statement#'))} candidates"
    )
    print(
        f"  wall {wall * 1000:.0f} ms (median of {repeat}): model {model * 1000:.0f} ms, "
        f"framework {(wall - model) * 1000:.0f} ms ({(wall - model) / wall:.0%})"
    )
    if requests <= 0:
        return
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
    parser.add_argument("--seeds", type=int, default=20, help="runs of the random policy")
    parser.add_argument(
        "--no-replay", action="store_true", help="skip the throughput replay (quality and time)"
    )
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
            options.max_turns,
            options.seeds,
            0 if options.no_replay else options.requests,
            options.concurrency,
            options.repeat,
            options.rounds,
        )
    )
