"""Scoring rules: counts of an answer's items, and probabilities against labels.

:func:`recall`, :func:`precision`, :func:`f1` of item counts; :func:`accuracy`, :func:`brier`
and :func:`log_loss` over the whole distribution, :func:`auc` (yes/no) and :func:`rps` (ordered
levels). A distribution is a sequence of probabilities over the options in a fixed order and its
label the index of the right option.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from harness.evals.metrics._estimate import UndefinedMetricError

__all__ = [
    "LOG_LOSS_FLOOR",
    "accuracy",
    "auc",
    "brier",
    "f1",
    "log_loss",
    "precision",
    "recall",
    "rps",
]

LOG_LOSS_FLOOR: Final = 1e-15
"""The probability a log loss reads for a right option answered with 0 (a finite penalty)."""


# -- counts ---------------------------------------------------------------------------------


def recall(true_positives: int, false_negatives: int) -> float:
    """The share of expected items answered: TP / (TP + FN)."""
    total = true_positives + false_negatives
    if total == 0:
        raise UndefinedMetricError("recall is undefined: no item was expected")
    return true_positives / total


def precision(true_positives: int, false_positives: int) -> float:
    """The share of answered items that were expected: TP / (TP + FP)."""
    total = true_positives + false_positives
    if total == 0:
        raise UndefinedMetricError("precision is undefined: nothing was answered")
    return true_positives / total


def f1(true_positives: int, false_positives: int, false_negatives: int) -> float:
    """The harmonic mean of precision and recall: 2 TP / (2 TP + FP + FN)."""
    total = 2 * true_positives + false_positives + false_negatives
    if total == 0:
        raise UndefinedMetricError("F1 is undefined: nothing was expected nor answered")
    return 2 * true_positives / total


# -- probabilities against labels -----------------------------------------------------------


def _checked(distributions: Sequence[Sequence[float]], labels: Sequence[int], what: str) -> None:
    if len(distributions) != len(labels):
        raise ValueError(
            f"{what}: {len(distributions)} distributions but {len(labels)} labels: give one "
            "label per distribution"
        )
    if not distributions:
        raise UndefinedMetricError(f"{what} is undefined: no decisions")
    for distribution, label in zip(distributions, labels, strict=True):
        if not 0 <= label < len(distribution):
            raise ValueError(
                f"{what}: label {label} is not an option index of a distribution over "
                f"{len(distribution)} options"
            )


def accuracy(distributions: Sequence[Sequence[float]], labels: Sequence[int]) -> float:
    """The share of decisions whose most probable option is the label (ties: the first)."""
    _checked(distributions, labels, "accuracy")
    right = sum(_argmax(d) == label for d, label in zip(distributions, labels, strict=True))
    return right / len(labels)


def _argmax(distribution: Sequence[float]) -> int:
    best = 0
    for index, p in enumerate(distribution):
        if p > distribution[best]:
            best = index
    return best


def brier(distributions: Sequence[Sequence[float]], labels: Sequence[int]) -> float:
    """The mean over decisions of the squared distance between the distribution and the one-hot
    label, summed over every option (0 perfect, 2 the worst; a yes/no answer counts both sides,
    so its Brier is twice the one-sided ``(p - y)²``)."""
    _checked(distributions, labels, "Brier score")
    total = 0.0
    for distribution, label in zip(distributions, labels, strict=True):
        total += sum((p - (k == label)) ** 2 for k, p in enumerate(distribution))
    return total / len(labels)


def log_loss(distributions: Sequence[Sequence[float]], labels: Sequence[int]) -> float:
    """The mean negative natural log of the probability given to the label (a 0 reads as
    :data:`LOG_LOSS_FLOOR`, so one certain mistake costs about 34.5, not infinity)."""
    _checked(distributions, labels, "log loss")
    total = 0.0
    for distribution, label in zip(distributions, labels, strict=True):
        total -= math.log(max(distribution[label], LOG_LOSS_FLOOR))
    return total / len(labels)


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """The area under the ROC curve: the probability that a random positive scores above a
    random negative (ties count half). Undefined without both classes."""
    if len(scores) != len(labels):
        raise ValueError(f"AUC: {len(scores)} scores but {len(labels)} labels")
    positives = [s for s, y in zip(scores, labels, strict=True) if y]
    negatives = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not positives or not negatives:
        which = "no decisions" if not scores else ("no negatives" if positives else "no positives")
        raise UndefinedMetricError(f"AUC is undefined: {which} (it needs both classes)")
    # rank-sum (Mann-Whitney U) with mid-ranks for ties: O(n log n)
    ordered = sorted((s, y) for s, y in zip(scores, labels, strict=True))
    rank_sum = 0.0
    i = 0
    while i < len(ordered):
        j = i
        while j < len(ordered) and ordered[j][0] == ordered[i][0]:
            j += 1
        mid = (i + 1 + j) / 2  # ranks i+1 .. j
        rank_sum += mid * sum(1 for _, y in ordered[i:j] if y)
        i = j
    n_pos, n_neg = len(positives), len(negatives)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def rps(distributions: Sequence[Sequence[float]], labels: Sequence[int]) -> float:
    """The ranked probability score of answers on ordered levels: the mean over decisions of the
    squared differences of the cumulative distributions, divided by (levels - 1). 0 is perfect;
    a far miss costs more than a near one."""
    _checked(distributions, labels, "ranked probability score")
    total = 0.0
    for distribution, label in zip(distributions, labels, strict=True):
        levels = len(distribution)
        if levels < 2:
            raise ValueError("ranked probability score: a score has at least two levels")
        cumulative = 0.0
        score = 0.0
        for k in range(levels - 1):
            cumulative += distribution[k]
            score += (cumulative - (1.0 if label <= k else 0.0)) ** 2
        total += score / (levels - 1)
    return total / len(labels)
