"""`harness record FILE`: the text view, the HTML page of bars, and the loader's errors."""

from __future__ import annotations

import asyncio
import html
import json
import pathlib
import re

import attrs
import pytest

from harness.cli import main
from harness.demo import AnswerKeyPolicy, answer_key, run_demo_with
from harness.record import (
    RecordError,
    RunRecord,
    load_record,
    move_line,
    ordered_options,
    record_from_json,
    render_text,
)


@pytest.fixture(scope="module")
def demo_record(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    # The demo on the answer-key policy: a whole run (every kind of distribution, a selection
    # with and without answers) in a fraction of the embedded model's time.
    path = tmp_path_factory.mktemp("record") / "demo.json"
    run = asyncio.run(run_demo_with(AnswerKeyPolicy(answer_key())))
    run.record.write(path)
    return path


def test_the_text_view_shows_every_turn_with_its_distributions(
    demo_record: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["record", str(demo_record)]) == 0
    out = capsys.readouterr().out
    record = load_record(demo_record)
    lines = out.splitlines()
    for turn in record.turns:
        assert move_line(turn) in lines
    assert out.count("  next:") == sum(1 for t in record.turns if t.next is not None)
    assert out.count("  selection:") == sum(1 for t in record.turns if t.selection)
    count = len(record.answer)
    assert f"answer: {count} {'item' if count == 1 else 'items'}" in lines
    for item in record.answer:
        assert any(line.strip().split()[1:2] == [item.ref] for line in lines if line.strip())


def test_the_text_view_ends_with_the_score_when_the_command_printed_one(
    demo_record: pathlib.Path,
) -> None:
    score = "score against the folder's answer key: found 4 of 7 planted decisions"
    scored = attrs.evolve(load_record(demo_record), score=score)
    lines = render_text(scored).splitlines()
    assert lines[-1] == f"score: {score}"
    assert any(line.startswith("answer: ") for line in lines[:-1])
    unscored = render_text(attrs.evolve(scored, score=None)).splitlines()
    assert not any(line.startswith("score:") for line in unscored)


def test_the_html_page_draws_a_bar_per_option_with_no_external_asset(
    demo_record: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.html"
    assert main(["record", str(demo_record), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    record = load_record(demo_record)
    bars = re.findall(r'<div class="bar[^"]*" data-question="(\w+)" data-option="([^"]*)"', page)
    expected: list[tuple[str, str]] = []
    for turn in record.turns:
        for question, values in (
            ("next", turn.next),
            ("argument", turn.argument),
            ("selection", turn.selection or None),
        ):
            if values is not None:  # in the text view's order (most probable first, but selection)
                expected += [(question, option) for option, _ in ordered_options(question, values)]
    assert [(q, html.unescape(o)) for q, o in bars] == expected
    assert {q for q, _ in bars} == {"next", "argument", "selection"}
    assert len(bars) == page.count("<svg")  # each bar is drawn
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    assert not re.search(r'(src|href)="(https?:)?//', page)  # self-contained
    assert f"wrote {out}" in capsys.readouterr().out


def test_a_record_round_trips_through_its_json(demo_record: pathlib.Path) -> None:
    record = load_record(demo_record)
    again = json.loads(json.dumps(record.to_json()))
    assert record_from_json(again) == record
    assert isinstance(record, RunRecord)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("turns"), r"record\.turns is missing"),
        (lambda d: d.update(version=99), r"record version 99 is not supported"),
        (lambda d: d.update(format="other"), r"is not a harness record"),
        (lambda d: d["turns"][0].update(turn="one"), r"turns\[0\]: a turn needs an integer"),
        (lambda d: d["calls"][0].update(success="yes"), r"calls\[0\]\.success must be true"),
        (lambda d: d["timing"].pop("wall_seconds"), r"record\.timing\.wall_seconds is missing"),
    ],
)
def test_the_loader_names_what_is_wrong_and_where(
    demo_record: pathlib.Path, tmp_path: pathlib.Path, edit: object, message: str
) -> None:
    data = json.loads(demo_record.read_text(encoding="utf-8"))
    assert callable(edit)
    edit(data)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordError, match=message):
        load_record(broken)


def test_a_file_that_is_not_json_is_refused_with_its_place(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{\n  nope", encoding="utf-8")
    with pytest.raises(RecordError, match=r"is not JSON \(line 2, column 3\)"):
        load_record(path)
