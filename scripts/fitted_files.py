"""The fitted deciders harness ships, made by ``harness fit`` on the shipped labelled decisions.

* ``harness/demo/fitted/demo.json``: fitted on the training folder's selections
  (``harness/demo/training/selections.jsonl``, tag ``train``: another company's documents, its
  own planted decisions) and reported on the demo's own folder (``harness/demo/selections.jsonl``,
  tag ``test``), never fitted on;
* ``harness/demo/fitted/triage.json``: fitted on the triage selections' dev split
  (``harness/evals/data/selections-triage.jsonl``) and reported on its test split.

Both use the ``tfidf`` encoder (answering needs numpy alone, so a plain install runs them) and
the embedded model as base. ``python -m scripts.fitted_files --write`` makes them again;
``--check`` (run by the tests) fits them anew in a temporary folder and fails, naming the file,
when a head's weights differ from the shipped ones by more than 1e-9 or anything else in the
file differs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs
import numpy as np

from harness.fit import figures_of, fit_decider, held_out, read_source
from harness.providers import amend_fitted, load_fitted

ROOT: Final = Path(__file__).resolve().parent.parent
PACKAGE: Final = ROOT / "harness"
FITTED: Final = PACKAGE / "demo" / "fitted"


@attrs.frozen
class Shipped:
    """One shipped fitted file: its name, its sources (relative to the package) and splits."""

    name: str
    sources: tuple[str, ...]
    train: str
    test: str


FILES: Final = (
    Shipped(
        "demo.json",
        ("demo/training/selections.jsonl", "demo/selections.jsonl"),
        train="train",
        test="test",
    ),
    Shipped("triage.json", ("evals/data/selections-triage.jsonl",), train="dev", test="test"),
)


def make(shipped: Shipped, folder: Path, *, measure: bool = False) -> Path:
    """Fit ``shipped`` into ``folder`` (``measure``: and keep its held-out figures beside the
    embedded model's in the file, as ``harness fit`` does); the JSON file's path."""
    sources = [read_source(str(Path("harness") / s)) for s in shipped.sources]
    outcome = fit_decider(
        sources,
        folder / shipped.name,
        encoder="tfidf",
        base="embedded",
        train_split=shipped.train,
        test_split=shipped.test,
    )
    if measure:
        amend_fitted(
            outcome.path, "figures", figures_of(outcome, held_out(outcome, base="embedded"))
        )
    return outcome.path


def difference(made: Path, kept: Path) -> str | None:
    """What differs between a file made now and the shipped one (``None``: the same)."""
    if not kept.is_file():
        return f"{kept} is missing"
    new, old = load_fitted(made), load_fitted(kept)
    if set(new.heads) != set(old.heads):
        return f"{kept.name}: heads {sorted(new.heads)} now, {sorted(old.heads)} shipped"
    for key, head in new.heads.items():
        other = old.heads[key]
        if head.weights.shape != other.weights.shape or not np.allclose(
            head.weights, other.weights, rtol=0, atol=1e-9
        ):
            return f"{kept.name}: head {key!r} has other weights"
    for section in ("encoder", "fitted_on", "base"):
        if new.document.get(section) != old.document.get(section):
            return f"{kept.name}: {section} differs"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.fitted_files", description=__doc__)
    parser.add_argument("--write", action="store_true", help="make the shipped files again")
    parser.add_argument("--check", action="store_true", help="fail when they are out of date")
    args = parser.parse_args(argv)
    if args.write == args.check:
        parser.error("give --write or --check")
    if args.write:
        for shipped in FILES:
            print(f"wrote {make(shipped, FITTED, measure=True)}")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        for shipped in FILES:
            problem = difference(make(shipped, Path(scratch)), FITTED / shipped.name)
            if problem is not None:
                print(f"{problem}: run python -m scripts.fitted_files --write", file=sys.stderr)
                return 1
    print("the shipped fitted files are up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
