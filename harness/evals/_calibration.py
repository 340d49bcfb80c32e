"""Fitting a catalog entry's calibration from labelled decisions, and measuring what it did.

The maps themselves (and their application) live with the catalog entry
(:class:`harness.catalog.Calibration`); this module fits them on a dev split and reports them on
a held-out one:

* :func:`fit_temperature` (choices, scores): the temperature minimising the log loss of the
  right option, found by golden-section search on ``log T`` (the loss is convex in ``1 / T``);
* :func:`fit_platt` (nouls): logistic regression of the outcome on ``logit(p)``, by Newton's
  method with a tiny ridge so a separable sample still converges;
* :func:`fit_isotonic` (nouls): pool-adjacent-violators, the points at the pooled blocks' mean
  probabilities;
* :func:`fit_noul` chooses Platt or isotonic by cross-validated log loss *within* the dev split;
* :func:`fit_calibration` fits every role of a set of labelled decisions; :func:`best_threshold`
  the selection threshold of best F1 on calibrated probabilities (the held-out report of what
  they did is :mod:`harness.evals._calibration_report`).

Everything here is plain Python and deterministic (a seed for the folds and the bootstrap).
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final, Literal

import attrs

from harness.catalog import (
    CALIBRATION_ROLES,
    Calibration,
    Catalog,
    IsotonicMap,
    PlattMap,
    RoleMap,
    TemperatureMap,
    logit,
    sigmoid,
)
from harness.evals._report import ScoredDecision
from harness.evals._threshold import update_calibration_file
from harness.evals.metrics import log_loss

__all__ = [
    "best_threshold",
    "by_calibration_role",
    "calibration_role",
    "fit_calibration",
    "fit_isotonic",
    "fit_noul",
    "fit_platt",
    "fit_temperature",
    "mapped_distribution",
    "without_calibration",
    "write_calibration",
]

NoulMethod = Literal["auto", "platt", "isotonic"]

FOLDS: Final = 5
"""Folds of the dev split's cross-validation when :func:`fit_noul` chooses a method."""
MIN_FIT: Final = 10
"""Fewer labelled decisions than this for a role and it is left uncalibrated."""
RIDGE: Final = 1e-3
"""The L2 penalty on Platt's slope and intercept (keeps a separable sample finite)."""


def calibration_role(decision: ScoredDecision) -> str:
    """The calibration role of a scored decision (:func:`harness.catalog.role_of`): ``next``,
    ``input``, ``select``, else its kind (a pack's questions)."""
    if decision.question == "next" and decision.kind == "choice":
        return "next"
    if decision.question.endswith("_input") and decision.kind == "choice":
        return "input"
    if decision.question.startswith("select_") and decision.kind == "noul":
        return "select"
    return decision.kind


def by_calibration_role(decisions: Iterable[ScoredDecision]) -> dict[str, list[ScoredDecision]]:
    """``decisions`` grouped by :func:`calibration_role`, each role in first-seen order."""
    by_role: dict[str, list[ScoredDecision]] = {}
    for decision in decisions:
        by_role.setdefault(calibration_role(decision), []).append(decision)
    return by_role


def _p_yes(decision: ScoredDecision) -> float:
    return decision.probabilities[0]


def _truth(decision: ScoredDecision) -> bool:
    return decision.label == 0


def without_calibration(catalog: Catalog) -> Catalog:
    """A copy of ``catalog`` whose entries answer as their models do (no calibration): what a
    calibration is fitted on. ``catalog`` itself is not changed."""
    entries = [attrs.evolve(entry, calibration=None) for entry in catalog.entries.values()]
    return Catalog(entries, catalog.pins, source=f"{catalog.source}, uncalibrated")


def write_calibration(calibration: Calibration, path: str | os.PathLike[str]) -> Path:
    """Write ``calibration``'s maps (and ``fitted_on``, and its ``selection_threshold`` when it
    has one) into the TOML calibration file at ``path``, the file an entry's
    ``[entries.calibration]`` names with ``file = "..."``; made if missing, its other keys kept
    (a threshold written by :meth:`FittedThreshold.write_calibration` stays)."""
    return update_calibration_file(
        path, calibration.to_table(), "# calibration fitted by harness.evals (fit_calibration)"
    )


# -- the fits --------------------------------------------------------------------------------


def _choice_nll(
    beta: float, distributions: Sequence[Sequence[float]], labels: Sequence[int]
) -> float:
    total = 0.0
    for distribution, label in zip(distributions, labels, strict=True):
        logs = [beta * math.log(max(1e-6, p)) for p in distribution]
        top = max(logs)
        total -= logs[label] - (top + math.log(sum(math.exp(v - top) for v in logs)))
    return total / len(labels)


