"""The question schemes weighed on tokens and on answers, on the embedded model.

Two parts, in one run, offline:

* **labelled scenarios**: small worlds with a known right answer, each put to sparrow-decider as
  one turn's request under each scheme (same state, same ids): an input question over every
  artifact (is the top choice one of the labelled relevant artifacts? how much probability do
  they get, against their share of the options?) and a selection per artifact (accuracy at the
  0.5 threshold; AUC: how often a relevant artifact is rated above an irrelevant one). Tokens
  per request under ``cl100k_base``.
* **the demo**: ``harness demo`` (the embedded model, the shipped corpus) run once under each
  scheme: turns, decisions, recall and precision of the planted decisions, input tokens counted
  per run.

A script, not a test: ``python benchmarks/economy.py [--no-demo] [--schemes lean verbose]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import statistics
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from harness.catalog import tokenizer
from harness.decision import DecisionRequest, systemone
from harness.thinker._scheme import QuestionScheme, build_request, check_scheme

sys.path.insert(0, str(pathlib.Path(__file__).parent))


@attrs.frozen
class Scenario:
    """A world of (alias, words) with the relevant artifacts labelled."""

    objective: str
    alias: str
    items: tuple[tuple[str, bool], ...]  # (words, relevant)
    tool: str = "inspect"
    description: str = "Reads an artifact closely."


SCENARIOS = (
    Scenario(
        "Keep the words that name a Greek letter",
        "word",
        (
            ("alpha", True),
            ("table", False),
            ("beta", True),
            ("river", False),
            ("gamma", True),
            ("chair", False),
            ("omega", True),
            ("bread", False),
        ),
    ),
    Scenario(
        "Find the tickets where a customer was charged twice",
        "ticket",
        (
            ("I cannot log in since the last update", False),
            ("You billed my card two times for the March invoice", True),
            ("How do I export my data to CSV?", False),
            ("Double charge on my subscription this month, please refund one", True),
            ("The app crashes when I open settings", False),
            ("Please change the e-mail address on my account", False),
        ),
    ),
    Scenario(
        "Find the statements that decide a price change and say from when it applies",
        "statement",
        (
            ("From 1 March the monthly fee rises to 12 EUR.", True),
            ("The office is closed on Friday afternoon.", False),
            ("The board decided that list prices go up 4 % as of 1 July.", True),
            ("Coffee is served in the kitchen on the second floor.", False),
            ("We discussed the results of the customer survey.", False),
            ("Starting next quarter, the premium plan costs 30 EUR instead of 25 EUR.", True),
            ("The new logo will be presented at the next meeting.", False),
        ),
    ),
    Scenario(
        "Find the invoices that are overdue",
        "document",
        (
            ("Invoice 2024-031, due 15 January, not paid", True),
            ("Minutes of the team meeting of 3 February", False),
            ("Invoice 2024-027, paid in full on 2 January", False),
            ("Reminder: invoice 2024-019 is 40 days past its due date", True),
            ("Holiday schedule for the summer", False),
        ),
    ),
    Scenario(
        "Find the bug reports about a crash on startup",
        "report",
        (
            ("The app crashes immediately when it starts", True),
            ("Typo on the pricing page", False),
            ("Segmentation fault at launch on Linux", True),
            ("Dark mode colours are too bright", False),
            ("Feature request: export to PDF", False),
            ("Startup crash after upgrading to 2.3", True),
        ),
    ),
    Scenario(
        "Find the vegetarian recipes",
        "recipe",
        (
            ("Lentil soup with carrots and cumin", True),
            ("Beef stew with red wine", False),
            ("Spinach and ricotta lasagne", True),
            ("Grilled chicken with lemon", False),
            ("Salmon with dill sauce", False),
            ("Mushroom risotto", True),
        ),
    ),
    Scenario(
        "Find the e-mails that ask for a meeting",
        "email",
        (
            ("Could we meet on Tuesday to go over the budget?", True),
            ("Your parcel has been shipped", False),
            ("Newsletter: ten tips for better sleep", False),
            ("Are you free for a call this week to discuss the contract?", True),
            ("Your password was changed", False),
        ),
    ),
    Scenario(
        "Keep the words that name a mammal",
        "word",
        (
            ("horse", True),
            ("sparrow", False),
            ("whale", True),
            ("salmon", False),
            ("tiger", True),
            ("lizard", False),
            ("bat", True),
            ("frog", False),
        ),
    ),
)


def request_of(scenario: Scenario, scheme: QuestionScheme) -> DecisionRequest:
    """One turn's request over the scenario's world: its tool on every artifact, every artifact
    a candidate (so both question kinds are asked together, as in a thinker's turn)."""
    refs = [f"{scenario.alias}#{i + 1}" for i in range(len(scenario.items))]
    words = {ref: text for ref, (text, _) in zip(refs, scenario.items, strict=True)}
    line = {ref: f"{ref} ({scenario.alias}): {text}" for ref, text in words.items()}
    return build_request(
        scheme,
        objective=scenario.objective,
        lines=[line[ref] for ref in refs],
        words=words,
        line=line,
        done=["nothing yet"][:0],
        moves=[(scenario.tool, scenario.description, refs)],
        candidates=refs,
    )


def auc(relevant: Sequence[float], irrelevant: Sequence[float]) -> float:
    """How often a relevant item is rated above an irrelevant one (ties count half)."""
    pairs = [(r > i) + 0.5 * (r == i) for r in relevant for i in irrelevant]
    return sum(pairs) / len(pairs)


def scenarios(schemes: Sequence[QuestionScheme]) -> dict[str, dict[str, float]]:
    """Per scheme: the scenario figures, averaged over the scenarios."""
    import sparrow_decider

    model = sparrow_decider.Decider.load()
    counter = tokenizer("cl100k_base")
    out: dict[str, dict[str, float]] = {}
    for scheme in schemes:
        rows: list[dict[str, float]] = []
        for scenario in SCENARIOS:
            request = request_of(scenario, scheme)
            body = systemone.encode_request(request, "sparrow-decider")
            questions = body["questions"]
            assert isinstance(questions, dict)
            answers: Mapping[str, Any] = model.ask(body["state"], questions)
            refs = [f"{scenario.alias}#{i + 1}" for i in range(len(scenario.items))]
            label = {ref: rel for ref, (_, rel) in zip(refs, scenario.items, strict=True)}
            chosen = answers[f"{scenario.tool}_input"]
            mass = sum(p for ref, p in chosen["probabilities"].items() if label[ref])
            share = sum(label.values()) / len(label)
            selected = {ref: float(answers[f"select_{ref}"]["noul"]) for ref in refs}
            rows.append(
                {
                    "input top-1 relevant": float(label[chosen["choice"]]),
                    "input mass / share": mass / share,
                    "selection accuracy": sum((selected[r] >= 0.5) == label[r] for r in refs)
                    / len(refs),
                    "selection AUC": auc(
                        [selected[r] for r in refs if label[r]],
                        [selected[r] for r in refs if not label[r]],
                    ),
                    "tokens": float(counter.count(systemone.encode_body(request, "x"))),
                }
            )
        out[scheme] = {key: statistics.mean(row[key] for row in rows) for key in rows[0]}
    return out


def demo(schemes: Sequence[QuestionScheme]) -> dict[str, dict[str, float]]:
    """Per scheme: the demo's turns, decisions, recall, precision and tokens counted."""
    from harness.demo import answer_key, answer_statements, score_answer
    from harness.demo._run import run_demo
    from harness.demo._thinker import PriceDecisionFinder

    out: dict[str, dict[str, float]] = {}
    key = answer_key()
    for scheme in schemes:
        PriceDecisionFinder.question_scheme = scheme  # the demo's thinker, under this scheme
        try:
            run = asyncio.run(run_demo(keep_bodies=True))
        finally:
            del PriceDecisionFinder.question_scheme
        record = run.record
        score = score_answer(answer_statements(record), key)
        counted = [call.counted_input_tokens or 0 for call in record.calls]
        sizes = [len(json.dumps(call.body)) for call in record.calls if call.body is not None]
        out[scheme] = {
            "turns": float(len(record.turns)),
            "decisions": float(len(record.calls)),
            "recall": score.recall,
            "precision": score.precision or 0.0,
            "answer size": float(score.selected),
            "tokens per run": float(sum(counted)),
            "largest body KB": max(sizes, default=0) / 1024,
        }
    return out


def table(title: str, figures: Mapping[str, Mapping[str, float]]) -> None:
    schemes = list(figures)
    print(title)
    print(f"  {'figure':<24}" + "".join(f"{s:>12}" for s in schemes))
    for key in figures[schemes[0]]:
        print(f"  {key:<24}" + "".join(f"{figures[s][key]:>12.3f}" for s in schemes))


def main() -> None:
    """Parse the options, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemes", nargs="+", default=["verbose", "lean"])
    parser.add_argument("--no-demo", dest="demo", action="store_false")
    options = parser.parse_args()
    schemes = [check_scheme(s) for s in options.schemes]
    table(
        f"labelled scenarios ({len(SCENARIOS)}, sparrow-decider, mean per scenario)",
        scenarios(schemes),
    )
    if options.demo:
        table("the demo (harness demo, sparrow-decider, one run each)", demo(schemes))


if __name__ == "__main__":
    main()
