"""From case results to figures: run-level counts, per-role figures, baselines, reliability bins.

Every figure's interval resamples whole cases (:func:`harness.evals.metrics.bootstrap`): the
decisions of one run are correlated (they share its world and its model's reading of it).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence

import attrs

from harness.evals import metrics as m
from harness.evals._report import Candidate, CaseResult, ScoredDecision
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
    resampler: m.Resampler | None = None,
) -> dict[str, Estimate]:
    """Every figure of ``cases``: run-level ones when ``runs``, then per question role.
    ``rethreshold`` takes each case's answer again from its candidates at ``threshold``. Every
    figure's interval comes from the same resamples of the cases (``resampler``)."""
    drawn = resampler or m.Resampler(len(cases), resamples=resamples, seed=seed)
    found: dict[str, Estimate] = {}
    if runs:
        at = threshold if rethreshold else None
        found.update(run_figures(cases, threshold=at, resampler=drawn))
    roles: dict[str, None] = {}
    for case in cases:
        for decision in case.decisions:
            roles.setdefault(decision.role, None)
    for role in sorted(roles):
        found.update(role_figures(cases, role, resampler=drawn))
    return found


def run_figures(
    cases: Sequence[CaseResult],
    *,
    threshold: float | None = None,
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
    resampler: m.Resampler | None = None,
) -> dict[str, Estimate]:
    """Recall, precision and F1 pooled over the cases' items, and the share of cases answered
    exactly; at ``threshold`` when given (else as answered)."""
    drawn = resampler or m.Resampler(len(cases), resamples=resamples, seed=seed)
    counts = [case.counts(threshold) for case in cases]
    tp = [float(c[0]) for c in counts]
    fp = [float(c[1]) for c in counts]
    fn = [float(c[2]) for c in counts]
    exact = [float(case.exact(threshold)) for case in cases]
    return {
        "recall": drawn.ratio(
            tp,
            [a + b for a, b in zip(tp, fn, strict=True)],
            undefined="recall is undefined: no item was expected",
        ),
        "precision": drawn.ratio(
            tp,
            [a + b for a, b in zip(tp, fp, strict=True)],
            undefined="precision is undefined: nothing was answered",
        ),
        "f1": drawn.f1(tp, fp, fn, n=int(sum(tp) + sum(fp) + sum(fn))),
        "exact_match": drawn.ratio(
            exact, [1.0] * len(cases), undefined="exact match is undefined: no cases"
        ),
    }