def fit_temperature(
    distributions: Sequence[Sequence[float]], labels: Sequence[int]
) -> TemperatureMap:
    """The temperature minimising the mean log loss of the right options (``T`` in
    [e^-5, e^5])."""
    if not labels:
        raise ValueError("fit_temperature needs at least one labelled decision")
    low, high = -5.0, 5.0  # log(1 / T)
    ratio = (math.sqrt(5) - 1) / 2
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    fa = _choice_nll(math.exp(a), distributions, labels)
    fb = _choice_nll(math.exp(b), distributions, labels)
    for _ in range(80):
        if fa < fb:
            high, b, fb = b, a, fa
            a = high - ratio * (high - low)
            fa = _choice_nll(math.exp(a), distributions, labels)
        else:
            low, a, fa = a, b, fb
            b = low + ratio * (high - low)
            fb = _choice_nll(math.exp(b), distributions, labels)
    return TemperatureMap(temperature=1.0 / math.exp((low + high) / 2))


def fit_platt(probabilities: Sequence[float], outcomes: Sequence[bool]) -> PlattMap:
    """``sigmoid(a * logit(p) + b)`` fitted by maximum likelihood (damped Newton's method).

    The map stays monotone (``a >= 0``): a sample whose best slope is negative (the model ranks
    backwards there) gets ``a = 0``, every answer mapped to the sample's base rate, since
    reversing a model's ranking is not calibrating it."""
    if not outcomes:
        raise ValueError("fit_platt needs at least one labelled decision")
    z = [logit(p) for p in probabilities]
    y = [1.0 if o else 0.0 for o in outcomes]
    n = len(y)

    def loss(a: float, b: float) -> float:
        total = RIDGE / 2 * ((a - 1.0) ** 2 + b * b)
        for zi, yi in zip(z, y, strict=True):
            s = a * zi + b  # -log sigmoid(s) for a true outcome, -log sigmoid(-s) for a false
            total += (_softplus(-s) if yi else _softplus(s)) / n
        return total

    a, b = 1.0, 0.0
    current = loss(a, b)
    for _ in range(100):
        ga = RIDGE * (a - 1.0)
        gb = RIDGE * b
        haa, hab, hbb = RIDGE, 0.0, RIDGE
        for zi, yi in zip(z, y, strict=True):
            q = sigmoid(a * zi + b)
            w = q * (1 - q)
            ga += (q - yi) * zi / n
            gb += (q - yi) / n
            haa += w * zi * zi / n
            hab += w * zi / n
            hbb += w / n
        det = haa * hbb - hab * hab
        step_a = (hbb * ga - hab * gb) / det
        step_b = (haa * gb - hab * ga) / det
        scale = 1.0
        while scale > 1e-6:  # damped: halve the step until the loss falls
            tried = loss(a - scale * step_a, b - scale * step_b)
            if tried <= current:
                break
            scale /= 2
        else:
            break
        a, b, current = a - scale * step_a, b - scale * step_b, tried
        if abs(scale * step_a) < 1e-9 and abs(scale * step_b) < 1e-9:
            break
    if a < 0:
        rate = (sum(y) + RIDGE) / (n + 2 * RIDGE)
        a, b = 0.0, logit(rate)
    return PlattMap(a=a, b=b)


def _softplus(s: float) -> float:
    """``log(1 + exp(s))``, stable."""
    return s + math.log1p(math.exp(-s)) if s > 0 else math.log1p(math.exp(s))


def fit_isotonic(probabilities: Sequence[float], outcomes: Sequence[bool]) -> IsotonicMap:
    """The non-decreasing step map of least squares (pool-adjacent-violators): one point per
    pooled block, at its mean probability, valued at its outcome rate."""
    if not outcomes:
        raise ValueError("fit_isotonic needs at least one labelled decision")
    # equal probabilities share one value: group them first, then pool adjacent violators
    groups: dict[float, list[float]] = {}
    for p, outcome in zip(probabilities, outcomes, strict=True):
        group = groups.setdefault(p, [0.0, 0.0, 0.0])
        group[0] += p
        group[1] += 1.0 if outcome else 0.0
        group[2] += 1.0
    blocks: list[list[float]] = []  # [sum of p, sum of outcomes, count]
    for p in sorted(groups):
        blocks.append(list(groups[p]))
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            last = blocks.pop()
            for k in range(3):
                blocks[-1][k] += last[k]
    x = [block[0] / block[2] for block in blocks]
    values = [block[1] / block[2] for block in blocks]
    return IsotonicMap(x=x, y=values)


def _noul_loss(found: RoleMap, probabilities: Sequence[float], outcomes: Sequence[bool]) -> float:
    assert not isinstance(found, TemperatureMap)
    mapped = [[q, 1 - q] for q in (found.probability(p) for p in probabilities)]
    return log_loss(mapped, [0 if o else 1 for o in outcomes])


