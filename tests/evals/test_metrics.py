"""Every figure of harness.evals.metrics against an independent computation written here."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

import pytest

from harness.evals import metrics as m
from harness.evals.metrics import _resampler as resampler_module

RNG = random.Random(11)
P = [RNG.random() for _ in range(40)]
Y = [RNG.random() < p for p in P]  # outcomes drawn from the probabilities: both classes


def test_counts() -> None:
    assert m.recall(3, 1) == 0.75
    assert m.precision(3, 3) == 0.5
    assert m.f1(3, 3, 1) == pytest.approx(2 * 0.5 * 0.75 / (0.5 + 0.75))
    with pytest.raises(m.UndefinedMetricError, match="no item was expected"):
        m.recall(0, 0)
    with pytest.raises(m.UndefinedMetricError, match="nothing was answered"):
        m.precision(0, 0)
    with pytest.raises(m.UndefinedMetricError):
        m.f1(0, 0, 0)


def test_brier_and_log_loss_over_the_whole_distribution() -> None:
    dists = [(0.7, 0.2, 0.1), (0.1, 0.1, 0.8), (1 / 3, 1 / 3, 1 / 3)]
    labels = [0, 1, 2]
    expected = 0.0
    for d, label in zip(dists, labels, strict=True):
        onehot = [1.0 if k == label else 0.0 for k in range(3)]
        expected += sum((a - b) ** 2 for a, b in zip(d, onehot, strict=True))
    assert m.brier(dists, labels) == pytest.approx(expected / 3)
    assert m.log_loss(dists, labels) == pytest.approx(
        -(math.log(0.7) + math.log(0.1) + math.log(1 / 3)) / 3
    )
    # a noul as (p, 1 - p): twice the one-sided squared error
    assert m.brier([(0.8, 0.2)], [1]) == pytest.approx(2 * 0.8**2)
    assert m.log_loss([(1.0, 0.0)], [1]) == pytest.approx(-math.log(m.LOG_LOSS_FLOOR))


def test_accuracy_takes_the_first_of_tied_options() -> None:
    assert m.accuracy([(0.5, 0.5), (0.2, 0.8), (0.9, 0.1)], [0, 1, 1]) == pytest.approx(2 / 3)


def test_auc_against_counting_every_pair() -> None:
    scores = [round(p, 1) for p in P]  # ties on purpose
    positives = [s for s, y in zip(scores, Y, strict=True) if y]
    negatives = [s for s, y in zip(scores, Y, strict=True) if not y]
    wins = sum(
        1.0 if a > b else 0.5 if a == b else 0.0 for a, b in itertools.product(positives, negatives)
    )
    assert m.auc(scores, Y) == pytest.approx(wins / (len(positives) * len(negatives)))


def test_rps_against_cumulative_sums() -> None:
    dists = [(0.1, 0.2, 0.3, 0.4), (0.7, 0.1, 0.1, 0.1)]
    labels = [3, 2]
    total = 0.0
    for d, label in zip(dists, labels, strict=True):
        cdf = [sum(d[: k + 1]) for k in range(4)]
        obs = [1.0 if k >= label else 0.0 for k in range(4)]
        total += sum((cdf[k] - obs[k]) ** 2 for k in range(3)) / 3
    assert m.rps(dists, labels) == pytest.approx(total / 2)
    assert m.rps([(0.0, 0.0, 1.0)], [2]) == 0.0
    assert m.rps([(1.0, 0.0, 0.0)], [2]) > m.rps([(0.0, 1.0, 0.0)], [2])  # far costs more


def _ece_by_hand(ps: list[float], ys: list[bool], groups: list[list[int]]) -> float:
    n = len(ps)
    total = 0.0
    for group in groups:
        if group:
            conf = sum(ps[i] for i in group) / len(group)
            freq = sum(ys[i] for i in group) / len(group)
            total += len(group) / n * abs(conf - freq)
    return total


def test_ece_with_equal_width_bins() -> None:
    groups: list[list[int]] = [[] for _ in range(10)]
    for i, p in enumerate(P):
        b = 9 if p >= 1.0 else math.floor(p * 10)
        groups[b].append(i)
    assert m.ece(P, Y, bins=10, strategy="width") == pytest.approx(_ece_by_hand(P, Y, groups))
    assert m.ece([1.0, 0.0], [True, False]) == 0.0  # 1.0 lands in the last bin


def test_ece_with_equal_mass_bins() -> None:
    order = sorted(range(len(P)), key=lambda i: P[i])
    groups = [order[k * 4 : (k + 1) * 4] for k in range(10)]  # 40 decisions, 10 bins of 4
    assert m.ece(P, Y, bins=10, strategy="mass") == pytest.approx(_ece_by_hand(P, Y, groups))
    bins = m.reliability(P, Y, bins=10, strategy="mass")
    assert [b.count for b in bins] == [4] * 10


def test_wilson_against_the_formula() -> None:
    k, n, z = 7, 20, 1.959963984540054
    phat = k / n
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n))
    low, high = m.wilson(k, n)
    assert low == pytest.approx(centre - half)
    assert high == pytest.approx(centre + half)
    assert m.wilson(0, 5)[0] == 0.0
    assert m.wilson(5, 5)[1] == pytest.approx(1.0)
    with pytest.raises(m.UndefinedMetricError, match="no trials"):
        m.wilson(0, 0)


def test_mcnemar_exact_against_math_comb() -> None:
    b, c = 2, 9
    n = b + c
    tail = sum(math.comb(n, i) for i in range(0, b + 1)) / 2**n
    assert m.mcnemar(b, c) == pytest.approx(min(1.0, 2 * tail))
    assert m.mcnemar(9, 2) == m.mcnemar(2, 9)
    assert m.mcnemar(0, 0) == 1.0
    assert m.mcnemar(5, 5) == 1.0


@pytest.mark.parametrize(
    "figure",
    [
        lambda: m.accuracy([], []),
        lambda: m.brier([], []),
        lambda: m.log_loss([], []),
        lambda: m.rps([], []),
        lambda: m.ece([], []),
        lambda: m.auc([], []),
    ],
)
def test_empty_inputs_are_undefined_never_zero(figure: object) -> None:
    with pytest.raises(m.UndefinedMetricError, match="no decisions"):
        figure()  # type: ignore[operator]  # each a function of no arguments


def test_one_class_auc_is_undefined() -> None:
    with pytest.raises(m.UndefinedMetricError, match="no negatives"):
        m.auc([0.2, 0.9], [True, True])
    with pytest.raises(m.UndefinedMetricError, match="no positives"):
        m.auc([0.2, 0.9], [False, False])


def test_bootstrap_resamples_cases_and_is_seeded() -> None:
    cases = [[(p, y)] * (1 + i % 3) for i, (p, y) in enumerate(zip(P, Y, strict=True))]

    def share(sample: Sequence[list[tuple[float, bool]]]) -> float:
        flat = [d for group in sample for d in group]
        return sum(y for _, y in flat) / len(flat)

    one = m.bootstrap(cases, share, seed=3, resamples=300)
    two = m.bootstrap(cases, share, seed=3, resamples=300)
    assert one == two
    assert one.low is not None
    assert one.high is not None
    assert one.value is not None
    assert one.low <= one.value <= one.high
    assert one.cases == len(cases)
    # by hand: the same draws of whole cases
    rng = random.Random(3)
    draws = []
    for _ in range(300):
        sample = [cases[rng.randrange(len(cases))] for _ in range(len(cases))]
        draws.append(share(sample))
    draws.sort()
    position = 0.025 * 299
    below = math.floor(position)
    low = draws[below] + (draws[below + 1] - draws[below]) * (position - below)
    assert one.low == pytest.approx(low)


def test_bootstrap_grouped_resamples_the_groups_and_counts_the_items() -> None:
    from harness.evals.metrics._intervals import bootstrap_grouped

    items = [(f"run{i % 7}", p, y) for i, (p, y) in enumerate(zip(P, Y, strict=True))]

    def share(sample: Sequence[tuple[str, float, bool]]) -> float:
        return sum(y for _, _, y in sample) / len(sample)

    found = bootstrap_grouped(items, lambda item: item[0], share, seed=3, resamples=300)
    assert found.n == len(items)
    assert found.cases == 7
    # the same as the bootstrap of the groups, read flattened in first-seen group order
    groups = [[item for item in items if item[0] == f"run{g}"] for g in range(7)]
    by_hand = m.bootstrap(
        groups, lambda s: share([i for g in s for i in g]), seed=3, resamples=300, n=len(items)
    )
    assert found == by_hand


def test_bootstrap_of_an_undefined_figure_says_why() -> None:
    found = m.bootstrap([[(0.3, True)], [(0.6, True)]], lambda s: m.auc([0.3], [True]))
    assert found.value is None
    assert found.undefined is not None
    assert "no negatives" in found.undefined
    assert "undefined" in str(found)
    single = m.bootstrap([1.0], lambda s: sum(s) / len(s))
    assert single.value == 1.0
    assert single.low is None
    assert single.undefined == "fewer than two cases to resample"


def test_the_metrics_modules_import_nothing_of_harness_but_their_error_base() -> None:
    """Pure: only ``harness.errors`` (the bottom layer, itself importing nothing of harness),
    ``harness._public`` (which imports nothing) and each other, so an undefined figure is a
    ``HarnessError`` like every other error harness raises."""
    import ast
    from pathlib import Path

    allowed = ("harness.errors", "harness._public", "harness.evals.metrics")
    for path in Path(m.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                assert node.level == 0
                assert module.startswith(allowed) or not module.startswith("harness"), path
            elif isinstance(node, ast.Import):
                assert not any(alias.name.startswith("harness") for alias in node.names)


def test_the_resampler_computes_each_resample_as_the_pure_functions_would() -> None:
    rng = random.Random(5)
    cases = [
        [(rng.random(), rng.random() < 0.5) for _ in range(rng.randint(0, 4))] for _ in range(25)
    ]
    case_of = [i for i, c in enumerate(cases) for _ in c]
    p = [d[0] for c in cases for d in c]
    y = [d[1] for c in cases for d in c]
    drawn = m.Resampler(len(cases), resamples=40, seed=9)
    assert drawn.weights.sum(axis=1).tolist() == [25.0] * 40  # 25 cases a resample
    for r in range(40):
        expanded = [d for i, c in enumerate(cases) for d in c * int(drawn.weights[r, i])]
        ps = [d[0] for d in expanded]
        ys = [d[1] for d in expanded]
        one = m.Resampler(len(cases), resamples=1)
        one.weights = drawn.weights[r : r + 1]
        for strategy in ("width", "mass"):
            found = one.ece(case_of, p, y, strategy=strategy).low
            assert found == pytest.approx(m.ece(ps, ys, strategy=strategy))
        if any(ys) and not all(ys):
            assert one.auc(case_of, p, y).low == pytest.approx(m.auc(ps, ys))
        hits = [float(sum(d[1] for d in c)) for c in cases]
        sizes = [float(len(c)) for c in cases]
        assert one.ratio(hits, sizes, undefined="-").low == pytest.approx(sum(ys) / len(ys))


def test_the_resampler_is_seeded_and_says_when_a_figure_is_undefined() -> None:
    a = m.Resampler(10, resamples=100, seed=4)
    b = m.Resampler(10, resamples=100, seed=4)
    assert (a.weights == b.weights).all()
    empty = a.ratio([0.0] * 10, [0.0] * 10, undefined="recall is undefined: no item was expected")
    assert empty.value is None
    assert empty.undefined == "recall is undefined: no item was expected"
    one_class = a.auc([0, 1, 2], [0.1, 0.5, 0.9], [True, True, True])
    assert one_class.value is None
    assert one_class.undefined is not None
    assert "no negatives" in one_class.undefined
    rare = a.auc([0, 1], [0.2, 0.8], [False, True])  # most resamples draw one class only
    assert rare.value == 1.0
    assert rare.low is None
    assert rare.undefined is not None
    assert "undefined on" in rare.undefined
    single = m.Resampler(1, resamples=50).ratio([1.0], [2.0], undefined="-")
    assert single.value == 0.5
    assert single.undefined == "fewer than two cases to resample"


def test_the_resamplers_shortcuts_agree_with_its_general_path() -> None:
    rng = random.Random(8)
    cases = [[rng.random() < 0.5 for _ in range(rng.randint(1, 3))] for _ in range(12)]
    case_of = [i for i, c in enumerate(cases) for _ in c]
    y = [t for c in cases for t in c]
    drawn = m.Resampler(len(cases), resamples=200, seed=2)
    perfect = [1.0 if t else 0.0 for t in y]
    near = [0.999999 if t else 0.000001 for t in y]  # the general path, nearly the same data
    for strategy in ("width", "mass"):
        exact = drawn.ece(case_of, perfect, y, strategy=strategy)
        assert exact.value == 0.0
        assert exact.low == 0.0
        assert exact.high == 0.0
        general = drawn.ece(case_of, near, y, strategy=strategy)
        assert general.high == pytest.approx(0.0, abs=1e-5)
    separated = drawn.auc(case_of, perfect, y)
    general_auc = drawn.auc(case_of, [0.6 if t else 0.4 for t in y], y)
    assert separated == general_auc


def test_the_resampler_gives_the_same_figures_in_small_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(12)
    case_of = sorted(rng.randrange(30) for _ in range(80))
    p = [rng.random() for _ in case_of]
    y = [rng.random() < q for q in p]
    whole = m.Resampler(30, resamples=120, seed=1)
    found = (whole.ece(case_of, p, y, strategy="mass"), whole.auc(case_of, p, y))
    monkeypatch.setattr(resampler_module, "BLOCK_CELLS", 7 * len(p))  # 7 resamples a block
    blocked = m.Resampler(30, resamples=120, seed=1)
    assert (blocked.ece(case_of, p, y, strategy="mass"), blocked.auc(case_of, p, y)) == found


def test_one_distinct_probability_gives_both_eces_the_plain_gap() -> None:
    p = [0.458] * 18
    y = [True] * 5 + [False] * 13
    gap = abs(0.458 - 5 / 18)
    assert m.ece(p, y, strategy="width") == pytest.approx(gap)
    assert m.ece(p, y, strategy="mass") == pytest.approx(gap)
    assert [b.count for b in m.reliability(p, y, strategy="mass")] == [18]
    cases = list(range(18))
    drawn = m.Resampler(18, resamples=50, seed=3)
    assert drawn.ece(cases, p, y, strategy="mass").value == pytest.approx(gap)


def test_equal_mass_bins_never_split_a_run_of_equal_probabilities() -> None:
    rng = random.Random(21)
    for _ in range(60):
        levels = [round(rng.random(), 2) for _ in range(rng.randint(1, 6))]
        p = [rng.choice(levels) for _ in range(rng.randint(1, 50))]
        y = [rng.random() < q for q in p]
        groups = m.binned(p, y, bins=rng.randint(1, 12), strategy="mass")
        assert sorted(i for group in groups for i in group) == list(range(len(p)))
        seen = [{p[i] for i in group} for group in groups]
        for a, b in itertools.combinations(seen, 2):
            assert not a & b, f"a probability in two bins: {sorted(a)} / {sorted(b)}"
        by_value = [[i for i in range(len(p)) if p[i] == v] for v in sorted(set(p))]
        if len(set(p)) == 1:
            assert m.ece(p, y, strategy="mass") == pytest.approx(_ece_by_hand(p, y, by_value))


def test_the_resampler_keeps_ties_in_one_bin_as_the_pure_function_does() -> None:
    rng = random.Random(6)
    levels = [0.2, 0.45, 0.45001, 0.7]
    cases = [
        [(rng.choice(levels), rng.random() < 0.5) for _ in range(rng.randint(1, 4))]
        for _ in range(20)
    ]
    case_of = [i for i, c in enumerate(cases) for _ in c]
    p = [d[0] for c in cases for d in c]
    y = [d[1] for c in cases for d in c]
    drawn = m.Resampler(len(cases), resamples=30, seed=5)
    assert drawn.ece(case_of, p, y, strategy="mass").value == pytest.approx(
        m.ece(p, y, strategy="mass")
    )
    for r in range(30):
        expanded = [d for i, c in enumerate(cases) for d in c * int(drawn.weights[r, i])]
        one = m.Resampler(len(cases), resamples=1)
        one.weights = drawn.weights[r : r + 1]
        found = one.ece(case_of, p, y, strategy="mass").low
        assert found == pytest.approx(
            m.ece([d[0] for d in expanded], [d[1] for d in expanded], strategy="mass")
        )


def _drawn_cases(rng: random.Random) -> list[list[tuple[float, bool]]]:
    """Cases of a few decisions each, probabilities from a few levels (ties) or continuous, the
    outcomes drawn from them or from a miscalibrated rate."""
    tied = rng.random() < 0.5
    levels = [rng.random() for _ in range(rng.randint(1, 4))]
    skew = rng.random()
    cases = []
    for _ in range(rng.randint(2, 25)):
        decisions = []
        for _ in range(rng.randint(1, 4)):
            q = rng.choice(levels) if tied else rng.random()
            decisions.append((q, rng.random() < (q if rng.random() < 0.5 else skew)))
        cases.append(decisions)
    return cases


def test_every_estimate_lies_within_its_interval_or_says_why() -> None:
    rng = random.Random(33)
    outside = 0
    for trial in range(80):
        cases = _drawn_cases(rng)
        case_of = [i for i, c in enumerate(cases) for _ in c]
        p = [d[0] for c in cases for d in c]
        y = [d[1] for c in cases for d in c]
        drawn = m.Resampler(len(cases), resamples=200, seed=trial)
        found = [
            drawn.ece(case_of, p, y, strategy="width"),
            drawn.ece(case_of, p, y, strategy="mass"),
            drawn.auc(case_of, p, y),
            drawn.ratio(
                [float(sum(d[1] for d in c)) for c in cases], [len(c) for c in cases], undefined="-"
            ),
            m.bootstrap(
                cases,
                lambda s: m.ece(
                    [d[0] for c in s for d in c], [d[1] for c in s for d in c], strategy="mass"
                ),
                resamples=200,
                seed=trial,
            ),
        ]
        for estimate in found:
            if estimate.value is None or estimate.low is None or estimate.high is None:
                continue
            assert estimate.bias is not None
            if estimate.low - 1e-9 <= estimate.value <= estimate.high + 1e-9:
                assert estimate.note is None
                continue
            outside += 1
            assert estimate.note is not None
            side = "below" if estimate.value < estimate.low else "above"
            assert f"estimate {side} its interval" in estimate.note
            assert f"{estimate.bias:+.3f}" in estimate.note
            assert estimate.note in str(estimate)
    assert outside > 0  # biased figures (ECE of a calibrated model) do land outside
