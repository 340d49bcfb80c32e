"""The reference runs of the pyperf benchmarks: each run again in fresh processes, each target's
ratios summed up with an interval across the runs and a verdict from it.

One run of ``dispatch.py``, ``batch_embedded.py`` or ``json_body.py`` gives each way's median
over pyperf's worker processes, but the next run lands elsewhere: the machine's load and each
process's memory layout move it (docs/performance.md). Whether a target is met is a question
about the runs, so a single run prints no verdict, and this script runs them ``--runs`` times
each (default 9), in turn, each in a process of its own, and for every target prints
(``_campaign.py``):

* the number of runs, the median ratio and the range;
* a 95 % interval of the median ratio that assumes nothing of how the ratios spread (two of the
  sorted runs, chosen by the binomial distribution: with 9 runs, the 2nd and the 8th, 96.1 %);
  fewer than 6 runs give none;
* the verdict: ``met`` only when the interval's worse end meets the target, ``missed`` when its
  better end does not, ``cannot tell`` otherwise; a loaded machine (the load average before the
  runs, or after them less the benchmark's own processes, at 1 or more) never gives ``met``.

``embedded.py`` sums up its own runs (its rounds are paired within each process) and is not run
here.

``--tree PATH`` (repeatable) runs the benchmarks against the harness in ``PATH`` (put first on
``PYTHONPATH``; e.g. an earlier commit exported with ``git archive REV | tar -x -C PATH``),
the trees in alternating order within every run, so two builds meet the same machine. The
scripts are always this checkout's. ``--load "COMMAND"`` keeps ``COMMAND`` running beside the
benchmarks (restarted when it ends; run in the current folder) for the figures under load, e.g.
``--load "python -m pytest -n 2 -q -p no:cacheprovider"``. ``--quick`` runs every benchmark in
the tiny size its test uses (seconds; the figures mean nothing). ``--json FILE`` writes the
summary.

A script, not a test: ``python benchmarks/targets.py [--runs 9] [--only embedded,floor]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _campaign import Machine, row_text, summed  # noqa: E402  # the benchmarks' own helpers
from _results import TINY  # noqa: E402

FULL: dict[str, list[str]] = {
    "dispatch": ["--quiet"],
    "batch_embedded": ["--quiet"],
    "json_body": ["--quiet"],
}
"""Each benchmark's arguments in a full run (its own and pyperf's defaults otherwise)."""

BUSY: dict[str, float] = {"dispatch": 2.0, "batch_embedded": 1.0, "json_body": 1.0}
"""The cores each benchmark keeps busy (``dispatch.py``: its client and its server)."""


LOAD_SHORTEST = 2.0
"""Seconds a load command must run at least (see :meth:`Load.keep`)."""


class Load:
    """``command`` kept running beside the benchmarks: started, restarted by :meth:`keep` when
    it has ended, stopped (its whole process group) by :meth:`stop`."""

    def __init__(self, command: str) -> None:
        self.argv = shlex.split(command)
        self.process: subprocess.Popen[bytes] | None = None
        self.started = 0.0
        self.starts = 0

    def keep(self) -> None:
        """Start the command unless it is running. A command that ended within
        :data:`LOAD_SHORTEST` seconds of its start loads nothing (a wrong folder, a typo): that
        stops the campaign, which would otherwise report idle figures as loaded ones."""
        if self.process is None or self.process.poll() is not None:
            if self.process is not None and time.monotonic() - self.started < LOAD_SHORTEST:
                raise SystemExit(
                    f"the load command ended {time.monotonic() - self.started:.1f} s after it "
                    f"started (exit {self.process.returncode}): run it by hand from this folder "
                    "to see why (--load)"
                )
            self.started = time.monotonic()
            self.process = subprocess.Popen(
                self.argv,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            self.starts += 1

    def stop(self) -> None:
        """Stop the command and everything it started."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)


