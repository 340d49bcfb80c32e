"""Calibration: reliability diagrams and the expected calibration error, with equal-width or
equal-mass bins.

Equal-mass bins never split a run of equal probabilities: identical predictions are one group,
so a cut that would fall inside a run moves to the run's end (with one distinct probability
there is one bin, and every ECE is ``|p - frequency|``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from harness.evals.metrics._estimate import UndefinedMetricError

__all__ = ["Bin", "BinStrategy", "binned", "ece", "mass_cuts", "reliability"]

BinStrategy = Literal["width", "mass"]


@dataclass(frozen=True)
class Bin:
    """One bin of a reliability diagram: its probability range, how many decisions fell in it,
    their mean predicted probability and the observed frequency of the outcome."""

    low: float
    high: float
    count: int
    mean_probability: float
    frequency: float


def binned(
    probabilities: Sequence[float],
    outcomes: Sequence[bool],
    *,
    bins: int = 10,
    strategy: BinStrategy = "width",
) -> list[list[int]]:
    """The indices of the decisions in each bin. ``"width"``: ``bins`` equal ranges of [0, 1]
    (1.0 in the last); ``"mass"``: the decisions sorted by probability, cut into ``bins`` runs
    of about equal size (see :func:`mass_cuts`: a run of equal probabilities is never split),
    empty bins left out."""
    if len(probabilities) != len(outcomes):
        raise ValueError(f"{len(probabilities)} probabilities but {len(outcomes)} outcomes")
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    if strategy == "width":
        found: list[list[int]] = [[] for _ in range(bins)]
        for index, p in enumerate(probabilities):
            found[min(int(p * bins), bins - 1)].append(index)
        return found
    if strategy == "mass":
        order = sorted(range(len(probabilities)), key=lambda i: (probabilities[i], i))
        ends = [
            k + 1
            for k in range(len(order) - 1)
            if probabilities[order[k]] != probabilities[order[k + 1]]
        ]
        ends.append(len(order))
        cuts = mass_cuts(len(order), bins, ends)
        return [order[start:end] for start, end in itertools.pairwise(cuts) if end > start]
    raise ValueError(f"strategy must be 'width' or 'mass', not {strategy!r}")


def mass_cuts(total: int, bins: int, ends: Sequence[int]) -> list[int]:
    """Where equal-mass bins cut ``total`` sorted decisions: at ``k * (total // bins) +
    min(k, total % bins)`` for ``k = 0 .. bins`` (the first ``total % bins`` bins one longer),
    each cut inside a run of equal probabilities moved to the run's end. ``ends`` are the
    positions where runs end (ascending, the last ``total``)."""
    size, extra = divmod(total, bins)
    cuts: list[int] = []
    at = 0
    for k in range(bins + 1):
        cut = k * size + min(k, extra)
        while cut > 0 and ends[at] < cut:
            at += 1
        cuts.append(0 if cut == 0 else ends[at])
    return cuts


def reliability(
    probabilities: Sequence[float],
    outcomes: Sequence[bool],
    *,
    bins: int = 10,
    strategy: BinStrategy = "width",
) -> list[Bin]:
    """The non-empty bins of a reliability diagram (see :func:`binned`)."""
    shown: list[Bin] = []
    for b, members in enumerate(binned(probabilities, outcomes, bins=bins, strategy=strategy)):
        if not members:
            continue
        ps = [probabilities[i] for i in members]
        if strategy == "width":
            low, high = b / bins, (b + 1) / bins
        else:
            low, high = min(ps), max(ps)
        shown.append(
            Bin(
                low=low,
                high=high,
                count=len(members),
                mean_probability=sum(ps) / len(ps),
                frequency=sum(1 for i in members if outcomes[i]) / len(members),
            )
        )
    return shown


def ece(
    probabilities: Sequence[float],
    outcomes: Sequence[bool],
    *,
    bins: int = 10,
    strategy: BinStrategy = "width",
) -> float:
    """The expected calibration error: over bins, the share of decisions in the bin times the gap
    between their mean probability and the observed frequency. Give a yes/no question's
    ``p_yes`` and its truth, or a choice's top probability and whether the top option was right."""
    if not probabilities:
        raise UndefinedMetricError("ECE is undefined: no decisions")
    n = len(probabilities)
    return sum(
        b.count / n * abs(b.mean_probability - b.frequency)
        for b in reliability(probabilities, outcomes, bins=bins, strategy=strategy)
    )
