"""An eval against ``harness batch`` of the same inputs, and the metrics' time, in one run.

1,000 cases of :class:`harness.evals.data.domains.RefundFinder` (inboxes of two or three support
tickets drawn from the shipped data's templates with another seed) on the embedded model (the
shipped catalog, its calibration included), run twice in the same process: as a batch
(``harness.batch``, what ``harness batch`` runs) and as an eval (``harness.evals.evaluate``: the
same batch engine, then every figure with its bootstrap interval). Printed: each one's cases a
second, their ratio (eval over batch; target >= 0.9), and the metrics' time over the eval's
model time (target <= 0.05). A script, not a test::

    python benchmarks/evals.py [--cases 1000] [--concurrency 8] [--rounds 1]

Each round runs the batch then the eval; with several rounds the best of each is kept (the
machine is shared, so the fastest round is the least disturbed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.batch import BatchSpec, run_batch  # noqa: E402
from harness.evals import Case, Dataset, evaluate  # noqa: E402
from harness.evals.data.domains import Inbox, Ticket  # noqa: E402
from scripts.shipped_data import domain_items  # noqa: E402

TARGET = "harness.evals.data.domains:RefundFinder"


def dataset(count: int) -> Dataset[Inbox, Ticket]:
    """``count`` inboxes of two or three tickets, labelled by the templates."""
    items = domain_items("support", count * 3, seed=7)
    cases = []
    at = 0
    for index in range(count):
        size = 2 + index % 2
        chosen = items[at : at + size]
        at += size
        cases.append(
            Case(
                f"inbox-{index:04d}",
                Inbox("\n".join(str(item["text"]) for item in chosen)),
                tuple(Ticket(str(item["text"])) for item in chosen if item["noul"]),
            )
        )
    return Dataset(cases, input_type=Inbox, output_type=Ticket, name="benchmark inboxes")


def batch_seconds(cases: Dataset[Inbox, Ticket], folder: Path, concurrency: int) -> float:
    inputs = folder / "inputs.jsonl"
    inputs.write_text(
        "".join(json.dumps({"text": case.input.text}) + "\n" for case in cases), encoding="utf-8"
    )
    out = folder / "results.jsonl"
    began = time.perf_counter()
    with open(os.devnull, "w", encoding="utf-8") as quiet:
        run_batch(BatchSpec(TARGET, concurrency=concurrency), inputs, out, progress=quiet)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    cases = dataset(args.cases)
    with tempfile.TemporaryDirectory() as warm:  # load the model before anything is timed
        batch_seconds(cases.with_cases(cases.cases[:4]), Path(warm), args.concurrency)
    batch_best = eval_best = float("inf")
    metric_share = float("inf")
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory() as batch_dir, tempfile.TemporaryDirectory() as eval_dir:
            batch = batch_seconds(cases, Path(batch_dir), args.concurrency)
            began = time.perf_counter()
            with open(os.devnull, "w", encoding="utf-8") as quiet:
                report = evaluate(
                    TARGET,
                    cases,
                    out=eval_dir,
                    records=False,
                    concurrency=args.concurrency,
                    progress=quiet,
                )
            ran = time.perf_counter() - began
        metric = report.timings.get("metric_seconds", 0.0)
        model = report.timings.get("model_seconds", 0.0)
        print(
            f"round {round_ + 1}: batch {args.cases / batch:.1f} cases/s ({batch:.2f} s), eval "
            f"{args.cases / ran:.1f} cases/s ({ran:.2f} s); metrics {metric:.3f} s, model "
            f"{model:.2f} s"
        )
        batch_best, eval_best = min(batch_best, batch), min(eval_best, ran)
        if model > 0:
            metric_share = min(metric_share, metric / model)
    print(f"eval throughput / batch throughput: {batch_best / eval_best:.3f} (target >= 0.9)")
    print(f"metrics time / model time: {metric_share:.4f} (target <= 0.05)")
    print(f"recall {report.metric('recall')}, precision {report.metric('precision')}")


if __name__ == "__main__":
    main()
