"""``harness examples PACK``: fit a catalog entry's solved examples on a pack's dev split.

Picks ``--k`` examples per question role (``--method labeled``: balanced and seeded, no model
call; ``search``: the best of ``--candidates`` sets, scored by an eval on part of the dev split),
writes them to ``--out`` (the JSON file an ``[entries.examples]`` table names), and with
``--held-out test`` reports zero-shot and every set considered on that split, each figure with
its interval. ``--calibration FILE`` also fits the entry's calibration with the examples shown,
on the same dev split, and writes it where ``[entries.calibration] file = ...`` reads it.
"""

from __future__ import annotations

import argparse
from typing import Final

from harness.cli._common import MODEL_CHOICES, CliError, add_catalog_option, say

__all__ = ["DESCRIPTION", "add_arguments", "examples_command"]

DESCRIPTION: Final = (
    "harness examples PACK.jsonl [--model M] [--k K] [--method labeled|search] [--held-out "
    "test] [--out FILE]: pick K solved examples per question role from the pack's dev split "
    "for a local model's prompts, write them, and report each choice on the held-out split."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness examples``'s arguments."""
    parser.add_argument("pack", metavar="PACK", help="labelled decisions, tagged dev / test")
    parser.add_argument(
        "--model", metavar="M", help=f"{MODEL_CHOICES}; default: the catalog's decision pin"
    )
    add_catalog_option(parser)
    parser.add_argument("--split", default="dev", help="the split drawn from (default dev)")
    parser.add_argument("--k", type=int, default=2, metavar="K", help="examples per role")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="the seed (default 0)")
    parser.add_argument(
        "--method",
        choices=("labeled", "search"),
        default="labeled",
        help="labeled: balanced, no model call; search: best of --candidates sets",
    )
    parser.add_argument(
        "--candidates", type=int, default=4, metavar="N", help="sets a search scores (default 4)"
    )
    parser.add_argument(
        "--metric",
        choices=("discrimination", "accuracy"),
        default="discrimination",
        help="what a search maximises (default: AUC of yes/no roles, accuracy of the others)",
    )
    parser.add_argument(
        "--held-out", metavar="SPLIT", help="report every choice on this split (e.g. test)"
    )
    parser.add_argument(
        "--as-role",
        action="append",
        default=[],
        metavar="FROM=TO",
        help="store a role's examples under another of the same kind (noul=select)",
    )
    parser.add_argument(
        "--calibration",
        metavar="FILE",
        help="also fit the entry's calibration with the examples shown, and write it here",
    )
    parser.add_argument(
        "--out", default="examples.json", metavar="FILE", help="where to write the examples"
    )
    parser.add_argument(
        "--concurrency", type=int, default=1, metavar="N", help="decisions in flight (default 1)"
    )
    parser.add_argument(
        "--resamples", type=int, default=1000, metavar="N", help="bootstrap resamples"
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


def examples_command(args: argparse.Namespace) -> int:
    """Run ``harness examples``."""
    from harness.catalog import CatalogError, load_catalog, write_examples
    from harness.evals import (
        DatasetError,
        DecisionPack,
        EvalError,
        fit_examples,
        write_calibration,
    )

    if args.k < 1:
        raise CliError("--k must be at least 1")
    if args.candidates < 1:
        raise CliError("--candidates must be at least 1")
    if args.concurrency < 1:
        raise CliError("--concurrency must be at least 1")
    roles = _roles(args.as_role)
    try:
        catalog = load_catalog(args.catalog) if args.catalog else None
        pack = DecisionPack.load(args.pack)
        fitted = fit_examples(
            pack,
            model=args.model,
            catalog=catalog,
            split=args.split,
            k=args.k,
            seed=args.seed,
            method=args.method,
            candidates=args.candidates,
            metric=args.metric,
            held_out=args.held_out,
            calibrate=args.calibration is not None,
            as_roles=roles,
            concurrency=args.concurrency,
            resamples=args.resamples,
        )
    except (DatasetError, CatalogError, EvalError, ValueError) as error:
        raise CliError(str(error)) from None
    for line in fitted.lines():
        say(line)
    written = write_examples(fitted.examples, args.out)
    say(f'examples: {written} (in the entry: [entries.examples] file = "{written.name}")')
    if fitted.calibration is not None:
        path = write_calibration(fitted.calibration, args.calibration)
        say(f"calibration: {path}")
    return 0
