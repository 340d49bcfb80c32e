"""The fitted file is data: it round-trips exactly, and every way it can be broken fails at load in
one line naming the file and the fix (a configuration error: exit 2 in every command)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.fit import FitOutcome, fit_decider, read_source
from harness.providers import FittedError, load_fitted, write_fitted

from .conftest import TRIAGE_PACK

WRITTEN = frozenset({"format", "version", "encoder", "heads", "base", "arrays", "digest"})
"""What write_fitted writes itself (the rest is what it is given)."""


def _copy(outcome: FitOutcome, folder: Path) -> Path:
    target = folder / "model.json"
    shutil.copy(outcome.path, target)
    shutil.copy(outcome.path.with_suffix(".npz"), folder / "model.npz")
    return target


def test_a_fitted_file_round_trips_exactly(triage_fit: FitOutcome, tmp_path: Path) -> None:
    loaded = load_fitted(triage_fit.path)
    assert set(loaded.heads) == {h.key for h in triage_fit.heads}
    for head in triage_fit.heads:
        again = loaded.heads[head.key]
        assert np.array_equal(again.weights, head.weights)
        assert np.array_equal(again.bias, head.bias)
        assert again.version == head.version
    rewritten = write_fitted(
        tmp_path / triage_fit.path.name,
        loaded.encoder,
        list(loaded.heads.values()),
        base=loaded.base,
        about={k: v for k, v in loaded.document.items() if k not in WRITTEN},
    )
    assert json.loads(rewritten.read_text())["digest"] == loaded.digest
    assert (
        tmp_path / triage_fit.path.with_suffix(".npz").name
    ).read_bytes() == triage_fit.path.with_suffix(".npz").read_bytes()


def test_fitting_twice_writes_the_same_bytes(triage_fit: FitOutcome, tmp_path: Path) -> None:
    again = fit_decider(
        [read_source(str(TRIAGE_PACK))],
        tmp_path / triage_fit.path.name,
        encoder="tfidf",
        resamples=100,
    )
    assert json.loads(again.path.read_text())["digest"] == load_fitted(triage_fit.path).digest


def test_the_file_names_what_it_was_fitted_on(triage_fit: FitOutcome) -> None:
    document = json.loads(triage_fit.path.read_text())
    fitted_on = document["fitted_on"]
    assert fitted_on["split"] == "dev"
    assert fitted_on["decisions"] == 70
    assert fitted_on["reported_decisions"] == 68
    (source,) = fitted_on["sources"]
    assert source["kind"] == "pack"
    assert len(source["sha256"]) == 64
    assert len(fitted_on["request_keys"]) == 70
    assert document["encoder"]["name"] == "tfidf"
    assert "scikit-learn" in document["library"]
    (head,) = document["heads"]
    assert head["key"] == "select"
    assert head["labels"] == {"false": 36, "true": 34}


BROKEN = [
    ("cut", lambda p: p.write_bytes(p.read_bytes()[:200]), "is not JSON (cut short"),
    (
        "edited",
        lambda p: p.write_text(p.read_text().replace('"base": "embedded"', '"base": "other"')),
        "was changed after harness fit wrote it",
    ),
    (
        "another format",
        lambda p: p.write_text('{"format": "harness-cassette", "version": 1}'),
        'is not a fitted file (no "format": "harness-fitted")',
    ),
    ("arrays gone", lambda p: p.with_suffix(".npz").unlink(), "its arrays 'model.npz' are missing"),
    (
        "arrays edited",
        lambda p: p.with_suffix(".npz").write_bytes(p.with_suffix(".npz").read_bytes()[:-9]),
        "its arrays 'model.npz' are not the ones it was written with",
    ),
]


@pytest.mark.parametrize(("how", "breaks", "said"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_file_fails_at_load_naming_it(
    triage_fit: FitOutcome,
    tmp_path: Path,
    how: str,
    breaks: object,
    said: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _copy(triage_fit, tmp_path)
    breaks(path)  # type: ignore[operator]  # a function of the table above
    with pytest.raises(FittedError, match="fitted file") as error:
        load_fitted(path)
    message = str(error.value)
    assert said in message
    assert str(path) in message
    assert "\n" not in message
    code = main(["eval", "pack", str(TRIAGE_PACK), "--model", f"fitted:{path}"])
    out, err = capsys.readouterr()
    assert code == 2, (how, out, err)
    assert said in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_missing_file_is_refused_by_its_model_string(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "pack", str(TRIAGE_PACK), "--model", "fitted:nowhere/none.json"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "no fitted file 'nowhere/none.json'" in err
    assert "harness fit" in err


def test_a_file_of_another_encoder_is_refused_by_name(
    triage_fit: FitOutcome, tmp_path: Path
) -> None:
    path = _copy(triage_fit, tmp_path)
    document = json.loads(path.read_text())
    document["encoder"]["name"] = "word2vec"
    write_raw = {k: v for k, v in document.items() if k != "digest"}
    import hashlib

    import orjson

    write_raw["digest"] = hashlib.sha256(
        orjson.dumps(write_raw, option=orjson.OPT_SORT_KEYS)
    ).hexdigest()
    path.write_text(json.dumps(write_raw))
    with pytest.raises(FittedError, match="names encoder 'word2vec', which this harness does not"):
        load_fitted(path)