def role_figures(
    cases: Sequence[CaseResult],
    role: str,
    *,
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
    resampler: m.Resampler | None = None,
) -> dict[str, Estimate]:
    """The figures of the decisions of ``role``: accuracy, Brier, log loss, ECE (equal-width and
    equal-mass bins), AUC of its yes/no questions and RPS of its scores."""
    drawn = resampler or m.Resampler(len(cases), resamples=resamples, seed=seed)
    size = len(cases)
    count, right, brier, log_loss = [0.0] * size, [0.0] * size, [0.0] * size, [0.0] * size
    scores, rps = [0.0] * size, [0.0] * size
    case_of: list[int] = []
    chosen: list[ScoredDecision] = []
    for index, case in enumerate(cases):
        for d in case.decisions:
            if d.role != role:
                continue
            case_of.append(index)
            chosen.append(d)
            count[index] += 1
            right[index] += d.correct
            probabilities, label = d.probabilities, d.label
            brier[index] += sum((q - (k == label)) ** 2 for k, q in enumerate(probabilities))
            log_loss[index] -= math.log(max(probabilities[label], m.LOG_LOSS_FLOOR))
            if d.kind == "score":
                scores[index] += 1
                rps[index] += m.rps([probabilities], [label])
    none = f"{role} has no decisions"
    found = {
        f"{role}.accuracy": drawn.ratio(right, count, undefined=f"accuracy is undefined: {none}"),
        f"{role}.brier": drawn.ratio(brier, count, undefined=f"Brier is undefined: {none}"),
        f"{role}.log_loss": drawn.ratio(
            log_loss, count, undefined=f"log loss is undefined: {none}"
        ),
    }
    confidences = [d.confidence for d in chosen]
    outcomes = [d.outcome for d in chosen]
    for strategy in ("width", "mass"):
        found[f"{role}.ece_{strategy}"] = drawn.ece(
            case_of, confidences, outcomes, bins=ECE_BINS, strategy=strategy
        )
    nouls = [(c, d) for c, d in zip(case_of, chosen, strict=True) if d.kind == "noul"]
    if nouls:
        found[f"{role}.auc"] = drawn.auc(
            [c for c, _ in nouls],
            [d.probabilities[0] for _, d in nouls],
            [d.label == 0 for _, d in nouls],
        )
    if any(scores):
        found[f"{role}.rps"] = drawn.ratio(
            rps, scores, undefined=f"the ranked probability score is undefined: {none}"
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


def _draw(seed: int, case: str) -> random.Random:
    """A random source fixed by the seed and the case's name (not by the order of cases)."""
    digest = hashlib.sha256(f"{seed}\0{case}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _answered(candidate: Candidate, probability: float) -> Candidate:
    """``candidate`` with another selection probability (the constructor: a baseline makes
    thousands of these, and ``attrs.evolve`` costs three times as much)."""
    c = candidate
    return Candidate(c.ref, c.value, c.key, probability, c.expected)


def _taken(
    decision: ScoredDecision, probabilities: tuple[float, ...], chosen: int
) -> ScoredDecision:
    """``decision`` answered with ``probabilities``, ``chosen`` taken."""
    d = decision
    return ScoredDecision(
        d.case, d.question, d.kind, d.options, probabilities, chosen, d.label, d.threshold
    )


def uniform_case(case: CaseResult, *, threshold: float | None, seed: int) -> CaseResult:
    """``case`` answered by the uniform random policy on the same decisions: each choice picked
    uniformly with every option at the same probability, each yes/no a probability drawn
    uniformly from [0, 1] (the same draw for a candidate and its ``select_`` question)."""
    cut = 0.5 if threshold is None else threshold
    rng = _draw(seed, case.name)
    drawn = {f"select_{c.ref}": rng.random() for c in case.candidates}
    candidates = tuple(_answered(c, drawn[f"select_{c.ref}"]) for c in case.candidates)
    decisions = []
    for d in case.decisions:
        if d.kind == "noul":
            p = drawn[d.question] if d.question in drawn else rng.random()
            at = d.threshold if d.threshold is not None else 0.5
            decisions.append(_taken(d, (p, 1 - p), 0 if p >= at else 1))
        else:
            k = len(d.options)
            even = tuple(1.0 / k for _ in range(k))
            decisions.append(_taken(d, even, rng.randrange(k)))
    answered = tuple(dict.fromkeys(c.key for c in candidates if c.probability >= cut))
    return attrs.evolve(case, candidates=candidates, decisions=tuple(decisions), answered=answered)


def answer_key_case(case: CaseResult) -> CaseResult:
    """``case`` answered by the answer key on the same decisions: certain of every right
    answer, selecting exactly the expected candidates the run reached."""
    candidates = tuple(_answered(c, 1.0 if c.expected else 0.0) for c in case.candidates)
    decisions = tuple(
        _taken(d, tuple(1.0 if k == d.label else 0.0 for k in range(len(d.options))), d.label)
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
    resampler: m.Resampler | None = None,
) -> dict[str, Mapping[str, Estimate]]:
    """The figures of both baselines on ``cases`` (on the model's resamples when given)."""
    uniform = [uniform_case(c, threshold=threshold, seed=seed) for c in cases]
    key = [answer_key_case(c) for c in cases]
    drawn = resampler or m.Resampler(len(cases), resamples=resamples, seed=seed)
    return {
        "uniform": figures(uniform, runs=runs, threshold=threshold, resampler=drawn),
        "answer_key": figures(key, runs=runs, threshold=threshold, resampler=drawn),
    }
