"""The held-out figures of deciders fitted on each shipped labelled set (docs/shipped-data.md).

For each set and encoder (``tfidf``; ``minilm`` when its weights are installed), ``harness fit``'s
own functions fit on the training split and report on the held-out one beside the embedded model,
and a grouped cross-validation on the training split measures inputs unlike those fitted on
(where the set has groups). Prints one markdown table row per set, role and encoder:

    python -m scripts.fitted_figures            # every set (the run items run three thinkers)
    python -m scripts.fitted_figures --quick    # the packs only

The sets: the shipped decision packs (``decisions.jsonl``: support, recipes and logs, each a
choice, a yes/no and a score), the triage selections (grouped by case), the demo's statements
(fitted on the second folder, reported on the demo's own; grouped by folder), and the run items
of the three domain thinkers (their selections on the embedded model's runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs

from harness.evals import Estimate
from harness.evals.data import data_path
from harness.fit import Source, fit_decider, held_out, read_source

DEMO: Final = Path(__file__).resolve().parent.parent / "harness" / "demo"


@attrs.frozen
class Set:
    """A shipped labelled set: how to read it, its splits, how to group it."""

    name: str
    sources: tuple[str, ...]
    train: str = "dev"
    test: str = "test"
    group_by: str | None = None
    thinker: str | None = None


def _sets(quick: bool) -> list[Set]:
    found = [
        Set("packs (support, recipes, logs)", (str(data_path("decisions.jsonl")),)),
        Set("triage selections", (str(data_path("selections-triage.jsonl")),), group_by="case"),
        Set(
            "demo statements (second folder -> the demo's)",
            (str(DEMO / "training" / "selections.jsonl"), str(DEMO / "selections.jsonl")),
            train="train",
            group_by="case",
        ),
    ]
    if not quick:
        for domain, thinker in (
            ("support", "RefundFinder"),
            ("recipes", "VegetarianFinder"),
            ("logs", "PageFinder"),
        ):
            found.append(
                Set(
                    f"run items: {domain}",
                    (str(data_path(f"runs-{domain}.jsonl")),),
                    group_by="case",
                    thinker=f"harness.evals.data.domains:{thinker}",
                )
            )
    return found


def _shown(estimate: Estimate | None) -> str:
    if estimate is None or estimate.value is None:
        return "-"
    if estimate.low is None or estimate.high is None:
        return f"{estimate.value:.2f}"
    return f"{estimate.value:.2f} [{estimate.low:.2f}, {estimate.high:.2f}]"


def rows(chosen: Sequence[Set], encoders: Sequence[str]) -> list[str]:
    """The table's rows, one per set, role and encoder."""
    lines = [
        "| set | role | encoder | n (test) | AUC | accuracy | embedded AUC | embedded accuracy "
        "| grouped CV AUC (train) | ordinary CV AUC (train) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        for item in chosen:
            sources: list[Source] = [read_source(s, thinker=item.thinker) for s in item.sources]
            for encoder in encoders:
                outcome = fit_decider(
                    sources,
                    Path(scratch) / "model.json",
                    encoder=encoder,
                    train_split=item.train,
                    test_split=item.test,
                    group_by=item.group_by,
                )
                measured = held_out(outcome, base="embedded")
                report, base = measured.fitted, measured.base
                assert base is not None
                for role in sorted({d.role for d in report.decisions}):
                    n = sum(1 for d in report.decisions if d.role == role)
                    grouped = "-"
                    if outcome.grouped is not None:
                        grouped = _shown(outcome.grouped.report.metrics.get(f"{role}.auc"))
                    ordinary = _shown(outcome.cv[encoder].report.metrics.get(f"{role}.auc"))
                    lines.append(
                        f"| {item.name} | {role} | {encoder} | {n} "
                        f"| {_shown(report.metrics.get(f'{role}.auc'))} "
                        f"| {_shown(report.metrics.get(f'{role}.accuracy'))} "
                        f"| {_shown(base.metrics.get(f'{role}.auc'))} "
                        f"| {_shown(base.metrics.get(f'{role}.accuracy'))} "
                        f"| {grouped} | {ordinary} |"
                    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.fitted_figures", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the packs only (no thinker runs)")
    args = parser.parse_args(argv)
    encoders = ["tfidf"]
    if importlib.util.find_spec("all_minilm_l6_v2") is not None:
        encoders.append("minilm")
    for line in rows(_sets(args.quick), encoders):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
