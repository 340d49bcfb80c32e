"""How much the harness mypy plugin costs against plain mypy, by code base size and mode.

Generates code bases of 40, 160 and 640 thinkers (``--sizes``) in a temporary directory: each
module holds 16 tools and 2 thinkers whose palettes take 8 tools each (7 entries and a key tool;
the first palette is a ``Final`` constant, and every module imports the previous module's), over
one shared module of artifact types. For each size, in the same run and with the same config
apart from ``plugins = mypy_plugin``, it times:

- **cold**: a fresh cache each run;
- **warm**: one tool module edited (a tool class added, or removed again: its interface changes,
  so mypy re-checks it and the module importing it), the rest read from the cache;
- **dmypy**: a daemon per config (``dmypy run``: start and first check, timed as ``dmypy first``),
  then one tool module edited and ``dmypy check`` (timed as ``dmypy edit``).

Plain and plugin runs alternate, and which of the two goes first alternates too, so neither side
always pays for a cold disk cache or profits from a warm one. Each run is timed twice: wall
seconds, and CPU seconds of mypy's processes (the daemon's read from ``/proc``), which a machine
shared with other work disturbs far less. Each figure is a ratio (plugin over plain) within one
run: of the medians, of the minimums, and the spread of the per-round ratios, with a 95%
interval of the per-round ratio (a t-interval of their logarithms, geometric mean in the middle:
each round's ratio compares two runs made back to back, so the machine's drift between rounds
cancels). The target is the cold CPU ratio (at most 1.05x), never an absolute time, judged by
its interval (an interval straddling 1.05 says more rounds are needed).

By default it measures the target: cold runs only, :data:`ROUNDS` rounds. A round's ratio
spreads by about 6% (its standard deviation) on an idle two-core virtual machine, so 20 rounds
give an interval of about ±0.03 and 120 about ±0.011: enough to judge a cost of 3% to 4%
against 1.05x, at about 20 minutes a size at 640 thinkers. The other modes run when asked for
(``--modes cold,warm,dmypy``; ``--repeat 3`` for a quick look) and are judged against the same
1.05x. A script, not a test::

    python benchmarks/plugin.py [--sizes 40,160,640] [--repeat 120] [--json results.json]
    python benchmarks/plugin.py --sizes 160,640          # the target, cold, 120 rounds
    python benchmarks/plugin.py --modes cold,warm,dmypy --repeat 3   # every mode, a quick look
    python benchmarks/plugin.py --smoke --json results.json   # a tiny size, every mode
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _campaign import Machine, verdict

REPO = Path(__file__).resolve().parents[1]
TOOLS_PER_MODULE = 16
THINKERS_PER_MODULE = 2
PALETTE_SIZE = 8  # the key tool included
CHAIN_SPREAD = 50  # where each module's chain of artifact types starts: (module * 3) % 50
SIZES = (40, 160, 640)
SMOKE_SIZE = 4
LIMIT = 1.05
MODES = ("cold", "warm", "dmypy first", "dmypy edit")
TARGET_MODES = ("cold",)
ROUNDS = 120
"""Rounds by default: what judging a cost of 3% to 4% against 1.05x takes (see above)."""

ARTIFACTS = """\
import attrs
from harness.artifacts import Artifact

{classes}
"""

ARTIFACT = """
@attrs.frozen
class A{n}(Artifact, alias="a{n}"):
    value: int
"""

TOOL = """
@tool_name("tool_{m}_{t}")
class Tool{m}x{t}(DecisionTool[A{i}, {out}]):
    async def execute(self, input: A{i}, context: JobContext) -> {out}:
        raise NotImplementedError
"""

EDIT = """
@tool_name("edited_{m}")
class Edited{m}(DecisionTool[A{i}, A{o}]):
    async def execute(self, input: A{i}, context: JobContext) -> A{o}:
        raise NotImplementedError
"""

THINKER = """
class Thinker{m}x{k}(DecisionThinker[A{i}, A{o}]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=A{o},
            key_tool=Tool{m}x{key},
            palette={palette},
            objective="Synthetic palette {m}.{k}",
        )
