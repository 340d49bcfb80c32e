"""An eval's report for people and for CI: a terminal table, JUnit XML, one HTML page.

The HTML page draws each role's reliability diagram as inline SVG (equal-width bins: the mean
probability against the observed frequency, the diagonal a perfectly calibrated model) and
lists every case, linking the record page of its run.
"""

from __future__ import annotations

import html
import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from harness.evals._compare import Comparison
from harness.evals._gates import GateResult
from harness.evals._position import is_position_figure, position_lines, position_warnings
from harness.evals._report import EvalReport
from harness.evals.metrics import Bin, Estimate, reason_of

__all__ = [
    "render_comparison",
    "render_report_html",
    "render_report_text",
    "write_html",
    "write_junit",
]


def estimate_text(estimate: Estimate | None) -> str:
    """A figure as a cell: its value and interval (``*`` when the value lies outside it, the
    footnote saying why), or why it has none."""
    if estimate is None:
        return "-"
    if estimate.value is None:
        return f"undefined: {reason_of(estimate.undefined or 'no value')}"
    if estimate.low is None or estimate.high is None:
        return f"{estimate.value:.3f} [no interval: {estimate.undefined}]"
    mark = "*" if estimate.note else ""
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]{mark}"


def estimate_notes(report: EvalReport) -> list[str]:
    """A footnote per figure shown whose value lies outside its interval, saying why."""
    found = []
    for name, estimate in report.metrics.items():
        if estimate.note:
            found.append(f"* {name}: {estimate.note}")
        for baseline, shown in (("uniform", "uniform"), ("answer_key", "answer key")):
            other = report.baselines.get(baseline, {}).get(name)
            if other is not None and other.note:
                found.append(f"* {name} ({shown}): {other.note}")
    return found


N_RUN_LEVEL: Final = (
    "n: recall counts the expected items, precision the answered ones, f1 the items expected "
    "or answered (TP + FP + FN), exact_match the cases; a role's figures count its decisions"
)
N_ROLES: Final = "n: a role's figures count its decisions"


def threshold_text(report: EvalReport) -> str:
    """The threshold the answers were taken at, with where it came from."""
    if report.threshold is None:
        return "no selection threshold (yes/no answers taken at 0.5)"
    source = f" ({report.threshold_source})" if report.threshold_source else ""
    return f"threshold {report.threshold:g}{source}"


