"""An eval killed with SIGKILL midway resumes on its folder and counts each case once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.evals import Dataset, evaluate
from harness.testing import FakeDecisionModel
from tests.evals.thinkers import KeepSentencesSlowly, Note, Sentence, refund_policy

HERE = Path(__file__).parent
ROOT = HERE.parents[1]

SCRIPT = """
import sys
from harness.evals import Dataset, evaluate
from harness.testing import FakeDecisionModel
from tests.evals.thinkers import KeepSentencesSlowly, Note, Sentence, refund_policy
dataset = Dataset.load(sys.argv[1], Note, Sentence)
evaluate(KeepSentencesSlowly, dataset, model=FakeDecisionModel(refund_policy()), out=sys.argv[2],
         concurrency=1, resamples=20)
"""


def _done_lines(results: Path) -> list[int]:
    if not results.exists():
        return []
    return [json.loads(line)["line"] for line in results.read_text().splitlines() if line.strip()]


def test_a_killed_eval_resumes_and_counts_each_case_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "eval"
    log = tmp_path / "runs.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HARNESS_EVAL_RUN_LOG": str(log),
        "HARNESS_EVAL_PAUSE": "0.4",
    }
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(HERE / "cases.jsonl"), str(out)],
        cwd=ROOT,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while len(_done_lines(results)) < 2 and time.monotonic() < deadline:
        assert process.poll() is None, "the eval ended before it was killed"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    before = set(_done_lines(results))
    assert 2 <= len(before) < 6  # killed midway

    monkeypatch.setenv("HARNESS_EVAL_RUN_LOG", str(log))  # the resumed runs are logged too
    monkeypatch.delenv("HARNESS_EVAL_PAUSE", raising=False)
    dataset = Dataset.load(HERE / "cases.jsonl", Note, Sentence)
    report = evaluate(
        KeepSentencesSlowly,
        dataset,
        model=FakeDecisionModel(refund_policy()),
        out=out,
        resamples=20,
    )
    lines = _done_lines(results)
    assert sorted(lines) == [1, 2, 3, 4, 5, 6]  # one result a case
    assert [c.name for c in report.cases] == [c.name for c in dataset.cases]
    assert all(c.status == "completed" for c in report.cases)
    runs = log.read_text().splitlines()
    for number in before:  # a case finished before the kill did not run again
        assert runs.count(dataset.cases[number - 1].input.text) == 1
    for case in dataset.cases:  # and every case ran (at least once: one may have been cut)
        assert case.input.text in runs
    assert report.metric("recall").n == 5  # every expected item counted once
