"""From case results to figures: run-level counts, per-role figures, baselines, reliability bins.

Every figure's interval resamples whole cases (:func:`harness.evals.metrics.bootstrap`): the
decisions of one run are correlated (they share its world and its model's reading of it).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence

import attrs

from harness.evals import metrics as m
from harness.evals._report import CaseResult, ScoredDecision
from harness.evals.metrics import Bin, Estimate

__all__ = ["BASELINES", "answer_key_case", "figures", "reliability_bins", "uniform_case"]

BASELINES = ("uniform", "answer_key")
"""The baselines every report carries, on the same cases and decisions as the model."""

ECE_BINS = 10


def figures(
    cases: Sequence[CaseResult],
    *,
    runs: bool,
    threshold: float | None,
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
    rethreshold: bool = False,
) -> dict[str, Estimate]:
    """Every figure of ``cases``: run-level ones when ``runs``, then per question role.
    ``rethreshold`` takes each case's answer again from its candidates at ``threshold``."""
    found: dict[str, Estimate] = {}
    if runs:
        at = threshold if rethreshold else None
        found.update(run_figures(cases, threshold=at, seed=seed, resamples=resamples))
    roles: dict[str, None] = {}
    for case in cases:
        for decision in case.decisions:
            roles.setdefault(decision.role, None)
    for role in sorted(roles):
        found.update(role_figures(cases, role, seed=seed, resamples=resamples))
    return found


def run_figures(
    cases: Sequence[CaseResult],
    *,
    threshold: float | None = None,
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
) -> dict[str, Estimate]:
    """Recall, precision and F1 pooled over the cases' items, and the share of cases answered
    exactly; at ``threshold`` when given (else as answered)."""
    rows = [(*case.counts(threshold), case.exact(threshold)) for case in cases]

    def total(sample: Sequence[tuple[int, int, int, bool]], index: int) -> int:
        return sum(int(row[index]) for row in sample)

    def exact(sample: Sequence[tuple[int, int, int, bool]]) -> float:
        if not sample:
            raise m.UndefinedMetricError("exact match is undefined: no cases")
        return sum(row[3] for row in sample) / len(sample)

    tp, fp, fn = total(rows, 0), total(rows, 1), total(rows, 2)
    kw = {"seed": seed, "resamples": resamples}
    return {
        "recall": m.bootstrap(rows, lambda s: m.recall(total(s, 0), total(s, 2)), n=tp + fn, **kw),
        "precision": m.bootstrap(
            rows, lambda s: m.precision(total(s, 0), total(s, 1)), n=tp + fp, **kw
        ),
        "f1": m.bootstrap(
            rows, lambda s: m.f1(total(s, 0), total(s, 1), total(s, 2)), n=tp + fp + fn, **kw
        ),
        "exact_match": m.bootstrap(rows, exact, **kw),
    }


def _mean_of(
    per_case: Callable[[ScoredDecision], float], what: str
) -> Callable[[Sequence[Sequence[ScoredDecision]]], float]:
    def statistic(sample: Sequence[Sequence[ScoredDecision]]) -> float:
        count = sum(len(group) for group in sample)
        if count == 0:
            raise m.UndefinedMetricError(f"{what} is undefined: no decisions")
        return sum(per_case(d) for group in sample for d in group) / count

    return statistic


def _brier_one(d: ScoredDecision) -> float:
    return m.brier([d.probabilities], [d.label])


def _log_loss_one(d: ScoredDecision) -> float:
    return m.log_loss([d.probabilities], [d.label])


def _rps_one(d: ScoredDecision) -> float:
    return m.rps([d.probabilities], [d.label])


def role_figures(
    cases: Sequence[CaseResult],
    role: str,
    *,
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
) -> dict[str, Estimate]:
    """The figures of the decisions of ``role``: accuracy, Brier, log loss, ECE (equal-width and
    equal-mass bins), AUC of its yes/no questions and RPS of its scores."""
    groups = [
        [d for d in case.decisions if d.role == role]
        for case in cases
        if any(d.role == role for d in case.decisions)
    ]
    decisions = [d for group in groups for d in group]
    n = len(decisions)
    kw = {"seed": seed, "resamples": resamples, "n": n}

    def flat(sample: Sequence[Sequence[ScoredDecision]]) -> list[ScoredDecision]:
        return [d for group in sample for d in group]

    def ece(strategy: m.BinStrategy) -> Callable[[Sequence[Sequence[ScoredDecision]]], float]:
        def statistic(sample: Sequence[Sequence[ScoredDecision]]) -> float:
            ds = flat(sample)
            return m.ece(
                [d.confidence for d in ds],
                [d.outcome for d in ds],
                bins=ECE_BINS,
                strategy=strategy,
            )

        return statistic

    found = {
        f"{role}.accuracy": m.bootstrap(
            groups, _mean_of(lambda d: float(d.correct), "accuracy"), **kw
        ),
        f"{role}.brier": m.bootstrap(groups, _mean_of(_brier_one, "the Brier score"), **kw),
        f"{role}.log_loss": m.bootstrap(groups, _mean_of(_log_loss_one, "log loss"), **kw),
        f"{role}.ece_width": m.bootstrap(groups, ece("width"), **kw),
        f"{role}.ece_mass": m.bootstrap(groups, ece("mass"), **kw),
    }
    nouls = [[d for d in group if d.kind == "noul"] for group in groups]
    nouls = [group for group in nouls if group]
    if nouls:

        def auc(sample: Sequence[Sequence[ScoredDecision]]) -> float:
            ds = flat(sample)
            return m.auc([d.probabilities[0] for d in ds], [d.label == 0 for d in ds])

        found[f"{role}.auc"] = m.bootstrap(
            nouls, auc, seed=seed, resamples=resamples, n=sum(len(g) for g in nouls)
        )
    scores = [[d for d in group if d.kind == "score"] for group in groups]
    scores = [group for group in scores if group]
    if scores:
        found[f"{role}.rps"] = m.bootstrap(
            scores,
            _mean_of(_rps_one, "the ranked probability score"),
            seed=seed,
            resamples=resamples,
            n=sum(len(g) for g in scores),
        )
    return found


