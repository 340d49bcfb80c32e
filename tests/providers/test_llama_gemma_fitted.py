"""A fitted decider beside Gemma 3 270M on a labelled set harness does not ship (expense claims
that need a manager's review): ``harness fit`` with Gemma as the base measures both on the same
held-out half in one run; the fitted file reaches an AUC of 0.85 and Gemma is shown beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main
from tests.fit.claims import write_claims

pytestmark = [pytest.mark.realmodel, pytest.mark.slow]

INTERVAL = r"(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]"


def test_claims_fitted_beside_gemma(
    tmp_path: Path, gemma_path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = write_claims(tmp_path / "claims.jsonl")
    code = main(
        [
            "fit",
            str(pack),
            "--out",
            str(tmp_path / "claims.json"),
            "--encoder",
            "tfidf",
            "--base",
            f"llama:{gemma_path}",
            "--resamples",
            "300",
            "--concurrency",
            "1",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"base llama:{gemma_path}" in out
    found = re.search(rf"review auc: {INTERVAL} \| {INTERVAL} \| -", out)
    assert found is not None, out
    fitted, gemma = float(found[1]), float(found[4])
    assert fitted >= 0.85, out
    assert 0.0 <= gemma <= 1.0
    assert "McNemar (exact, per decision, base against fitted)" in out
