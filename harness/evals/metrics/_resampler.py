"""The bootstrap of an eval, vectorized: every figure of a report on the same resamples."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from harness.evals.metrics._binning import BinStrategy, ece
from harness.evals.metrics._estimate import Estimate, UndefinedMetricError
from harness.evals.metrics._intervals import BOOTSTRAP_RESAMPLES
from harness.evals.metrics._scores import auc

__all__ = ["BLOCK_CELLS", "Resampler"]

BLOCK_CELLS: Final = 200_000
"""How many numbers (resamples x decisions) one step of a figure's resampling holds at once."""

Floats = npt.NDArray[np.float64]


class Resampler:
    """The bootstrap resamples of an eval's cases, shared by every figure of a report: each
    resample draws ``cases`` cases with replacement (numpy's PCG64, seeded), held as a matrix
    of how often each case was drawn. A figure's statistic on every resample is then a few
    matrix products, so a report of a thousand cases costs well under a second.

    Each method takes per-case (or per-decision) values and returns an :class:`Estimate`: its
    value computed on all cases, its 95 % percentile interval over the resamples (undefined
    with fewer than two cases, or when the figure is undefined on more than half of them) and
    its bias over them. Equal probabilities stay in one equal-mass bin, as in :func:`ece`.
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
        bias = float(defined.mean()) - value
        return Estimate(value, float(low), float(high), n, self.cases, None, bias)

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
        starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])  # each run of equal probabilities
        steps = np.arange(bins + 1, dtype=float)
        draws = np.full(self.resamples, np.nan)
        for rows in self._blocks(len(cases)):
            per = self.weights[rows][:, cases]  # resample x decision: copies of each decision
            weighed = per * gap
            if len(starts) < len(p):  # ties: a column per run of equal probabilities
                per = np.add.reduceat(per, starts, axis=1)
                weighed = np.add.reduceat(weighed, starts, axis=1)
            ends = np.cumsum(per, axis=1)  # resample x run
            gaps = np.cumsum(weighed, axis=1)
            totals = ends[:, -1]
            size, extra = np.divmod(totals, bins)
            cuts = steps[None, :] * size[:, None] + np.minimum(steps[None, :], extra[:, None])
            summed = _summed_to_cuts(cuts, ends, gaps)
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


def _summed_to_cuts(cuts: Floats, ends: Floats, cumulative: Floats) -> Floats:
    """Per resample (row), the sum of the runs' values up to each cut, a cut inside a run of
    equal probabilities moved to the run's end (``mass_cuts``, as the pure
    ECE cuts): ``ends`` are the runs' cumulative sizes, ``cumulative`` their values'
    cumulative sums, a cut at 0 sums nothing."""
    rows, width = ends.shape
    shift = (np.arange(rows, dtype=float) * (float(ends[:, -1].max()) + 1.0))[:, None]
    found = np.searchsorted((ends + shift).ravel(), (cuts + shift).ravel(), side="left")
    run = np.clip(found.reshape(cuts.shape) - np.arange(rows)[:, None] * width, 0, width - 1)
    return np.where(cuts > 0, np.take_along_axis(cumulative, run, axis=1), 0.0)
