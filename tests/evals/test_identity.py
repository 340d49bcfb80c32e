"""An eval's folder knows which eval it holds by what ran (the thinker, the resolved catalog
entry, the dataset), not by how the model was named; the report says where its threshold came
from."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.catalog import default_catalog
from harness.evals import Dataset, EvalError, evaluate, render_report_text
from harness.testing import FakeDecisionModel
from tests.evals.thinkers import KeepSentences, KeepSentencesSlowly, Note, Sentence, refund_policy

CASES = Path(__file__).parent / "cases.jsonl"


@pytest.fixture(scope="module")
def dataset() -> Dataset[Note, Sentence]:
    return Dataset.load(CASES, Note, Sentence)


def test_the_same_eval_named_two_ways_resumes_in_its_folder(
    dataset: Dataset[Note, Sentence], tmp_path: Path
) -> None:
    catalog = default_catalog()  # its decision pin is the embedded entry
    first = evaluate(
        KeepSentences, dataset, catalog=catalog, out=tmp_path, resamples=20, progress=io.StringIO()
    )
    assert first.model == "embedded"
    stamp = json.loads((tmp_path / "eval.json").read_text())
    assert stamp["model"]["id"] == "embedded"
    assert stamp["model"]["wire_model"] == "sparrow-decider"
    assert stamp["model"]["calibration"]  # the entry's calibration, by digest
    again = evaluate(
        KeepSentences,
        dataset,
        model="embedded",
        catalog=catalog,
        out=tmp_path,
        resamples=20,
        progress=io.StringIO(),
    )
    assert again.dumps() == first.dumps()


def test_a_folder_of_another_eval_is_refused_naming_what_differs(
    dataset: Dataset[Note, Sentence], tmp_path: Path
) -> None:
    fake = FakeDecisionModel(refund_policy())
    evaluate(KeepSentences, dataset, model=fake, out=tmp_path, resamples=20)
    with pytest.raises(EvalError, match=r"its model differs") as error:
        evaluate(KeepSentences, dataset, model="embedded", out=tmp_path, resamples=20)
    assert "thinker" not in str(error.value).split("differs")[0]
    with pytest.raises(EvalError, match=r"its thinker differs"):
        evaluate(KeepSentencesSlowly, dataset, model=fake, out=tmp_path, resamples=20)
    fewer = dataset.with_cases(dataset.cases[:2])
    with pytest.raises(EvalError, match=r"its dataset differs"):
        evaluate(KeepSentences, fewer, model=fake, out=tmp_path, resamples=20)
    with pytest.raises(EvalError, match=r"its thinker and dataset differ"):
        evaluate(KeepSentencesSlowly, fewer, model=fake, out=tmp_path, resamples=20)


def test_the_header_names_where_the_threshold_came_from(
    dataset: Dataset[Note, Sentence], tmp_path: Path
) -> None:
    fitted = evaluate(
        KeepSentences, dataset, model="embedded", catalog=default_catalog(), resamples=20
    )
    assert fitted.threshold == pytest.approx(0.229064)
    assert fitted.threshold_source == "the entry's fitted selection_threshold"
    assert "threshold 0.229064 (the entry's fitted selection_threshold)" in render_report_text(
        fitted
    )
    plain = evaluate(KeepSentences, dataset, model=FakeDecisionModel(refund_policy()), resamples=20)
    assert plain.threshold == 0.5
    assert plain.threshold_source == "the default: neither the thinker nor the entry sets one"
    from tests.evals.thinkers import KeepSentencesStrictly

    strict = evaluate(
        KeepSentencesStrictly, dataset, model="embedded", catalog=default_catalog(), resamples=20
    )
    assert strict.threshold == 0.7
    assert strict.threshold_source == "the thinker's constructor"
    assert "threshold 0.7 (the thinker's constructor)" in render_report_text(strict)