"""


def _chain(m: int) -> list[int]:
    base = (m * 3) % CHAIN_SPREAD
    return [base + t for t in range(TOOLS_PER_MODULE + 1)]


def _module(m: int) -> str:
    lines = [
        "from typing import Final",
        "from harness.artifacts import ListArtifact",
        "from harness.thinker import DecisionThinker",
        "from harness.jobs import JobContext",
        "from harness.tools import DecisionTool, Identifiable, tool_name",
        "from artifacts import *  # noqa: F403",
    ]
    if m > 0:
        lines.append(f"from mod{m - 1} import SHARED as PREVIOUS")
    chain = _chain(m)
    body = []
    for t in range(TOOLS_PER_MODULE):
        i, o = chain[t], chain[t + 1]
        out = f"ListArtifact[A{o}]" if t % PALETTE_SIZE == PALETTE_SIZE - 1 else f"A{o}"
        body.append(TOOL.format(m=m, t=t, i=i, out=out))
    shared = ", ".join(f"Tool{m}x{t}" for t in range(PALETTE_SIZE - 1))
    body.append(f"SHARED: Final = ({shared})\n")
    for k in range(THINKERS_PER_MODULE):
        first = k * PALETTE_SIZE
        key = first + PALETTE_SIZE - 1
        entries = [f"Tool{m}x{t}" for t in range(first, key)]
        palette = "SHARED" if k == 0 else f"({', '.join(entries)},)"
        i, o = chain[first], chain[key + 1]
        body.append(THINKER.format(m=m, k=k, i=i, o=o, key=key, palette=palette))
    return "\n".join(lines) + "\n" + "".join(body)


@dataclass(frozen=True)
class Run:
    """One timed command: wall seconds, and CPU seconds (user and system) of mypy's processes."""

    wall: float
    cpu: float


