"""Labelled notes of the guide's triage example (:class:`harness.demo.triage.Triage`), seeded.

Each note is 2 to 4 parts joined by ``"; "``, each part a short line of a to-do list or a diary,
put together from the fragments below: some need action under :class:`JudgeNote`'s rule (the
part's text holds ``due``, ``today``, ``urgent`` or ``now``, as a substring: the tool's own
rule, checked here against :func:`needs_action` for every part), the others do not. The words
vary (a deadline, a plea, a label, a date), so a model that reads the verdict's ``urgent`` field
has one cue and a model that reads the words has another.

The expected answer of a note is what the thinker's objective asks ("split the note, judge every
part, and keep the parts that need action"): the verdict of every **part** that needs action,
``{"note": <the part>, "urgent": true}``. The verdict of the whole note (``judge_note`` run on
the note before it was split) is **not** expected: the whole note is no part, and a run that keeps
it answers a note the objective asked to split. A note whose parts are all calm expects nothing.

The notes are split ``dev`` / ``test`` (the first half / the second): draw examples, fit a
calibration or a threshold on ``dev``, report on ``test``. Written by hand for harness and released
with it under the project's license; ``python -m scripts.shipped_data --check`` holds the
file to what this module gives.
"""

from __future__ import annotations

import random
from typing import Final

__all__ = ["NOTES", "URGENT_WORDS", "needs_action", "triage_lines"]

NOTES: Final = 48
"""Notes in the file: 24 ``dev``, 24 ``test`` (a Gemma 3 270M run of the thinker takes about
half a minute on two busy cores, so the figures on ``test`` take tens of minutes, not hours)."""

URGENT_WORDS: Final = ("due", "today", "urgent", "now")
"""What :class:`harness.demo.triage.JudgeNote` looks for in a part's lower-cased text."""

TASKS: Final = (
    "pay the water bill",
    "call the dentist",
    "answer Maria's email",
    "renew the gym card",
    "fix the bike light",
    "return the library books",
    "book the train to Porto",
    "send the invoice to Acme",
    "order printer ink",
    "water the tomato plants",
    "sign the school form",
    "back up the laptop",
    "collect the parcel",
    "reply to the landlord",
    "check the smoke alarm",
    "file the travel expenses",
)

URGENT_FORMS: Final = (
    "{task} today",
    "{task} right now",
    "urgent: {task}",
    "{task}, it is due on Friday",
    "{task} before noon today",
    "{task}, the deadline is due tomorrow",
    "Urgent - {task}",
    "{task} now, they are waiting",
)

CALM_FORMS: Final = (
    "{task} next month",
    "{task} some weekend",
    "maybe {task} in the spring",
    "{task} when there is time",
    "{task} later this year",
    "no rush to {task}",
)

REMARKS: Final = (
    "lunch with Sam was nice",
    "the garden looks fine",
    "a new cafe opened on the corner",
    "the cat slept all afternoon",
    "the concert was lovely",
    "the neighbours said hello",
    "the weather was mild",
    "the bread from the market was good",
    "Ivo liked the photos",
    "the hallway lamp works again",
)


def needs_action(part: str) -> bool:
    """Whether :class:`harness.demo.triage.JudgeNote` judges ``part`` urgent (its rule)."""
    lowered = part.lower()
    return any(word in lowered for word in URGENT_WORDS)


def _part(rng: random.Random, urgent: bool) -> str:
    task = rng.choice(TASKS)
    if urgent:
        text = rng.choice(URGENT_FORMS).format(task=task)
    elif rng.random() < 0.4:
        text = rng.choice(REMARKS)
    else:
        text = rng.choice(CALM_FORMS).format(task=task)
    if needs_action(text) != urgent:  # a fragment that breaks the rule: a bug in the lists
        raise AssertionError(f"part {text!r} is meant {'urgent' if urgent else 'calm'}")
    return text


def triage_lines(seed: int) -> list[dict[str, object]]:
    """The labelled notes (dataset cases of :class:`harness.demo.triage.Triage`), in file
    order."""
    rng = random.Random(f"{seed}-triage")
    lines: list[dict[str, object]] = []
    seen: set[str] = set()
    while len(lines) < NOTES:
        count = rng.randrange(2, 5)
        parts: list[str] = []
        while len(parts) < count:
            part = _part(rng, rng.random() < 0.5)
            if part not in parts:
                parts.append(part)
        text = "; ".join(parts)
        if text in seen:
            continue
        seen.add(text)
        index = len(lines)
        lines.append(
            {
                "name": f"triage-{index + 1:02d}",
                "tags": ["dev" if index < NOTES // 2 else "test", "triage"],
                "input": {"text": text},
                "expected": [
                    {"note": part, "urgent": True} for part in parts if needs_action(part)
                ],
            }
        )
    return lines
