"""The record page, read as HTML and laid out by a real headless Chromium.

The record is the demo's, run on the answer-key policy (a perfect model of the shipped corpus:
seven of the ~60 candidates selected, the rest refused), so the page holds every kind of
distribution, a selection with and without answers, and answer items with sources. One
candidate's digest is then made very long (a text long enough to push a bar out of its column if
the layout let it) to show the bars keep their place whatever the text.
"""

from __future__ import annotations

import asyncio
import html
import json
import pathlib
import re
from typing import TypedDict, cast

import attrs
import pytest

from harness.demo import AnswerKeyPolicy, answer_key, run_demo_with
from harness.record import (
    RecordedCall,
    RunRecord,
    load_record,
    ordered_options,
    render_html,
    render_text,
    usage_line,
)
from harness.record._html import BAR_PIXELS
from harness.thinker import FINISH
from tests.record.browser import browser_page

LONG_WORDS = "a digest far longer than any row should be, " * 40


@pytest.fixture(scope="module")
def key_record() -> RunRecord:
    run = asyncio.run(run_demo_with(AnswerKeyPolicy(answer_key())))
    return run.record


@pytest.fixture(scope="module")
def stressed(key_record: RunRecord) -> RunRecord:
    """The key run's record with one answered and one refused candidate given very long words,
    one call unbilled and two priced (so the usage block has every case)."""
    finish = key_record.turns[-1]
    refused = next(ref for ref in finish.selection if ref not in answered(key_record))
    first_answer = key_record.answer[0].ref
    artifacts = dict(key_record.artifacts)
    for ref in (refused, first_answer):
        artifacts[ref] = f"{ref} (statement): {LONG_WORDS}"
    calls = list(key_record.calls)
    calls[0] = attrs.evolve(calls[0], input_tokens=None)  # a call whose server billed nothing
    calls[1] = attrs.evolve(calls[1], input_tokens=1200, cost=0.0000504)
    calls[2] = attrs.evolve(calls[2], input_tokens=800, cost=0.0000336)
    return attrs.evolve(key_record, artifacts=artifacts, calls=tuple(calls))


def answered(record: RunRecord) -> set[str]:
    return {item.ref for item in record.answer}


# -- the HTML itself ----------------------------------------------------------------------------


def test_the_distributions_are_in_the_text_views_order(key_record: RunRecord) -> None:
    page = render_html(key_record)
    sections = re.findall(
        r'<section class="turn[^"]*" id="turn-\d+" data-turn="(\d+)">(.*?)</section>', page
    )
    assert len(sections) == len(key_record.turns)
    text = render_text(key_record)
    for (number, body), turn in zip(sections, key_record.turns, strict=True):
        assert int(number) == turn.turn
        for question, values in (
            ("next", turn.next),
            ("argument", turn.argument),
            ("selection", turn.selection or None),
        ):
            if values is None:
                continue
            options = [
                html.unescape(o)
                for o in re.findall(rf'data-question="{question}" data-option="([^"]*)"', body)
            ]
            assert options == [option for option, _ in ordered_options(question, values)]
        # The text view lists the same options in the same order (its first five for
        # next/argument): the page and the text can be read side by side.
        if turn.argument is not None and len(turn.argument) > 1:
            block = text.split(f"turn {turn.turn}: ", 1)[1].split("\n\n", 1)[0]
            shown = re.findall(r"^    (text_file#\d+|folder#\d+) ", block, re.MULTILINE)
            assert shown == [o for o, _ in ordered_options("argument", turn.argument)][: len(shown)]
            assert shown
    ranked = [p for _, p in ordered_options("next", {"a": 0.1, "b": 0.8, "c": 0.1})]
    assert ranked == sorted(ranked, reverse=True)


def test_the_selection_marks_the_answer_and_draws_the_threshold(key_record: RunRecord) -> None:
    page = render_html(key_record)
    assert key_record.threshold == 0.5
    selection = page.split('<div class="dist selection"', 1)[1].split("</div></section>", 1)[0]
    marked = re.findall(
        r'<div class="bar answer" data-question="selection" data-option="([^"]*)"', selection
    )
    assert set(marked) == answered(key_record)
    assert len(marked) == len(key_record.answer) == 7
    assert selection.count('<line class="threshold" x1="120.0"') == len(
        key_record.turns[-1].selection
    )
    assert "threshold 0.50" in selection
    assert f"in the answer (7 of {len(key_record.turns[-1].selection)})" in selection


