"""``harness examples SOURCE``: fit a catalog entry's solved examples on labelled data's dev split.

``SOURCE`` is labelled data of one of three kinds:

* a decision pack (``PACK.jsonl``, decisions tagged ``dev`` / ``test``): examples per question
  role;
* the folder of a finished ``harness eval`` of a thinker (its ``--out``): the ``select``
  examples its runs read (each selection's state and question, labelled by the case's expected
  answer), drawn from the cases tagged ``--split``;
* with ``--thinker MODULE:CLASS``, a dataset (``CASES.jsonl``): its ``--split`` cases are run
  first, as ``harness eval`` runs them, into ``--runs DIR``, and drawn from as above.

Picks ``--k`` examples per role (``--method labeled``: balanced and seeded, no model call;
``search``: the best of ``--candidates`` sets, scored by an eval on part of the dev split),
writes them to ``--out`` (the JSON file an ``[entries.examples]`` table names), and with
``--held-out test`` reports zero-shot and every set considered on that split, each figure with
its interval. ``--calibration FILE`` also fits the entry's calibration with the examples shown,
on the same dev split, and writes it where ``[entries.calibration] file = ...`` reads it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from harness.cli._common import (
    CliError,
    add_choice_option,
    add_measuring_options,
    check_at_least,
    loaded_catalog,
    say,
    usage_errors,
)

if TYPE_CHECKING:
    from harness.catalog import Catalog
    from harness.evals import ExamplesFit

__all__ = ["DESCRIPTION", "add_arguments", "examples_command"]

DESCRIPTION: Final = (
    "harness examples PACK.jsonl | EVAL_DIR | CASES.jsonl --thinker MODULE:CLASS [--model M] "
    "[--k K] [--method labeled|search] [--held-out test] [--out FILE]: pick K solved examples "
    "per question role from the dev split of a decision pack or of a thinker's labelled runs "
    "for a local model's prompts, write them, and report each choice on the held-out split."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness examples``'s arguments."""
    parser.add_argument(
        "source",
        metavar="SOURCE",
        help="labelled decisions (a pack, tagged dev / test), the folder of a `harness eval` "
        "of a thinker, or with --thinker its labelled cases",
    )
    add_measuring_options(parser, "decisions", 1)
    parser.add_argument(
        "--thinker",
        metavar="MODULE:CLASS",
        help="SOURCE is this thinker's labelled cases: run the --split ones, draw from the runs",
    )
    parser.add_argument(
        "--runs",
        default="examples-runs",
        metavar="DIR",
        help="with --thinker: the folder the runs go to (default examples-runs; resumable)",
    )
    parser.add_argument("--split", default="dev", help="the split drawn from (default dev)")
    parser.add_argument("--k", type=int, default=2, metavar="K", help="examples per role")
    add_choice_option(
        parser,
        "--method",
        ("labeled", "search"),
        "labeled: balanced, no model call; search: best of --candidates sets",
    )
    parser.add_argument(
        "--candidates", type=int, default=4, metavar="N", help="sets a search scores (default 4)"
    )
    add_choice_option(
        parser,
        "--metric",
        ("discrimination", "accuracy"),
        "what a search maximises (default: AUC of yes/no roles, accuracy of the others)",
    )
    parser.add_argument(
        "--held-out", metavar="SPLIT", help="report every choice on this split (e.g. test)"
    )
    parser.add_argument(
        "--as-role",
        action="append",
        default=[],
        metavar="FROM=TO",
        help="a pack: store a role's examples under another of the same kind (noul=select)",
    )
    parser.add_argument(
        "--calibration",
        metavar="FILE",
        help="also fit the entry's calibration with the examples shown, and write it here",
    )
    parser.add_argument(
        "--out", default="examples.json", metavar="FILE", help="where to write the examples"
    )
    parser.set_defaults(command=examples_command)


def _roles(given: list[str]) -> dict[str, str]:
    roles: dict[str, str] = {}
    for item in given:
        source, _, target = item.partition("=")
        if not source or not target:
            raise CliError(f"--as-role takes FROM=TO (e.g. noul=select), not {item!r}")
        roles[source.strip()] = target.strip()
    return roles


def _fit_options(args: argparse.Namespace, catalog: Catalog | None) -> dict[str, Any]:
    """The keywords every source's fitting takes (Any: each option's own type)."""
    return {
        "model": args.model,
        "catalog": catalog,
        "split": args.split,
        "k": args.k,
        "seed": args.seed,
        "method": args.method,
        "candidates": args.candidates,
        "metric": args.metric,
        "held_out": args.held_out,
        "calibrate": args.calibration is not None,
        "concurrency": args.concurrency,
        "resamples": args.resamples,
    }


def _run_split(args: argparse.Namespace, catalog: Catalog | None) -> Path:
    """Run the thinker on the ``--split`` cases of its dataset into ``--runs``; the folder."""
    from harness.evals import evaluate, selections_dataset

    dataset = selections_dataset(args.thinker, args.source)
    splits = [args.split] if args.held_out is None else [args.split, args.held_out]
    cases = [case for case in dataset if any(split in case.tags for split in splits)]
    if not any(args.split in case.tags for case in cases):
        raise CliError(
            f"{args.source}: no case is tagged {args.split!r}: tag the labelled cases with "
            "their split (dev, test) and draw from the dev one"
        )
    runs = Path(args.runs)
    evaluate(
        args.thinker,
        dataset.with_cases(cases),
        model=args.model,
        catalog=catalog,
        out=runs,
        concurrency=args.concurrency,
        resamples=args.resamples,
    )
    say(f"runs: {runs} ({len(cases)} cases of {dataset.name})", error=True)
    return runs


def _fitted(args: argparse.Namespace) -> ExamplesFit:
    from harness.catalog import CatalogError
    from harness.evals import (
        DatasetError,
        DecisionPack,
        EvalError,
        fit_examples,
        fit_run_examples,
    )

    roles = _roles(args.as_role)
    catalog = loaded_catalog(args)
    with usage_errors(DatasetError, CatalogError, EvalError, ValueError):
        if args.thinker is not None or Path(args.source).is_dir():
            if roles:
                raise CliError("--as-role renames a pack's roles: a thinker's runs draw select")
            runs = _run_split(args, catalog) if args.thinker is not None else Path(args.source)
            return fit_run_examples(runs, **_fit_options(args, catalog))
        pack = DecisionPack.load(args.source)
        return fit_examples(pack, as_roles=roles, **_fit_options(args, catalog))


def examples_command(args: argparse.Namespace) -> int:
    """Run ``harness examples``."""
    from harness.catalog import write_examples
    from harness.evals import write_calibration

    check_at_least(args, k=1, candidates=1, concurrency=1)
    fitted = _fitted(args)
    for line in fitted.lines():
        say(line)
    written = write_examples(fitted.examples, args.out)
    say(f'examples: {written} (in the entry: [entries.examples] file = "{written.name}")')
    if fitted.calibration is not None:
        path = write_calibration(fitted.calibration, args.calibration)
        say(f"calibration: {path}")
    return 0
