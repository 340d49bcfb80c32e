"""Fitting a calibration: the math against independent computations, and a fake model with a
known distortion whose fitted calibration must undo it on held-out decisions."""

from __future__ import annotations

import asyncio
import math
import random

import pytest

from harness.catalog import (
    Calibration,
    Catalog,
    CatalogEntry,
    IsotonicMap,
    PlattMap,
    TemperatureMap,
    logit,
    sigmoid,
)
from harness.decision import DecisionRequest, Noul, NoulAnswer
from harness.evals import ScoredDecision
from harness.evals._calibration import (
    best_threshold,
    fit_calibration,
    fit_isotonic,
    fit_noul,
    fit_platt,
    fit_temperature,
)
from harness.evals._calibration_report import calibration_report
from harness.evals.metrics import ece
from harness.jobs import Dispatcher
from harness.testing import FakeDecisionModel
from harness.tools import Workflow

# -- the fits against independent computations -----------------------------------------------


def nll_platt(a: float, b: float, ps: list[float], ys: list[bool]) -> float:
    total = 0.0
    for p, y in zip(ps, ys, strict=True):
        q = 1 / (1 + math.exp(-(a * logit(p) + b)))
        total -= math.log(q if y else 1 - q)
    return total / len(ys)


def grid_minimum(
    loss: object, lows: tuple[float, float], highs: tuple[float, float]
) -> tuple[float, float]:
    """A coarse-to-fine grid search: an independent minimiser of a smooth 2-d loss."""
    assert callable(loss)
    (a0, b0), (a1, b1) = lows, highs
    best = (a0, b0)
    for _ in range(6):
        points = [
            (a0 + (a1 - a0) * i / 20, b0 + (b1 - b0) * j / 20) for i in range(21) for j in range(21)
        ]
        best = min(points, key=lambda ab: loss(*ab))
        da, db = (a1 - a0) / 10, (b1 - b0) / 10
        a0, a1, b0, b1 = best[0] - da, best[0] + da, best[1] - db, best[1] + db
    return best


def distorted_sample(n: int, seed: int) -> tuple[list[float], list[bool]]:
    """True probabilities uniform on (0, 1), answered as sigmoid(3 logit(p) + 1)."""
    rng = random.Random(seed)
    ps, ys = [], []
    for _ in range(n):
        p = rng.random()
        ys.append(rng.random() < p)
        ps.append(sigmoid(3 * logit(p) + 1))
    return ps, ys


def test_platt_is_the_maximum_likelihood_fit() -> None:
    ps, ys = distorted_sample(400, seed=3)
    fitted = fit_platt(ps, ys)
    a, b = grid_minimum(lambda a, b: nll_platt(a, b, ps, ys), (0.0, -2.0), (2.0, 2.0))
    assert fitted.a == pytest.approx(a, abs=2e-3)
    assert fitted.b == pytest.approx(b, abs=2e-3)
    # and it is a minimum: no neighbour does better
    best = nll_platt(fitted.a, fitted.b, ps, ys)
    for da, db in ((0.01, 0), (-0.01, 0), (0, 0.01), (0, -0.01)):
        assert nll_platt(fitted.a + da, fitted.b + db, ps, ys) >= best


def test_platt_stays_monotone_on_a_backward_sample() -> None:
    ps = [0.1, 0.2, 0.3, 0.7, 0.8, 0.9] * 5
    ys = [True, True, True, False, False, False] * 5
    fitted = fit_platt(ps, ys)
    assert fitted.a == 0.0
    assert fitted.probability(0.9) == pytest.approx(0.5, abs=1e-3)  # the base rate, for all


def test_temperature_minimises_the_log_loss() -> None:
    rng = random.Random(5)
    distributions, labels = [], []
    for _ in range(300):
        logits = [rng.gauss(0, 1) for _ in range(4)]
        z = sum(math.exp(v) for v in logits)
        truth = [math.exp(v) / z for v in logits]
        labels.append(rng.choices(range(4), weights=truth)[0])
        sharp = [p**2.5 for p in truth]  # overconfident by a known power
        distributions.append([p / sum(sharp) for p in sharp])

    def loss(t: float) -> float:
        total = 0.0
        for dist, label in zip(distributions, labels, strict=True):
            powered = [p ** (1 / t) for p in dist]
            total -= math.log(powered[label] / sum(powered))
        return total / len(labels)

    grid = [0.5 + i * 0.005 for i in range(1000)]
    best = min(grid, key=loss)
    fitted = fit_temperature(distributions, labels)
    assert fitted.temperature == pytest.approx(best, abs=0.01)
    assert fitted.temperature == pytest.approx(2.5, rel=0.25)  # the known power, roughly


