"""A dataset refuses what it would otherwise drop: a key that is no field (of the case, its
input or an expected item) is named, with the opt-out; a JSON array is told it is not JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.evals import Dataset, DatasetError, DecisionPack
from tests.evals.thinkers import Note, Sentence


def _write(path: Path, *rows: object) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_an_unknown_input_or_item_field_is_refused_by_name(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "cases.jsonl",
        {"name": "a", "input": {"text": "x", "age": 3}, "expected": []},
        {"name": "b", "input": {"text": "x"}, "expected": [{"text": "x", "score": 1}]},
        {"name": "c", "input": {"text": "x"}, "expected": [], "weight": 2},
    )
    with pytest.raises(DatasetError) as error:
        Dataset.load(path, Note, Sentence)
    message = str(error.value)
    assert "3 case(s)" in message
    assert (
        "line 1: input: unknown field 'age' for Note: expected one of text; remove it (or pass "
        "allow_extra=True)" in message
    )
    assert "line 2: expected[0]: unknown field 'score' for Sentence" in message
    assert (
        "line 3: unknown field 'weight' for a case: expected one of name, input, expected, "
        "tags; remove it (or pass allow_extra=True)" in message
    )
    loaded = Dataset.load(path, Note, Sentence, allow_extra=True)
    assert [c.input for c in loaded] == [Note("x")] * 3
    assert loaded.cases[1].expected == (Sentence("x"),)


def test_the_cli_refuses_an_unknown_field_naming_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path / "cases.jsonl", {"name": "a", "input": {"text": "x", "age": 3}, "expected": []}
    )
    args = ["eval", "tests.evals.thinkers:KeepSentences", str(path), "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert (
        "unknown field 'age' for Note: expected one of text; remove it (or pass --allow-extra)"
        in err
    )
    assert len(err.strip().splitlines()) == 1


def test_a_json_array_is_told_the_format_is_jsonl(tmp_path: Path) -> None:
    rows = [{"name": "a", "input": {"text": "x"}, "expected": []}]
    for text in (json.dumps(rows), json.dumps(rows, indent=2)):
        path = tmp_path / "cases.jsonl"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(DatasetError) as error:
            Dataset.load(path, Note, Sentence)
        message = str(error.value)
        assert "is a JSON array" in message
        assert "one case a line" in message
        assert len(message.splitlines()) == 1
    pack = tmp_path / "pack.jsonl"
    pack.write_text(json.dumps([{"name": "a"}]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"is a JSON array.*one request a line"):
        DecisionPack.load(pack)
