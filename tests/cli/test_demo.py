"""`harness demo` end to end in a subprocess, offline, on the embedded model."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

import harness as harness_package
from harness.catalog import default_catalog
from harness.cli._demo import SHOWN_ANSWERS, figures_line
from harness.demo import answer_key, answer_statements, score_answer
from harness.demo._run import relative_source
from harness.demo._thinker import DEMO_MAX_TURNS, DEMO_OBJECTIVE
from harness.record import load_record, move_line
from harness.thinker import FINISH
from tests.cli.runs import ROOT, harness
from tests.demo import sample

TURN = re.compile(r"^(turn \d+: .*?)(?:  \(.*\))?$")


@pytest.fixture(scope="module")
def shipped_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[pathlib.Path, dict[str, subprocess.CompletedProcess[str]]]:
    """`harness demo` then `harness record` on the embedded model, once for this module: the
    docs' samples are checked against the very run the end-to-end test reads."""
    folder = tmp_path_factory.mktemp("shipped")
    return folder, sample.run_commands(folder)


def test_the_docs_sample_output_is_a_real_run(
    shipped_run: tuple[pathlib.Path, dict[str, subprocess.CompletedProcess[str]]],
) -> None:
    _, done = shipped_run
    bodies = sample.sample_bodies(done)
    problems = sample.check(bodies)
    assert not problems, (
        "the sample output in the docs has drifted from a real run; regenerate it with "
        "`python -m tests.demo.sample --write` and review the diff:\n" + "\n".join(problems)
    )
    for path in sample.DOCS:
        assert set(sample.blocks(path.read_text(encoding="utf-8"))) <= set(bodies)
    assert "demo" in sample.blocks(sample.DOCS[0].read_text(encoding="utf-8"))


def test_the_drift_check_holds_what_may_vary_and_nothing_else() -> None:
    docs = "record: r.json (13 turns, 1.52 s, 1.40 s in the model)\n  0.581  a.md: Prices rise.\n"
    assert sample.differences(docs, docs.replace("1.52 s", "12.07 s")) == []
    assert sample.differences(docs, docs.replace("0.581", "0.582")) == []  # floating point
    assert sample.differences(docs, docs.replace("0.581", "0.591"))  # a different answer
    assert sample.differences(docs, docs.replace("13 turns", "12 turns"))
    assert sample.differences(docs, docs.replace("Prices rise.", "Prices fall."))
    assert sample.differences(docs, docs + "  0.512  b.md: Another.\n")
    installed = str(pathlib.Path(harness_package.__file__).resolve().parent)
    assert sample.normalize(f"folder: {installed}/demo/corpus") == (
        "folder: .../site-packages/harness/demo/corpus"
    )


def test_the_demo_runs_end_to_end_offline_scores_itself_and_its_record_matches_what_it_printed(
    shipped_run: tuple[pathlib.Path, dict[str, subprocess.CompletedProcess[str]]],
) -> None:
    tmp_path, runs = shipped_run
    done = runs["demo"]
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"harness demo: {DEMO_OBJECTIVE}"
    assert "(shipped with harness)" in lines[1]
    assert lines[2] == (
        "    34 files, 24 of them text the model may read (left out: 3 binary files, 3 images, "
        "2 office files, 1 empty file, 1 PDF)"
    )
    assert lines[3] == "  model: entry 'embedded' (embedded, sparrow-decider), at most 12 turns"
    assert lines[4] == "loading the embedded model ..."
    printed = [m.group(1) for line in lines if (m := TURN.match(line))]

    # It lists the folder's text files, then reads some into statements; no turn fails.
    assert printed[0] == "turn 1: list_folder on folder#1 -> list#1"
    assert "(24 text files)" in lines[5]
    read = re.compile(r"turn \d+: read_statements on text_file#\d+ -> list#\d+$")
    assert printed[1:]
    assert all(read.match(p) for p in printed[1:]), printed
    assert not [line for line in lines if " failed" in line]

    # It finishes with an answer of statements, each with its source and probability.
    answer_at = next(i for i, line in enumerate(lines) if line.startswith("answer: "))
    count = int(lines[answer_at].split()[1])
    assert count >= 1
    shown = min(count, SHOWN_ANSWERS)
    answer_lines = lines[answer_at + 1 : answer_at + 1 + shown]
    score_line = lines[answer_at + 1 + shown]
    before_line, after_line, fitted_line = lines[answer_at + 2 + shown : answer_at + 5 + shown]
    assert lines[answer_at + 5 + shown].startswith("record: harness-record.json (")

    # The record parses and its turns are the turns it printed.
    record = load_record(tmp_path / "harness-record.json")
    assert record.command == "demo"
    assert record.thinker == "find_price_decisions"
    assert record.objective == DEMO_OBJECTIVE
    assert record.entry["id"] == "embedded"
    # The shipped embedded entry carries a calibration fitted on harness/evals/data: the thinker
    # selects at its fitted threshold.
    calibration = default_catalog().entry("embedded").calibration
    assert calibration is not None
    assert record.threshold == calibration.selection_threshold
    tool_turns = [turn for turn in record.turns if turn.tool != FINISH]
    assert [move_line(turn) for turn in tool_turns] == printed
    assert len(tool_turns) <= DEMO_MAX_TURNS
    assert record.turns[-1].tool == FINISH
    assert len(record.calls) == len(record.turns)  # one decision a turn
    assert all(call.success for call in record.calls)
    assert 0.0 < record.model_seconds <= record.wall_seconds

    # The answer in the record is the answer printed (its most probable items when long):
    # statements, selected at >= the threshold, printed most probable first.
    assert len(record.answer) == count
    selection = record.turns[-1].selection
    assert isinstance(record.input_value, dict)
    folder = str(record.input_value["path"])
    ranked = sorted(record.answer, key=lambda item: -(item.probability or 0.0))[:shown]
    printed_items = ranked
    shown_probabilities = [float(line.split()[0]) for line in answer_lines]
    assert shown_probabilities == sorted(shown_probabilities, reverse=True)
    for item, line in zip(printed_items, answer_lines, strict=True):
        assert item.alias == "statement"
        assert item.probability == selection[item.ref]
        assert item.probability is not None
        assert record.threshold is not None
        assert item.probability >= record.threshold
        value = item.value
        assert isinstance(value, dict)
        source = relative_source(value["source"], folder)
        assert line == f"  {item.probability:.3f}  {source}: {value['text']}"
    if count > SHOWN_ANSWERS:
        assert lines[answer_at].endswith(f"(the {SHOWN_ANSWERS} most probable; all in the record)")

    # It scores itself against the key, exactly as the record's answer scores.
    expected = score_answer(answer_statements(record), answer_key())
    assert score_line == f"score against the folder's answer key: {expected.line()}"
    assert record.score == score_line  # the record page shows it with the answer
    assert re.search(r"found \d of 7 planted decisions", score_line)

    # Before and after calibration, each with its Wilson intervals, and where it was fitted.
    assert after_line == (
        f"  after calibration (calibrated probabilities, at {record.threshold:.3f}): "
        f"{figures_line(expected)}"
    )
    assert re.fullmatch(
        r"  before calibration \(the model's own probabilities, at 0\.5\): recall \d\.\d\d "
        r"\[\d\.\d\d, \d\.\d\d\] \(\d of 7\), precision .*",
        before_line,
    )
    assert "95 % Wilson intervals" in fitted_line
    assert f"fitted on {calibration.fitted_on}, never on this folder" in fitted_line

    # It says what the embedded model is and how to run the demo on a real one.
    tail = lines[answer_at + 6 + shown :]
    assert tail[0].startswith("note: the embedded model (sparrow-decider) is a small offline model")
    assert "TypeSafe key" in tail[1]
    assert tail[2] == "  TYPESAFE_API_KEY=... harness demo --model systemone:jev-latest"


