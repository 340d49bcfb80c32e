"""A fitted decider on a labelled set harness does not ship (expense claims that need a
manager's review), fitted on its dev half with the documented command and reported on the
other half beside the embedded model: the held-out AUC must reach 0.85."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli import main
from tests.providers.fitted.conftest import need_minilm

from .claims import write_claims

INTERVAL = r"(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]"


@pytest.mark.parametrize("encoder", ["tfidf", "minilm"])
def test_claims_are_decided_well_held_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoder: str
) -> None:
    if encoder == "minilm":
        need_minilm()  # skips naming the install line; fails under CI
    pack = write_claims(tmp_path / "claims.jsonl")
    code = main(
        [
            "fit",
            str(pack),
            "--out",
            str(tmp_path / "claims.json"),
            "--encoder",
            encoder,
            "--resamples",
            "300",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    found = re.search(rf"review auc: {INTERVAL} \| {INTERVAL} \| -", out)
    assert found is not None, out
    fitted, embedded = float(found[1]), float(found[4])
    assert fitted >= 0.85, out
    assert fitted > embedded, out
