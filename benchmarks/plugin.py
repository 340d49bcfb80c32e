"""How much the harness mypy plugin costs: cold runs with and without it, and a warm no-op run.

Generates a synthetic project in a temporary directory (200 tools and 40 palettes over 20
modules: each module holds 10 tools and 2 thinkers with 5-tool palettes, some palettes taken
from constants of other modules), then times, in the same run:

- cold mypy without the plugin, cold mypy with it (fresh cache each, best of ``--repeat``);
- a warm no-op run with the plugin and without it (cache kept, nothing edited).

Plain and plugin runs alternate (and so does which of the two goes first in a round), so
neither side always pays for a cold disk cache or profits from a warm one.

Targets: cold at most 1.10x plain mypy, warm at most 1.05x. A script, not a test::

    python benchmarks/plugin.py [--repeat 3] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODULES = 20
TOOLS_PER_MODULE = 10
THINKERS_PER_MODULE = 2
PALETTE_SIZE = 5

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


def _module(m: int) -> str:
    lines = [
        "from typing import Final",
        "from harness.artifacts import ListArtifact",
        "from harness.thinker._thinker import DecisionThinker",
        "from harness.jobs import JobContext",
        "from harness.tools import DecisionTool, Identifiable, tool_name",
        "from artifacts import *  # noqa: F403",
    ]
    if m > 0:
        lines.append(f"from mod{m - 1} import SHARED as PREVIOUS")
    base = (m * 3) % 50
    chain = [base + t for t in range(TOOLS_PER_MODULE + 1)]
    body = []
    for t in range(TOOLS_PER_MODULE):
        i, o = chain[t], chain[t + 1]
        out = f"ListArtifact[A{o}]" if t % 5 == 4 else f"A{o}"
        body.append(TOOL.format(m=m, t=t, i=i, out=out))
    body.append(f"SHARED: Final = ({', '.join(f'Tool{m}x{t}' for t in range(PALETTE_SIZE))})\n")
    for k in range(THINKERS_PER_MODULE):
        first = k * PALETTE_SIZE
        key = first + PALETTE_SIZE - 1
        entries = [f"Tool{m}x{t}" for t in range(first, first + PALETTE_SIZE - 1)]
        palette = "SHARED" if k == 0 else f"({', '.join(entries)},)"
        i, o = chain[first], chain[key + 1]
        body.append(THINKER.format(m=m, k=k, i=i, o=o, key=key, palette=palette))
    return "\n".join(lines) + "\n" + "".join(body)


def generate(root: Path) -> list[str]:
    """Write the synthetic project; return the files to check."""
    highest = (MODULES * 3) % 50 + TOOLS_PER_MODULE + 60
    classes = "".join(ARTIFACT.format(n=n) for n in range(highest))
    (root / "artifacts.py").write_text(ARTIFACTS.format(classes=classes))
    files = ["artifacts.py"]
    for m in range(MODULES):
        (root / f"mod{m}.py").write_text(_module(m))
        files.append(f"mod{m}.py")
    for name, plugins in (("plain.ini", ""), ("plugin.ini", "plugins = mypy_plugin\n")):
        (root / name).write_text(
            "[mypy]\npython_version = 3.11\nstrict = True\n"
            + plugins
            + "[mypy-harness.*]\nfollow_imports = silent\n"
        )
    return files


def _run(root: Path, config: str, cache: Path, files: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO), MYPYPATH=str(REPO))
    command = [sys.executable, "-m", "mypy", "--config-file", config, "--cache-dir", str(cache)]
    started = time.perf_counter()
    done = subprocess.run(
        [*command, *files], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"mypy failed on the synthetic project:\n{done.stdout}{done.stderr}")
    return elapsed


def _alternating(repeat: int) -> list[tuple[int, str, str]]:
    """``(round, label, config)`` for each run: plain and plugin alternate, and which goes
    first alternates too (plain first in even rounds), so neither always runs on a cold disk
    cache or a warm CPU."""
    pairs = [("plain", "plain.ini"), ("plugin", "plugin.ini")]
    out: list[tuple[int, str, str]] = []
    for n in range(repeat):
        for label, config in pairs if n % 2 == 0 else pairs[::-1]:
            out.append((n, label, config))
    return out


def main() -> None:
    """Generate, time, print the figures and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    parser.add_argument("--keep", action="store_true", help="keep the generated project")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    root = Path(tempfile.mkdtemp(prefix="harness-plugin-bench-"))
    try:
        files = generate(root)
        times: dict[str, list[float]] = {}
        for n, label, config in _alternating(args.repeat):  # cold: a fresh cache each run
            cache = root / f"cache-{label}-{n}"
            times.setdefault(f"cold {label}", []).append(_run(root, config, cache, files))
        for _, label, config in _alternating(args.repeat):  # warm no-op: round 0's cache
            cache = root / f"cache-{label}-0"
            times.setdefault(f"warm {label}", []).append(_run(root, config, cache, files))
        figures = {name: min(runs) for name, runs in times.items()}
        print(f"synthetic project: {MODULES * TOOLS_PER_MODULE} tools, ", end="")
        print(f"{MODULES * THINKERS_PER_MODULE} palettes over {MODULES} modules ({root})")
        print(f"best of {args.repeat} runs per figure, plain and plugin runs alternating")
        for name in ("cold plain", "cold plugin", "warm plain", "warm plugin"):
            print(f"  {name:<14} {figures[name]:7.3f} s")
        cold_ratio = figures["cold plugin"] / figures["cold plain"]
        warm_ratio = figures["warm plugin"] / figures["warm plain"]
        print(f"  cold ratio     {cold_ratio:7.3f}x  (target <= 1.10x)")
        print(f"  warm ratio     {warm_ratio:7.3f}x  (target <= 1.05x)")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
