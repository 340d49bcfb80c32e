"""What reading decisions from an LLM's logprobs costs: calls, tokens and harness's own time.

The demo's decision requests (captured from a run of the demo on its answer-key policy) are
asked again through each logprob method:

* ``completions``: ``openai-completions``, every option scored from echoed prompt logprobs;
* ``completions x2``: the same under two cyclic orderings (position-bias correction);
* ``chat``: ``openai-chat``, labels read from ``top_logprobs`` (``mass_floor = 0``: the test
  model spreads its mass, and the point here is the cost, not the answer);
* ``chat x2``: the same under two orderings.

For each it prints, per decision: the upstream calls (mean, max), the prompt tokens the server
billed (mean), and harness's own time against the upstream's. harness's own time is the CPU time
of this process while the decisions run (building prompts, parsing logprobs, normalising); the
upstream time is the rest of the wall time. The upstream runs in another process, so the two do
not share a CPU clock. Target: own / upstream <= 0.1.

By default the upstream is harness's loopback test server (``python -m
harness.testing.logprob_server``: a bigram model over ``cl100k_base``, far cheaper per token
than any real LLM, so the ratio it gives is an upper bound). ``--upstream URL --model NAME``
measures a real OpenAI-compatible server instead (e.g. llama-cpp-python serving Gemma 3 270M,
see docs/llama.md); the model is named in the output.

``--decisions N`` keeps the first N requests and ``--methods`` some of the methods (e.g.
``--methods chat,"chat x2"``): for a slow upstream, where the whole set does not fit; the output
then says which subset it measured.

Run: ``python benchmarks/llm_provider.py`` (offline, about three minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

import attrs

from harness.catalog import CatalogEntry
from harness.decision import DecisionRequest
from harness.demo import AnswerKeyPolicy, answer_key
from harness.providers import client_for
from harness.testing import FakeDecisionModel


async def demo_requests() -> list[DecisionRequest]:
    """The decision requests of one demo run answered by the answer key (the same run as
    ``run_demo_with(AnswerKeyPolicy(answer_key()))``, its client kept: the fake model keeps
    every request it is asked, once)."""
    from harness.demo import POLICY_ENTRY, policy_catalog, run_demo

    model = FakeDecisionModel(AnswerKeyPolicy(answer_key()))
    await run_demo(catalog=policy_catalog(), clients={POLICY_ENTRY: model})
    return list(model.requests)


@attrs.frozen
class Method:
    name: str
    provider: str
    orderings: int


METHODS = (
    Method("completions", "openai-completions", 1),
    Method("completions x2", "openai-completions", 2),
    Method("chat", "openai-chat", 1),
    Method("chat x2", "openai-chat", 2),
)


@attrs.frozen
class Figures:
    calls: list[int]
    tokens: list[int]
    own: float
    wall: float
    refused: int

    @property
    def upstream(self) -> float:
        return max(self.wall - self.own, 1e-9)


async def measure(
    method: Method, root: str, model: str, requests: Sequence[DecisionRequest]
) -> Figures:
    entry = CatalogEntry(
        id=method.name,
        provider=method.provider,
        wire_model_id=model,
        base_url=root,
        max_context_tokens=1_000_000,
        max_concurrent=8,
        mass_floor=0.0,
        orderings=method.orderings,
    )
    client = client_for(entry)
    calls: list[int] = []
    tokens: list[int] = []
    refused = 0
    try:
        await client.decide(requests[0], entry)  # warm: connection, tokenizer caches
        cpu, wall = time.process_time(), time.perf_counter()
        for request in requests:
            response = await client.decide(request, entry)
            reading = response.reading or {}
            count = reading.get("upstream_calls")
            calls.append(count if isinstance(count, int) else 0)
            tokens.append(response.input_tokens or 0)
            refused += sum(1 for a in response.answers.values() if a.kind == "refused")
        own, elapsed = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        await client.aclose()
    return Figures(calls, tokens, own, elapsed, refused)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--upstream", help="base URL of an OpenAI-compatible server with logprobs")
    parser.add_argument("--model", default="bigram-test", help="the model name it serves")
    parser.add_argument("--decisions", type=int, default=0, help="only the first N requests")
    parser.add_argument(
        "--methods",
        default=",".join(m.name for m in METHODS),
        help="comma-separated methods to measure (default: all: "
        + ", ".join(m.name for m in METHODS)
        + ")",
    )
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.methods.split(",") if name.strip()]
    unknown = [name for name in names if name not in {m.name for m in METHODS}]
    if unknown or not names:
        parser.error(
            f"--methods: unknown method {', '.join(unknown) or '(none)'}; choose among "
            + ", ".join(m.name for m in METHODS)
        )
    methods = [m for m in METHODS if m.name in names]
    requests = asyncio.run(demo_requests())
    total = len(requests)
    if args.decisions:
        requests = requests[: args.decisions]
    server: subprocess.Popen[bytes] | None = None
    root = args.upstream
    if root is None:
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "harness.testing.logprob_server", "--port", str(port)],
            stdout=subprocess.DEVNULL,
        )
        root = f"http://127.0.0.1:{port}"
        time.sleep(3)
    model = args.model
    subset = (
        f"the first {len(requests)} of the {total} decision requests"
        if len(requests) < total
        else f"all {total} decision requests"
    )
    print(f"upstream: {root}, model {model!r}; {subset} of one demo run")
    questions = [len(r.questions) for r in requests]
    print(f"questions per request: mean {statistics.fmean(questions):.1f}, max {max(questions)}")
    print(
        f"{'method':16} {'calls/decision':>16} {'tokens/decision':>16} {'own s':>8} "
        f"{'upstream s':>10} {'own/upstream':>12} {'refused':>8}"
    )
    try:
        for method in methods:
            figures = asyncio.run(measure(method, root, model, requests))
            ratio = figures.own / figures.upstream
            calls = f"{statistics.fmean(figures.calls):.1f} (max {max(figures.calls)})"
            print(
                f"{method.name:16} {calls:>16} {statistics.fmean(figures.tokens):>16.0f} "
                f"{figures.own:>8.3f} {figures.upstream:>10.3f} {ratio:>12.3f} {figures.refused:>8}"
            )
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    print(
        "own = this process's CPU time over the decisions; upstream = the rest of the wall time "
        "(the server's work and the loopback); target own/upstream <= 0.1. One run, one "
        "machine: a figure, not an interval."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