def isotonic_by_minmax(ps: list[float], ys: list[bool]) -> dict[float, float]:
    """The isotonic regression's value at each distinct p, by the min-max formula
    value(i) = max_{j <= i} min_{k >= i} mean(y[j..k]) over the distinct p's (pooled)."""
    distinct = sorted(set(ps))
    sums = [sum(1.0 for p, y in zip(ps, ys, strict=True) if p == v and y) for v in distinct]
    counts = [sum(1 for p in ps if p == v) for v in distinct]
    values = {}
    for i, v in enumerate(distinct):
        values[v] = max(
            min(sum(sums[j : k + 1]) / sum(counts[j : k + 1]) for k in range(i, len(distinct)))
            for j in range(i + 1)
        )
    return values


def test_isotonic_matches_the_min_max_formula() -> None:
    rng = random.Random(11)
    ps = [round(rng.random(), 2) for _ in range(120)]
    ys = [rng.random() < p for p in ps]
    fitted = fit_isotonic(ps, ys)
    expected = isotonic_by_minmax(ps, ys)
    # one point per pooled block: its value the regression's, at the block's mean p
    assert sorted({round(v, 9) for v in expected.values()}) == [round(y, 9) for y in fitted.y]
    for x, y in zip(fitted.x, fitted.y, strict=True):
        members = [p for p in ps if abs(expected[p] - y) < 1e-9]
        assert x == pytest.approx(sum(members) / len(members))
    assert fitted.probability(min(ps)) == pytest.approx(fitted.y[0])


def test_best_threshold_is_the_best_f1_cut() -> None:
    rng = random.Random(2)
    ps = [rng.random() for _ in range(60)]
    ys = [rng.random() < p for p in ps]
    t = best_threshold(ps, ys)

    def f1(cut: float) -> float:
        tp = sum(1 for p, y in zip(ps, ys, strict=True) if p >= cut and y)
        fp = sum(1 for p, y in zip(ps, ys, strict=True) if p >= cut and not y)
        fn = sum(1 for p, y in zip(ps, ys, strict=True) if p < cut and y)
        return 2 * tp / (2 * tp + fp + fn)

    assert f1(t) == max(f1(p) for p in ps)
    assert t not in ps  # halfway between two answers: no answer sits on it


def test_a_map_keeps_the_top_option_and_sums_to_one() -> None:
    for temperature in (0.3, 1.0, 4.0):
        mapped = TemperatureMap(temperature=temperature).distribution([0.5, 0.3, 0.2])
        assert sum(mapped) == pytest.approx(1.0)
        assert mapped.index(max(mapped)) == 0
    assert IsotonicMap(x=[0.2, 0.6], y=[0.1, 0.9]).probability(0.4) == pytest.approx(0.5)
    assert PlattMap(a=1.0, b=0.0).probability(0.3) == pytest.approx(0.3)


def test_fit_noul_picks_by_cross_validation_on_dev_only() -> None:
    ps, ys = distorted_sample(600, seed=8)
    chosen = fit_noul(ps, ys)
    assert isinstance(chosen, PlattMap)  # the distortion is a Platt map: it fits best
    steps = [0.1 if p < 0.5 else 0.9 for p in ps]  # a step function: isotonic's shape
    ys_step = [random.Random(i).random() < (0.2 if p < 0.5 else 0.8) for i, p in enumerate(ps)]
    assert isinstance(fit_noul(steps, ys_step), IsotonicMap | PlattMap)


# -- a deliberately miscalibrated fake model ---------------------------------------------------

A, B = 3.0, 1.0
"""The fake model's known distortion: it answers sigmoid(A logit(p) + B) for a true p."""


PER_REQUEST = 100
"""Selection questions asked per request (one request, like a thinker's finishing turn)."""


def requests(n: int, seed: int) -> list[tuple[DecisionRequest, list[bool]]]:
    """Requests of selection questions whose true probabilities (uniform) are in the state,
    each question with an outcome drawn from its probability."""
    rng = random.Random(seed)
    made = []
    for first in range(0, n, PER_REQUEST):
        truths: dict[str, float] = {}
        outcomes = []
        for index in range(first, min(n, first + PER_REQUEST)):
            p = rng.random()
            truths[f"select_item#{index}"] = p
            outcomes.append(rng.random() < p)
        questions = {qid: Noul("Does it belong?") for qid in truths}
        made.append((DecisionRequest({"p": truths}, questions), outcomes))
    return made


