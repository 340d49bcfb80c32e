"""`harness eval` on any OpenAI-compatible model: the shipped example's eval through both logprob
providers on the loopback test server, compared with the embedded model's report."""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
from collections.abc import Iterator

import pytest

from harness.evals import compare, load_report
from harness.evals.example import write_example_cases
from harness.testing import LogprobServer
from tests.serve.servers import offline_env

THINKER = "harness.evals.example:KeepRefunds"


def harness_cli(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=cwd,
        env={**offline_env(), "PYTHONPATH": os.pathsep.join(sys.path)},
    )


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[pathlib.Path, int]]:
    """A folder holding the evals `embedded`, `completions` and `chat`, and the number of
    upstream calls the two provider evals made."""
    folder = tmp_path_factory.mktemp("evals")
    write_example_cases(folder / "refunds.jsonl")
    with LogprobServer().in_thread() as server:
        models = {
            "embedded": "embedded",
            "completions": f"openai-completions:bigram-test@{server.root}",
            "chat": f"openai-chat:bigram-test@{server.root}",
        }
        before = server.calls
        for out, model in models.items():
            done = harness_cli(
                "eval", THINKER, "refunds.jsonl", "--model", model, "--out", out, cwd=folder
            )
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            assert f"eval of {THINKER} on {model}: 8 cases of refunds" in done.stdout
        yield folder, server.calls - before


@pytest.mark.parametrize("out", ["completions", "chat"])
def test_each_provider_eval_writes_a_report_with_per_role_figures(
    evals: tuple[pathlib.Path, int], out: str
) -> None:
    folder, upstream_calls = evals
    data = json.loads((folder / out / "report.json").read_text(encoding="utf-8"))
    assert data["model"].startswith(f"openai-{out}:bigram-test@http://127.0.0.1:")
    assert data["subject"] == THINKER
    assert [case["status"] for case in data["cases"]] == ["completed"] * 8
    report = load_report(folder / out)
    assert {"select.accuracy", "select.brier", "select.log_loss", "select.auc"} <= set(
        report.metrics
    )
    decisions = report.decisions
    assert len(decisions) == report.metric("select.brier").n == 18
    assert {d.role for d in decisions} == {"select"}
    # the figure is the one its decisions give: Brier of a yes/no counts both sides
    brier = sum(2 * (d.probabilities[0] - (d.label == 0)) ** 2 for d in decisions) / 18
    assert math.isclose(report.metric("select.brier").value or 0.0, brier, abs_tol=1e-3)
    assert upstream_calls >= 2 * 8  # every case asked the server (a split move, a selection)
    yes = [d.probabilities[0] for d in decisions]
    if out == "completions":
        assert all(0.0 < p < 1.0 for p in yes)  # read from the echoed prompt logprobs
    else:
        # below the default mass floor every selection is refused: counted as not selected
        assert yes == [0.0] * 18
        assert report.metric("recall").value == 0.0


def test_compare_with_the_embedded_model_sets_the_exit_status_by_its_gates(
    evals: tuple[pathlib.Path, int],
) -> None:
    folder, _ = evals
    embedded = load_report(folder / "embedded")
    assert embedded.model == "embedded"
    same = compare(embedded, load_report(folder / "completions"))
    assert same.changes == ()
    assert same.only_a_right == same.only_b_right == 0
    refused = compare(embedded, load_report(folder / "chat"))
    assert len(refused.changes) == 8  # the embedded model keeps every sentence, chat none
    assert refused.only_b_right == 4  # the four notes that expect nothing

    passed = harness_cli(
        "eval", "compare", "embedded", "completions", "--min-recall", "0.5", cwd=folder
    )
    assert passed.returncode == 0, passed.stdout[-2000:] + passed.stderr[-2000:]
    assert "min_recall: recall 1.000 [1.000, 1.000] (n=5) >= 0.5: ok" in passed.stdout
    failed = harness_cli("eval", "compare", "embedded", "chat", "--min-recall", "0.5", cwd=folder)
    assert failed.returncode == 1, failed.stdout[-2000:] + failed.stderr[-2000:]
    assert "min_recall: recall 0.000 [0.000, 0.000] (n=5) >= 0.5: FAILED" in failed.stdout
    assert "only A right 0, only B right 4" in failed.stdout
