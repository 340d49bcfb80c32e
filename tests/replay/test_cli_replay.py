"""``harness replay``: same run exits 0, another input diverges (exit 1, side by side), a record
without bodies or a broken one is a usage problem (exit 2) saying how to fix it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.providers import FakeDecisionModel
from harness.record import record_run
from harness.tools import Workflow
from tests.thinker.notes import Note, Triage, fake_catalog, triage_policy

TARGET = "tests.thinker.notes:Triage"


def recorded(tmp_path: Path, *, bodies: bool = True) -> Path:
    run = asyncio.run(
        record_run(
            Triage(Workflow()),
            Note("alpha is due; beta can wait"),
            catalog=fake_catalog(),
            command="test",
            keep_bodies=bodies,
            clients={"fake": FakeDecisionModel(triage_policy)},
        )
    )
    path = tmp_path / "triage.json"
    run.record.write(path)
    return path


def test_the_same_run_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = recorded(tmp_path)
    out_record = tmp_path / "again.json"
    assert main(["replay", str(path), TARGET, "--record", str(out_record)]) == 0
    assert "same turns and answer" in capsys.readouterr().out
    again = json.loads(out_record.read_text(encoding="utf-8"))
    assert again["turns"] == json.loads(path.read_text(encoding="utf-8"))["turns"]


def test_another_input_diverges_at_the_first_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded(tmp_path)
    code = main(["replay", str(path), TARGET, "--input", '{"text": "gamma only"}'])
    out = capsys.readouterr().out
    assert code == 1
    assert f"diverges from {path} at turn 1" in out
    assert "(no turn: its request is not in the record)" in out
    assert "state.artifacts[0] changed" in out


def test_a_record_without_bodies_is_refused_saying_how_to_keep_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded(tmp_path, bodies=False)
    assert main(["replay", str(path), TARGET]) == 2
    assert "harness run --bodies" in capsys.readouterr().err


def test_a_file_that_is_not_a_record_is_a_usage_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nope.json"
    path.write_text("[]", encoding="utf-8")
    assert main(["replay", str(path), TARGET]) == 2
    assert "harness replay: error:" in capsys.readouterr().err


def test_a_fallback_entry_answers_what_the_record_lacks_and_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded(tmp_path)
    code = main(
        ["replay", str(path), TARGET, "--input", '{"text": "gamma only"}', "--fallback", "embedded"]
    )
    out = capsys.readouterr().out
    assert code == 1  # another input: other turns, all answered (by the embedded model)
    assert "(no turn: its request is not in the record)" not in out
    assert "not in the record, answered by entry 'embedded': request" in out


def test_an_unknown_fallback_entry_is_a_usage_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded(tmp_path)
    assert main(["replay", str(path), TARGET, "--fallback", "no-such-entry"]) == 2
    assert "no-such-entry" in capsys.readouterr().err


def test_a_harness_run_record_kept_with_bodies_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "words.json"
    given = '{"text": "alpha beta"}'
    words = "tests.cli.words:WordFinder"
    assert main(["run", words, "--input", given, "--bodies", "--record", str(path)]) == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    assert all("reply" in call for call in data["calls"] if call["success"])
    assert data["threshold"] is not None  # a user's own thinker: the page can draw why
    assert data["settings"]["max_turns"] == 32
    assert data["settings"]["question_scheme"] == "lean"
    assert data["settings"]["selection_threshold"] is not None
    capsys.readouterr()
    assert main(["replay", str(path), words]) == 0
    assert "same turns and answer" in capsys.readouterr().out


def test_a_record_replays_with_the_settings_it_ran_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "demo.json"
    assert main(["demo", "--max-turns", "2", "--bodies", "--record", str(path)]) == 0
    capsys.readouterr()
    assert main(["replay", str(path), "harness.demo._thinker:PriceDecisionFinder"]) == 0
    out = capsys.readouterr().out
    assert "max_turns 2 as recorded (harness.demo._thinker:PriceDecisionFinder builds" in out
    assert "same turns and answer" in out
