"""Expense claims that need a manager's review, labelled: a set harness does not ship, written
for the tests the way a user writes their own (several phrasings, names, amounts and dates), as a
decision pack whose halves are tagged ``dev`` and ``test``."""

from __future__ import annotations

import json
from pathlib import Path

QUESTION = {
    "type": "noul",
    "instructions": "Does this expense claim need a manager's review?",
    "criteria": {
        "true": "it is personal, a luxury, alcohol or a gift, not a plain cost of the work",
        "false": "it is a plain cost of doing the work",
    },
}

REVIEW = [
    "a bottle of champagne for the team",
    "cocktails at the hotel bar",
    "two bottles of red wine with dinner",
    "beer for the office party",
    "a spa treatment at the conference hotel",
    "an upgrade to a first-class seat",
    "a suite at a five-star hotel",
    "a gym membership for the year",
    "cinema tickets for the family",
    "a gift basket for a client",
    "a designer watch as a thank-you gift",
    "a personal phone for home",
    "concert tickets for the weekend",
    "a massage after the flight",
]
ROUTINE = [
    "a train ticket to the client's office",
    "a taxi from the airport to the hotel",
    "printer paper and toner",
    "a standard hotel room for the conference",
    "a sandwich lunch during the site visit",
    "a software licence for the design tool",
    "parking at the client's building",
    "a bus pass for the training week",
    "postage for the signed contracts",
    "a conference registration fee",
    "a replacement laptop charger",
    "a second-class return ticket to the trade fair",
    "a USB cable for the projector",
    "the fuel for the company van",
]
NAMES = ["Ana", "Bram", "Chloe", "Dario", "Elif", "Femi", "Greta", "Hugo", "Ines", "Jonas"]
FORMS = [
    "{name} claims {amount} EUR for {item} on {day} March.",
    "Receipt attached: {item}, {amount} EUR, paid by {name}.",
    "Expense from {name}: {item} ({amount} EUR).",
    "Please reimburse {amount} EUR spent on {item} - {name}",
    "{name} paid for {item} ({amount} EUR) on the trip of {day} May.",
]


def claims() -> list[dict[str, object]]:
    """Every claim as a labelled decision: each item in several phrasings, alternately dev and
    test, so both halves hold every kind of claim in other words."""
    rows: list[dict[str, object]] = []
    number = 0
    for items, label in ((REVIEW, True), (ROUTINE, False)):
        for i, item in enumerate(items):
            for k in range(3):
                form = FORMS[(i + k) % len(FORMS)]
                text = form.format(
                    name=NAMES[(i * 3 + k) % len(NAMES)],
                    amount=12 + (i * 37 + k * 53) % 480,
                    item=item,
                    day=1 + (i + 7 * k) % 28,
                )
                rows.append(
                    {
                        "name": f"claim-{number:03d}",
                        "tags": ["dev" if number % 2 == 0 else "test", "claims"],
                        "request": {"state": {"claim": text}, "questions": {"review": QUESTION}},
                        "labels": {"review": label},
                    }
                )
                number += 1
    return rows


def write_claims(path: Path) -> Path:
    """The claims as a decision pack at ``path``."""
    path.write_text("".join(json.dumps(row) + "\n" for row in claims()), encoding="utf-8")
    return path
