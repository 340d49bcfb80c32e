"""The triage example's selection on a local entry against the embedded model, held out.

Runs the guide's triage thinker (:class:`harness.demo.triage.Triage`) over the shipped labelled
notes (``runs-triage.jsonl``, :mod:`scripts.triage_notes`), each eval in a folder of its own
under ``--out`` (so a run cut short resumes, and ``harness eval compare`` reads any pair):

* ``embedded``: the embedded model as shipped (calibrated, its fitted threshold), on ``test``;
* ``dev``: the local entry zero-shot on ``dev`` (the runs the examples and the threshold are
  fitted on);
* ``zero-shot``: the local entry zero-shot on ``test``, and ``zero-shot-threshold``: the same
  answers re-selected at the threshold of best F1 fitted on ``dev`` (no model asked again);
* ``k-shot``: the local entry showing ``--k`` ``select`` examples drawn from the ``dev`` runs
  (balanced, seeded: :func:`harness.evals.fit_run_examples`), on ``test``; and
  ``k-shot-calibrated``: the same answers through the ``select`` map and the threshold fitted
  with the examples shown on the ``dev`` selections no example shows (``calibration-triage.toml``;
  the moves read no selection, so the runs are the ones the calibrated entry makes).

and prints, as JSON, every eval's figures with their 95 % intervals and, for each pair, the
McNemar test of :func:`harness.evals.compare` (exact answers, paired by case) and one on the
selections both evals asked (right at each eval's threshold, paired by case and candidate).
Nothing is fitted on ``test``. ``python -m scripts.triage_figures --catalog
gemma.toml --model gemma --out triage-figures``.
"""

from __future__ import annotations

import argparse

# the stdlib's json: figures printed with one-space indents, which orjson cannot
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from harness.catalog import Calibration, Catalog, load_catalog, write_examples
from harness.demo.triage import Note, Triage, TriageVerdict
from harness.evals._calibration import mapped_p_yes, write_calibration
from harness.evals._compare import compare
from harness.evals._dataset import Dataset
from harness.evals._examples import fit_run_examples
from harness.evals._report import EvalReport
from harness.evals._run import at_threshold, evaluate, rescored
from harness.evals._threshold import fit_threshold
from harness.evals.data import data_path
from harness.evals.metrics import mcnemar
from scripts.local_examples import _estimate

__all__ = [
    "calibrated",
    "main",
    "markdown",
    "parts_only",
    "selection_mcnemar",
    "triage_figures",
]

FIGURES = (
    "recall",
    "precision",
    "f1",
    "exact_match",
    "select.auc",
    "select.accuracy",
    "select.brier",
    "select.ece_mass",
)


PART_FIGURES = ("select.auc", "select.accuracy", "select.brier")
"""The selection figures also reported over the parts' verdicts alone (``... (parts)``)."""


def parts_only(report: EvalReport) -> EvalReport:
    """``report`` scored over the verdicts of the note's parts alone: the whole note's verdict
    (its note holds a ``;``: ``judge_note`` ran on the note before the split) left out, so a
    figure says how the model reads a part's verdict (its ``urgent`` field)."""
    cases = []
    for case in report.cases:
        whole = {
            c.ref
            for c in case.candidates
            if isinstance(c.value, dict) and ";" in str(c.value.get("note", ""))
        }
        cases.append(
            attrs.evolve(
                case,
                candidates=tuple(c for c in case.candidates if c.ref not in whole),
                decisions=tuple(
                    d for d in case.decisions if d.question.removeprefix("select_") not in whole
                ),
            )
        )
    return rescored(report, cases)


def calibrated(report: EvalReport, calibration: Calibration) -> EvalReport:
    """``report`` (answered without calibration) as the entry with ``calibration`` answers: each
    selection's probability through the ``select`` map, the answers re-selected at its
    ``selection_threshold`` (the moves read no selection, so they are the same runs)."""
    select_map = calibration.roles.get("select")
    threshold = calibration.selection_threshold
    assert threshold is not None
    cases = []
    for case in report.cases:
        candidates = tuple(
            attrs.evolve(c, probability=mapped_p_yes(select_map, c.probability))
            for c in case.candidates
        )
        decisions = tuple(
            attrs.evolve(
                d,
                probabilities=(
                    mapped_p_yes(select_map, d.probabilities[0]),
                    1.0 - mapped_p_yes(select_map, d.probabilities[0]),
                ),
            )
            if d.role == "select"
            else d
            for d in case.decisions
        )
        cases.append(attrs.evolve(case, candidates=candidates, decisions=decisions))
    return at_threshold(attrs.evolve(report, cases=tuple(cases)), threshold)


def selection_mcnemar(a: EvalReport, b: EvalReport) -> dict[str, object]:
    """McNemar on the selections both evals asked (a case's candidate by its key), each right
    when kept at its eval's threshold exactly when expected."""

    def right(report: EvalReport) -> dict[tuple[str, str], bool]:
        found = {}
        for case in report.cases:
            threshold = report.threshold if report.threshold is not None else 0.5
            for candidate in case.candidates:
                kept = candidate.probability >= threshold
                found[(case.name, candidate.key)] = kept == candidate.expected
        return found

    first, second = right(a), right(b)
    both = sorted(set(first) & set(second))
    only_a = sum(1 for k in both if first[k] and not second[k])
    only_b = sum(1 for k in both if second[k] and not first[k])
    return {
        "paired": len(both),
        "only_first_right": only_a,
        "only_second_right": only_b,
        "mcnemar_p": round(mcnemar(only_a, only_b), 4),
    }


def _pair(a: EvalReport, b: EvalReport) -> dict[str, object]:
    found = compare(a, b)
    return {
        "cases": {
            "only_first_right": found.only_a_right,
            "only_second_right": found.only_b_right,
            "mcnemar_p": round(found.mcnemar_p, 4),
        },
        "selections": selection_mcnemar(a, b),
    }


