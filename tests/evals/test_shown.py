"""What a reader sees of a figure: an undefined one's reason, an estimate outside its interval
with the word why, in the table, the page and the gates alike."""

from __future__ import annotations

import html

from harness.evals import Estimate, EvalReport, check_gates, render_report_html, render_report_text


def _report(metrics: dict[str, Estimate]) -> EvalReport:
    return EvalReport(
        subject="m:T",
        dataset="d",
        model="embedded",
        threshold=0.5,
        split="all",
        cases=(),
        metrics=metrics,
    )


UNDEFINED = Estimate(None, None, None, 0, 4, "precision is undefined: nothing was answered")
BIASED = Estimate(0.117, 0.133, 0.300, 18, 8, None, 0.094)


def test_an_undefined_figure_shows_its_reason_in_the_table_and_the_page() -> None:
    report = _report({"precision": UNDEFINED})
    text = render_report_text(report)
    row = next(line for line in text.splitlines() if line.startswith("precision"))
    assert "undefined: nothing was answered" in row
    assert "undefined: nothing was answered" in render_report_html(report)


def test_a_gate_on_an_undefined_figure_fails_naming_the_reason() -> None:
    (result,) = check_gates(_report({"precision": UNDEFINED}), min_precision=0.5)
    assert not result.passed
    assert result.message.endswith("FAILED (undefined: nothing was answered)")
    assert result.message.startswith("min_precision: precision")


def test_an_estimate_outside_its_interval_is_shown_with_its_bias() -> None:
    report = _report({"select.ece_mass": BIASED})
    text = render_report_text(report)
    row = next(line for line in text.splitlines() if line.startswith("select.ece_mass"))
    assert "0.117 [0.133, 0.300]*" in row
    assert BIASED.note is not None
    assert "+0.094" in BIASED.note
    assert f"* select.ece_mass: {BIASED.note}" in text
    assert html.escape(BIASED.note) in render_report_html(report)
    (gate,) = check_gates(_report({"select.ece_width": BIASED}), max_ece=0.5)
    assert gate.passed
    assert BIASED.note in gate.message


def test_the_table_and_the_page_say_what_n_counts() -> None:
    run_level = _report({"f1": Estimate(0.5, 0.2, 0.7, 18, 8)})
    text = render_report_text(run_level)
    assert "f1 the items expected or answered (TP + FP + FN)" in text
    assert "f1 the items expected or answered (TP + FP + FN)" in render_report_html(run_level)
    roles = _report({"choice.accuracy": Estimate(0.5, 0.2, 0.7, 12, 12)})
    assert "n: a role's figures count its decisions" in render_report_text(roles)


def test_every_figure_of_a_report_on_drawn_data_lies_within_its_interval_or_says_why() -> None:
    import random

    from harness.evals import score
    from tests.evals.test_compare import _case

    rng = random.Random(4)
    outside = 0
    for trial in range(30):
        levels = [round(rng.random(), 2) for _ in range(rng.randint(1, 3))]
        cases = []
        for number in range(rng.randint(2, 20)):
            seen = {
                f"k{j}": rng.choice(levels) if trial % 2 else rng.random()
                for j in range(rng.randint(1, 4))
            }
            expected = tuple(k for k, p in seen.items() if rng.random() < p)  # calibrated
            cases.append(_case(f"c{number}", expected, seen))
        report = score(cases, subject="m:T", dataset="d", model="m", resamples=100, seed=trial)
        shown = render_report_text(report)
        figures = [*report.metrics.items()]
        for baseline in report.baselines.values():
            figures.extend(baseline.items())
        for name, estimate in figures:
            if estimate.value is None or estimate.low is None or estimate.high is None:
                continue
            if estimate.low - 1e-9 <= estimate.value <= estimate.high + 1e-9:
                continue
            outside += 1
            assert estimate.note is not None, name
            assert estimate.note in shown
    assert outside > 0


def test_a_comparison_footnotes_an_estimate_outside_its_interval() -> None:
    from harness.evals import compare, render_comparison

    a = _report({"select.ece_mass": Estimate(0.2, 0.1, 0.3, 18, 8, None, 0.01)})
    b = _report({"select.ece_mass": BIASED})
    text = render_comparison(compare(a, b))
    assert "select.ece_mass: 0.200 [0.100, 0.300] -> 0.117 [0.133, 0.300]*" in text
    assert f"* select.ece_mass (B): {BIASED.note}" in text
    assert "(A):" not in text