@contextmanager
def loaded(command: str | None) -> Iterator[Load | None]:
    """A :class:`Load` of ``command`` (None: no load) for the block, stopped at its end."""
    if command is None:
        yield None
        return
    running = Load(command)
    running.keep()
    try:
        yield running
    finally:
        running.stop()


def run_one(name: str, arguments: Sequence[str], tree: str | None, out: Path) -> dict[str, object]:
    """``benchmarks/<name>.py`` once in a process of its own; the results it wrote."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, env.get("PYTHONPATH")]))
    command = [sys.executable, str(HERE / f"{name}.py"), *arguments, "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise SystemExit(f"benchmarks/{name}.py failed (exit {done.returncode}): {said[0]}")
    results: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return results


def summary(
    collected: Mapping[tuple[str, str, str], list[float]],
    limits: Mapping[tuple[str, str], tuple[float, str]],
    machine: Machine,
) -> dict[str, object]:
    """Every target's runs summed up: median, range, interval, verdict."""
    rows = [
        {
            "tree": tree,
            "benchmark": benchmark,
            **summed(name, ratios, *limits[(benchmark, name)], machine.loaded),
        }
        for (tree, benchmark, name), ratios in collected.items()
    ]
    return {**machine.conditions(), "targets": rows}


def run_all(
    names: Sequence[str],
    runs: int,
    trees: Sequence[str | None],
    quick: bool,
    load_command: str | None,
) -> tuple[dict[str, object], Machine]:
    """The whole campaign: ``runs`` times over, each time every benchmark once per tree."""
    sizes = TINY if quick else FULL
    collected: dict[tuple[str, str, str], list[float]] = {}
    limits: dict[tuple[str, str], tuple[float, str]] = {}
    machine = Machine(busy=min(BUSY[name] for name in names))  # never more than it was
    with tempfile.TemporaryDirectory() as folder, loaded(load_command) as load:
        for run in range(runs):
            for name in names:
                order = list(trees) if run % 2 == 0 else list(reversed(trees))
                for tree in order:
                    if load is not None:
                        load.keep()
                    out = Path(folder) / f"{name}.json"
                    results = run_one(name, sizes[name], tree, out)
                    targets = results["targets"]
                    assert isinstance(targets, list)
                    for found in targets:
                        key = (tree or "installed", name, found["name"])
                        collected.setdefault(key, []).append(float(found["ratio"]))
                        limits[(name, found["name"])] = (found["limit"], found["direction"])
            print(f"run {run + 1} of {runs} done ({time.strftime('%H:%M:%S')})", flush=True)
    machine.stop()
    return summary(collected, limits, machine), machine


def print_summary(found: Mapping[str, object], machine_line: str) -> None:
    """The summary as a table, one target a line."""
    print(machine_line)
    rows = found["targets"]
    assert isinstance(rows, list)
    for row in rows:
        print(f"{row['tree']:<10} {row['benchmark']:<15} " + row_text(row, 60))


def main() -> None:
    """Parse the options, run the campaign, print and write the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--only", default=",".join(FULL), help="benchmarks to run, comma-separated")
    parser.add_argument("--tree", action="append", metavar="PATH", help="a harness tree to run")
    parser.add_argument("--load", metavar="COMMAND", help="keep COMMAND running beside")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (figures mean nothing)")
    parser.add_argument("--json", metavar="FILE", help="write the summary as JSON (- : stdout)")
    options = parser.parse_args()
    names = [name for name in options.only.split(",") if name]
    unknown = sorted(set(names) - set(FULL))
    if unknown:
        raise SystemExit(
            f"unknown benchmark {unknown[0]!r}: choose among {', '.join(FULL)} (--only)"
        )
    if options.runs < 1:
        raise SystemExit("--runs must be at least 1")
    trees: list[str | None] = list(options.tree) if options.tree else [None]
    found, machine = run_all(names, options.runs, trees, options.quick, options.load)
    print_summary(found, machine.line())
    if options.json == "-":
        json.dump(found, sys.stdout, indent=2)
        print()
    elif options.json is not None:
        Path(options.json).write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
