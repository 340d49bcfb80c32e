"""``harness eval MODULE:CLASS DATASET`` and ``harness eval compare A B``: evals and CI gates.

``harness eval`` runs the thinker on every case of the dataset (resumable in ``--out``), prints
the table of figures, writes ``report.json``, ``report.html`` (and ``--junit FILE``), and exits
1 when a gate fails. ``harness eval compare A B`` compares two reports (files or ``--out``
folders): changed answers, flips at the threshold, McNemar, cases near the threshold; its gates
apply to B.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Final

from harness.cli._common import (
    EXIT_FAILED,
    CliError,
    add_allow_extra_option,
    add_model_options,
    add_scale_options,
    check_concurrency,
    say,
)

if TYPE_CHECKING:
    from pathlib import Path

    from harness.evals import EvalReport, PositionBias

__all__ = ["DESCRIPTION", "add_arguments", "eval_command"]

_GATE_HELP = {
    "min_recall": "fail (exit 1) when recall is below X",
    "min_precision": "fail when precision is below X",
    "min_f1": "fail when F1 is below X",
    "min_exact_match": "fail when the share of cases answered exactly is below X",
    "min_accuracy": "fail when a role's accuracy is below X",
    "min_auc": "fail when a role's AUC is below X",
    "max_ece": "fail when a role's ECE (equal-width bins) is above X",
    "max_brier": "fail when a role's Brier score is above X",
    "max_log_loss": "fail when a role's log loss is above X",
}


DESCRIPTION: Final = (
    "harness eval MODULE:CLASS DATASET.jsonl [--model M] [--out DIR] [gates]: run the "
    "thinker on each case and report recall, precision, F1, calibration and more, each "
    "with a 95% bootstrap interval. harness eval compare A B [gates]: what changed "
    "between two evals (reports or --out folders). harness eval pack PACK.jsonl: score "
    "single labelled requests. A failed gate exits 1."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness eval``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    parser.add_argument(
        "first", metavar="MODULE:CLASS|compare|pack", help="the thinker, compare or pack"
    )
    parser.add_argument(
        "second", metavar="DATASET|A|PACK", help="the labelled cases, report A or a pack"
    )
    parser.add_argument("third", metavar="B", nargs="?", help="report B (compare only)")
    add_model_options(parser)
    parser.add_argument("--out", metavar="DIR", help="the eval's folder (default: eval-out)")
    parser.add_argument(
        "--split",
        metavar="TAG",
        help="evaluate only the cases (or a pack's decisions) tagged TAG, e.g. test: the "
        "held-out split (default: every case)",
    )
    parser.add_argument(
        "--key",
        metavar="FIELD[,FIELD]",
        help="compare answered and expected items by these fields (default: every field)",
    )
    add_scale_options(parser, "cases")
    add_allow_extra_option(parser, "a case, its input or an expected item")
    parser.add_argument("--junit", metavar="FILE", help="write a JUnit XML file (cases, gates)")
    parser.add_argument("--json", action="store_true", help="print the report's JSON instead")
    parser.add_argument(
        "--resamples", type=int, default=1000, metavar="N", help="bootstrap resamples"
    )
    for gate, text in _GATE_HELP.items():
        parser.add_argument(f"--{gate.replace('_', '-')}", type=float, metavar="X", help=text)
    parser.add_argument(
        "--position-bias",
        type=int,
        metavar="K",
        help="pack: re-ask each choice with its options in K cyclic orders and report how much "
        "probability follows position rather than content",
    )
    parser.add_argument(
        "--max-failed",
        type=int,
        default=0,
        metavar="N",
        help="fail (exit 1) when more than N cases did not complete (default 0: a failed run "
        "fails the eval); an eval in which no case completed fails whatever N",
    )
    parser.add_argument(
        "--orderings",
        type=int,
        metavar="K",
        help="ask each choice in K cyclic orders of its options and average them (an entry that "
        "reads logits: llama, openai-chat, openai-completions): the correction of a model whose "
        "choices follow position",
    )
    parser.add_argument(
        "--max-flips", type=int, metavar="N", help="compare: fail when more decisions flipped"
    )
    parser.set_defaults(command=eval_command)


def _gates(args: argparse.Namespace) -> dict[str, float | None]:
    return {gate: getattr(args, gate) for gate in _GATE_HELP}


def _key(fields: str | None) -> Any:  # Any: a key function of the thinker's item type
    if not fields:
        return None
    names = [f.strip() for f in fields.split(",") if f.strip()]

    def key(item: object) -> tuple[object, ...]:
        return tuple(getattr(item, name) for name in names)

    return key


def eval_command(args: argparse.Namespace) -> int:
    """Run ``harness eval`` or ``harness eval compare``."""
    if args.max_failed < 0:
        raise CliError("--max-failed must be at least 0")
    if args.position_bias is not None and args.position_bias < 2:
        raise CliError("--position-bias K needs K >= 2 orderings (K = 1 is the order as asked)")
    if args.orderings is not None and args.orderings < 1:
        raise CliError("--orderings K needs K >= 1 (1: each choice as listed)")
    if args.first == "compare":
        if args.position_bias is not None or args.orderings is not None:
            raise CliError(
                "--position-bias and --orderings ask the model: use them with harness eval or "
                "harness eval pack"
            )
        return _compare(args)
    if args.first == "pack":
        check_concurrency(args)
        return _pack(args)
    if args.third is not None:
        raise CliError(
            f"unexpected argument {args.third!r}: harness eval MODULE:CLASS DATASET, or "
            "harness eval compare A B"
        )
    if args.max_flips is not None:
        raise CliError("--max-flips bounds a comparison: use it with harness eval compare A B")
    check_concurrency(args)
    if args.position_bias is not None:
        raise CliError(
            "--position-bias re-asks labelled single requests: use it with harness eval pack "
            "PACK.jsonl --position-bias K"
        )
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.catalog import CatalogError, load_catalog
    from harness.evals import (
        Dataset,
        DatasetError,
        EvalError,
        check_gates,
        evaluate,
        failed_gates,
        import_thinker,
        render_report_text,
        write_html,
        write_junit,
    )
    from harness.tools import list_iterand, runtime_class, tool_types

    try:
        thinker = import_thinker(args.first)
        input_type, output_type = tool_types(thinker)
        item_type = list_iterand(output_type)
    except EvalError as error:
        raise CliError(str(error)) from None
    except (TypeError, ValueError) as error:
        raise CliError(f"{args.first}: cannot read its types: {error}") from None
    if item_type is None:
        raise CliError(f"{args.first} does not answer a list of items: an eval needs a thinker")
    try:
        catalog = load_catalog(args.catalog) if args.catalog and not args.ray else None
        dataset: Dataset[Any, Any] = Dataset.load(
            args.second,
            runtime_class(input_type),
            item_type,
            key=_key(args.key),
            allow_extra=args.allow_extra,
        )
    except (DatasetError, CatalogError) as error:
        # the library names its keyword as the opt-out; a command names its flag
        shown = str(error).replace("(or pass allow_extra=True)", "(or pass --allow-extra)")
        raise CliError(shown) from None
    if args.split is not None:
        tags = sorted({tag for case in dataset.cases for tag in case.tags})
        dataset = dataset.tagged(args.split)
        _refuse_empty_split(args, len(dataset.cases), tags, "case")
    out = Path(args.out or "eval-out")
    try:
        report = evaluate(
            args.first,
            dataset,
            model=args.model,
            catalog=catalog,
            out=out,
            concurrency=args.concurrency,
            contexts=args.contexts,
            ray=args.ray,
            catalog_file=args.catalog if args.ray else None,
            resamples=args.resamples,
            split=args.split or "all",
            orderings=args.orderings,
        )
    except (EvalError, CatalogError) as error:
        raise CliError(str(error)) from None
    results = check_gates(report, _gates(args), max_failed=args.max_failed)
    write_html(report, out)
    if args.junit:
        write_junit(args.junit, report, results)
    if args.json:
        print(report.dumps(), end="")
        _say_failed(report)
    else:
        print(render_report_text(report), end="")
        for result in results:
            say(result.message)
        say(f"report: {out / 'report.json'}, page: {out / 'report.html'}", error=True)
    return EXIT_FAILED if failed_gates(results) else 0


def _pack(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.catalog import CatalogError, load_catalog
    from harness.evals import (
        DatasetError,
        DecisionPack,
        EvalError,
        check_gates,
        evaluate_pack,
        failed_gates,
        position_bias,
        render_report_text,
        write_html,
        write_junit,
    )

    if args.third is not None:
        raise CliError(f"unexpected argument {args.third!r}: harness eval pack PACK.jsonl")
    try:
        catalog = load_catalog(args.catalog) if args.catalog else None
        pack = DecisionPack.load(args.second)
        if args.split is not None:
            tags = sorted({tag for decision in pack for tag in decision.tags})
            pack = DecisionPack(
                [decision for decision in pack if args.split in decision.tags],
                name=f"{pack.name}[{args.split}]",
            )
            _refuse_empty_split(args, len(pack), tags, "decision")
        report = evaluate_pack(
            pack,
            model=args.model,
            catalog=catalog,
            concurrency=args.concurrency,
            contexts=args.contexts,
            resamples=args.resamples,
            split=args.split or "all",
            orderings=args.orderings,
        )
        bias: PositionBias | None = None
        if args.position_bias is not None:
            bias = position_bias(
                [decision.request for decision in pack],
                model=args.model,
                catalog=catalog,
                orderings=args.position_bias,
                resamples=args.resamples,
            )
    except (DatasetError, CatalogError, EvalError) as error:
        raise CliError(str(error)) from None
    out = Path(args.out or "eval-out")
    report.write_json(out / "report.json")
    if bias is not None:
        _add_bias(out / "report.json", bias)
    write_html(report, out)
    results = check_gates(report, _gates(args), max_failed=args.max_failed)
    if args.junit:
        write_junit(args.junit, report, results)
    if args.json:
        print(_with_bias(report.to_json(), bias), end="")
        _say_failed(report)
    else:
        print(render_report_text(report), end="")
        if bias is not None:
            print("\n".join(bias.lines()))
        for result in results:
            say(result.message)
    return EXIT_FAILED if failed_gates(results) else 0


def _refuse_empty_split(args: argparse.Namespace, found: int, tags: list[str], what: str) -> None:
    """Refuse ``--split TAG`` when no ``what`` carries the tag, naming the tags there are."""
    from harness.catalog._internal import did_you_mean

    if found == 0:
        there = ", ".join(tags) or "none"
        raise CliError(
            f"--split {args.split}: no {what} of {args.second} is tagged {args.split!r} (its "
            f"tags: {there}){did_you_mean(args.split, tags)}"
        )


def _say_failed(report: EvalReport) -> None:
    """The cases that did not complete, and the first one's error, on stderr (the table says
    it too; ``--json`` leaves stdout to the report)."""
    line = report.failed_line()
    if line is not None:
        say(f"harness eval: {line}", error=True)


def _with_bias(data: dict[str, object], bias: PositionBias | None) -> str:
    """The report's JSON text (stable bytes), with a ``position_bias`` field when measured."""
    from harness.evals._internal import report_text

    if bias is not None:
        data = {**data, "position_bias": bias.to_json()}
    return report_text(data)


def _add_bias(path: Path, bias: PositionBias) -> None:
    """Add the position bias to the report file written at ``path``."""
    from harness.decision._internal import load_json

    data = load_json(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)  # a report this command just wrote
    path.write_text(_with_bias(data, bias), encoding="utf-8")


def _compare(args: argparse.Namespace) -> int:
    import json  # the stdlib: --json prints the comparison with ASCII escapes (json.dumps default)

    from harness.evals import (
        DatasetError,
        check_gates,
        compare,
        failed_gates,
        load_report,
        render_comparison,
        write_junit,
    )

    if args.third is None:
        raise CliError("harness eval compare needs two reports: harness eval compare A B")
    try:
        a = load_report(args.second)
        b = load_report(args.third)
    except DatasetError as error:
        raise CliError(str(error)) from None
    comparison = compare(a, b)
    results = check_gates(b, _gates(args), comparison=comparison, max_flips=args.max_flips)
    if args.junit:
        write_junit(args.junit, b, results)
    if args.json:
        print(json.dumps(comparison.to_json(), sort_keys=True, indent=1))
    else:
        print(render_comparison(comparison), end="")
        for result in results:
            say(result.message)
    return EXIT_FAILED if failed_gates(results) else 0
