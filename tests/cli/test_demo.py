"""`harness demo` end to end in a subprocess, offline, on the embedded model."""

from __future__ import annotations

import pathlib
import re

from harness.deciding import FINISH
from harness.demo._run import relative_source
from harness.demo._thinker import DEMO_MAX_TURNS, DEMO_OBJECTIVE
from harness.record import load_record, move_line
from tests.cli.runs import harness

TURN = re.compile(r"^(turn \d+: .*?)(?:  \(.*\))?$")


def test_the_demo_runs_end_to_end_offline_and_its_record_matches_what_it_printed(
    tmp_path: pathlib.Path,
) -> None:
    (tmp_path / "tmp").mkdir()
    done = harness("demo", "--record", "tmp/rec.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"harness demo: {DEMO_OBJECTIVE}"
    assert "(shipped with harness)" in lines[1]
    printed = [m.group(1) for line in lines if (m := TURN.match(line))]

    # It lists the folder, reads documents, splits at least one.
    assert printed[0].startswith("turn 1: list_folder on folder#1 -> list#1")
    read = re.compile(r"turn \d+: read_document on document_ref#\d+ -> document#\d+$")
    split = re.compile(r"turn \d+: split_statements on document#\d+ -> list#\d+$")
    assert any(read.match(p) for p in printed)
    assert any(split.match(p) for p in printed)

    # It finishes with an answer of statements, each with its source and probability.
    answer_at = next(i for i, line in enumerate(lines) if line.startswith("answer: "))
    count = int(lines[answer_at].split()[1])
    assert count >= 1
    answer_lines = lines[answer_at + 1 : answer_at + 1 + count]
    assert lines[answer_at + 1 + count].startswith("record: tmp/rec.json")

    # The record parses and its turns are the turns it printed.
    record = load_record(tmp_path / "tmp" / "rec.json")
    assert record.command == "demo"
    assert record.thinker == "find_price_decisions"
    assert record.objective == DEMO_OBJECTIVE
    assert record.entry["id"] == "embedded"
    tool_turns = [turn for turn in record.turns if turn.tool != FINISH]
    assert [move_line(turn) for turn in tool_turns] == printed
    assert len(tool_turns) <= DEMO_MAX_TURNS
    assert record.turns[-1].tool == FINISH
    assert len(record.calls) == len(record.turns)  # one decision a turn
    assert all(call.success for call in record.calls)
    assert 0.0 < record.model_seconds <= record.wall_seconds

    # The answer in the record is the answer printed: statements, selected at >= 0.5.
    assert len(record.answer) == count
    selection = record.turns[-1].selection
    assert isinstance(record.input_value, dict)
    folder = str(record.input_value["path"])
    for item, line in zip(record.answer, answer_lines, strict=True):
        assert item.alias == "statement"
        assert item.probability == selection[item.ref]
        assert item.probability is not None
        assert item.probability >= 0.5
        value = item.value
        assert isinstance(value, dict)
        source = relative_source(value["source"], folder)
        assert line == f"  {item.probability:.3f}  {source}: {value['text']}"


def test_a_failed_demo_exits_1_naming_the_error_and_writes_its_partial_record(
    tmp_path: pathlib.Path,
) -> None:
    # The first request (the folder alone) fits a 1,000-token context; the second (the folder's
    # 34 listed files) does not: the run fails after its first turn.
    (tmp_path / "small.toml").write_text(
        '[pins]\ndecision = "embedded"\n\n[[entries]]\nid = "embedded"\nprovider = "embedded"\n'
        'wire_model_id = "sparrow-decider"\nmax_context_tokens = 1000\nmax_concurrent = 1\n',
        encoding="utf-8",
    )
    done = harness("demo", "--catalog", "small.toml", "--record", "rec.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "please report" not in done.stderr
    failed = done.stderr.splitlines()[0]
    assert failed.startswith("harness demo: the run failed: ContextCeilingError: "), failed
    assert "record: rec.json (partial: 1 turn, 1 decision before the failure)" in done.stderr
    record = load_record(tmp_path / "rec.json")
    assert record.failure is not None
    assert record.failure.startswith("ContextCeilingError: ")
    assert [turn.tool for turn in record.turns] == ["list_folder"]
    assert len(record.calls) == 1
    assert record.answer == ()


def test_one_decision_and_no_answer_read_as_such(tmp_path: pathlib.Path) -> None:
    # One turn: the listing (the only move), then the budget is spent with nothing of the
    # output type, so the run finishes without asking: one decision, nothing selected.
    done = harness("demo", "--max-turns", "1", "--record", "one.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "answer: nothing selected" in lines
    (summary,) = [line for line in lines if line.startswith("record: ")]
    assert summary.startswith("record: one.json (2 turns, 1 decision, ")
    record = load_record(tmp_path / "one.json")
    assert (len(record.turns), len(record.calls), record.answer) == (2, 1, ())