def fit_noul(
    probabilities: Sequence[float],
    outcomes: Sequence[bool],
    *,
    method: NoulMethod = "auto",
    seed: int = 0,
) -> PlattMap | IsotonicMap:
    """A noul's map: Platt or isotonic as asked, or (``"auto"``) the one of lower log loss in a
    :data:`FOLDS`-fold cross-validation on the same (dev) decisions."""
    if method == "platt":
        return fit_platt(probabilities, outcomes)
    if method == "isotonic":
        return fit_isotonic(probabilities, outcomes)
    indices = list(range(len(outcomes)))
    random.Random(seed).shuffle(indices)
    losses = {"platt": 0.0, "isotonic": 0.0}
    for fold in range(FOLDS):
        held = set(indices[fold::FOLDS])
        train = [i for i in indices if i not in held]
        if not held or not train:
            continue
        for name, fit in (("platt", fit_platt), ("isotonic", fit_isotonic)):
            found = fit([probabilities[i] for i in train], [outcomes[i] for i in train])
            losses[name] += _noul_loss(
                found, [probabilities[i] for i in held], [outcomes[i] for i in held]
            ) * len(held)
    if losses["isotonic"] < losses["platt"]:
        return fit_isotonic(probabilities, outcomes)
    return fit_platt(probabilities, outcomes)


def fit_calibration(
    decisions: Iterable[ScoredDecision],
    *,
    noul_method: NoulMethod = "auto",
    fitted_on: str | None = None,
    selection_threshold: bool = True,
    roles: Sequence[str] | None = None,
) -> Calibration:
    """A calibration fitted on ``decisions`` (the dev split): a temperature per choice or score
    role, a Platt or isotonic map per noul role, each role with at least :data:`MIN_FIT`
    decisions (``roles`` limits which). With ``selection_threshold``, the ``select`` role's
    threshold of best F1 on its calibrated probabilities is fitted too."""
    by_role = by_calibration_role(decisions)
    fitted: dict[str, RoleMap] = {}
    for role in CALIBRATION_ROLES:
        found = by_role.get(role, [])
        if len(found) < MIN_FIT or (roles is not None and role not in roles):
            continue
        if CALIBRATION_ROLES[role] == "noul":
            fitted[role] = fit_noul(
                [_p_yes(d) for d in found], [_truth(d) for d in found], method=noul_method
            )
        else:
            fitted[role] = fit_temperature(
                [d.probabilities for d in found], [d.label for d in found]
            )
    threshold = None
    selections = by_role.get("select", [])
    if selection_threshold and len(selections) >= MIN_FIT:
        select_map = fitted.get("select")
        threshold = best_threshold(
            [mapped_p_yes(select_map, _p_yes(d)) for d in selections],
            [_truth(d) for d in selections],
        )
    return Calibration(fitted, fitted_on=fitted_on, selection_threshold=threshold)


def mapped_p_yes(found: RoleMap | None, p: float) -> float:
    """A noul's probability after ``found`` (unchanged without a map)."""
    if found is None or isinstance(found, TemperatureMap):
        return p
    return found.probability(p)


def mapped_distribution(calibration: Calibration | None, decision: ScoredDecision) -> list[float]:
    """``decision``'s distribution after ``calibration``'s map for its role (or its kind's)."""
    if calibration is None:
        return list(decision.probabilities)
    found = calibration.roles.get(calibration_role(decision))
    if found is None:
        return list(decision.probabilities)
    if isinstance(found, TemperatureMap):
        return found.distribution(list(decision.probabilities))
    q = found.probability(_p_yes(decision))
    return [q, 1 - q]


def best_threshold(probabilities: Sequence[float], outcomes: Sequence[bool]) -> float:
    """The selection threshold of best F1 on these decisions: selecting ``p >= t``, ``t``
    between the best cut's probability and the next lower one (the midpoint), ties broken
    toward the higher threshold. Undefined with no true outcome."""
    positives = sum(1 for o in outcomes if o)
    if positives == 0:
        raise ValueError("best_threshold needs at least one true outcome")
    ranked = sorted(zip(probabilities, outcomes, strict=True), key=lambda po: -po[0])
    best_f1, best_t = -1.0, 1.0
    tp = fp = 0
    for index, (p, outcome) in enumerate(ranked):
        tp += outcome
        fp += not outcome
        if index + 1 < len(ranked) and ranked[index + 1][0] == p:
            continue  # a cut lies between distinct probabilities only
        f1 = 2 * tp / (2 * tp + fp + (positives - tp))
        if f1 > best_f1:
            best_f1 = f1
            lower = ranked[index + 1][0] if index + 1 < len(ranked) else 0.0
            best_t = (p + lower) / 2
    return best_t
