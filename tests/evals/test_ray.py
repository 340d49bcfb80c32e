"""An eval on a local Ray cluster scores the same as the same eval in this process."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from harness.evals import Dataset, evaluate
from tests.evals.thinkers import KeepSentences, Note, Sentence

HERE = Path(__file__).parent


@pytest.mark.slow
def test_an_eval_on_ray_matches_the_local_one(tmp_path: Path) -> None:
    dataset = Dataset.load(HERE / "cases.jsonl", Note, Sentence)
    local = evaluate(
        KeepSentences, dataset, model="embedded", out=tmp_path / "local", resamples=100
    )
    progress = io.StringIO()
    on_ray = evaluate(
        KeepSentences,
        dataset,
        model="embedded",
        out=tmp_path / "ray",
        ray="local",
        progress=progress,
        resamples=100,
    )
    assert on_ray.dumps() == local.dumps()
    assert "6/6 done" in progress.getvalue()