def test_each_answer_item_shows_its_source_and_its_ref_once(key_record: RunRecord) -> None:
    page = render_html(key_record)
    items = re.findall(r'<li data-ref="([^"]+)">(.*?)</li>', page)
    assert [ref for ref, _ in items] == [item.ref for item in key_record.answer]
    for (ref, body), item in zip(items, key_record.answer, strict=True):
        assert isinstance(item.value, dict)
        assert f'<span class="source">{html.escape(item.value["source"])}</span>' in body
        assert html.escape(item.value["text"], quote=True) in body
        assert body.count(ref) == 1


def test_usage_and_cost_come_first(key_record: RunRecord, stressed: RunRecord) -> None:
    page = render_html(stressed)
    usage = page.index('<dl class="usage" id="usage">')
    assert usage < page.index("<section")
    block = page[usage : page.index("</dl>", usage)]
    counted = sum(call.counted_input_tokens or 0 for call in stressed.calls)
    assert f"<dd>{counted:,}</dd>" in block
    billed = sum(call.input_tokens or 0 for call in stressed.calls)
    reported = len(stressed.calls) - 1
    calls = len(stressed.calls)
    assert f"<dd>{billed:,} on {reported} of {calls} calls (1 not reported)</dd>" in block
    assert "<dd>0.000084</dd>" in block
    assert "unpriced" in render_html(key_record)  # no call of the fake entry has a price
    line = usage_line(stressed)
    assert "cost 0.000084" in line
    assert f"counted {counted:,}" in line


