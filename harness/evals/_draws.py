"""Drawing solved examples from labelled decisions: the split's decisions, a balanced seeded
draw of k per role, the solved examples a draw shows, and the split's digest and halves (which
part of the dev split a ``search`` scores on).
"""

from __future__ import annotations

import hashlib
import json  # the stdlib: a split's digest hashes json's default text (", "), not orjson's
import random
from collections.abc import Iterable, Mapping, Sequence

from harness.catalog import (
    CALIBRATION_ROLES,
    SolvedExample,
    role_of,
    state_key,
    state_text,
)
from harness.evals._dataset import DatasetError
from harness.evals._drawn import DrawnSplitError as DrawnSplitError
from harness.evals._drawn import refuse_drawn as refuse_drawn
from harness.evals._pack import DecisionPack, Label, LabelledDecision

__all__ = ["draw_labeled", "part_of", "solved_examples", "split_decisions", "split_digest"]


def _answer(question_label: Label) -> str:
    if question_label is True:
        return "yes"
    if question_label is False:
        return "no"
    return question_label


def solved_examples(
    decisions: Iterable[LabelledDecision], as_roles: Mapping[str, str] | None = None
) -> dict[str, list[SolvedExample]]:
    """Every labelled question of ``decisions`` as a solved example, by role (in order);
    ``as_roles`` stores a role's examples under another role of the same kind (``{"noul":
    "select"}``: a pack's yes/no questions shown before a thinker's selections)."""
    renamed = _checked_roles(as_roles)
    found: dict[str, list[SolvedExample]] = {}
    for decision in decisions:
        text = state_text(decision.request.state)
        for question_id, label in decision.labels.items():
            question = decision.request.questions[question_id]
            example = SolvedExample(text, question, _answer(label))
            role = role_of(question_id, question)
            found.setdefault(renamed.get(role, role), []).append(example)
    return found


def _checked_roles(as_roles: Mapping[str, str] | None) -> Mapping[str, str]:
    for source, target in (as_roles or {}).items():
        kinds = (CALIBRATION_ROLES.get(source), CALIBRATION_ROLES.get(target))
        if None in kinds or kinds[0] != kinds[1]:
            raise ValueError(
                f"cannot store {source!r} examples as {target!r}: both must be roles "
                f"({', '.join(CALIBRATION_ROLES)}) of the same kind of question"
            )
    return as_roles or {}


def split_decisions(pack: DecisionPack, split: str) -> list[LabelledDecision]:
    """The decisions of ``pack`` tagged ``split``; a split with none is refused."""
    chosen = [decision for decision in pack if split in decision.tags]
    if not chosen:
        raise DatasetError(
            f"{pack.name}: no decision is tagged {split!r}: tag the labelled decisions with their "
            "split (dev, test) and fit on the dev one"
        )
    return chosen


def draw_labeled(
    decisions: Sequence[LabelledDecision],
    k: int,
    *,
    seed: int = 0,
    as_roles: Mapping[str, str] | None = None,
) -> dict[str, tuple[SolvedExample, ...]]:
    """``k`` solved examples per role of ``decisions``, balanced over each role's answers: the
    answers are visited in turn (in a seeded order), each time taking the next example of that
    answer (in a seeded order), so ``k`` examples of a yes/no role hold ``k // 2`` of each when
    both have enough. No example state repeats within a role while another is left."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    rng = random.Random(seed)
    drawn: dict[str, tuple[SolvedExample, ...]] = {}
    for role, examples in sorted(solved_examples(decisions, as_roles).items()):
        by_answer: dict[str, list[SolvedExample]] = {}
        for example in examples:
            by_answer.setdefault(example.answer, []).append(example)
        answers = sorted(by_answer)
        rng.shuffle(answers)
        for answer in answers:
            rng.shuffle(by_answer[answer])
        chosen: list[SolvedExample] = []
        states: set[str] = set()
        while len(chosen) < min(k, len(examples)):
            for answer in answers:
                if len(chosen) >= k:
                    break
                left = by_answer[answer]
                if not left:
                    continue
                fresh = next((i for i, e in enumerate(left) if e.state not in states), 0)
                example = left.pop(fresh)
                chosen.append(example)
                states.add(example.state)
        rng.shuffle(chosen)  # the order of the labels in the prompt is no cue either
        drawn[role] = tuple(chosen)
    return drawn


def split_digest(decisions: Sequence[LabelledDecision]) -> str:
    hashed = hashlib.sha256()
    for decision in decisions:
        line = {
            "name": decision.name,
            "state": decision.request.state,
            "labels": dict(decision.labels),
        }
        hashed.update(json.dumps(line, sort_keys=True, ensure_ascii=False).encode())
        hashed.update(b"\n")
    return "sha256:" + hashed.hexdigest()


def part_of(decision: LabelledDecision, seed: int) -> float:
    """Where a decision falls in [0, 1): a hash of its state and the seed (the decisions of one
    state stay together)."""
    key = state_key(decision.request.state)
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64
