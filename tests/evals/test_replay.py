"""An eval recorded against `harness serve` (a real server on 127.0.0.1) replays offline from
its cassette with identical report bytes; the pytest plugin's cassettes answer evals."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.catalog import Catalog, CatalogEntry
from harness.evals import Dataset, EvalReport, evaluate
from harness.testing.pytest_plugin import CassetteRun
from tests.evals.thinkers import KeepSentences, Note, Sentence
from tests.serve.servers import harness_serve

HERE = Path(__file__).parent
CASES = HERE / "cases.jsonl"


def served_catalog(root: str) -> Catalog:
    entry = CatalogEntry(
        id="served",
        provider="systemone",
        wire_model_id="sparrow-decider",
        base_url=root,
        max_context_tokens=32_768,
        max_concurrent=4,
    )
    return Catalog([entry], {"decision": "served"})


def run_eval(catalog: Catalog, out: Path) -> EvalReport:
    dataset = Dataset.load(CASES, Note, Sentence)
    return evaluate(KeepSentences, dataset, model="served", catalog=catalog, out=out, resamples=200)


def test_an_eval_recorded_against_harness_serve_replays_offline(tmp_path: Path) -> None:
    cassette = tmp_path / "eval.json"
    with harness_serve("--quiet") as (process, root):
        catalog = served_catalog(root)
        recording = CassetteRun(cassette, "all")
        with recording.override:
            recorded = run_eval(catalog, tmp_path / "recorded")
        recording.finish()
    assert process.poll() is not None  # the server is gone: what follows is offline
    assert len(recording.client.new_interactions) >= 2 * len(recorded.cases)  # 2 turns a case
    assert all(case.status == "completed" for case in recorded.cases)

    replaying = CassetteRun(cassette, "none")
    with replaying.override:
        replayed = run_eval(catalog, tmp_path / "replayed")
    assert replaying.client.misses == ()
    assert replaying.client.played == len(recording.client.new_interactions)
    assert replayed.dumps() == recorded.dumps()  # identical bytes, timings aside
    assert (tmp_path / "recorded" / "report.json").read_text() != ""
    assert replayed.timings  # kept, outside the compared bytes


@pytest.mark.harness_cassette("embedded-eval")
def test_the_plugins_cassette_answers_an_eval(
    tmp_path: Path, harness_cassette: CassetteRun
) -> None:
    dataset = Dataset.load(CASES, Note, Sentence)
    report = evaluate(KeepSentences, dataset, model="embedded", out=tmp_path, resamples=100)
    assert all(case.status == "completed" for case in report.cases)
    assert report.metric("recall").n == 5
    if harness_cassette.mode == "none":  # replayed: every decision came from the cassette
        assert harness_cassette.client.misses == ()
        assert harness_cassette.client.played >= 2 * len(report.cases)