def test_the_first_lines_come_before_the_run_ends(tmp_path: pathlib.Path) -> None:
    # Progress from the first moment: the header and the loading line are out (flushed) while
    # the run has not yet written its record, which it does only once it has answered.
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_CATALOG"}
    record = tmp_path / "rec.json"
    with subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "demo", "--max-turns", "2", "--record", str(record)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT)},
    ) as process:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("harness demo: ")
        assert not record.exists()
        lines = [process.stdout.readline() for _ in range(4)]
        assert lines[-1] == "loading the embedded model ...\n"
        assert not record.exists()
        turn = process.stdout.readline()
        assert turn.startswith("turn 1: list_folder")
        assert not record.exists()
        rest = process.stdout.read()
        assert process.wait(timeout=120) == 0
    assert "answer: " in rest
    assert record.exists()


def test_model_names_the_entry_like_entry_and_the_two_must_agree(tmp_path: pathlib.Path) -> None:
    (tmp_path / "two.toml").write_text(
        '[pins]\ndecision = "embedded"\n\n'
        '[[entries]]\nid = "embedded"\nprovider = "embedded"\nwire_model_id = "sparrow-decider"\n'
        "max_context_tokens = 32768\nmax_concurrent = 1\n\n"
        '[[entries]]\nid = "other"\nprovider = "embedded"\nwire_model_id = "sparrow-decider"\n'
        "max_context_tokens = 32768\nmax_concurrent = 1\n",
        encoding="utf-8",
    )
    done = harness(
        "demo", "--catalog", "two.toml", "--model", "other", "--max-turns", "1", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "  model: entry 'other' (embedded, sparrow-decider), at most 1 turns" in done.stdout
    assert "harness demo --model systemone:jev-latest --max-turns 1" in done.stdout
    assert load_record(tmp_path / "harness-record.json").entry["id"] == "other"
    clash = harness(
        "demo", "--catalog", "two.toml", "--model", "other", "--entry", "embedded", cwd=tmp_path
    )
    assert clash.returncode == 2
    assert clash.stderr.splitlines() == [
        "harness demo: error: --model other and --entry embedded name different models: give "
        "one (--entry is --model's other name)"
    ]
    unknown = harness("demo", "--model", "nope", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "unknown catalog entry id 'nope'" in unknown.stderr


def test_a_failed_demo_exits_1_naming_the_error_and_writes_its_partial_record(
    tmp_path: pathlib.Path,
) -> None:
    # The first request (the folder alone) fits a 1,000-token context; the second (the folder's
    # 24 listed text files) does not: the run fails after its first turn.
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
    assert (
        "score against the folder's answer key: found 0 of 7 planted decisions (nothing selected)"
    ) in lines
    (summary,) = [line for line in lines if line.startswith("record: ")]
    assert summary.startswith("record: one.json (2 turns, 1 decision, ")
    record = load_record(tmp_path / "one.json")
    assert (len(record.turns), len(record.calls), record.answer) == (2, 1, ())


def test_another_folder_is_not_scored_against_the_shipped_key(tmp_path: pathlib.Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("The price of Pro rises to 20 EUR from 1 May.\n", encoding="utf-8")
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    done = harness("demo", "docs", "--max-turns", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2] == "    2 files, 1 of them text the model may read (left out: 1 image)"
    assert (
        "score: no answer key for this folder and objective (the key covers the shipped one)"
    ) in lines
    assert not [line for line in lines if line.startswith("score against")]
