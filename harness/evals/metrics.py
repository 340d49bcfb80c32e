"""The figures of an eval, as plain functions of numbers (no harness imports: pure and testable).

Every function takes plain sequences and either returns a number or raises
:class:`UndefinedMetricError` saying why the figure has no value on that input (no decisions, one
class only, no positive answers...): a figure is never a silent 0.

* counts: :func:`recall`, :func:`precision`, :func:`f1`;
* probabilities against labels: :func:`accuracy`, :func:`brier` and :func:`log_loss` over the
  whole distribution, :func:`auc` (yes/no), :func:`rps` (ordered levels), :func:`ece` and
  :func:`reliability` with equal-width or equal-mass bins;
* uncertainty: :func:`wilson` bounds of a proportion, :func:`bootstrap` intervals resampled by
  case (the decisions of one run are correlated, so the unit resampled is the case, never the
  decision), the exact two-sided :func:`mcnemar` test of paired correctness; a
  :class:`Resampler` computes the intervals of a whole report at once (numpy, vectorized).

A distribution is a sequence of probabilities over the options in a fixed order and its label the
index of the right option; a yes/no answer is the two-option distribution ``(p_yes, 1 - p_yes)``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from harness.errors import HarnessError

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "Bin",
    "Estimate",
    "Resampler",
    "UndefinedMetricError",
    "accuracy",
    "auc",
    "binned",
    "bootstrap",
    "brier",
    "ece",
    "f1",
    "log_loss",
    "mcnemar",
    "precision",
    "recall",
    "reliability",
    "rps",
    "wilson",
]

T = TypeVar("T")

Z95: Final = 1.959963984540054
"""The standard normal quantile of 0.975 (a two-sided 95 % interval)."""

BOOTSTRAP_RESAMPLES: Final = 1000
"""Resamples of a bootstrap interval by default."""

BLOCK_CELLS: Final = 200_000
"""How many numbers (resamples x decisions) one step of a figure's resampling holds at once."""

LOG_LOSS_FLOOR: Final = 1e-15
"""The probability a log loss reads for a right option answered with 0 (a finite penalty)."""

BinStrategy = Literal["width", "mass"]

Floats = npt.NDArray[np.float64]


class UndefinedMetricError(HarnessError, ValueError):
    """A figure that has no value on its input: the message says which and why."""


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95 % interval, or ``value is None`` with ``undefined`` saying why.

    ``n`` counts the units it was computed on (decisions, or cases for run-level figures),
    ``cases`` the cases they came from (the unit the bootstrap resamples). ``low``/``high`` are
    ``None`` when the interval is undefined (one case, or the statistic undefined on resamples).
    """

    value: float | None
    low: float | None
    high: float | None
    n: int
    cases: int
    undefined: str | None = None

    @property
    def defined(self) -> bool:
        """Whether the figure has a value."""
        return self.value is not None

    def __str__(self) -> str:
        if self.value is None:
            return f"undefined ({self.undefined})"
        if self.low is None or self.high is None:
            return f"{self.value:.3f} [interval undefined: {self.undefined}] (n={self.n})"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}] (n={self.n})"


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
    of equal size (the first ``n % bins`` one longer), empty bins left out."""
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
        size, extra = divmod(len(order), bins)
        runs: list[list[int]] = []
        start = 0
        for b in range(bins):
            end = start + size + (1 if b < extra else 0)
            if end > start:
                runs.append(order[start:end])
            start = end
        return runs
    raise ValueError(f"strategy must be 'width' or 'mass', not {strategy!r}")


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


# -- uncertainty ----------------------------------------------------------------------------


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
    return Estimate(
        value, _quantile(draws, tail), _quantile(draws, 1 - tail), count, len(cases), None
    )


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolating linearly between order statistics."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    low, high = float(ordered[below]), float(ordered[above])
    return low + (high - low) * (position - below)


# -- the bootstrap of an eval, vectorized -----------------------------------------------------


