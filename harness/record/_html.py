"""A recorded run as one self-contained HTML page: each turn's distributions drawn as bars.

Inline CSS and inline SVG only (no script, no external asset), so the page opens from a file
anywhere. What a reader can rely on:

* **what it found first**: the answer (each item's probability, source and words) with its
  score when the command printed one, then the usage (the entry, turns and decisions, billed and
  counted input tokens, the cost or that the entry has no price, the time), then a contents
  list linking to each turn; the turns follow;
* **an anchor per turn**: ``#turn-N`` (``#answer``, ``#usage``, ``#turns`` for the blocks), so
  a turn can be linked to;
* **one scale**: every bar of the page is a ``<div class="bar">`` laid out on the same fixed
  grid (option, bar, probability, words), so the bars of a distribution start at the same x and
  have the same full width whatever the length of a row's text; a probability p fills p of it;
* **the same order as the text view** (:func:`~harness.record.ordered_options`): ``next`` and
  ``argument`` most probable first, a ``selection`` in world order (the answer's order);
* **the answer in the selection**: each candidate that made the answer is marked (``answer``
  class, a check mark), and the selection threshold is drawn across the bars as a line;
* **the answer with its sources**: each item's probability, its source (a ``source`` or
  ``path`` field of its value) and its words, its ref once.

Each bar carries ``data-question`` (``next``, ``argument`` or ``selection``) and
``data-option``.
"""

from __future__ import annotations

import html
import json  # the stdlib: a value shown with json's default separators, which orjson cannot write
from collections.abc import Mapping, Sequence
from typing import Final

from harness.record._format import RecordedAnswer, RecordedCall, RunRecord
from harness.record._text import (
    IN_PROCESS_PROVIDERS,
    billed_text,
    counted,
    move_line,
    ordered_options,
    reading_lines,
    reading_text,
)
from harness.thinker import DecisionTurn

__all__ = ["BAR_PIXELS", "render_html", "usage_line"]

BAR_PIXELS: Final = 240
"""The full width of every bar (probability 1), in CSS pixels."""

BAR_HEIGHT: Final = 14

_STYLE: Final = f"""
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222;
  padding: 0 1em; }}
h1 {{ font-size: 1.4em; margin-bottom: .2em; }} h2 {{ font-size: 1.1em; margin: 1.4em 0 .4em; }}
.meta {{ color: #555; margin: .2em 0; }}
.usage {{ display: flex; flex-wrap: wrap; gap: .4em 1.6em; margin: .6em 0 1em; padding: .6em .8em;
  background: #f5f6f8; border-radius: 4px; }}
.usage div {{ display: flex; flex-direction: column; }}
.usage dt {{ color: #666; font-size: .8em; text-transform: uppercase; }}
.usage dd {{ margin: 0; font-weight: 600; }}
.turn {{ border-top: 1px solid #ddd; padding: .4em 0; }}
.failed h2 {{ color: #a33; }}
.dist {{ margin: .3em 0 .8em 1em; }}
.dist h3 {{ font-size: .85em; margin: .2em 0; color: #555; text-transform: uppercase; }}
.bar {{ display: grid; grid-template-columns: 12em {BAR_PIXELS}px 4em 1.4em minmax(0, 1fr);
  column-gap: .6em; align-items: center; margin: 1px 0; }}
.bar .option {{ font-family: ui-monospace, monospace; overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; }}
.bar svg {{ display: block; }}
.bar .p {{ text-align: right; font-family: ui-monospace, monospace; }}
.bar .mark {{ color: #2b7a45; font-weight: bold; text-align: center; }}
.bar .words {{ color: #666; font-size: .85em; overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; }}
.bar.chosen .option, .bar.answer .option {{ font-weight: bold; }}
svg .track {{ fill: #eee; }} svg .fill {{ fill: #4a7bd0; }}
.selection svg .fill {{ fill: #9bb0cf; }} .selection .answer svg .fill {{ fill: #3a9a5b; }}
svg .threshold {{ stroke: #c0392b; stroke-width: 2; }}
.legend {{ color: #666; font-size: .8em; margin-left: .6em; text-transform: none; }}
.legend .line {{ display: inline-block; width: 1em; border-top: 2px solid #c0392b;
  vertical-align: middle; }}
.answer-list {{ list-style: none; padding-left: 1em; }}
.answer-list li {{ margin: .25em 0; }}
.answer-list .p {{ font-family: ui-monospace, monospace; margin-right: .6em; }}
.answer-list .source {{ font-family: ui-monospace, monospace; color: #2a5599; }}
.answer-list .ref {{ color: #888; font-size: .8em; margin-left: .6em; }}
.score {{ font-weight: 600; margin: .2em 0 .6em 1em; }}
.contents {{ columns: 2; font-size: .9em; margin: .2em 0 1em; }}
.contents a {{ color: #2a5599; text-decoration: none; }}
.turn h2 a.anchor {{ color: #bbb; text-decoration: none; margin-left: .4em; font-size: .8em; }}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _words(record: RunRecord, ref: str) -> str:
    """A ref's digest words (its digest line without ``"<ref> (<alias>): "``)."""
    line = record.artifacts.get(ref, "")
    return line.split(": ", 1)[1] if ": " in line else line