def distorted(request: DecisionRequest) -> dict[str, NoulAnswer]:
    state = request.state
    assert isinstance(state, dict)  # the state these tests build
    truths = state["p"]
    assert isinstance(truths, dict)
    return {qid: NoulAnswer(sigmoid(A * logit(truths[qid]) + B)) for qid in request.questions}


def ask(
    asked: list[tuple[DecisionRequest, list[bool]]], entry: CatalogEntry
) -> list[ScoredDecision]:
    """Each request asked through a dispatcher (decision calls, the wrapper client when the
    entry has a calibration); each selection as the thinker reads it, scored."""
    from harness.thinker import DecisionCall

    async def go() -> list[ScoredDecision]:
        catalog = Catalog([entry], {"decision": entry.id})
        model = FakeDecisionModel(distorted)
        found = []
        async with Dispatcher(catalog, clients={entry.id: model}) as dispatcher:
            for request, outcomes in asked:
                response = await dispatcher.run(DecisionCall(Workflow(), request))
                for qid, outcome in zip(request.questions, outcomes, strict=True):
                    p = response.noul(qid).probability
                    found.append(
                        ScoredDecision(
                            case=qid,
                            question=qid,
                            kind="noul",
                            options=("yes", "no"),
                            probabilities=(p, 1 - p),
                            chosen=0 if p >= 0.5 else 1,
                            label=0 if outcome else 1,
                            threshold=0.5,
                        )
                    )
        return found

    return asyncio.run(go())


def expected_f1(t: float) -> float:
    """F1 at threshold t of a calibrated model whose p is uniform on (0, 1): TP = (1 - t^2)/2,
    FP = (1 - t)^2/2, FN = t^2/2 per case."""
    tp, fp, fn = (1 - t * t) / 2, (1 - t) ** 2 / 2, t * t / 2
    return 2 * tp / (2 * tp + fp + fn)


def test_the_fitted_calibration_undoes_a_known_distortion() -> None:
    entry = CatalogEntry(
        id="bent",
        provider="fake",
        wire_model_id="bent",
        max_context_tokens=4096,
        max_concurrent=4,
    )
    n = 1500
    dev, test = requests(n, seed=1), requests(n, seed=2)
    calibration = fit_calibration(ask(dev, entry), noul_method="platt")
    fitted = calibration.roles["select"]
    assert isinstance(fitted, PlattMap)
    # the inverse of the distortion is a = 1/A, b = -B/A: within 4 standard errors of a
    # logistic fit on n decisions (se ~ 1/(A sqrt(n p(1-p))) for the slope)
    slope_se = 1 / (A * math.sqrt(n * 0.25 * 0.5))
    assert fitted.a == pytest.approx(1 / A, abs=4 * slope_se)
    assert fitted.b == pytest.approx(-B / A, abs=4 * slope_se * abs(B) + 4 / math.sqrt(n))

    # held out: the raw answers against the calibrated ones read through the wrapper client
    raw = ask(test, entry)
    calibrated = ask(test, attrs_evolve(entry, calibration))
    outcomes = [d.label == 0 for d in raw]
    before = ece([d.probabilities[0] for d in raw], outcomes, bins=10)
    after = ece([d.probabilities[0] for d in calibrated], outcomes, bins=10)
    assert after < before / 2
    report = calibration_report(raw, calibration, resamples=100)
    (select,) = report.roles
    assert select.ece_after.value is not None
    assert select.ece_before.value is not None
    assert select.ece_after.value < select.ece_before.value

    # the fitted threshold lands where F1 is best for a calibrated model of uniform p, within
    # what n decisions can tell apart: thresholds whose expected F1 is within two standard
    # errors of the optimum's (se of an F1 over n decisions ~ sqrt(F (1 - F) / n))
    grid = [i / 2000 for i in range(1, 2000)]
    best = max(grid, key=expected_f1)
    assert best == pytest.approx(0.5 * expected_f1(best), abs=1e-3)  # the known result t* = F*/2
    top = expected_f1(best)
    tolerance = 2 * math.sqrt(top * (1 - top) / n)
    near = [t for t in grid if expected_f1(t) >= top - tolerance]
    assert calibration.selection_threshold is not None
    assert min(near) <= calibration.selection_threshold <= max(near)
    assert max(near) - min(near) < 0.5  # the tolerance says something


def attrs_evolve(entry: CatalogEntry, calibration: Calibration) -> CatalogEntry:
    import attrs

    return attrs.evolve(entry, calibration=calibration)
