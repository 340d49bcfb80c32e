"""Writes the shipped labelled data from the hand-written templates below (seeded, offline).

Run ``python -m scripts.shipped_data --write`` to rewrite the files in ``harness/evals/data/``,
or with ``--check`` to fail when they differ from what the templates give (a test does).

Three domains, none the demo's: ``support`` (support tickets), ``recipes`` (recipes), ``logs``
(server log entries). Each item is drawn from its domain's attributes (a ticket's team, whether
it asks for a refund, its urgency; a recipe's course, whether it is vegetarian, its effort; a
log entry's component, its severity and whether it needs an engineer now), and its text is put
together from fragments written for that attribute, so every label is known by construction.

* ``decisions.jsonl``: labelled decisions (one request, one question each): per item a
  ``Choice`` (team / course / component), a ``Noul`` (refund / vegetarian / page) and a
  ``Score`` (urgency / effort / severity), asked under the ids ``choice``, ``noul`` and
  ``score``, labelled with the right option, the truth and the level. Items are split
  ``dev`` / ``test`` (half each, per domain), all of an item's questions in the same split.
* ``runs-<domain>.jsonl``: labelled runs of that domain's thinker
  (:mod:`harness.evals.data.domains`): a batch of items as the input, the items its objective
  asks for as the expected answer; split ``dev`` / ``test`` the same way.

Each line is a :class:`harness.evals.DecisionPack` decision or a :class:`harness.evals.Dataset`
case; its ``tags`` are its split (``dev`` or ``test``), its domain and (a decision) its question's
kind. Written by hand for harness and released with it under the project's license.

One concern, past 400 lines: the shipped files from their templates, one seeded pass, so a
change of a template and the check that the files still match it are read in one place.
"""

from __future__ import annotations

import argparse
import json  # the stdlib: lines with json's default separators, which orjson cannot write
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import attrs

from scripts.triage_notes import triage_lines
from scripts.triage_selections import selection_lines

__all__ = [
    "DATA",
    "SEED",
    "DomainQuestions",
    "decision_lines",
    "domain_items",
    "files",
    "main",
    "run_lines",
]

SEED: Final = 20261201
DATA: Final = Path(__file__).resolve().parent.parent / "harness" / "evals" / "data"
"""The shipped data's folder in this checkout."""
ITEMS_PER_DOMAIN: Final = 44
"""Items per domain in the decision packs (three questions each)."""
RUNS_PER_DOMAIN: Final = 20

Item = dict[str, object]

# -- support tickets -------------------------------------------------------------------------