def _svg(probability: float, threshold: float | None) -> str:
    width = round(max(0.0, min(1.0, probability)) * BAR_PIXELS)
    line = ""
    if threshold is not None:
        x = round(threshold * BAR_PIXELS, 1)
        line = f'<line class="threshold" x1="{x}" x2="{x}" y1="0" y2="{BAR_HEIGHT}"/>'
    return (
        f'<svg width="{BAR_PIXELS}" height="{BAR_HEIGHT}" viewBox="0 0 {BAR_PIXELS} {BAR_HEIGHT}" '
        f'role="img" aria-label="{probability:.3f}">'
        f'<rect class="track" width="{BAR_PIXELS}" height="{BAR_HEIGHT}"/>'
        f'<rect class="fill" width="{width}" height="{BAR_HEIGHT}"/>{line}</svg>'
    )


def _bar(
    question: str,
    option: str,
    probability: float,
    words: str,
    *,
    chosen: bool,
    answer: bool,
    threshold: float | None,
) -> str:
    classes = "bar" + (" chosen" if chosen else "") + (" answer" if answer else "")
    mark = '<span class="mark" title="in the answer">&#10003;</span>' if answer else "<span></span>"
    return (
        f'<div class="{classes}" data-question="{_e(question)}" data-option="{_e(option)}" '
        f'title="{_e(words or option)}">'
        f'<span class="option">{_e(option)}</span>{_svg(probability, threshold)}'
        f'<span class="p">{probability:.3f}</span>{mark}'
        f'<span class="words">{_e(words)}</span></div>'
    )


def _distribution(
    record: RunRecord,
    question: str,
    values: Mapping[str, float],
    *,
    chosen: str | None = None,
    answer: frozenset[str] = frozenset(),
) -> str:
    threshold = record.threshold if question == "selection" else None
    legend = ""
    if threshold is not None:
        legend = (
            f'<span class="legend"><span class="line"></span> threshold {threshold:.2f}; '
            f"&#10003; in the answer ({len(answer & values.keys())} of {len(values)})</span>"
        )
    bars = [
        _bar(
            question,
            option,
            probability,
            _words(record, option),
            chosen=option == chosen,
            answer=question == "selection" and option in answer,
            threshold=threshold,
        )
        for option, probability in ordered_options(question, values)
    ]
    return (
        f'<div class="dist {_e(question)}" data-question="{_e(question)}">'
        f"<h3>{_e(question)}{legend}</h3>" + "".join(bars) + "</div>"
    )


def _turn(record: RunRecord, turn: DecisionTurn, answer: frozenset[str]) -> str:
    anchor = f"turn-{turn.turn}"
    parts = [
        f'<section class="turn{" failed" if turn.failure else ""}" id="{anchor}" '
        f'data-turn="{turn.turn}">',
        f'<h2>{_e(move_line(turn))}<a class="anchor" href="#{anchor}" title="link to this turn">'
        "#</a></h2>",
    ]
    if turn.next is not None:
        parts.append(_distribution(record, "next", turn.next, chosen=turn.tool))
    if turn.argument is not None:
        parts.append(_distribution(record, "argument", turn.argument, chosen=turn.artifact))
    if turn.selection:
        parts.append(_distribution(record, "selection", turn.selection, answer=answer))
    parts.append("</section>")
    return "".join(parts)


def _tokens(calls: Sequence[RecordedCall], provider: str | None) -> tuple[str, str, str]:
    """Billed input tokens, counted input tokens and cost, as the usage block shows them (the
    calls of an in-process ``provider`` are not billed)."""
    if provider in IN_PROCESS_PROVIDERS:
        billed_line = billed_text(len(calls), 0, 0, in_process=len(calls))
    else:
        billed = [call.input_tokens for call in calls if call.input_tokens is not None]
        billed_line = billed_text(len(calls), len(billed), sum(billed))
    counted_tokens = sum(call.counted_input_tokens or 0 for call in calls)
    costs = [call.cost for call in calls if call.cost is not None]
    cost_text = f"{sum(costs):.6f}".rstrip("0").rstrip(".") if costs else "unpriced"
    return billed_line, f"{counted_tokens:,}", cost_text


