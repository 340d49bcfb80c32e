"""A model policy answering every question of every request from a source of random draws.

Given a ``random.Random`` seeded by a number, it is a fixed, reproducible model; given the
``Random`` that ``hypothesis.strategies.randoms(use_true_random=False)`` draws, every answer is a
hypothesis draw, so a failing run shrinks to the smallest: index 0 of a choice is its *last*
option (the thinker's ``finish`` when offered), selection probabilities shrink toward 0.
"""

from __future__ import annotations

import random
from typing import Final

from harness.decision import Answer, Choice, DecisionRequest, Noul, RefusedAnswer
from harness.providers import choose, rate, yes

__all__ = ["CHOICE_PROBABILITIES", "SELECTION_PROBABILITIES", "RandomPolicy"]

CHOICE_PROBABILITIES: Final = (1.0, 0.9, 0.6)
"""The probabilities a :class:`RandomPolicy` puts on the option it picks."""

SELECTION_PROBABILITIES: Final = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The yes-probabilities a :class:`RandomPolicy` answers a noul with (thresholds' edges)."""


class RandomPolicy:
    """A fake decision model's policy: each answer drawn from ``rng``, question by question.

    Use it as ``FakeDecisionModel(RandomPolicy(random.Random(7)))`` or draw one with
    :func:`harness.testing.strategies.policies`. With ``refusals=True`` it refuses a selection
    question (``RefusedAnswer``, a legal answer: the question is not selected) one time in three.
    """

    def __init__(
        self, rng: random.Random, *, label: str | None = None, refusals: bool = False
    ) -> None:
        self.rng = rng
        self.label = label or "drawn"
        self.asked = 0
        self.refusals = refusals

    def __call__(self, request: DecisionRequest) -> dict[str, Answer]:
        """Answer every question of ``request``."""
        self.asked += 1
        answers: dict[str, Answer] = {}
        for question_id, question in request.questions.items():
            if isinstance(question, Choice):
                options = list(question.options)
                key = options[len(options) - 1 - self.rng.randrange(len(options))]
                probability = self.rng.choice(CHOICE_PROBABILITIES)
                answers[question_id] = choose(question, key, probability=probability)
            elif isinstance(question, Noul):
                if self.refusals and self.rng.randrange(3) == 0:
                    answers[question_id] = RefusedAnswer("drawn refusal")
                    continue
                answers[question_id] = yes(self.rng.choice(SELECTION_PROBABILITIES))
            else:
                answers[question_id] = rate(question, self.rng.randrange(len(question.levels)))
        return answers

    def __repr__(self) -> str:
        return f"RandomPolicy({self.label}{', refusing' if self.refusals else ''})"
