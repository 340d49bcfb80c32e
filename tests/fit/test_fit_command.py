"""``harness fit`` from the command line: the held-out figures it prints, distillation from a
teacher's cassette, grouped cross-validation, and its refusals (one line, exit 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.decision import DecisionResponse, NoulAnswer, systemone
from harness.evals import DecisionPack
from harness.replay import Cassette, Interaction

from .conftest import TRIAGE_PACK

INTERVAL = r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]"


def test_fit_prints_held_out_figures_beside_the_base_and_the_majority(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "triage.json"
    code = main(
        ["fit", str(TRIAGE_PACK), "--out", str(out), "--encoder", "tfidf", "--resamples", "200"]
    )
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert out.is_file()
    assert out.with_suffix(".npz").is_file()
    assert "fitted on: 70 decisions of split 'dev', reported on 68 of 'test'" in printed
    assert "head select (binary; false 36, true 34; C " in printed
    held = re.search(rf"select auc: (?P<fitted>{INTERVAL}) \| (?P<base>{INTERVAL}) \| -", printed)
    assert held is not None, printed
    assert float(held["fitted"].split()[0]) > 0.9
    assert re.search(rf"select accuracy: {INTERVAL} \| {INTERVAL} \| {INTERVAL}", printed)
    assert re.search(
        r"McNemar \(exact, per decision, base against fitted\): right only with", printed
    )
    assert f"use it: --model fitted:{out}" in printed


def test_distilling_a_teachers_cassette_reports_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    interactions = []
    for decision in DecisionPack.load(TRIAGE_PACK):
        (qid,) = decision.request.questions
        p = 0.85 if decision.labels[qid] else 0.2
        response = DecisionResponse(
            decision.request, {qid: NoulAnswer(p)}, input_tokens=90, model="teacher-1"
        )
        body = systemone.encode_body(decision.request, "teacher-1")
        interactions.append(Interaction.of(body, response))
    cassette = tmp_path / "teacher.json"
    Cassette(tuple(interactions)).write(cassette)
    out = tmp_path / "student.json"
    code = main(
        [
            "fit",
            str(cassette),
            "--out",
            str(out),
            "--encoder",
            "tfidf",
            "--no-base",
            "--resamples",
            "200",
        ]
    )
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert "split by a digest of each decision's name" in printed
    assert "(cassette, 138 decisions, teacher teacher-1)" in printed
    agreement = re.search(rf"select agreement with the teacher: ({INTERVAL})", printed)
    assert agreement is not None, printed
    assert float(agreement[1].split()[0]) > 0.9
    assert json.loads(out.read_text())["fitted_on"]["teacher"] == "teacher-1"


def test_group_by_reports_inputs_unlike_the_training_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "fit",
            str(TRIAGE_PACK),
            "--out",
            str(tmp_path / "m.json"),
            "--encoder",
            "tfidf",
            "--no-base",
            "--group-by",
            "case",
            "--resamples",
            "200",
        ]
    )
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert (
        "inputs unlike the training data (folds hold out whole groups of 'case', 5 folds)"
        in printed
    )
    assert re.search(rf"select.auc: grouped {INTERVAL}, ordinary {INTERVAL}", printed), printed


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["nowhere.jsonl"], "nowhere.jsonl: no such file or folder"),
        ([str(TRIAGE_PACK), "--group-by", "colour"], "--group-by 'colour': group by 'case'"),
        ([str(TRIAGE_PACK), "--base", "fitted:x.json"], "--base 'fitted:x.json' is a fitted model"),
        ([str(TRIAGE_PACK), "--train-split", "nope"], "no decision to fit on: tag the training"),
    ],
)
def test_fit_refuses_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    code = main(["fit", *args, "--out", str(tmp_path / "m.json"), "--encoder", "tfidf"])
    _, err = capsys.readouterr()
    assert code == 2
    assert said in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