def usage_line(record: RunRecord) -> str:
    """The page's usage block as one line of text (what the page shows first)."""
    billed, counted_tokens, cost = _tokens(record.calls, record.entry.get("provider"))
    billed = billed if billed.startswith("not billed") else f"billed {billed}"
    return (
        f"{counted(len(record.turns), 'turn')}, {counted(len(record.calls), 'decision')}; "
        f"input tokens {billed}, counted {counted_tokens}; cost {cost}; "
        f"{record.wall_seconds:.2f} s wall, {record.model_seconds:.2f} s in the model"
    )


def _usage(record: RunRecord) -> str:
    billed, counted_tokens, cost = _tokens(record.calls, record.entry.get("provider"))
    failed = sum(1 for call in record.calls if not call.success)
    cells = [
        ("turns", str(len(record.turns))),
        ("decisions", str(len(record.calls)) + (f" ({failed} failed)" if failed else "")),
        ("input tokens billed", billed),
        ("input tokens counted", counted_tokens),
        ("cost", cost),
        ("wall time", f"{record.wall_seconds:.2f} s"),
        ("in the model", f"{record.model_seconds:.2f} s"),
    ]
    items = "".join(
        f'<div data-usage="{_e(name)}"><dt>{_e(name)}</dt><dd>{_e(value)}</dd></div>'
        for name, value in cells
    )
    return f'<dl class="usage" id="usage">{items}</dl>'


def _readings(record: RunRecord) -> str:
    """A list of the calls that carry a reading (how a logprob provider read the answers)."""
    read = reading_lines(record)
    if not read:
        return ""
    items = "".join(
        f'<li data-call="{number}" data-method="{_e(reading.get("method"))}">'
        f"call {number}: {_e(reading_text(reading))}</li>"
        for number, reading in read
    )
    return (
        '<h2 id="readings">readings</h2><p class="meta">how each call\'s answers were read from '
        f'the model\'s logprobs</p><ul class="readings">{items}</ul>'
    )


def _source(item: RecordedAnswer) -> str:
    value = item.value
    if isinstance(value, dict):
        for field in ("source", "path"):
            if isinstance(value.get(field), str):
                return str(value[field])
    return ""


def _answer_words(record: RunRecord, item: RecordedAnswer) -> str:
    """An answer item's own text when its value has one (whole, where a digest is cut), else
    its digest words, else its JSON."""
    value = item.value
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return str(value["text"])
    return _words(record, item.ref) or json.dumps(value, ensure_ascii=False)


def _answer(record: RunRecord) -> str:
    items = []
    for item in record.answer:
        shown = "-" if item.probability is None else f"{item.probability:.3f}"
        source = _source(item)
        words = _answer_words(record, item)
        items.append(
            f'<li data-ref="{_e(item.ref)}"><span class="p">{shown}</span>'
            + (f'<span class="source">{_e(source)}</span>: ' if source else "")
            + f'<span class="words">{_e(words)}</span><span class="ref">{_e(item.ref)}</span></li>'
        )
    score = f'<p class="score">{_e(record.score)}</p>' if record.score else ""
    return (
        f'<h2 id="answer">answer ({len(record.answer)})</h2>'
        + score
        + (f'<ul class="answer-list">{"".join(items)}</ul>' if items else "<p>nothing selected</p>")
    )


def _contents(record: RunRecord) -> str:
    links = "".join(
        f'<li><a href="#turn-{turn.turn}">{_e(move_line(turn))}</a></li>' for turn in record.turns
    )
    return f'<h2 id="turns">turns ({len(record.turns)})</h2><ol class="contents">{links}</ol>'


def render_html(record: RunRecord) -> str:
    """The whole page: the answer (or the failure) and its score, the usage, the contents, then
    one section per turn with its bars."""
    entry = record.entry
    answer = frozenset(item.ref for item in record.answer)
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>harness record: {_e(record.thinker)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_e(record.thinker)} <small>({_e(record.command)})</small></h1>",
        f'<p class="meta">entry <code>{_e(entry.get("id"))}</code> '
        f"({_e(entry.get('provider'))}, {_e(entry.get('wire_model_id'))})</p>",
    ]
    if record.failure is not None:
        body.append(f'<h2 id="answer">failed</h2><p class="failure">{_e(record.failure)}</p>')
    else:
        body.append(_answer(record))
    body.append(_usage(record))
    body.append(_readings(record))
    if record.objective:
        body.append(f'<p class="meta">objective: {_e(record.objective)}</p>')
    body.append(
        f'<p class="meta">input: <code>{_e(record.input_alias)}</code> '
        f"<code>{_e(json.dumps(record.input_value, ensure_ascii=False))}</code></p>"
    )
    body.append(_contents(record))
    body += [_turn(record, turn, answer) for turn in record.turns]
    body.append("</body></html>")
    return "\n".join(body) + "\n"