PRODUCTS = ("Pro plan", "Team plan", "starter kit", "annual licence", "mobile app", "API add-on")
NAMES = ("Ana", "Bilal", "Chen", "Dora", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jia")

TEAM_PROBLEMS: Final[dict[str, Sequence[str]]] = {
    "billing": (
        "I was charged twice for the {product} this month",
        "My invoice for the {product} shows the wrong amount of {amount}",
        "The card on file was billed {amount} although I cancelled the {product}",
        "Your price page said {amount} but the {product} cost more at checkout",
    ),
    "technical": (
        "The {product} crashes every time I open a report",
        "Since the last update the {product} will not sync my files",
        "The {product} shows error 502 when I try to log data",
        "Exports from the {product} come out empty",
    ),
    "account": (
        "I cannot reset the password of my account for the {product}",
        "Please move the {product} to my colleague's account, {name} is leaving",
        "My account was locked after I changed my email address",
        "I need to add a second admin to our account for the {product}",
    ),
    "shipping": (
        "The {product} I ordered never arrived, tracking stopped a week ago",
        "The parcel with the {product} came with a broken box and missing parts",
        "You shipped the {product} to my old address",
        "Order {order} was sent by slow post instead of express",
    ),
}
REFUND_YES = (
    "Please refund the {amount}.",
    "I want my money back.",
    "Refund the order and close my account.",
    "I'd like a full refund for order {order}.",
    "Send the money back to my card, please.",
)
REFUND_NO = (
    "I do not want a refund, just a fix.",
    "Please keep my plan running as it is.",
    "Could you explain what happened?",
    "Thanks for looking into it.",
    "Let me know what I should do next.",
)
URGENCY: Final[dict[str, Sequence[str]]] = {
    "low": ("No rush, whenever you have time.", "It can wait until next month."),
    "medium": ("Please look at it this week.", "I'd like an answer in the next few days."),
    "high": ("This blocks our whole team right now!", "Urgent: we go live in an hour."),
}


def _support_item(rng: random.Random) -> Item:
    team = rng.choice(sorted(TEAM_PROBLEMS))
    refund = rng.random() < 0.4
    urgency = rng.choice(("low", "medium", "high"))
    slots = {
        "product": rng.choice(PRODUCTS),
        "amount": f"${rng.randrange(9, 400)}.{rng.randrange(0, 100):02d}",
        "order": f"#{rng.randrange(10000, 99999)}",
        "name": rng.choice(NAMES),
    }
    parts = [
        rng.choice(TEAM_PROBLEMS[team]) + ".",
        rng.choice(REFUND_YES if refund else REFUND_NO),
        rng.choice(URGENCY[urgency]),
    ]
    text = " ".join(part.format(**slots) for part in parts) + f" - {rng.choice(NAMES)}"
    return {"text": text, "choice": team, "noul": refund, "score": urgency}


# -- recipes ---------------------------------------------------------------------------------

DISHES: Final[dict[tuple[str, bool], Sequence[str]]] = {
    ("starter", True): ("tomato bruschetta", "leek and potato soup", "grilled halloumi"),
    ("starter", False): ("prawn cocktail", "chicken liver pate", "smoked salmon blinis"),
    ("main", True): ("mushroom risotto", "chickpea curry", "spinach lasagne", "bean chilli"),
    ("main", False): ("beef stew", "roast chicken", "pork belly with apples", "cod in batter"),
    ("dessert", True): ("apple crumble", "chocolate mousse", "lemon tart", "rice pudding"),
    ("dessert", False): (
        "panna cotta set with pork gelatine",
        "mince pies made with beef suet",
        "tart with a lard crust",
    ),
    ("drink", True): ("mango lassi", "mint lemonade", "spiced hot chocolate"),
    ("drink", False): ("beef bone broth in a mug", "clam and tomato juice", "bacon-rimmed punch"),
}
METHODS: Final[dict[str, Sequence[str]]] = {
    "starter": ("serve small portions before the meal", "plate it as a light first course"),
    "main": ("serve it hot as the main course", "it feeds four as a main dish"),
    "dessert": ("serve it sweet after the meal", "finish with a dusting of sugar"),
    "drink": ("pour it into tall glasses", "blend and serve it chilled to drink"),
}
EFFORT: Final[dict[str, Sequence[str]]] = {
    "quick": ("Ready in ten minutes.", "No cooking needed, done in five minutes."),
    "medium": ("Takes about forty-five minutes.", "Bake for half an hour."),
    "long": ("Simmer for four hours.", "Marinate overnight and cook slowly the next day."),
}


def _recipe_item(rng: random.Random) -> Item:
    course = rng.choice(("starter", "main", "dessert", "drink"))
    vegetarian = rng.random() < 0.5
    effort = rng.choice(("quick", "medium", "long"))
    dish = rng.choice(DISHES[(course, vegetarian)])
    text = (
        f"{dish[0].upper()}{dish[1:]}: {rng.choice(METHODS[course])}. {rng.choice(EFFORT[effort])}"
    )
    return {"text": text, "choice": course, "noul": vegetarian, "score": effort}


# -- server logs -----------------------------------------------------------------------------

HOSTS = ("api-1", "api-2", "db-main", "cache-3", "edge-eu", "worker-7")
USERS = ("alice", "bob", "svc-backup", "carol", "deploy-bot")
MESSAGES: Final[dict[tuple[str, str], Sequence[str]]] = {
    ("database", "info"): ("db: checkpoint complete in {n} ms", "db: vacuum finished on {table}"),
    ("database", "warning"): ("db: slow query took {n} ms on {table}",),
    ("database", "error"): ("db: connection pool exhausted ({n} waiting)",),
    ("database", "critical"): ("db: primary is down and replicas refuse writes",),
    ("network", "info"): ("net: link eth0 up at 10 Gb/s", "net: {host} joined the cluster"),
    ("network", "warning"): ("net: packet loss {n}% to {host}",),
    ("network", "error"): ("net: upstream {host} unreachable",),
    ("network", "critical"): ("net: all routes to the load balancer lost",),
    ("disk", "info"): ("disk: /var at {n}% used", "disk: snapshot of /data taken"),
    ("disk", "warning"): ("disk: /var at 9{d}% used, above the 85% mark",),
    ("disk", "error"): ("disk: write failed on /data: no space left on device",),
    ("disk", "critical"): ("disk: RAID array degraded, two drives failed",),
    ("auth", "info"): ("auth: user {user} logged in", "auth: token for {user} renewed"),
    ("auth", "warning"): ("auth: {n} failed logins for {user}",),
    ("auth", "error"): ("auth: token service returned 500 for {n} requests",),
    ("auth", "critical"): ("auth: signing key expired, every login fails",),
}
RECOVERED = " (recovered after a retry, no action needed)"


def _log_item(rng: random.Random) -> Item:
    component = rng.choice(("database", "network", "disk", "auth"))
    severity = rng.choice(("info", "warning", "error", "critical"))
    recovered = severity == "error" and rng.random() < 0.4
    page = severity == "critical" or (severity == "error" and not recovered)
    slots = {
        "n": rng.randrange(2, 90),
        "d": rng.randrange(0, 10),
        "host": rng.choice(HOSTS),
        "user": rng.choice(USERS),
        "table": rng.choice(("orders", "users", "events")),
    }
    message = rng.choice(MESSAGES[(component, severity)]).format(**slots)
    day, hour, minute = rng.randrange(1, 29), rng.randrange(0, 24), rng.randrange(0, 60)
    stamp = f"2027-03-{day:02d} {hour:02d}:{minute:02d}"
    text = f"{stamp} {severity.upper()} {message}" + (RECOVERED if recovered else "")
    return {"text": text, "choice": component, "noul": page, "score": severity}


# -- the questions ---------------------------------------------------------------------------


@attrs.frozen
class DomainQuestions:
    """What a domain's decisions ask: the state's key, and the choice, noul and score."""

    state_key: str
    choice: str
    options: dict[str, str]
    noul: str
    when_true: str
    when_false: str
    score: str
    levels: tuple[str, ...]


DOMAIN_QUESTIONS: Final[dict[str, DomainQuestions]] = {
    "support": DomainQuestions(
        state_key="ticket",
        choice="Which team should handle this support ticket?",
        options={
            "billing": "charges, invoices and prices",
            "technical": "the product does not work as it should",
            "account": "logins, passwords and who may use the account",
            "shipping": "parcels, delivery and addresses",
        },
        noul="Does the customer ask for a refund?",
        when_true="the customer wants money back",
        when_false="the customer does not ask for money back",
        score="How urgent is this ticket?",
        levels=("low", "medium", "high"),
    ),
    "recipes": DomainQuestions(
        state_key="recipe",
        choice="Which course is this recipe?",
        options={
            "starter": "a small first course",
            "main": "the main dish of a meal",
            "dessert": "a sweet course after the meal",
            "drink": "something to drink",
        },
        noul="Is this recipe vegetarian?",
        when_true="it has no meat and no fish",
        when_false="it contains meat or fish",
        score="How long does this recipe take?",
        levels=("quick", "medium", "long"),
    ),
    "logs": DomainQuestions(
        state_key="log_entry",
        choice="Which component does this log entry concern?",
        options={
            "database": "the database server",
            "network": "links, routes and hosts",
            "disk": "storage and file systems",
            "auth": "logins, users and tokens",
        },
        noul="Does this log entry need an engineer to act now?",
        when_true="someone must act now",
        when_false="it can wait or needs nothing",
        score="How severe is this log entry?",
        levels=("info", "warning", "error", "critical"),
    ),
}
"""Each domain's questions, as the model reads them. The three entries share a shape because they
are the same record filled three ways; what repeats is the field names, and the wording, which
differs, is the data."""

MAKERS: Final[dict[str, Callable[[random.Random], Item]]] = {
    "support": _support_item,
    "recipes": _recipe_item,
    "logs": _log_item,
}


def _split(index: int, count: int) -> str:
    return "dev" if index < count // 2 else "test"


def _wire_question(kind: str, spec: DomainQuestions) -> dict[str, object]:
    if kind == "choice":
        return {"instructions": spec.choice, "type": "choice", "criteria": spec.options}
    if kind == "noul":
        return {
            "instructions": spec.noul,
            "type": "noul",
            "criteria": {"true": spec.when_true, "false": spec.when_false},
        }
    return {"instructions": spec.score, "type": "score", "criteria": list(spec.levels)}


def decision_lines(seed: int = SEED) -> list[dict[str, object]]:
    """The labelled decisions, in file order."""
    lines: list[dict[str, object]] = []
    for domain in ("support", "recipes", "logs"):
        rng = random.Random(f"{seed}-decisions-{domain}")
        spec = DOMAIN_QUESTIONS[domain]
        items = _distinct(MAKERS[domain], rng, ITEMS_PER_DOMAIN)
        for index, item in enumerate(items):
            for kind in ("choice", "noul", "score"):
                label = item[kind]
                lines.append(
                    {
                        "name": f"{domain}-{index + 1:03d}-{kind}",
                        "tags": [_split(index, len(items)), domain, kind],
                        "request": {
                            "state": {spec.state_key: item["text"]},
                            "questions": {kind: _wire_question(kind, spec)},
                        },
                        "labels": {kind: label},
                    }
                )
    return lines


def _distinct(make: Callable[[random.Random], Item], rng: random.Random, count: int) -> list[Item]:
    seen: set[object] = set()
    items: list[Item] = []
    while len(items) < count:
        item = make(rng)
        if item["text"] not in seen:
            seen.add(item["text"])
            items.append(item)
    return items


def domain_items(domain: str, count: int, seed: int) -> list[Item]:
    """``count`` distinct items of ``domain`` drawn from its templates with ``seed`` (each with
    its text and its labels ``choice``, ``noul``, ``score``)."""
    return _distinct(MAKERS[domain], random.Random(f"{seed}-items-{domain}"), count)


def run_lines(domain: str, seed: int = SEED) -> list[dict[str, object]]:
    """The labelled runs of ``domain``, in file order."""
    rng = random.Random(f"{seed}-runs-{domain}")
    lines: list[dict[str, object]] = []
    for index in range(RUNS_PER_DOMAIN):
        size = rng.randrange(3, 8)
        items = _distinct(MAKERS[domain], rng, size)
        expected = [{"text": item["text"]} for item in items if item["noul"]]
        lines.append(
            {
                "name": f"{domain}-run-{index + 1:02d}",
                "tags": [_split(index, RUNS_PER_DOMAIN), domain],
                "input": {"text": "\n".join(str(item["text"]) for item in items)},
                "expected": expected,
            }
        )
    return lines


def files(seed: int = SEED) -> dict[str, bytes]:
    """Each data file's name and bytes."""

    def jsonl(lines: list[dict[str, object]]) -> bytes:
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()

    written = {"decisions.jsonl": jsonl(decision_lines(seed))}
    for domain in ("support", "recipes", "logs"):
        written[f"runs-{domain}.jsonl"] = jsonl(run_lines(domain, seed))
    written["runs-triage.jsonl"] = jsonl(triage_lines(seed))
    written["selections-triage.jsonl"] = jsonl(selection_lines(seed))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``--write`` the files, or ``--check`` that they are what the templates give."""
    parser = argparse.ArgumentParser(prog="python -m scripts.shipped_data")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the data files")
    mode.add_argument("--check", action="store_true", help="fail when a file differs")
    args = parser.parse_args(argv)
    stale = []
    for name, content in files().items():
        path = DATA / name
        if args.write:
            path.write_bytes(content)
        elif not path.is_file() or path.read_bytes() != content:
            stale.append(name)
    if stale:
        print(
            f"stale data file(s): {', '.join(stale)}: run python -m scripts.shipped_data --write",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