class Resampler:
    """The bootstrap resamples of an eval's cases, shared by every figure of a report: each
    resample draws ``cases`` cases with replacement (numpy's PCG64, seeded), held as a matrix
    of how often each case was drawn. A figure's statistic on every resample is then a few
    matrix products, so a report of a thousand cases costs well under a second.

    Each method takes per-case (or per-decision) values and returns an :class:`Estimate`: its
    value computed on all cases, its 95 % percentile interval over the resamples (undefined
    with fewer than two cases, or when the figure is undefined on more than half of them).
    Ties of a probability are broken by dataset order within a resample.
    """

    def __init__(
        self,
        cases: int,
        *,
        resamples: int = BOOTSTRAP_RESAMPLES,
        seed: int = 0,
        level: float = 0.95,
    ) -> None:
        self.cases = cases
        self.resamples = resamples
        self.level = level
        rng = np.random.Generator(np.random.PCG64(seed))
        drawn = rng.integers(0, max(cases, 1), size=(resamples, cases))
        rows = np.repeat(np.arange(resamples) * max(cases, 1), cases)
        counted = np.bincount(rows + drawn.ravel(), minlength=resamples * max(cases, 1))
        self.weights = counted.astype(float).reshape(resamples, max(cases, 1))[:, :cases]
        self._last_order: tuple[bytes, npt.NDArray[np.intp]] | None = None

    def weigh(self, values: npt.ArrayLike) -> Floats:
        """Per resample, the sum of per-case ``values`` (one value, or a row of them, a case)
        weighted by how often the resample drew each case.

        A single column goes through numpy's own loop (``einsum``), not BLAS: on a busy machine
        a multithreaded BLAS call waits for its threads' cores, and a report makes dozens of
        these small products (measured: 0.9 ms each against 6-30 ms through BLAS under load).
        Several columns go as one product."""
        given = np.asarray(values, dtype=float)
        if given.ndim == 1:
            summed: Floats = np.einsum("rc,c->r", self.weights, given)
            return summed
        product: Floats = self.weights @ given
        return product

    def _order(self, cases: npt.NDArray[np.int_], key: Floats) -> npt.NDArray[np.intp]:
        """The stable order of decisions by ``key`` (kept for the next figure on the same
        decisions: a yes/no role's equal-mass ECE and AUC sort the same probabilities)."""
        stamp = cases.tobytes() + b"|" + key.tobytes()
        if self._last_order is not None and self._last_order[0] == stamp:
            return self._last_order[1]
        order = np.argsort(key, kind="stable")
        self._last_order = (stamp, order)
        return order

    def _blocks(self, width: int) -> Iterator[slice]:
        """Slices of the resamples small enough that a block of them times ``width`` decisions
        stays within :data:`BLOCK_CELLS` numbers (memory stays bounded on large evals)."""
        step = max(1, BLOCK_CELLS // max(width, 1))
        for start in range(0, self.resamples, step):
            yield slice(start, min(start + step, self.resamples))

    def _point(self, statistic: Callable[[], float], n: int) -> float | Estimate:
        """The figure on the cases as they are, or the estimate of a figure undefined there
        (saying why)."""
        try:
            return statistic()
        except UndefinedMetricError as error:
            return self._estimate(None, str(error), [], n)

    def _estimate(self, value: float | None, reason: str | None, draws: object, n: int) -> Estimate:
        if value is None:
            return Estimate(None, None, None, n, self.cases, reason)
        if self.cases < 2:
            return Estimate(value, None, None, n, self.cases, "fewer than two cases to resample")
        values = np.asarray(draws, dtype=float)
        defined = values[~np.isnan(values)]
        if len(defined) * 2 < self.resamples:
            missing = self.resamples - len(defined)
            return Estimate(
                value,
                None,
                None,
                n,
                self.cases,
                f"the figure is undefined on {missing} of {self.resamples} resamples",
            )
        tail = (1 - self.level) / 2
        low, high = np.quantile(defined, [tail, 1 - tail])
        return Estimate(value, float(low), float(high), n, self.cases, None)

    def ratio(
        self,
        numerators: Sequence[float] | Floats,
        denominators: Sequence[float] | Floats,
        *,
        undefined: str,
        n: int | None = None,
    ) -> Estimate:
        """Σ numerators / Σ denominators over the cases (a mean, a rate); ``undefined`` says
        why when the denominators sum to 0."""
        num = np.asarray(numerators, dtype=float)
        den = np.asarray(denominators, dtype=float)
        total = float(den.sum())
        count = int(total) if n is None else n
        value = float(num.sum()) / total if total > 0 else None
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = self.weigh(num) / self.weigh(den)
        draws[~np.isfinite(draws)] = np.nan
        return self._estimate(value, undefined, draws, count)

    def f1(
        self, tp: Sequence[float], fp: Sequence[float], fn: Sequence[float], *, n: int
    ) -> Estimate:
        """Pooled F1 of per-case counts."""
        t, p, f = (np.asarray(x, dtype=float) for x in (tp, fp, fn))
        return self.ratio(
            2 * t,
            2 * t + p + f,
            undefined="F1 is undefined: nothing was expected nor answered",
            n=n,
        )

    def ece(
        self,
        case_of: Sequence[int],
        probabilities: Sequence[float],
        outcomes: Sequence[bool],
        *,
        bins: int = 10,
        strategy: BinStrategy = "width",
    ) -> Estimate:
        """:func:`ece` of decisions (``case_of`` each decision's case index)."""
        count = len(probabilities)
        value = self._point(
            lambda: ece(probabilities, outcomes, bins=bins, strategy=strategy), count
        )
        if isinstance(value, Estimate):
            return value
        cases = np.asarray(case_of, dtype=int)
        p = np.asarray(probabilities, dtype=float)
        y = np.asarray(outcomes, dtype=float)
        if strategy == "width":
            which = np.minimum((p * bins).astype(int), bins - 1)
            cell, cells = cases * bins + which, self.cases * bins
            counts = np.bincount(cell, minlength=cells).astype(float).reshape(self.cases, bins)
            conf = np.bincount(cell, weights=p, minlength=cells).reshape(self.cases, bins)
            seen = np.bincount(cell, weights=y, minlength=cells).reshape(self.cases, bins)
            summed = self.weigh(np.column_stack([counts.sum(axis=1), conf - seen]))
            with np.errstate(invalid="ignore", divide="ignore"):
                draws = np.abs(summed[:, 1:]).sum(axis=1) / summed[:, 0]
            draws[~np.isfinite(draws)] = np.nan
            return self._estimate(value, None, draws, count)
        if np.array_equal(p, y):  # certain and right every time: 0 on every resample
            drawn = self.weigh(np.bincount(cases, minlength=self.cases).astype(float))
            return self._estimate(value, None, np.where(drawn > 0, 0.0, np.nan), count)
        order = self._order(cases, p)
        p, y, cases = p[order], y[order], cases[order]
        gap = p - y  # a bin's gap is the sum of its decisions' (p - y), over its size
        steps = np.arange(bins + 1, dtype=float)
        draws = np.full(self.resamples, np.nan)
        for rows in self._blocks(len(cases)):
            per = self.weights[rows][:, cases]  # resample x decision: copies of each decision
            ends = np.cumsum(per, axis=1)
            totals = ends[:, -1]
            size, extra = np.divmod(totals, bins)
            cuts = steps[None, :] * size[:, None] + np.minimum(steps[None, :], extra[:, None])
            summed = _cumulative_at(cuts, ends, np.cumsum(per * gap, axis=1), gap)
            with np.errstate(invalid="ignore", divide="ignore"):
                draws[rows] = np.abs(np.diff(summed, axis=1)).sum(axis=1) / totals
        draws[~np.isfinite(draws)] = np.nan
        return self._estimate(value, None, draws, count)

    def auc(
        self, case_of: Sequence[int], scores: Sequence[float], labels: Sequence[bool]
    ) -> Estimate:
        """:func:`auc` of decisions (``case_of`` each decision's case index)."""
        count = len(scores)
        value = self._point(lambda: auc(scores, labels), count)
        if isinstance(value, Estimate):
            return value
        s = np.asarray(scores, dtype=float)
        y = np.asarray(labels, dtype=float)
        cases = np.asarray(case_of, dtype=int)
        if s[y == 1].min() > s[y == 0].max():  # separated: 1 wherever both classes are drawn
            pos_cases = np.bincount(cases, weights=y, minlength=self.cases)
            neg_cases = np.bincount(cases, weights=1.0 - y, minlength=self.cases)
            both = (self.weigh(pos_cases) > 0) & (self.weigh(neg_cases) > 0)
            return self._estimate(value, None, np.where(both, 1.0, np.nan), count)
        order = self._order(cases, s)
        s, y, cases = s[order], y[order], cases[order]
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])  # each run of tied scores
        draws = np.full(self.resamples, np.nan)
        for rows in self._blocks(len(cases)):
            per = self.weights[rows][:, cases]  # resample x decision (sorted by score)
            pos = np.add.reduceat(per * y, starts, axis=1)  # resample x score level
            neg = np.add.reduceat(per, starts, axis=1) - pos
            below = np.cumsum(neg, axis=1) - neg
            with np.errstate(invalid="ignore", divide="ignore"):
                draws[rows] = (pos * (below + 0.5 * neg)).sum(axis=1) / (
                    pos.sum(axis=1) * neg.sum(axis=1)
                )
        draws[~np.isfinite(draws)] = np.nan
        return self._estimate(value, None, draws, count)


def _cumulative_at(bounds: Floats, ends: Floats, cumulative: Floats, values: Floats) -> Floats:
    """Per resample (row), the sum of ``values`` over the first ``bounds`` positions of the
    expanded list in which decision j fills positions [ends[j-1], ends[j]) (a decision drawn k
    times fills k positions)."""
    rows, width = ends.shape
    total = ends[:, -1:]
    shift = (np.arange(rows, dtype=float) * (float(total.max()) + 1.0))[:, None]
    found = np.searchsorted((ends + shift).ravel(), (bounds + shift).ravel(), side="right")
    j = np.clip(found.reshape(bounds.shape) - np.arange(rows)[:, None] * width, 0, width - 1)
    previous = np.maximum(j - 1, 0)
    start = np.where(j > 0, np.take_along_axis(ends, previous, axis=1), 0.0)
    before = np.where(j > 0, np.take_along_axis(cumulative, previous, axis=1), 0.0)
    inside = np.clip(bounds - start, 0.0, None) * values[j]
    return np.where(bounds >= total, cumulative[:, -1:], before + inside)