def test_a_record_without_threshold_and_cost_loads_and_renders(
    key_record: RunRecord, tmp_path: pathlib.Path
) -> None:
    """``threshold`` and each call's ``cost`` are optional in a record file: without them it
    loads with both ``None`` and its page shows no threshold line but still marks the answer."""
    old = attrs.evolve(
        key_record,
        threshold=None,
        calls=tuple(attrs.evolve(call, cost=None) for call in key_record.calls),
    )
    data = old.to_json()
    del data["threshold"]
    calls = data["calls"]
    assert isinstance(calls, list)
    for call in calls:
        assert isinstance(call, dict)
        del call["cost"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    read = load_record(path)
    assert read.threshold is None
    assert all(call.cost is None for call in read.calls)
    page = render_html(read)
    assert 'class="threshold"' not in page
    assert page.count('class="bar answer"') == 7  # the answer is still marked
    assert isinstance(read.calls[0], RecordedCall)


# -- laid out in a real browser -----------------------------------------------------------------

GEOMETRY = """
(() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  const dists = [...document.querySelectorAll('.dist')].map((dist) => ({
    question: dist.dataset.question,
    bars: [...dist.querySelectorAll('.bar')].map((bar) => ({
      option: bar.dataset.option,
      answer: bar.classList.contains('answer'),
      svg: box(bar.querySelector('svg')),
      fill: box(bar.querySelector('rect.fill')),
      words: box(bar.querySelector('.words')),
      mark: bar.querySelector('.mark') ? box(bar.querySelector('.mark')) : null,
      threshold: bar.querySelector('line.threshold')
        ? box(bar.querySelector('line.threshold')) : null,
      p: parseFloat(bar.querySelector('.p').textContent),
    })),
  }));
  return {
    dists,
    usage: box(document.querySelector('.usage')),
    usageText: document.querySelector('.usage').innerText,
    firstTurn: box(document.querySelector('section.turn')),
    answers: [...document.querySelectorAll('.answer-list li')].map((li) => ({
      ref: li.dataset.ref, source: li.querySelector('.source').innerText, box: box(li)})),
    pageWidth: document.documentElement.scrollWidth,
  };
})()
"""


class Box(TypedDict):
    x: float
    y: float
    width: float
    height: float


class Bar(TypedDict):
    option: str
    answer: bool
    svg: Box
    fill: Box
    words: Box
    mark: Box | None
    threshold: Box | None
    p: float


class Dist(TypedDict):
    question: str
    bars: list[Bar]


class AnswerItem(TypedDict):
    ref: str
    source: str
    box: Box


class Geometry(TypedDict):
    """What GEOMETRY returns from the page (element boxes from getBoundingClientRect)."""

    dists: list[Dist]
    usage: Box
    usageText: str
    firstTurn: Box
    answers: list[AnswerItem]
    pageWidth: float


async def layout(record: RunRecord, folder: pathlib.Path, name: str) -> Geometry:
    page_file = folder / f"{name}.html"
    page_file.write_text(render_html(record), encoding="utf-8")
    async with browser_page() as page:
        await page.open(page_file, width=1280, height=900)
        found = await page.evaluate(GEOMETRY)
        await page.screenshot(folder / f"{name}.png")
    assert isinstance(found, dict)
    assert set(found) == set(Geometry.__annotations__)
    return cast(Geometry, found)


def test_in_chromium_bars_share_one_scale_and_the_answer_is_marked(
    stressed: RunRecord, tmp_path: pathlib.Path
) -> None:
    found = asyncio.run(layout(stressed, tmp_path, "record"))
    shot = tmp_path / "record.png"
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert shot.stat().st_size > 10_000  # a real rendering, for people to look at

    dists = found["dists"]
    assert {d["question"] for d in dists} == {"next", "argument", "selection"}
    xs = set()
    for dist in dists:
        bars = dist["bars"]
        assert bars
        # One distribution: every bar starts at the same x and has the same full width,
        # whatever the length of its row's words (two rows carry 1,800 characters).
        assert {round(bar["svg"]["x"], 1) for bar in bars} == {round(bars[0]["svg"]["x"], 1)}
        assert {round(bar["svg"]["width"], 1) for bar in bars} == {float(BAR_PIXELS)}
        for bar in bars:
            assert bar["fill"]["x"] == pytest.approx(bar["svg"]["x"], abs=0.5)
            assert bar["fill"]["width"] == pytest.approx(bar["p"] * BAR_PIXELS, abs=1.0)
            assert bar["words"]["x"] > bar["svg"]["x"] + BAR_PIXELS  # words never push a bar
        xs.add(round(bars[0]["svg"]["x"], 1))
    assert len(xs) == 1  # and every distribution of the page uses the same scale
    assert found["pageWidth"] <= 1280  # long words are cut, not widening the page

    (selection,) = [d for d in dists if d["question"] == "selection"]
    marked = [bar for bar in selection["bars"] if bar["answer"]]
    assert {bar["option"] for bar in marked} == answered(stressed)
    for bar in selection["bars"]:
        assert (bar["mark"] is not None) == bar["answer"]
        if bar["mark"] is not None:
            assert bar["mark"]["width"] > 0
            assert bar["mark"]["height"] > 0
        line = bar["threshold"]
        assert line is not None  # drawn on every bar of the selection: one vertical line
        assert line["x"] + line["width"] / 2 == pytest.approx(
            bar["svg"]["x"] + 0.5 * BAR_PIXELS, abs=1.5
        )
    assert all(
        bar["threshold"] is None for d in dists if d["question"] != "selection" for bar in d["bars"]
    )

    usage = found["usage"]
    assert usage["y"] < found["firstTurn"]["y"]  # usage and cost at the top
    assert "0.000084" in found["usageText"]
    answers = found["answers"]
    assert [a["ref"] for a in answers] == [item.ref for item in stressed.answer]
    assert [a["source"] for a in answers] == [
        item.value["source"] for item in stressed.answer if isinstance(item.value, dict)
    ]
    assert all(a["box"]["height"] > 0 for a in answers)


def test_the_last_turn_is_the_finish_with_its_selection(key_record: RunRecord) -> None:
    assert key_record.turns[-1].tool == FINISH
    assert len(key_record.turns[-1].selection) > len(key_record.answer)


def test_the_answer_and_score_come_first_then_contents_linking_each_turn(
    key_record: RunRecord,
) -> None:
    scored = attrs.evolve(key_record, score="score against the folder's answer key: found 4 of 7")
    page = render_html(scored)
    answer = page.index('<h2 id="answer">answer (')
    assert (
        answer < page.index('id="usage"') < page.index('<h2 id="turns">') < page.index("<section")
    )
    assert page.index('<p class="score">score against the folder&#x27;s answer key') > answer
    for turn in key_record.turns:
        assert page.count(f'href="#turn-{turn.turn}"') == 2  # the contents and the turn's own
        assert f'id="turn-{turn.turn}"' in page
    assert '<p class="score">' not in render_html(key_record)  # no key, no score line