def render_report_text(report: EvalReport) -> str:
    """A table of every figure: the model's with its interval and n, then the baselines'."""
    header = (
        f"eval of {report.subject} on {report.model}: {len(report.cases)} cases of "
        f"{report.dataset} (split {report.split}), {threshold_text(report)}"
    )
    rows = [("figure", "model [95% CI]", "n", "uniform", "answer key")]
    for name in report.metrics:
        if is_position_figure(name):
            continue  # their own lines, below
        estimate = report.metrics[name]
        rows.append(
            (
                name,
                estimate_text(estimate),
                str(estimate.n),
                estimate_text(report.baselines.get("uniform", {}).get(name)),
                estimate_text(report.baselines.get("answer_key", {}).get(name)),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [header]
    failed = report.failed_line()
    if failed is not None:
        lines.append(failed)
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    lines.append(
        "intervals: 95 % bootstrap, resampling cases (the decisions of one run are correlated)"
    )
    lines.append(N_RUN_LEVEL if "f1" in report.metrics else N_ROLES)
    lines.extend(estimate_notes(report))
    lines.extend(position_lines(report.metrics))
    lines.extend(position_warnings(report.metrics))
    return "\n".join(lines) + "\n"


def render_comparison(comparison: Comparison, *, limit: int = 20) -> str:
    """What changed from A to B: answers per case, flips, shifts, McNemar, near-threshold."""
    a, b = comparison.a, comparison.b
    lines = [
        f"compare A ({a.subject} on {a.model}) with B ({b.subject} on {b.model}): "
        f"{len(a.cases)} / {len(b.cases)} cases"
    ]
    marked: list[str] = []
    for name in sorted(set(a.metrics) & set(b.metrics)):
        lines.append(
            f"  {name}: {estimate_text(a.metrics[name])} -> {estimate_text(b.metrics[name])}"
        )
        for side, estimate in (("A", a.metrics[name]), ("B", b.metrics[name])):
            if estimate.note:
                marked.append(f"  * {name} ({side}): {estimate.note}")
    lines.extend(marked)
    lines.append(f"answers changed in {len(comparison.changes)} case(s)")
    for change in comparison.changes[:limit]:
        lines.append(
            f"  {change.case}: +{len(change.added)} {list(change.added)} "
            f"-{len(change.removed)} {list(change.removed)}"
        )
    flips = comparison.flips
    lines.append(
        f"{len(flips)} decision(s) flipped (a candidate kept in one eval and not in the other, "
        "or another option chosen)"
    )
    for shift in flips[:limit]:
        near = " (near the threshold)" if shift.near else ""
        lines.append(f"  {shift.line()}{near}")
    largest = comparison.largest
    if largest is None:
        lines.append("largest probability shift: none (no decision in both evals moved)")
    else:
        lines.append(
            f"largest probability shift: {largest.shift:+.3f} ({largest.case} / {largest.decision})"
        )
    lines.append(
        f"McNemar (exact, correctness per case): only A right {comparison.only_a_right}, only "
        f"B right {comparison.only_b_right}, p = {comparison.mcnemar_p:.4f}"
    )
    if comparison.near:
        lines.append(f"near the threshold: {', '.join(comparison.near)}")
    if comparison.missing:
        lines.append(f"in one eval only: {', '.join(comparison.missing)}")
    for side, report in (("A", a), ("B", b)):  # a difference may be one of position alone
        lines.extend(f"{side}: {warning}" for warning in position_warnings(report.metrics))
    return "\n".join(lines) + "\n"


# -- JUnit ----------------------------------------------------------------------------------


def write_junit(
    path: str | os.PathLike[str], report: EvalReport, gates: Sequence[GateResult] = ()
) -> Path:
    """A JUnit XML file: a test case per case (failed when its answer is not exactly the
    expected one, or its run failed) and one per gate (failed naming the gate)."""
    suite = ET.Element("testsuite", name=f"harness eval {report.subject}")
    failures = 0
    for case in report.cases:
        element = ET.SubElement(suite, "testcase", classname="eval.case", name=case.name)
        if case.status != "completed":
            failures += 1
            failure = ET.SubElement(element, "failure", message=f"run {case.status}")
            failure.text = case.error or case.status
        elif case.candidates or case.expected:
            tp, fp, fn = case.counts()
            if fp or fn:
                failures += 1
                failure = ET.SubElement(
                    element,
                    "failure",
                    message=f"answer differs: {tp} right, {fp} extra, {fn} missing",
                )
                failure.text = f"expected {list(case.expected)}\nanswered {list(case.answered)}"
        else:
            wrong = [d.question for d in case.decisions if not d.correct]
            if wrong:
                failures += 1
                ET.SubElement(element, "failure", message=f"wrong: {', '.join(wrong)}")
    for gate in gates:
        element = ET.SubElement(suite, "testcase", classname="eval.gate", name=gate.gate)
        if not gate.passed:
            failures += 1
            failure = ET.SubElement(element, "failure", message=gate.message)
            failure.text = f"{gate.message}\n{gate.detail}" if gate.detail else gate.message
    suite.set("tests", str(len(report.cases) + len(gates)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    written = Path(path)
    written.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(written, encoding="utf-8", xml_declaration=True)
    return written


# -- HTML -----------------------------------------------------------------------------------

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; margin: 12px 0; }
td, th { border-bottom: 1px solid #ddd; padding: 3px 10px; text-align: left; }
.diagrams { display: flex; flex-wrap: wrap; gap: 24px; }
figure { margin: 0; } figcaption { font-weight: 600; }
tr.wrong td { background: #fff3f0; }
"""

SIZE = 240
PAD = 30


def _diagram(role: str, bins: Sequence[Bin], estimate: Estimate | None) -> str:
    """One reliability diagram as inline SVG: a bar per bin at its frequency, a dot at its mean
    probability, and the diagonal."""
    inner = SIZE - 2 * PAD

    def x(p: float) -> float:
        return PAD + p * inner

    def y(p: float) -> float:
        return SIZE - PAD - p * inner

    parts = [
        f'<svg class="reliability" data-role="{html.escape(role)}" width="{SIZE}" '
        f'height="{SIZE}" viewBox="0 0 {SIZE} {SIZE}" xmlns="http://www.w3.org/2000/svg">',
        f'<rect x="{PAD}" y="{PAD}" width="{inner}" height="{inner}" fill="#fafafa" '
        'stroke="#999"/>',
        f'<line class="diagonal" x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" '
        'stroke="#888" stroke-dasharray="4 3"/>',
    ]
    for b in bins:
        left, right = x(b.low), x(b.high)
        top = y(b.frequency)
        parts.append(
            f'<rect class="bin" data-count="{b.count}" x="{left + 1:.1f}" y="{top:.1f}" '
            f'width="{max(right - left - 2, 1):.1f}" height="{y(0) - top:.1f}" '
            'fill="#4a7bd0" fill-opacity="0.75"/>'
        )
        parts.append(
            f'<circle class="mean" cx="{x(b.mean_probability):.1f}" cy="{y(b.frequency):.1f}" '
            'r="3" fill="#d04a4a"/>'
        )
    parts.append(
        f'<text x="{SIZE / 2}" y="{SIZE - 6}" text-anchor="middle" font-size="11">predicted '
        "probability</text>"
    )
    parts.append(
        f'<text x="10" y="{SIZE / 2}" font-size="11" transform="rotate(-90 10 {SIZE / 2})" '
        'text-anchor="middle">observed frequency</text>'
    )
    parts.append("</svg>")
    caption = f"{html.escape(role)}: ECE {html.escape(estimate_text(estimate))}"
    return f"<figure>{''.join(parts)}<figcaption>{caption}</figcaption></figure>"


def render_report_html(report: EvalReport, *, record_pages: dict[str, str] | None = None) -> str:
    """The report as one self-contained page; ``record_pages`` maps a case to the (relative)
    address of its run's record page."""
    pages = record_pages or {}
    title = f"eval of {report.subject} on {report.model}"
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">{len(report.cases)} cases of {html.escape(report.dataset)} (split '
        f"{html.escape(report.split)}), {html.escape(threshold_text(report))}; intervals: 95 % "
        "bootstrap resampling cases.</p>",
        '<table class="figures"><tr><th>figure</th><th>model</th><th>n</th><th>uniform</th>'
        "<th>answer key</th></tr>",
    ]
    uniform = report.baselines.get("uniform", {})
    key_baseline = report.baselines.get("answer_key", {})
    for name, estimate in report.metrics.items():
        body.append(
            f"<tr><td>{html.escape(name)}</td><td>{html.escape(estimate_text(estimate))}</td>"
            f"<td>{estimate.n}</td>"
            f"<td>{html.escape(estimate_text(uniform.get(name)))}</td>"
            f"<td>{html.escape(estimate_text(key_baseline.get(name)))}</td>"
            "</tr>"
        )
    body.append("</table>")
    failed = report.failed_line()
    explained = [
        *([failed] if failed is not None else []),
        N_RUN_LEVEL if "f1" in report.metrics else N_ROLES,
        *estimate_notes(report),
        *position_warnings(report.metrics),
    ]
    body.extend(f'<p class="note">{html.escape(line)}</p>' for line in explained)
    body.append('<h2>Reliability</h2><div class="diagrams">')
    for key, bins in report.reliability.items():
        if not key.endswith(".width"):
            continue
        role = key.removesuffix(".width")
        body.append(_diagram(role, bins, report.metrics.get(f"{role}.ece_width")))
    body.append("</div><h2>Cases</h2>")
    body.append(
        '<table class="cases"><tr><th>case</th><th>status</th><th>expected</th>'
        "<th>answered</th><th>record</th></tr>"
    )
    for case in report.cases:
        right = case.status == "completed" and (
            case.exact()
            if (case.candidates or case.expected)
            else all(d.correct for d in case.decisions)
        )
        link = pages.get(case.name)
        shown_link = f'<a href="{html.escape(link)}">record</a>' if link is not None else "-"
        body.append(
            f'<tr class="{"right" if right else "wrong"}" data-case="{html.escape(case.name)}">'
            f"<td>{html.escape(case.name)}</td><td>{html.escape(case.status)}</td>"
            f"<td>{html.escape(', '.join(case.expected))}</td>"
            f"<td>{html.escape(', '.join(case.answered))}</td><td>{shown_link}</td></tr>"
        )
    body.append("</table></body></html>")
    return "\n".join(body) + "\n"


def write_html(report: EvalReport, folder: str | os.PathLike[str]) -> Path:
    """Write ``report.html`` into ``folder`` (an eval's ``--out``), with a record page beside
    each run's record (``records/line-N.html``) linked from its case; the page's path."""
    from harness.record import RecordError, load_record
    from harness.record import render_html as render_record

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    pages: dict[str, str] = {}
    for case in report.cases:
        if case.record is None:
            continue
        source = out / case.record
        try:
            record = load_record(source)
        except RecordError:
            continue
        page = source.with_suffix(".html")
        page.write_text(render_record(record), encoding="utf-8")
        pages[case.name] = os.path.relpath(page, out)
    written = out / "report.html"
    written.write_text(render_report_html(report, record_pages=pages), encoding="utf-8")
    return written
