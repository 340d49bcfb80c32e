"""``harness demo``: find the statements that decide a price change, offline, with no setup.

What it prints, in order: what it looks for and where (the folder's files, and how many of them
the model may read), which model answers, ``loading the embedded model ...`` before the first
decision when that model is the embedded one, a line per turn as the turn ends, the answer, its
score against the corpus's answer key, where the record went, and (on the embedded model) one
line saying it is a small offline model and how to run the demo on a real one.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections import Counter
from collections.abc import Callable, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Final

import attrs

from harness.cli._common import (
    DEFAULT_RECORD,
    CliError,
    add_model_options,
    catalog_from,
    check_record_path,
    report_failed_run,
    say,
)
from harness.demo import (
    DEMO_MAX_TURNS,
    DEMO_OBJECTIVE,
    DemoRun,
    DemoScore,
    ListedFile,
    answer_key,
    answer_statements,
    demo_folder,
    relative_source,
    run_demo,
    score_answer,
    survey_folder,
)
from harness.errors import LLMReadableError
from harness.record import RecordedAnswer, RunFailedError, RunRecord, counted

if TYPE_CHECKING:
    from harness.catalog import Catalog

__all__ = [
    "DESCRIPTION",
    "SHOWN_ANSWERS",
    "add_arguments",
    "demo",
    "figures_line",
    "folder_line",
    "real_model_hint",
    "shipped_catalog",
]

SHOWN_ANSWERS: Final = 10
"""An answer longer than this prints its most probable statements only (the record has all)."""

EMBEDDED: Final = "embedded"

_KIND_NOUNS: Final = {
    "empty": ("empty file", "empty files"),
    "pdf": ("PDF", "PDFs"),
    "image": ("image", "images"),
    "office": ("office file", "office files"),
    "binary": ("binary file", "binary files"),
    "large": ("file too large", "files too large"),
}


DESCRIPTION: Final = (
    "Run the demo thinker: it lists the folder's text files, reads some of them into "
    "statements and selects those that decide a price change and say from when it "
    "applies. With no folder it reads the folder of documents shipped with harness and "
    "scores its answer against the folder's answer key."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``harness demo``'s arguments (its parser is made by :func:`harness.cli.build_parser`)."""
    parser.add_argument("folder", nargs="?", help="folder to search (default: the shipped one)")
    parser.add_argument("--objective", default=DEMO_OBJECTIVE, help="what to look for")
    add_model_options(parser)
    parser.add_argument(
        "--record",
        default=DEFAULT_RECORD,
        metavar="FILE",
        help=f"where to write the run's record (default: {DEFAULT_RECORD})",
    )
    parser.add_argument(
        "--max-turns",
        type=int,
        default=DEMO_MAX_TURNS,
        metavar="N",
        help=f"turn budget of the thinker (default: {DEMO_MAX_TURNS})",
    )
    parser.add_argument(
        "--bodies", action="store_true", help="keep each request's wire body in the record"
    )
    parser.set_defaults(command=demo)


