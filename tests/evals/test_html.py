"""The HTML report opens in headless Chromium with its reliability diagrams drawn."""

from __future__ import annotations

import asyncio
import struct
import zlib
from pathlib import Path
from typing import cast

from harness.evals import Dataset, evaluate, write_html
from harness.testing import FakeDecisionModel
from tests.evals.thinkers import KeepSentences, Note, Sentence, refund_policy
from tests.record.browser import browser_page

HERE = Path(__file__).parent

GEOMETRY = """
(() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  return {
    diagrams: [...document.querySelectorAll('svg.reliability')].map((svg) => ({
      role: svg.dataset.role,
      box: box(svg),
      bins: [...svg.querySelectorAll('rect.bin')].map((r) => ({
        count: parseInt(r.dataset.count), box: box(r)})),
      means: svg.querySelectorAll('circle.mean').length,
      diagonal: box(svg.querySelector('line.diagonal')),
    })),
    cases: [...document.querySelectorAll('table.cases tr[data-case]')].map((tr) => ({
      name: tr.dataset.case, wrong: tr.classList.contains('wrong'),
      link: tr.querySelector('a') ? tr.querySelector('a').getAttribute('href') : null})),
  };
})()
"""


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows (RGBA or RGB bytes) of an 8-bit, non-interlaced PNG."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    position, idat = 8, b""
    width = height = channels = 0
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8
            assert interlace == 0
            channels = {2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        method = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if method == 1:
                line[i] = (line[i] + left) & 0xFF
            elif method == 2:
                line[i] = (line[i] + up) & 0xFF
            elif method == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif method == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def count_near(rows: list[bytes], channels: int, colour: tuple[int, int, int], *, tol: int) -> int:
    found = 0
    for row in rows:
        for i in range(0, len(row), channels):
            if all(abs(row[i + k] - colour[k]) <= tol for k in range(3)):
                found += 1
    return found


def test_the_report_page_draws_its_diagrams_in_chromium(tmp_path: Path) -> None:
    dataset = Dataset.load(HERE / "cases.jsonl", Note, Sentence)
    report = evaluate(
        KeepSentences,
        dataset,
        model=FakeDecisionModel(refund_policy()),
        out=tmp_path / "eval",
        resamples=50,
    )
    page = write_html(report, tmp_path / "eval")

    async def look() -> object:
        async with browser_page() as browser:
            await browser.open(page, width=900, height=700)
            found = await browser.evaluate(GEOMETRY)
            await browser.screenshot(tmp_path / "report.png")
            return found

    found = cast(dict[str, list[dict[str, object]]], asyncio.run(look()))
    (diagram,) = found["diagrams"]
    assert diagram["role"] == "select"
    bins = cast(list[dict[str, object]], diagram["bins"])
    expected_bins = report.reliability["select.width"]
    assert [b["count"] for b in bins] == [b.count for b in expected_bins]
    assert sum(cast(int, b["count"]) for b in bins) == len(report.decisions)
    for shown, b in zip(bins, expected_bins, strict=True):
        height = cast(dict[str, float], shown["box"])["height"]
        assert abs(height - b.frequency * 180) <= 1.5  # drawn at its observed frequency
    assert diagram["means"] == len(expected_bins)
    assert cast(dict[str, float], diagram["diagonal"])["width"] > 100

    cases = found["cases"]
    assert [c["name"] for c in cases] == [c.name for c in report.cases]
    assert {c["name"] for c in cases if c["wrong"]} == {"hidden-ask"}
    for shown_case in cases:
        link = cast(str, shown_case["link"])
        assert link.startswith("records/line-")
        assert (tmp_path / "eval" / link).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")

    width, height, rows = png_pixels((tmp_path / "report.png").read_bytes())
    assert width == 900
    channels = len(rows[0]) // width
    bars = count_near(rows, channels, (0x4A, 0x7B, 0xD0), tol=70)  # the bins' blue, blended
    dots = count_near(rows, channels, (0xD0, 0x4A, 0x4A), tol=40)
    assert bars > 500  # the bins are drawn, not only declared
    assert dots > 10
