"""The sample output in README.md and docs/cli.md: made by a real run, checked against one.

``python -m tests.demo.sample --write`` runs ``harness demo`` and ``harness record`` on the
embedded model (offline, in a temporary folder, the shipped catalog) and writes their output
into the marked blocks of the docs::

    <!-- sample: demo -->
    ```console
    $ harness demo
    ...
    ```
    <!-- /sample -->

``python -m tests.demo.sample --check`` (and ``tests/cli/test_demo.py``) runs it again and fails
when a block no longer matches. What legitimately varies between machines and runs is not held
against a block: where harness is installed (shown as ``.../site-packages/harness``), timings
(``1.23 s``) and, for numbers printed with three decimals, a difference up to
:data:`PROBABILITY_TOLERANCE` (the embedded model's floating point on another CPU). Everything
else (which turns, which files, which statements, the score) must be the same.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Final

import harness

ROOT: Final = pathlib.Path(__file__).resolve().parents[2]
DOCS: Final = (ROOT / "README.md", ROOT / "docs" / "cli.md")
"""The files holding sample blocks."""

INSTALLED: Final = ".../site-packages/harness"
"""How the docs show the folder harness is installed in."""

PROBABILITY_TOLERANCE: Final = 0.002
RECORD_HEAD: Final = 24
"""Lines of ``harness record`` shown before the excerpt is cut (the whole run is long)."""

_BLOCK: Final = re.compile(
    r"(<!-- sample: (?P<name>[\w-]+) -->\n```console\n)(?P<body>.*?)(```\n<!-- /sample -->)",
    re.DOTALL,
)
_NUMBER: Final = re.compile(r"(\d+\.\d+)( s\b)?")

COMMANDS: Final[Mapping[str, Sequence[str]]] = {
    "demo": ("demo",),
    "record": ("record", "harness-record.json"),
}
"""Each sample's ``harness`` arguments; they run in this order in one folder."""


def run_commands(folder: pathlib.Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """Each sample's command run for real in ``folder`` (in order; the shipped catalog)."""
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_CATALOG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    for name, arguments in COMMANDS.items():
        done[name] = subprocess.run(
            [sys.executable, "-m", "harness.cli", *arguments],
            cwd=folder,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        if done[name].returncode != 0:
            raise RuntimeError(f"harness {' '.join(arguments)} failed: {done[name].stderr}")
    return done


def sample_bodies(done: Mapping[str, subprocess.CompletedProcess[str]]) -> dict[str, str]:
    """Each sample's block body (``$ command`` then its output, as the docs show it)."""
    bodies: dict[str, str] = {}
    for name, arguments in COMMANDS.items():
        output = normalize(done[name].stdout)
        if name == "record":
            output = excerpt(output)
        bodies[name] = f"$ harness {' '.join(arguments)}\n{output}"
    return bodies


def run_samples() -> dict[str, str]:
    """Each sample's block body, from a fresh real run in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="harness-sample-") as folder:
        return sample_bodies(run_commands(pathlib.Path(folder)))


def normalize(output: str) -> str:
    """``output`` with the install folder shown as :data:`INSTALLED`."""
    installed = str(pathlib.Path(harness.__file__).resolve().parent)
    return output.replace(installed, INSTALLED)


def excerpt(output: str) -> str:
    """The first :data:`RECORD_HEAD` lines of a long output, then ``...``, its answer's first
    lines, ``...`` and the score line when there is one (the last)."""
    lines = output.rstrip("\n").split("\n")
    if len(lines) <= RECORD_HEAD:
        return output
    answer = next((i for i, line in enumerate(lines) if line.startswith("answer: ")), None)
    tail = lines[answer : answer + 4] if answer is not None else []
    score = [lines[-1]] if lines[-1].startswith("score: ") else []
    return "\n".join([*lines[:RECORD_HEAD], "...", *tail, "...", *score]) + "\n"


def blocks(text: str) -> dict[str, str]:
    """The sample blocks of a doc, by name."""
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(text)}


def _comparable(line: str) -> tuple[list[str], list[float]]:
    words: list[str] = []
    numbers: list[float] = []
    last = 0
    for m in _NUMBER.finditer(line):
        words.append(line[last : m.start()])
        if m.group(2):  # a timing: any value
            words.append("<seconds>")
        else:
            numbers.append(float(m.group(1)))
            words.append("<number>")
        last = m.end()
    words.append(line[last:])
    return words, numbers


def differences(expected: str, actual: str) -> list[str]:
    """How ``actual`` differs from the ``expected`` block, line by line (empty: it matches)."""
    want = expected.rstrip("\n").split("\n")
    got = actual.rstrip("\n").split("\n")
    found: list[str] = []
    if len(want) != len(got):
        found.append(f"{len(want)} lines in the docs, {len(got)} in the run")
    for number, (a, b) in enumerate(zip(want, got, strict=False), 1):
        words_a, numbers_a = _comparable(a)
        words_b, numbers_b = _comparable(b)
        close = words_a == words_b and all(
            abs(x - y) <= PROBABILITY_TOLERANCE for x, y in zip(numbers_a, numbers_b, strict=True)
        )
        if not close:
            found.append(f"line {number}:\n  docs: {a}\n  run:  {b}")
    return found


def write(bodies: Mapping[str, str]) -> list[pathlib.Path]:
    """Replace each doc's sample blocks with ``bodies``; returns the files changed."""
    changed = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        new = _BLOCK.sub(lambda m: m.group(1) + bodies[m.group("name")] + m.group(4), text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def check(bodies: Mapping[str, str]) -> list[str]:
    """Every difference between the docs' blocks and ``bodies``, named by file and block."""
    problems = []
    for path in DOCS:
        found = blocks(path.read_text(encoding="utf-8"))
        if not found:
            problems.append(f"{path.name} has no sample block")
        for name, body in found.items():
            if name not in bodies:
                problems.append(f"{path.name}: unknown sample {name!r}")
                continue
            for difference in differences(body, bodies[name]):
                problems.append(f"{path.name}, sample {name!r}: {difference}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``--write`` the samples into the docs, or ``--check`` them (exit 1 on drift)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="rewrite the docs' sample blocks")
    action.add_argument("--check", action="store_true", help="fail when a block has drifted")
    args = parser.parse_args(argv)
    bodies = run_samples()
    if args.write:
        for path in write(bodies):
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    problems = check(bodies)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
