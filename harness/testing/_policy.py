"""A model policy answering every question of every request from a source of random draws.

Given a ``random.Random`` seeded by a number, it is a fixed, reproducible model; given the
``Random`` that ``hypothesis.strategies.randoms(use_true_random=False)`` draws, every answer is a
hypothesis draw, so a failing run shrinks to the smallest: index 0 of a choice is its *last*
option (the thinker's ``finish`` when offered), selection probabilities shrink toward 0.
"""

from __future__ import annotations

import random
from typing import Final

from harness.decision import Answer, Choice, DecisionRequest, Noul, RefusedAnswer, Score
from harness.providers import answer_by_kind, choose, rate, yes

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
        return answer_by_kind(request, choice=self._choice, noul=self._noul, score=self._score)

    def _choice(self, _: str, question: Choice) -> Answer:
        options = list(question.options)
        key = options[len(options) - 1 - self.rng.randrange(len(options))]
        return choose(question, key, probability=self.rng.choice(CHOICE_PROBABILITIES))

    def _noul(self, _: str, question: Noul) -> Answer:
        if self.refusals and self.rng.randrange(3) == 0:
            return RefusedAnswer("drawn refusal")
        return yes(self.rng.choice(SELECTION_PROBABILITIES))

    def _score(self, _: str, question: Score) -> Answer:
        return rate(question, self.rng.randrange(len(question.levels)))

    def __repr__(self) -> str:
        return f"RandomPolicy({self.label}{', refusing' if self.refusals else ''})"