def reliability_bins(cases: Sequence[CaseResult]) -> dict[str, tuple[Bin, ...]]:
    """Each role's reliability diagram, with equal-width and equal-mass bins."""
    by_role: dict[str, list[ScoredDecision]] = {}
    for case in cases:
        for decision in case.decisions:
            by_role.setdefault(decision.role, []).append(decision)
    found: dict[str, tuple[Bin, ...]] = {}
    for role in sorted(by_role):
        ds = by_role[role]
        strategies: tuple[m.BinStrategy, ...] = ("width", "mass")
        for strategy in strategies:
            found[f"{role}.{strategy}"] = tuple(
                m.reliability(
                    [d.confidence for d in ds],
                    [d.outcome for d in ds],
                    bins=ECE_BINS,
                    strategy=strategy,
                )
            )
    return found


# -- baselines ------------------------------------------------------------------------------


def _draw(seed: int, case: str, question: str) -> random.Random:
    """A random source fixed by the seed, the case and the question (order-independent)."""
    digest = hashlib.sha256(f"{seed}\0{case}\0{question}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def uniform_case(case: CaseResult, *, threshold: float | None, seed: int) -> CaseResult:
    """``case`` answered by the uniform random policy on the same decisions: each choice picked
    uniformly with every option at the same probability, each yes/no a probability drawn
    uniformly from [0, 1] (the same draw for a candidate and its ``select_`` question)."""
    cut = 0.5 if threshold is None else threshold
    candidates = tuple(
        attrs.evolve(c, probability=_draw(seed, case.name, f"select_{c.ref}").random())
        for c in case.candidates
    )
    decisions = []
    for d in case.decisions:
        rng = _draw(seed, case.name, d.question)
        if d.kind == "noul":
            p = rng.random()
            at = d.threshold if d.threshold is not None else 0.5
            decisions.append(attrs.evolve(d, probabilities=(p, 1 - p), chosen=0 if p >= at else 1))
        else:
            k = len(d.options)
            even = tuple(1.0 / k for _ in range(k))
            decisions.append(attrs.evolve(d, probabilities=even, chosen=rng.randrange(k)))
    answered = tuple(dict.fromkeys(c.key for c in candidates if c.probability >= cut))
    return attrs.evolve(case, candidates=candidates, decisions=tuple(decisions), answered=answered)


def answer_key_case(case: CaseResult) -> CaseResult:
    """``case`` answered by the answer key on the same decisions: certain of every right
    answer, selecting exactly the expected candidates the run reached."""
    candidates = tuple(
        attrs.evolve(c, probability=1.0 if c.expected else 0.0) for c in case.candidates
    )
    decisions = tuple(
        attrs.evolve(
            d,
            probabilities=tuple(1.0 if k == d.label else 0.0 for k in range(len(d.options))),
            chosen=d.label,
        )
        for d in case.decisions
    )
    answered = tuple(dict.fromkeys(c.key for c in candidates if c.expected))
    return attrs.evolve(case, candidates=candidates, decisions=decisions, answered=answered)


def baseline_figures(
    cases: Sequence[CaseResult],
    *,
    runs: bool,
    threshold: float | None,
    seed: int,
    resamples: int,
) -> dict[str, Mapping[str, Estimate]]:
    """The figures of both baselines on ``cases``."""
    uniform = [uniform_case(c, threshold=threshold, seed=seed) for c in cases]
    key = [answer_key_case(c) for c in cases]
    return {
        "uniform": figures(uniform, runs=runs, threshold=threshold, seed=seed, resamples=resamples),
        "answer_key": figures(key, runs=runs, threshold=threshold, seed=seed, resamples=resamples),
    }
