"""`harness run MODULE:CLASS` on a small thinker defined in a test module."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from harness.record import load_record
from harness.runs import read_journal
from harness.thinker import FINISH
from tests.cli.runs import harness


def test_harness_run_runs_a_thinker_on_json_input_and_records_it(tmp_path: pathlib.Path) -> None:
    done = harness(
        "run",
        "tests.cli.words:WordFinder",
        "--input",
        '{"text": "alpha beta gamma"}',
        "--record",
        "words.json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    turn, used, written = done.stderr.strip().splitlines()
    assert re.fullmatch(
        r"turn 1: split_words on sentence#1 -> list#1  \(3 words, \d+\.\d\d s\)", turn
    )
    assert used.startswith("used: 2 decisions (0 retries), ")
    assert written == "record: words.json"
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    record = load_record(tmp_path / "words.json")
    assert record.command == "run"
    assert record.thinker == "find_words"
    assert record.objective == "Keep the words that name a Greek letter"
    assert record.input_alias == "sentence"
    assert record.input_value == {"text": "alpha beta gamma"}
    # The only move is the key tool on the sentence, then the finish with a selection of 3.
    assert [turn.tool for turn in record.turns] == ["split_words", FINISH]
    assert record.turns[0].artifact == "sentence#1"
    assert list(record.turns[-1].selection) == ["word#1", "word#2", "word#3"]
    # Printed: one compact JSON object per answer item, the record's items in order.
    assert printed == [item.value for item in record.answer]
    assert all(item.alias == "word" for item in record.answer)
    assert record.threshold is not None  # the entry's fitted threshold (or 0.5), as the run used it
    kept = [ref for ref, p in record.turns[-1].selection.items() if p >= record.threshold]
    assert [item.ref for item in record.answer] == kept
    assert {word["text"] for word in printed} <= {"alpha", "beta", "gamma"}


def test_record_makes_its_folder_and_refuses_a_path_under_a_file(tmp_path: pathlib.Path) -> None:
    given = ["run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha"}', "--record"]
    done = harness(*given, "runs/today/x.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "record: runs/today/x.json" in done.stderr
    assert load_record(tmp_path / "runs" / "today" / "x.json").command == "run"
    (tmp_path / "notes").write_text("a file", encoding="utf-8")
    refused = harness(*given, "notes/x.json", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"harness run: error: cannot write the record to notes/x.json: {tmp_path / 'notes'} is "
        "a file, not a folder"
    ]


def test_harness_run_reads_the_input_from_a_file(tmp_path: pathlib.Path) -> None:
    (tmp_path / "in.json").write_text('{"text": "delta"}', encoding="utf-8")
    done = harness("run", "tests.cli.words:WordFinder", "--input-file", "in.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == [tmp_path / "in.json"]  # no record unless asked for
    assert "record:" not in done.stderr


def test_harness_run_reports_a_tool_crash_as_a_failed_run_and_writes_the_partial_record(
    tmp_path: pathlib.Path,
) -> None:
    args = ("run", "tests.cli.words:CrashingFinder", "--input", '{"text": "alpha"}')
    done = harness(*args, "--record", "crash.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if not line.startswith("turn ")]
    assert lines[0] == (
        "harness run: the run failed: ZeroDivisionError: the part has no words to divide by"
    )
    assert lines[1].startswith("record: crash.json (partial: 1 turn, 2 decisions")
    assert "Traceback" not in done.stderr
    assert "please report" not in done.stderr  # the user's tool crashed, not harness
    record = load_record(tmp_path / "crash.json")
    assert record.failure == "ZeroDivisionError: the part has no words to divide by"
    assert [turn.tool for turn in record.turns] == ["take_part"]  # the turns before the crash
    assert len(record.calls) == 2  # the decision that chose the crashing move is recorded too
    assert all(call.success for call in record.calls)
    assert record.answer == ()


def test_harness_debug_shows_the_traceback_of_a_failed_run(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_DEBUG", "1")
    args = ("run", "tests.cli.words:CrashingFinder", "--input", '{"text": "alpha"}')
    done = harness(*args, cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert "ZeroDivisionError: the part has no words to divide by" in done.stderr
    assert not (tmp_path / "harness-record.json").exists()  # nothing written unasked
    assert "record: not written (partial: 1 turn); pass --record PATH to keep it" in done.stderr


def test_harness_run_says_when_nothing_was_selected(tmp_path: pathlib.Path) -> None:
    # A sentence of no words: the key tool makes an empty list, so nothing can be selected.
    done = harness("run", "tests.cli.words:WordFinder", "--input", '{"text": ""}', cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # stdout stays one JSON object per item: none
    assert done.stderr.splitlines()[1] == "answer: nothing selected"  # after the one turn


def test_harness_run_applies_a_budget_before_the_wire(tmp_path: pathlib.Path) -> None:
    args = ("run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha beta"}')
    done = harness(*args, "--max-decisions", "1", "--record", "b.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "BudgetExceededError: the run budget refused a decision call" in done.stderr
    record = load_record(tmp_path / "b.json")
    assert len(record.calls) == 1
    assert record.failure is not None
    assert "max_decisions" in record.failure


def test_harness_run_prints_the_palette_error_itself(tmp_path: pathlib.Path) -> None:
    args = ("run", "tests.cli.words:IllegalFinder", "--input", '{"text": "alpha"}')
    done = harness(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert 'has an illegal palette: harness-name: Tool "UnnamedSplit"' in done.stderr
    assert "from its parent alone" not in done.stderr
    assert "(parent) constructor" not in done.stderr


def test_harness_run_keeps_the_wire_bodies_when_asked(tmp_path: pathlib.Path) -> None:
    args = ("run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha"}')
    done = harness(*args, "--bodies", "--record", "b.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = load_record(tmp_path / "b.json")
    assert record.calls
    assert all(isinstance(call.body, dict) for call in record.calls)
    assert all(call.body["state"]["objective"] for call in record.calls)  # type: ignore[index]


def test_harness_run_shows_a_line_per_turn_on_stderr_and_only_the_answer_on_stdout(
    tmp_path: pathlib.Path,
) -> None:
    args = ("run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha beta"}')
    done = harness(*args, "--journal", "words.journal", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = read_journal(tmp_path / "words.journal")
    answer = [line for line in done.stdout.splitlines()]
    assert all(json.loads(line)["text"] in ("alpha", "beta") for line in answer)
    assert done.stdout == "".join(line + "\n" for line in answer)  # nothing but the answer
    turns = [line for line in done.stderr.splitlines() if line.startswith("turn ")]
    tools = [
        e.data["tool"] for e in record.entries if e.kind == "turn" and e.data["tool"] != FINISH
    ]
    assert len(turns) == len(tools) == 1  # a line per tool turn, as it ends
    assert turns[0].startswith("turn 1: split_words on sentence#1 -> list#1  (2 words, ")
    assert done.stderr.splitlines()[0] == turns[0]  # before the answer's summary

    quiet = harness(*args, "--quiet", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.splitlines() == answer
    assert not [line for line in quiet.stderr.splitlines() if line.startswith("turn ")]
    assert quiet.stderr.startswith("used: ")
