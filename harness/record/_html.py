"""A recorded run as one self-contained HTML page: each turn's distributions drawn as bars.

Inline CSS and inline SVG only (no script, no external asset), so the page opens from a file
anywhere. Every option of every distribution is one ``<div class="bar">`` carrying
``data-question`` (``next``, ``argument`` or ``selection``) and ``data-option``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Final

from harness.deciding import DecisionTurn
from harness.record._format import RunRecord
from harness.record._text import counted, move_line

__all__ = ["render_html"]

BAR_PIXELS: Final = 240

_STYLE: Final = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin: 1.6em 0 .4em; }
.meta { color: #555; } .turn { border-top: 1px solid #ddd; padding: .4em 0; }
.failed h2 { color: #a33; } .dist { margin: .3em 0 .6em 1em; }
.dist h3 { font-size: .9em; margin: .2em 0; color: #555; text-transform: uppercase; }
.bar { display: flex; align-items: center; gap: .6em; margin: 1px 0; }
.bar .option { width: 14em; font-family: ui-monospace, monospace; overflow: hidden;
  text-overflow: ellipsis; white-space: nowrap; }
.bar .p { width: 4em; text-align: right; font-family: ui-monospace, monospace; }
.bar .words { color: #666; font-size: .85em; overflow: hidden; text-overflow: ellipsis;
  white-space: nowrap; max-width: 40em; }
.bar.chosen .option { font-weight: bold; }
svg .track { fill: #eee; } svg .fill { fill: #4a7bd0; } .selection svg .fill { fill: #3a9a5b; }
.answer li { margin: .2em 0; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _bar(question: str, option: str, probability: float, words: str, chosen: bool) -> str:
    width = round(max(0.0, min(1.0, probability)) * BAR_PIXELS)
    return (
        f'<div class="bar{" chosen" if chosen else ""}" data-question="{_e(question)}" '
        f'data-option="{_e(option)}" title="{_e(words or option)}">'
        f'<span class="option">{_e(option)}</span>'
        f'<svg width="{BAR_PIXELS}" height="14" viewBox="0 0 {BAR_PIXELS} 14" role="img" '
        f'aria-label="{probability:.3f}">'
        f'<rect class="track" width="{BAR_PIXELS}" height="14"/>'
        f'<rect class="fill" width="{width}" height="14"/></svg>'
        f'<span class="p">{probability:.3f}</span>'
        f'<span class="words">{_e(words)}</span></div>'
    )


def _distribution(
    record: RunRecord, question: str, values: Mapping[str, float], chosen: str | None
) -> str:
    bars = [
        _bar(question, option, probability, record.artifacts.get(option, ""), option == chosen)
        for option, probability in values.items()
    ]
    return f'<div class="dist {_e(question)}"><h3>{_e(question)}</h3>' + "".join(bars) + "</div>"


def _turn(record: RunRecord, turn: DecisionTurn) -> str:
    parts = [
        f'<section class="turn{" failed" if turn.failure else ""}" data-turn="{turn.turn}">',
        f"<h2>{_e(move_line(turn))}</h2>",
    ]
    if turn.next is not None:
        parts.append(_distribution(record, "next", turn.next, turn.tool))
    if turn.argument is not None:
        parts.append(_distribution(record, "argument", turn.argument, turn.artifact))
    if turn.selection:
        parts.append(_distribution(record, "selection", turn.selection, None))
    parts.append("</section>")
    return "".join(parts)


def render_html(record: RunRecord) -> str:
    """The whole page: a header, one section per turn with its bars, and the answer."""
    entry = record.entry
    answer_items = "".join(
        f"<li><code>{_e(item.ref)}</code> "
        f"{'' if item.probability is None else f'{item.probability:.3f} '}"
        f"{_e(record.artifacts.get(item.ref, ''))}</li>"
        for item in record.answer
    )
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>harness record: {_e(record.thinker)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_e(record.thinker)} <small>({_e(record.command)})</small></h1>",
        f'<p class="meta">entry <code>{_e(entry.get("id"))}</code> '
        f"({_e(entry.get('provider'))}, {_e(entry.get('wire_model_id'))}) &middot; "
        f"{counted(len(record.turns), 'turn')} &middot; "
        f"{counted(len(record.calls), 'decision')} &middot; "
        f"{record.wall_seconds:.2f} s wall, {record.model_seconds:.2f} s in the model</p>",
    ]
    if record.objective:
        body.append(f'<p class="meta">objective: {_e(record.objective)}</p>')
    body.append(
        f'<p class="meta">input: <code>{_e(record.input_alias)}</code> '
        f"<code>{_e(json.dumps(record.input_value, ensure_ascii=False))}</code></p>"
    )
    body += [_turn(record, turn) for turn in record.turns]
    if record.failure is not None:
        body.append(f"<h2>failed</h2><p>{_e(record.failure)}</p></body></html>")
    else:
        body.append(
            f'<h2>answer ({len(record.answer)})</h2><ul class="answer">{answer_items}</ul>'
            "</body></html>"
        )
    return "\n".join(body) + "\n"
