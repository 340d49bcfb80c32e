"""A fitted threshold goes where the thinker reads it: the entry's calibration file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace

import attrs

from harness.evals import FittedThreshold
from harness.scope import Workflow
from harness.thinker import DEFAULT_SELECTION_THRESHOLD
from tests.evals.thinkers import KeepSentences


def fitted(value: float) -> FittedThreshold:
    return FittedThreshold(
        value=value,
        rule="precision",
        target=0.8,
        fitted_on="cases[dev]",
        cases=12,
        precision_lower_bound=0.81234,
    )


def test_write_calibration_sets_the_threshold_and_keeps_the_maps(tmp_path: Path) -> None:
    path = tmp_path / "calibration.toml"
    path.write_text(
        'fitted_on = "elsewhere"\nselect = { method = "platt", a = 2.0, b = -0.5 }\n'
        "selection_threshold = 0.5\n",
        encoding="utf-8",
    )
    fitted(0.625).write_calibration(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# selection_threshold fitted by harness.evals (precision 0.8) on ")
    assert "0.812 (95 % Wilson lower bound)" in text
    table = tomllib.loads(text)
    assert table == {
        "fitted_on": "elsewhere",
        "select": {"method": "platt", "a": 2.0, "b": -0.5},
        "selection_threshold": 0.625,
    }
    fresh = fitted(0.7).write_calibration(tmp_path / "new" / "c.toml")
    assert tomllib.loads(fresh.read_text(encoding="utf-8")) == {"selection_threshold": 0.7}
    assert tomllib.loads(fitted(0.3).toml()) == {"selection_threshold": 0.3}


def test_the_thinker_answers_at_its_entrys_fitted_threshold_unless_given_one() -> None:
    thinker = KeepSentences(Workflow())
    assert thinker.selection_threshold == DEFAULT_SELECTION_THRESHOLD
    entry = SimpleNamespace(calibration=SimpleNamespace(selection_threshold=0.7))
    assert thinker._threshold_for(entry) == 0.7
    assert thinker._threshold_for(SimpleNamespace(calibration=None)) == 0.5
    assert thinker._threshold_for(None) == 0.5
    given = KeepSentences(Workflow(), selection_threshold=0.2)
    assert given._threshold_for(entry) == 0.2
    assert given.selection_threshold == 0.2


def test_a_report_scored_again_at_another_threshold(tmp_path: Path) -> None:
    from harness.evals import Dataset, at_threshold, evaluate
    from harness.testing import FakeDecisionModel
    from tests.evals.thinkers import Note, Sentence, refund_policy

    dataset = Dataset.load(Path(__file__).parent / "cases.jsonl", Note, Sentence)
    model = FakeDecisionModel(refund_policy(yes_if=0.7, yes_else=0.4))
    low = evaluate(KeepSentences, dataset, model=model, out=tmp_path / "a", resamples=50)
    assert low.threshold == 0.5
    high = at_threshold(low, 0.75)  # above every probability: nothing answered
    assert high.threshold == 0.75
    assert all(c.answered == () for c in high.cases)
    assert high.metric("precision").value is None
    assert high.metric("recall").value == 0.0
    assert high.threshold_source is not None
    assert "at_threshold" in high.threshold_source
    again = at_threshold(high, 0.5)  # back where it was run: the same figures
    assert again.threshold_source == high.threshold_source  # (where its threshold came from)
    assert attrs.evolve(again, threshold_source=low.threshold_source).dumps() == low.dumps()
