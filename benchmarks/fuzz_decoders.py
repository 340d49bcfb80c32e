"""Are the reply decoders total? 100,000 hostile bodies per decoder, counting foreign exceptions.

Each body goes through ``decode_body`` (bytes in: size and depth bounds, JSON parsing, the
decoding itself) of the System One and the OpenAI Decisions codec. A decoded answer or the
codec's own :class:`harness.errors.NotAnAnswerError` (or a subclass) is fine; anything else is a
*foreign* exception and is counted (the target is 0), with the first few shown.

The bodies (seeded, so a run repeats): valid replies with one field mutated (a number replaced
by ``10**400``, ``-0.0``, ``1e308``, ``NaN``, a string, a bool, null, a list, a deep nest; a
key dropped; a type swapped), random JSON values of every kind and depth, the reply cut at a
random byte, random bytes, invalid UTF-8, huge integers, deep nests past the bound, and
``NaN`` / ``Infinity`` literals.

Run: ``python benchmarks/fuzz_decoders.py [--bodies N] [--seed S]`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from collections.abc import Callable

from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    Noul,
    NoulAnswer,
    Score,
    ScoreAnswer,
    openai,
    systemone,
)
from harness.errors import NotAnAnswerError

REQUEST = DecisionRequest(
    "state",
    {
        "team": Choice("Which team?", {"Billing": "invoices", "Tech": None, "Sales": "deals"}),
        "urgent": Noul("Urgent?"),
        "anger": Score("How angry?", ("calm", "annoyed", "furious")),
    },
)
ANSWERS = {
    "team": ChoiceAnswer("Billing", {"Billing": 0.7, "Tech": 0.2, "Sales": 0.1}, 0.55),
    "urgent": NoulAnswer(0.3),
    "anger": ScoreAnswer(0.5, ("calm", "annoyed", "furious"), (0.6, 0.3, 0.1), 0.4),
}
ODD: list[object] = [
    10**400,
    -(10**400),
    10**16,
    -0.0,
    1e308,
    5e-324,
    float("nan"),
    float("inf"),
    "0.5",
    "",
    "\ud800",
    True,
    False,
    None,
    [],
    {},
    [0.5],
    {"value": 0.5},
    -1,
    2,
    0,
    1,
]


def _random_json(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 6 or roll < 0.4:
        return rng.choice([*ODD, rng.random(), rng.randint(-5, 5), "Billing", "choice", "0"])
    if roll < 0.7:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["answers", "model", "usage", "type", "choice", "probabilities", "score", "noul"]
    keys += ["confidence", "value", "probability", "name", "refusal", "input_tokens", "x"]
    return {rng.choice(keys): _random_json(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def _mutate(rng: random.Random, value: object, depth: int = 0) -> object:
    """``value`` with one place (chosen at random, walking down) changed."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        out = dict(value)
        roll = rng.random()
        if roll < 0.15:
            del out[key]
        elif roll < 0.25:
            out[key] = _random_json(rng)
        else:
            out[key] = _mutate(rng, value[key], depth + 1)
        return out
    if isinstance(value, list) and value and rng.random() < 0.8:
        index = rng.randrange(len(value))
        out_list = list(value)
        if rng.random() < 0.15:
            del out_list[index]
        else:
            out_list[index] = _mutate(rng, value[index], depth + 1)
        return out_list
    return rng.choice([*ODD, _random_json(rng)])


def _dump(value: object) -> bytes:
    return json.dumps(value, allow_nan=True).encode("utf-8", errors="surrogatepass")


def bodies(codec: str, count: int, seed: int) -> list[bytes]:
    """``count`` hostile bodies for ``codec`` ("systemone" or "openai"), seeded."""
    rng = random.Random(f"{seed}-{codec}")
    module = systemone if codec == "systemone" else openai
    names = dict(zip(REQUEST.questions, openai.question_names(REQUEST), strict=True))
    answers = ANSWERS if codec == "systemone" else {names[k]: a for k, a in ANSWERS.items()}
    valid = module.encode_reply(answers, model="m", input_tokens=7)
    out: list[bytes] = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.55:
            body = _dump(_mutate(rng, _mutate(rng, valid)))
        elif roll < 0.7:
            body = _dump(_random_json(rng))
        elif roll < 0.78:
            raw = _dump(valid)
            body = raw[: rng.randrange(len(raw))]
        elif roll < 0.85:
            body = rng.randbytes(rng.randint(0, 64))
        elif roll < 0.9:
            depth = rng.choice([31, 33, 100, 5_000, 100_000])
            body = b"[" * depth + b"]" * depth * rng.randint(0, 1)
        elif roll < 0.95:
            body = _dump(valid).replace(b"0.7", rng.choice([b"NaN", b"Infinity", b"1" * 5000]))
        else:
            body = _dump(valid).replace(b'"m"', b'"\\udc80\\u0000' + b"x" * 300 + b'"')
        out.append(body)
    return out


def run(codec: str, count: int, seed: int) -> tuple[int, Counter[str], int, float]:
    """(foreign exceptions, their kinds, bodies decoded, seconds)."""
    module = systemone if codec == "systemone" else openai
    decode: Callable[[DecisionRequest, bytes], object] = module.decode_body
    foreign: Counter[str] = Counter()
    decoded = 0
    started = time.perf_counter()
    for body in bodies(codec, count, seed):
        try:
            decode(REQUEST, body)
        except NotAnAnswerError:
            continue
        except Exception as error:  # what this script counts: anything else
            foreign[f"{type(error).__name__}: {str(error)[:80]}"] += 1
            continue
        decoded += 1
    return sum(foreign.values()), foreign, decoded, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bodies", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    total = 0
    for codec in ("systemone", "openai"):
        count, kinds, decoded, seconds = run(codec, args.bodies, args.seed)
        total += count
        print(
            f"{codec}: {args.bodies} bodies, {decoded} decoded, "
            f"{args.bodies - decoded - count} refused by name, {count} foreign exceptions "
            f"({seconds:.1f} s)"
        )
        for kind, times in kinds.most_common(5):
            print(f"  {times} x {kind}")
    print(f"foreign exceptions: {total}")


if __name__ == "__main__":
    main()