def _with_examples(catalog: Catalog, model: str, examples_file: Path) -> Catalog:
    from harness.catalog import examples_from_table
    from harness.runs import seat_for

    base = seat_for(model, catalog).catalog
    entry = base.pinned()
    table = json.loads(examples_file.read_text(encoding="utf-8"))
    shown = attrs.evolve(entry, examples=examples_from_table(table, f"entry {entry.id!r}"))
    others = [e for e in base.entries.values() if e.id != entry.id]
    return Catalog([*others, shown], {**base.pins, "decision": entry.id}, source=base.source)


def triage_figures(
    catalog: Catalog, model: str, out: Path, *, k: int = 2, seed: int = 0, resamples: int = 1000
) -> dict[str, object]:
    """Run (or resume) every eval under ``out`` and return the figures (see the module)."""
    notes = Dataset.load(data_path("runs-triage.jsonl"), Note, TriageVerdict)
    dev, test = notes.tagged("dev"), notes.tagged("test")
    out.mkdir(parents=True, exist_ok=True)

    def run(name: str, cases: Dataset[Note, TriageVerdict], **how: object) -> EvalReport:
        return evaluate(
            Triage,
            cases,
            out=out / name,
            concurrency=1,
            split="dev" if cases is dev else "test",
            resamples=resamples,
            **how,  # type: ignore[arg-type]  # model= and catalog= of evaluate
        )

    reports = {"embedded": run("embedded", test, model="embedded")}
    dev_report = run("dev", dev, model=model, catalog=catalog)
    reports["zero-shot"] = run("zero-shot", test, model=model, catalog=catalog)
    fitted = fit_threshold(dev_report, rule="f1")
    again = at_threshold(reports["zero-shot"], fitted.value)
    again.write_json(out / "zero-shot-threshold" / "report.json")
    reports["zero-shot-threshold"] = again
    examples = fit_run_examples(
        out / "dev", model=model, catalog=catalog, k=k, seed=seed, calibrate=True
    )
    examples_file = write_examples(examples.examples, out / "examples-triage.json")
    shown = _with_examples(catalog, model, examples_file)
    reports["k-shot"] = run("k-shot", test, model=model, catalog=shown)
    fitted_maps = examples.calibration
    if fitted_maps is not None and fitted_maps.selection_threshold is not None:
        write_calibration(fitted_maps, out / "calibration-triage.toml")
        again = calibrated(reports["k-shot"], fitted_maps)
        again.write_json(out / "k-shot-calibrated" / "report.json")
        reports["k-shot-calibrated"] = again
    names = list(reports)
    return {
        "threshold_fitted_on_dev": round(fitted.value, 6),
        "examples": examples.lines(),
        "figures": {
            name: {
                **{f: _estimate(r.metrics[f]) for f in FIGURES if f in r.metrics},
                **{
                    f"{f} (parts)": _estimate(parts.metrics[f])
                    for parts in (parts_only(r),)
                    for f in PART_FIGURES
                    if f in parts.metrics
                },
            }
            for name, r in reports.items()
        },
        "pairs": {
            f"{a} vs {b}": _pair(reports[a], reports[b])
            for i, a in enumerate(names)
            for b in names[i + 1 :]
        },
    }


def _shown(figure: dict[str, object]) -> str:
    if figure["value"] is None:
        return "undefined"
    return f"{figure['value']:.3f} [{figure['low']:.3f}, {figure['high']:.3f}] (n {figure['n']})"


def markdown(found: dict[str, object]) -> list[str]:
    """The figures as two Markdown tables: each figure per eval, and McNemar per pair."""
    figures = found["figures"]
    pairs = found["pairs"]
    assert isinstance(figures, dict)
    assert isinstance(pairs, dict)
    names = list(figures)
    lines = ["| figure | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for figure in (*FIGURES, *(f"{f} (parts)" for f in PART_FIGURES)):
        row = [_shown(figures[name][figure]) if figure in figures[name] else "-" for name in names]
        lines.append(f"| `{figure}` | " + " | ".join(row) + " |")
    lines += [
        "",
        "| pair | exact answers (cases): only first right vs only second, p | selections "
        "both asked: only first right vs only second, p |",
        "|---|---|---|",
    ]
    for pair, found_pair in pairs.items():
        cases, chosen = found_pair["cases"], found_pair["selections"]
        lines.append(
            f"| {pair} | {cases['only_first_right']} vs {cases['only_second_right']}, "
            f"p = {cases['mcnemar_p']:.3f} | {chosen['only_first_right']} vs "
            f"{chosen['only_second_right']} of {chosen['paired']}, p = {chosen['mcnemar_p']:.3f} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures as JSON, or with ``--markdown`` as tables (``--out`` keeps every
    eval's folder)."""
    parser = argparse.ArgumentParser(prog="python -m scripts.triage_figures")
    parser.add_argument("--catalog", required=True, help="the catalog holding the local entry")
    parser.add_argument("--model", required=True, help="the local entry's id")
    parser.add_argument("--out", default="triage-figures", help="the evals' folder")
    parser.add_argument("--k", type=int, default=2, help="select examples (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args(argv)
    found = triage_figures(
        load_catalog(args.catalog),
        args.model,
        Path(args.out),
        k=args.k,
        seed=args.seed,
        resamples=args.resamples,
    )
    if args.markdown:
        drawn = found["examples"]
        assert isinstance(drawn, list)
        head = [f"threshold fitted on dev: {found['threshold_fitted_on_dev']}", *drawn, ""]
        print("\n".join([*head, *markdown(found)]))
        return 0
    json.dump(found, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
