"""A catalog entry's solved examples: the few-shot demonstrations a local model's prompt shows.

A small base model judges a question far better when its prompt first shows a few solved
questions of the same role (the thinker's ``next`` move, a tool's ``input``, a ``select`` of a
candidate, or any other question by its kind; roles as :func:`harness.catalog.role_of`). The
examples are fitted on labelled decisions (``harness.evals`` draws them, never from the split it
reports on) and stored beside the entry's calibration::

    [entries.examples]
    file = "examples.json"

:class:`ExampleSet` is what the entry holds; the provider that builds prompts reads
:meth:`ExampleSet.for_role`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from harness.decision import Question

__all__ = ["ExampleSet", "SolvedExample"]


@attrs.frozen
class SolvedExample:
    """One solved question: the state as the model saw it, the question, and its right answer.

    ``answer`` is an option key of a :class:`~harness.decision.Choice`, ``"yes"`` or ``"no"``
    for a :class:`~harness.decision.Noul`, a level of a :class:`~harness.decision.Score`.
    """

    state: str
    question: Question
    answer: str


@attrs.frozen
class ExampleSet:
    """Solved examples by role, with what they were drawn from.

    ``drawn_from`` names the labelled data and its split (an eval on that same split is refused
    or flagged); ``method`` how they were chosen (``labeled``: k balanced labelled examples,
    seeded; ``search``: the best of candidate sets scored on part of the dev split).
    """

    by_role: Mapping[str, tuple[SolvedExample, ...]]
    drawn_from: str
    method: str = "labeled"

    def for_role(self, role: str) -> tuple[SolvedExample, ...]:
        """The examples shown before a question of ``role`` (none when the role has none)."""
        return self.by_role.get(role, ())