def folder_line(files: Sequence[ListedFile]) -> str:
    """``"34 files, 24 of them text the model may read (left out: 3 images, 1 PDF, ...)"``."""
    readable = sum(1 for file in files if file.readable)
    others = Counter(file.kind for file in files if not file.readable)
    line = f"{counted(len(files), 'file')}, {readable} of them text the model may read"
    if others:
        kinds = ", ".join(
            f"{count} {_KIND_NOUNS.get(kind, (kind, kind))[count != 1]}"
            for kind, count in sorted(others.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        line += f" (left out: {kinds})"
    return line


def shipped_catalog() -> str:
    """Where the catalog shipped with harness is (the file to copy for a real model)."""
    return str(resources.files("harness").joinpath("catalog.toml"))


def real_model_hint(wire_model_id: str, max_turns: int) -> list[str]:
    """What the demo says after a run on the embedded model: what it is, how to ask a real one."""
    turns = "" if max_turns == DEMO_MAX_TURNS else f" --max-turns {max_turns}"
    return [
        f"note: the embedded model ({wire_model_id}) is a small offline model: its choices are "
        "sensible, its yes/no answers near chance, so its selection is weak.",
        "for a real model, set your TypeSafe key and name the model (or an entry of your "
        f"catalog, e.g. a copy of {shipped_catalog()}):",
        f"  TYPESAFE_API_KEY=... harness demo --model systemone:jev-latest{turns}",
    ]


def _shown(answer: Sequence[RecordedAnswer]) -> list[RecordedAnswer]:
    """The answer most probable first (ties in the answer's order); the first
    :data:`SHOWN_ANSWERS` of a longer one."""
    ranked = sorted(answer, key=lambda item: -(item.probability or 0.0))
    return ranked[:SHOWN_ANSWERS]


def _say_answer(record: RunRecord, folder: str) -> None:
    count = len(record.answer)
    if not count:
        say("answer: nothing selected")
        return
    shown = _shown(record.answer)
    more = "" if len(shown) == count else f" (the {len(shown)} most probable; all in the record)"
    say(f"answer: {counted(count, 'statement')}{more}")
    for item in shown:
        value = item.value if isinstance(item.value, dict) else {}
        source = relative_source(str(value.get("source", "")), folder)
        probability = "  -  " if item.probability is None else f"{item.probability:.3f}"
        say(f"  {probability}  {source}: {value.get('text', '')}")


def _run(
    folder: str,
    args: argparse.Namespace,
    catalog: Catalog,
    *,
    entry_id: str | None = None,
    on_progress: Callable[[str], None] | None = None,
    keep_bodies: bool = False,
) -> DemoRun:
    """The demo run on ``folder`` with the command's objective and turns, under ``catalog``."""
    return asyncio.run(
        run_demo(
            folder,
            objective=args.objective,
            max_turns=args.max_turns,
            catalog=catalog,
            entry_id=entry_id,
            on_progress=on_progress,
            keep_bodies=keep_bodies,
        )
    )


def _say_score(run: DemoRun, args: argparse.Namespace, fitted_on: str | None) -> str | None:
    """Print the answer's score against the folder's key (and before and after calibration);
    return the score line (``None``: no key) for the record, whose page shows it."""
    key = answer_key()
    if args.folder is not None or args.objective != key.objective:
        say("score: no answer key for this folder and objective (the key covers the shipped one)")
        return None
    score = score_answer(answer_statements(run.record), key)
    line = f"score against the folder's answer key: {score.line()}"
    say(line)
    if not run.raw_selection:
        return line  # no calibration (or a replay answered): nothing to compare with
    before = score_answer(run.raw_answer, key)
    threshold = run.record.threshold
    shown = "the thinker's" if threshold is None else f"{threshold:.3f}"
    say(
        f"  before calibration (the model's own probabilities, at {run.raw_threshold:g}): "
        f"{figures_line(before)}"
    )
    say(f"  after calibration (calibrated probabilities, at {shown}): {figures_line(score)}")
    say(
        f"  (95 % Wilson intervals, one run of {counted(len(run.raw_selection), 'candidate')}; "
        f"calibration and threshold fitted on {fitted_on or 'another set'}, never on this folder)"
    )
    return line


def _say_beside_embedded(
    run: DemoRun, args: argparse.Namespace, folder: str, catalog: Catalog
) -> None:
    """A fitted model's score beside the embedded model's on the same folder, same turns (the
    embedded model runs the demo again, quietly), each with its Wilson intervals."""
    from harness.fit import fitted_about

    key = answer_key()
    entry = catalog.pinned()
    say("the embedded model on the same folder, for comparison ...")
    try:
        embedded = _run(folder, args, catalog, entry_id=EMBEDDED)
    except RunFailedError as failed:
        say(f"  the embedded model's run failed: {failed}")
        return
    fitted_score = score_answer(answer_statements(run.record), key)
    embedded_score = score_answer(answer_statements(embedded.record), key)
    say(f"  {entry.id} (fitted): {figures_line(fitted_score)}")
    say(f"  embedded: {figures_line(embedded_score)}")
    say(f"  (95 % Wilson intervals, one run each; {fitted_about(entry)})")


def figures_line(score: DemoScore) -> str:
    """``"recall 0.57 [0.25, 0.84] (4 of 7), precision 0.07 [0.03, 0.16] (4 of 58)"``."""
    from harness.evals.metrics import wilson

    low, high = wilson(score.found, score.planted)
    line = f"recall {score.recall:.2f} [{low:.2f}, {high:.2f}] ({score.found} of {score.planted})"
    if score.selected == 0:
        return line + ", precision undefined (nothing selected)"
    low, high = wilson(score.found, score.selected)
    return (
        line + f", precision {score.found / score.selected:.2f} [{low:.2f}, {high:.2f}] "
        f"({score.found} of {score.selected})"
    )


def demo(args: argparse.Namespace) -> int:
    """Run the demo, print its progress, answer and score, write its record."""
    if args.max_turns < 1:
        raise CliError(f"--max-turns must be at least 1, got {args.max_turns}")
    if not args.objective.strip():
        raise CliError("--objective must not be blank: say what to look for")
    if args.folder is not None and not os.path.isdir(args.folder):
        what = "does not exist" if not os.path.exists(args.folder) else "is not a folder"
        raise CliError(f"folder {args.folder} {what}: give the path of a folder of documents")
    check_record_path(args.record)
    say(f"harness demo: {args.objective}")  # the first line before anything slow
    folder = demo_folder(args.folder)
    try:
        files = survey_folder(folder)
    except LLMReadableError as error:
        raise CliError(f"cannot search folder {args.folder}: {error.message}") from None
    shipped = " (shipped with harness)" if args.folder is None else ""
    say(f"  folder: {folder}{shipped}")
    say(f"    {folder_line(files)}")
    catalog = catalog_from(args)
    entry = catalog.pinned()
    say(
        f"  model: entry {entry.id!r} ({entry.provider}, {entry.wire_model_id}), "
        f"at most {args.max_turns} turns"
    )
    if entry.provider == EMBEDDED:
        say("loading the embedded model ...")
    try:
        run = _run(folder, args, catalog, on_progress=say, keep_bodies=args.bodies)
    except RunFailedError as failed:
        return report_failed_run("demo", failed, args.record)
    record = run.record
    _say_answer(record, folder)
    scored = _say_score(
        run, args, None if entry.calibration is None else entry.calibration.fitted_on
    )
    if entry.provider == "fitted" and scored is not None:
        _say_beside_embedded(run, args, folder, catalog)
    record = attrs.evolve(record, score=scored)  # the page shows it too
    record.write(args.record)
    say(
        f"record: {args.record} ({counted(len(record.turns), 'turn')}, "
        f"{counted(len(record.calls), 'decision')}, "
        f"{record.wall_seconds:.2f} s, {record.model_seconds:.2f} s in the model); "
        f"show it with: harness record {args.record}"
    )
    if entry.provider == EMBEDDED:
        for line in real_model_hint(entry.wire_model_id, args.max_turns):
            say(line)
    return 0