class Project:
    """One generated code base: its files, its configs, and the module the edits touch."""

    def __init__(self, root: Path, thinkers: int) -> None:
        self.root = root
        self.modules = max(1, thinkers // THINKERS_PER_MODULE)
        self.thinkers = self.modules * THINKERS_PER_MODULE
        self.tools = self.modules * TOOLS_PER_MODULE
        self.edited = self.modules // 2
        self.edits = 0
        root.mkdir(parents=True)
        highest = CHAIN_SPREAD + TOOLS_PER_MODULE + 1
        classes = "".join(ARTIFACT.format(n=n) for n in range(highest))
        (root / "artifacts.py").write_text(ARTIFACTS.format(classes=classes))
        self.files = ["artifacts.py"]
        for m in range(self.modules):
            (root / f"mod{m}.py").write_text(_module(m))
            self.files.append(f"mod{m}.py")
        self.original = (root / f"mod{self.edited}.py").read_text()
        for label, plugins in (("plain", ""), ("plugin", "plugins = mypy_plugin\n")):
            (root / f"{label}.ini").write_text(
                "[mypy]\npython_version = 3.11\nstrict = True\n"
                + plugins
                + "[mypy-harness.*]\nfollow_imports = silent\n"
            )

    def edit(self) -> None:
        """Add a tool class to the edited module, or take it out again (alternately): each
        edit changes the module's interface, so its importer is re-checked too."""
        self.edits += 1
        text = self.original
        if self.edits % 2 == 1:
            chain = _chain(self.edited)
            text += EDIT.format(m=self.edited, i=chain[0], o=chain[1])
        (self.root / f"mod{self.edited}.py").write_text(text)

    def env(self) -> dict[str, str]:
        """The repository on the path, and byte code written (beside the code bases, not in the
        repository) and read: an installed plugin and harness are compiled once, not per run."""
        env = dict(os.environ, PYTHONPATH=str(REPO), MYPYPATH=str(REPO))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(self.root.parent / "pycache")
        return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _daemon_cpu(project: Project, label: str) -> float:
    """The CPU seconds a running daemon has used (it is not our child: read from /proc)."""
    status = json.loads((project.root / f"dmypy-{label}.json").read_text())
    fields = Path(f"/proc/{status['pid']}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(project: Project, command: list[str], what: str, daemon: str = "") -> Run:
    """Wall and CPU seconds of one command (and of the daemon ``daemon`` names, if any)."""
    cpu_before = _children_cpu()
    daemon_before = _daemon_cpu(project, daemon) if daemon and "check" in command else 0.0
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=project.root, env=project.env(), capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{what} failed on the generated code base:\n{done.stdout}{done.stderr}")
    cpu = _children_cpu() - cpu_before
    if daemon:
        cpu += _daemon_cpu(project, daemon) - daemon_before
    return Run(elapsed, cpu)


def _mypy(project: Project, label: str, cache: str) -> Run:
    command = [sys.executable, "-m", "mypy", "--config-file", f"{label}.ini"]
    command += ["--cache-dir", cache, *project.files]
    return _timed(project, command, f"mypy ({label})")


def _dmypy(project: Project, label: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "mypy.dmypy", "--status-file", f"dmypy-{label}.json", *args]


def _order(round_: int) -> tuple[str, str]:
    """Plain first in even rounds, the plugin first in odd ones."""
    return ("plain", "plugin") if round_ % 2 == 0 else ("plugin", "plain")


#: Two-sided 95% quantiles of Student's t by degrees of freedom (1.96 beyond the table).
_T975: tuple[float, ...] = (
    *(12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179),
    *(2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064),
    *(2.060, 2.056, 2.052, 2.048, 2.045, 2.042),
)


def _interval(ratios: list[float]) -> tuple[float, float, float] | None:
    """The geometric mean of per-round ratios and its 95% t-interval (``None`` under 2 rounds)."""
    if len(ratios) < 2:
        return None
    logs = [math.log(r) for r in ratios]
    mean, spread = statistics.fmean(logs), statistics.stdev(logs)
    df = len(logs) - 1
    half = (_T975[df - 1] if df <= len(_T975) else 1.96) * spread / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def _ratios(plain: list[float], plugin: list[float]) -> dict[str, object]:
    paired = sorted(b / a for a, b in zip(plain, plugin, strict=True))
    interval = _interval(paired)
    return {
        "plain_s": plain,
        "plugin_s": plugin,
        "ratio_of_medians": statistics.median(plugin) / statistics.median(plain),
        "ratio_of_minimums": min(plugin) / min(plain),
        "paired_ratios": {
            "min": paired[0],
            "median": statistics.median(paired),
            "max": paired[-1],
            "geometric_mean": interval[0] if interval else None,
            "interval_95": [interval[1], interval[2]] if interval else None,
        },
    }


def _summary(times: dict[str, list[Run]]) -> dict[str, object]:
    """Wall and CPU figures of one mode: the times, and plugin over plain three ways."""
    plain, plugin = times["plain"], times["plugin"]
    return {
        "repeats": len(plain),
        "cpu": _ratios([r.cpu for r in plain], [r.cpu for r in plugin]),
        "wall": _ratios([r.wall for r in plain], [r.wall for r in plugin]),
    }


def _line(mode: str, kind: str, plain: list[float], plugin: list[float]) -> str:
    paired = sorted(b / a for a, b in zip(plain, plugin, strict=True))
    ratio = statistics.median(plugin) / statistics.median(plain)
    interval = _interval(paired)
    within = (
        f"; per round {interval[0]:.3f}x, 95% interval {interval[1]:.3f}..{interval[2]:.3f}x"
        f" over {len(paired)} rounds"
        if interval
        else ""
    )
    return (
        f"  {mode:<12}{kind:<5} plain {statistics.median(plain):8.3f} s (min {min(plain):7.3f})"
        f"  plugin {statistics.median(plugin):8.3f} s (min {min(plugin):7.3f})"
        f"  ratio {ratio:5.3f}x (of minimums {min(plugin) / min(plain):.3f}x;"
        f" rounds {paired[0]:.3f}..{paired[-1]:.3f}x{within})"
    )


def measure(
    project: Project, repeat: int, modes: tuple[str, ...]
) -> dict[str, dict[str, list[Run]]]:
    """Time every mode for one code base: the plain and plugin times by mode."""
    times: dict[str, dict[str, list[Run]]] = {m: {"plain": [], "plugin": []} for m in modes}
    if "cold" in modes or "warm" in modes:
        for n in range(repeat):  # cold: a fresh cache each run
            for label in _order(n):
                cache = f"cache-{label}-{n}"
                elapsed = _mypy(project, label, cache)
                if "cold" in modes:
                    times["cold"][label].append(elapsed)
                if n > 0:
                    shutil.rmtree(project.root / cache, ignore_errors=True)
    if "warm" in modes:
        # warm: on the cache of the first cold run (n = 0, kept), one module edited before each run
        for n in range(repeat):
            project.edit()
            for label in _order(n):
                times["warm"][label].append(_mypy(project, label, f"cache-{label}-0"))
    if "dmypy first" in modes or "dmypy edit" in modes:
        try:
            for label in _order(0):
                flags = ["--config-file", f"{label}.ini", "--cache-dir", f"dcache-{label}"]
                command = _dmypy(project, label, "run", "--timeout", "3600", "--", *flags)
                elapsed = _timed(project, [*command, *project.files], f"dmypy run ({label})", label)
                times.setdefault("dmypy first", {"plain": [], "plugin": []})[label].append(elapsed)
            for n in range(repeat):
                project.edit()
                for label in _order(n):
                    command = [*_dmypy(project, label, "check"), *project.files]
                    elapsed = _timed(project, command, f"dmypy check ({label})", label)
                    times.setdefault("dmypy edit", {"plain": [], "plugin": []})[label].append(
                        elapsed
                    )
        finally:
            for label in ("plain", "plugin"):
                subprocess.run(
                    _dmypy(project, label, "stop"),
                    cwd=project.root,
                    env=project.env(),
                    capture_output=True,
                    check=False,
                )
    return {mode: times[mode] for mode in modes if mode in times}


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of sizes: {text!r}, e.g. 40,160") from None
    if not sizes or any(size < THINKERS_PER_MODULE for size in sizes):
        raise argparse.ArgumentTypeError(f"each size must be at least {THINKERS_PER_MODULE}")
    return sizes


def _modes(text: str) -> tuple[str, ...]:
    wanted = {part.strip() for part in text.split(",")}
    expanded = set()
    for part in wanted:
        if part == "dmypy":
            expanded |= {"dmypy first", "dmypy edit"}
        elif part in MODES:
            expanded.add(part)
        else:
            raise argparse.ArgumentTypeError(f"unknown mode {part!r}: cold, warm or dmypy")
    return tuple(mode for mode in MODES if mode in expanded)


def main() -> None:
    """Generate, time, print the ratios by size and mode, write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=_sizes, default=SIZES, help="thinkers per code base, e.g. 40,160,640"
    )
    parser.add_argument(
        "--modes", type=_modes, help="cold,warm,dmypy (default: cold; every mode with --smoke)"
    )
    parser.add_argument(
        "--repeat", type=int, default=ROUNDS, help=f"rounds per figure (default {ROUNDS})"
    )
    parser.add_argument("--smoke", action="store_true", help=f"{SMOKE_SIZE} thinkers, one run")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the generated code bases")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    sizes: tuple[int, ...] = (SMOKE_SIZE,) if args.smoke else args.sizes
    repeat = 1 if args.smoke else args.repeat
    modes: tuple[str, ...] = args.modes or (MODES if args.smoke else TARGET_MODES)
    root = Path(tempfile.mkdtemp(prefix="harness-plugin-bench-"))
    machine = Machine(busy=1.0)  # mypy runs one process at a time
    load_before = machine.before
    found: list[tuple[str, float, tuple[float, float] | None]] = []
    results: dict[str, dict[str, object]] = {}
    seconds: dict[str, float] = {}
    targets: list[dict[str, object]] = []
    print(f"plugin over plain mypy, {repeat} run(s) per figure and config, alternating ({root})")
    try:
        for size in sizes:
            started = time.perf_counter()
            project = Project(root / f"thinkers-{size}", size)
            times = measure(project, repeat, modes)
            seconds[str(size)] = time.perf_counter() - started
            figures = {mode: _summary(runs) for mode, runs in times.items()}
            results[str(size)] = {
                "thinkers": project.thinkers,
                "tools": project.tools,
                "modules": project.modules + 1,
                "modes": figures,
            }
            shown = f"{project.thinkers} thinkers, {project.tools} tools"
            print(f"{shown}, {project.modules + 1} files")
            for mode, runs in times.items():
                plain, plugin = runs["plain"], runs["plugin"]
                cpu_plain, cpu_plugin = [r.cpu for r in plain], [r.cpu for r in plugin]
                print(_line(mode, "cpu", cpu_plain, cpu_plugin))
                print(_line("", "wall", [r.wall for r in plain], [r.wall for r in plugin]))
                paired = [b / a for a, b in zip(cpu_plain, cpu_plugin, strict=True)]
                interval = _interval(paired)
                # the estimate the interval is of: the per-round ratios' geometric mean
                ratio = interval[0] if interval else paired[0]
                found.append(
                    (
                        f"{mode} at {project.thinkers} thinkers (CPU, per-round geometric mean)",
                        ratio,
                        (interval[1], interval[2]) if interval else None,
                    )
                )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    machine.stop()
    load_after = machine.after
    for name, ratio, bounds in found:
        said = (
            verdict(bounds, LIMIT, "<=", machine.loaded)
            if bounds is not None
            else "cannot tell: one round"
        )
        shown = "no interval" if bounds is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"
        print(f"{name}: {ratio:.3f}x, per-round interval {shown} (target <= {LIMIT}x): {said}")
        targets.append(
            {
                "name": name,
                "ratio": ratio,
                "interval_95": list(bounds) if bounds else None,
                "direction": "<=",
                "limit": LIMIT,
                "verdict": said,
                "met": said == "met",
            }
        )
    print(machine.line())
    if args.json is not None:
        from mypy.version import __version__ as mypy_version

        document = {
            "benchmark": "plugin",
            "conditions": {
                "cpus": os.cpu_count() or 0,
                "load_average_before": load_before,
                "load_average_after": load_after,
                "python": platform.python_version(),
                "mypy": mypy_version,
                "repeat": repeat,
                "sizes": {"thinkers": list(sizes), "modes": list(modes)},
                "seconds_by_size": seconds,
            },
            "figures": results,
            "targets": targets,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
