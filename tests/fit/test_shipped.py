"""The fitted deciders harness ships: made by ``scripts/fitted_files.py`` from the shipped labelled
decisions (checked up to date), never fitted on what they are shown on, and run by the demo and
the triage example beside the embedded model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.catalog import default_catalog
from harness.cli import main
from harness.providers import fitted_model
from scripts.fitted_files import main as fitted_files

ROOT = Path(__file__).resolve().parents[2]
WILSON = r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]"


def test_the_shipped_files_are_what_the_tool_makes(capsys: pytest.CaptureFixture[str]) -> None:
    code = fitted_files(["--check"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "up to date" in out


@pytest.mark.parametrize(
    ("entry", "fitted_on", "shown_on"),
    [("demo-fitted", "train", "test"), ("triage-fitted", "dev", "test")],
)
def test_a_shipped_file_names_its_split_and_its_held_out_figures(
    entry: str, fitted_on: str, shown_on: str
) -> None:
    model = fitted_model(default_catalog().entry(entry))
    about = model.document["fitted_on"]
    assert isinstance(about, dict)
    assert about["split"] == fitted_on
    assert about["reported_split"] == shown_on
    figures = model.document["figures"]
    assert isinstance(figures, dict)
    auc = figures["roles"]["select"]["auc"]
    assert auc["value"] > 0.95
    assert auc["low"] is not None
    assert figures["base"] == "embedded"
    assert model.encoder.name == "tfidf"


def test_the_demo_on_a_fitted_model_shows_the_embedded_model_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["demo", "--model", "demo-fitted", "--record", str(tmp_path / "r.json")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "model: entry 'demo-fitted' (fitted," in out
    assert re.search(rf"  demo-fitted \(fitted\): recall {WILSON} \(\d of 7\), precision", out)
    assert re.search(rf"  embedded: recall {WILSON} \(\d of 7\), precision {WILSON}", out)
    assert "never on this folder's split 'test'" in out


def test_the_triage_example_runs_on_its_fitted_model(capsys: pytest.CaptureFixture[str]) -> None:
    note = '{"text": "no rush with the invoice; renew the gym card right now"}'
    code = main(["run", "harness.demo.triage:Triage", "--input", note, "--entry", "triage-fitted"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "used: " in err
    assert "no rush" not in out  # a verdict that needs no action is never the answer
