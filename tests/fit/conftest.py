"""Fitted files made once per test session on the shipped triage selections (tfidf, no torch)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from harness.fit import FitOutcome, fit_decider, read_source

TRIAGE_PACK = Path(str(files("harness.evals.data").joinpath("selections-triage.jsonl")))
PACKS = Path(str(files("harness.evals.data").joinpath("decisions.jsonl")))


@pytest.fixture(scope="session")
def triage_fit(tmp_path_factory: pytest.TempPathFactory) -> FitOutcome:
    """A tfidf decider fitted on the triage selections' dev split."""
    out = tmp_path_factory.mktemp("triage") / "triage.json"
    return fit_decider([read_source(str(TRIAGE_PACK))], out, encoder="tfidf", resamples=100)


@pytest.fixture(scope="session")
def packs_fit(tmp_path_factory: pytest.TempPathFactory) -> FitOutcome:
    """A tfidf decider fitted on the shipped packs' dev split (choices, yes/no, scores)."""
    out = tmp_path_factory.mktemp("packs") / "packs.json"
    return fit_decider([read_source(str(PACKS))], out, encoder="tfidf", resamples=100)
