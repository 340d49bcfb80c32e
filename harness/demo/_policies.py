"""Model policies for the demo, to measure it against: one that knows the answer key, one that
picks uniformly at random.

Both are fake decision models' policies (``FakeDecisionModel(policy)``) that read only what a
model reads: the request's state (its digest lines) and its questions. :func:`run_demo_with`
runs the demo on one, offline, through the same dispatcher and record as the embedded model.

* :class:`AnswerKeyPolicy` is the perfect model the budget is sized for: it lists the folder,
  reads exactly the files of the key, selects exactly the planted sentences, then finishes.
* :class:`UniformRandomPolicy` picks every choice uniformly among the options offered and says
  yes to each candidate with a probability drawn uniformly from [0, 1].
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from typing import Final

from harness.catalog import Catalog, CatalogEntry
from harness.decision import Answer, Choice, ChoiceAnswer, DecisionRequest, Noul, Score
from harness.demo._key import AnswerKey
from harness.demo._run import run_demo
from harness.demo._thinker import DEMO_MAX_TURNS, DEMO_OBJECTIVE
from harness.providers import FakeDecisionModel, answer_by_kind, choose, rate, yes
from harness.record import RecordedRun
from harness.thinker import FINISH

__all__ = [
    "POLICY_ENTRY",
    "AnswerKeyPolicy",
    "UniformRandomPolicy",
    "policy_catalog",
    "run_demo_with",
]

POLICY_ENTRY: Final = "policy"
"""The catalog entry id a policy answers as in :func:`run_demo_with`."""

LIST: Final = "list_folder"
READ: Final = "read_statements"


def _digest_words(state: object) -> dict[str, str]:
    """ref -> digest words, read from the state's ``artifacts`` digest lines."""
    lines = state.get("artifacts", []) if isinstance(state, Mapping) else []
    words: dict[str, str] = {}
    for line in lines:
        if isinstance(line, str) and " (" in line and "): " in line:
            ref = line.split(" (", 1)[0]
            words[ref] = line.split("): ", 1)[1]
    return words


def _matches(words: str, whole: str) -> bool:
    """Whether digest ``words`` show ``whole`` (a digest cuts long words and ends them ``...``)."""
    return words == whole or (words.endswith("...") and whole.startswith(words[:-3]))


def _listed_path(words: str) -> str:
    """The path a text file's digest words show (``"<path> (<kind>, <size> bytes)"``)."""
    return words.rsplit(" (", 1)[0]


class AnswerKeyPolicy:
    """The perfect model of the shipped corpus: reads the key's files, keeps its sentences.

    ``next``: ``list_folder`` until text files are listed, then ``read_statements`` on a file of
    the key not yet read, then ``finish``. Every selection: yes (1.0) to a planted sentence, no
    (0.0) to anything else.
    """

    def __init__(self, key: AnswerKey) -> None:
        self.key = key
        self.asked = 0

    def _planted_file(self, path: str) -> bool:
        if path.startswith(".../"):  # a long path shows its last parts only
            return any(file.endswith(path[3:]) for file in self.key.files)
        return path in self.key.files

    def _unread_planted(self, question: Choice, words: Mapping[str, str]) -> str | None:
        for ref in question.options:
            if self._planted_file(_listed_path(words.get(ref, ""))):
                return ref
        return None

    def __call__(self, request: DecisionRequest) -> dict[str, Answer]:
        """Answer every question of ``request`` as the key says."""
        self.asked += 1
        words = _digest_words(request.state)
        read = request.questions.get(f"{READ}_input")
        target = self._unread_planted(read, words) if isinstance(read, Choice) else None

        def choice(question_id: str, question: Choice) -> Answer:
            if question_id == "next":
                options = question.options
                if target is not None:
                    move = READ
                elif LIST in options and READ not in options:
                    move = LIST
                elif FINISH in options:
                    move = FINISH
                else:
                    move = next(iter(options))
                return choose(question, move, probability=1.0)
            if question_id == f"{READ}_input":
                chosen = target if target is not None else next(iter(question.options))
                return choose(question, chosen, probability=1.0)
            return choose(question, next(iter(question.options)))

        def noul(question_id: str, question: Noul) -> Answer:
            ref = question_id.removeprefix("select_")
            planted = any(_matches(words.get(ref, ""), s) for s in self.key.sentences)
            return yes(1.0 if planted else 0.0)

        return answer_by_kind(
            request, choice=choice, noul=noul, score=lambda _, question: rate(question, 0)
        )


class UniformRandomPolicy:
    """A model that knows nothing: each choice uniform over its options (every option at the same
    probability), each yes/no a probability drawn uniformly from [0, 1]; reproducible by
    ``seed``."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.asked = 0

    def __call__(self, request: DecisionRequest) -> dict[str, Answer]:
        """Answer every question of ``request`` at random."""
        self.asked += 1
        return answer_by_kind(request, choice=self._choice, noul=self._noul, score=self._score)

    def _choice(self, _: str, question: Choice) -> Answer:
        options = list(question.options)
        key = options[self.rng.randrange(len(options))]
        even = {option: 1.0 / len(options) for option in options}
        return ChoiceAnswer(choice=key, probabilities=even, confidence=0.0)

    def _noul(self, _: str, question: Noul) -> Answer:
        return yes(self.rng.random())

    def _score(self, _: str, question: Score) -> Answer:
        return rate(question, self.rng.randrange(len(question.levels)))

    def __repr__(self) -> str:
        return f"UniformRandomPolicy(seed={self.seed})"


def policy_catalog() -> Catalog:
    """A catalog whose pinned decision entry is :data:`POLICY_ENTRY` (a fake model's)."""
    return Catalog([CatalogEntry.fake(POLICY_ENTRY)], {"decision": POLICY_ENTRY})


async def run_demo_with(
    policy: AnswerKeyPolicy | UniformRandomPolicy,
    folder: str | os.PathLike[str] | None = None,
    *,
    max_turns: int = DEMO_MAX_TURNS,
    objective: str = DEMO_OBJECTIVE,
) -> RecordedRun:
    """The demo on ``folder`` (the shipped corpus by default) with ``policy`` as its model."""
    return await run_demo(
        folder,
        objective=objective,
        max_turns=max_turns,
        catalog=policy_catalog(),
        clients={POLICY_ENTRY: FakeDecisionModel(policy)},
    )
