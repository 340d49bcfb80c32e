"""Intervals and tests: the Wilson bounds of a proportion, the bootstrap by case (or by group of
items), the exact McNemar test of paired correctness."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from typing import Final, TypeVar

from harness.evals.metrics._estimate import Estimate, UndefinedMetricError

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "Z95",
    "bootstrap",
    "bootstrap_grouped",
    "mcnemar",
    "quantile",
    "wilson",
]

T = TypeVar("T")

Z95: Final = 1.959963984540054
"""The standard normal quantile of 0.975 (a two-sided 95 % interval)."""

BOOTSTRAP_RESAMPLES: Final = 1000
"""Resamples of a bootstrap interval by default."""


def wilson(successes: int, n: int, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n`` (95 % by default)."""
    if n <= 0:
        raise UndefinedMetricError("a Wilson interval is undefined with no trials")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    phat = successes / n
    denominator = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denominator
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar(only_first_right: int, only_second_right: int) -> float:
    """The exact two-sided McNemar p-value of paired correctness: under "no difference" the
    discordant pairs split as a fair coin, so p = min(1, 2 P(X <= min(b, c))), X ~ Bin(b + c,
    1/2). With no discordant pair there is no evidence of a difference: p = 1."""
    b, c = only_first_right, only_second_right
    if b < 0 or c < 0:
        raise ValueError("McNemar counts must be >= 0")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / float(2**n))


def bootstrap(
    cases: Sequence[T],
    statistic: Callable[[Sequence[T]], float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
    n: int | None = None,
) -> Estimate:
    """``statistic`` of ``cases`` with a percentile bootstrap interval, resampling whole cases
    with replacement (seeded: the same input gives the same interval). ``n`` is the number of
    units the statistic counts (default: the cases).

    The value is undefined when the statistic is (the reason kept); the interval is undefined
    with fewer than two cases or when more than half of the resamples leave the statistic
    undefined (one class drawn, say)."""
    count = len(cases) if n is None else n
    try:
        value = statistic(cases)
    except UndefinedMetricError as error:
        return Estimate(None, None, None, count, len(cases), str(error))
    if len(cases) < 2:
        return Estimate(value, None, None, count, len(cases), "fewer than two cases to resample")
    rng = random.Random(seed)
    draws: list[float] = []
    size = len(cases)
    for _ in range(resamples):
        sample = [cases[rng.randrange(size)] for _ in range(size)]
        try:
            draws.append(statistic(sample))
        except UndefinedMetricError:
            continue
    if len(draws) * 2 < resamples:
        return Estimate(
            value,
            None,
            None,
            count,
            len(cases),
            f"the figure is undefined on {resamples - len(draws)} of {resamples} resamples",
        )
    draws.sort()
    tail = (1 - level) / 2
    low, high = quantile(draws, tail), quantile(draws, 1 - tail)
    bias = sum(draws) / len(draws) - value
    return Estimate(value, low, high, count, len(cases), None, bias)


def bootstrap_grouped(
    items: Sequence[T],
    group: Callable[[T], Hashable],
    statistic: Callable[[Sequence[T]], float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> Estimate:
    """:func:`bootstrap` of ``statistic`` over ``items`` resampled by the group each belongs to
    (``group(item)``: its case, its request), since the items of one group are correlated; the
    statistic reads a resample's items flattened, group by group in first-seen order, and ``n``
    counts the items."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(group(item), []).append(item)

    def flattened(sample: Sequence[list[T]]) -> float:
        return statistic([item for members in sample for item in members])

    return bootstrap(list(groups.values()), flattened, resamples=resamples, seed=seed, n=len(items))


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolating linearly between order statistics."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    low, high = float(ordered[below]), float(ordered[above])
    return low + (high - low) * (position - below)
