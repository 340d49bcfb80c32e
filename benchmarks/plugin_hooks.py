"""Where the plugin's cost goes: its hooks timed inside one mypy process, against the whole run.

Generates the code bases of ``benchmarks/plugin.py`` (``--sizes``, thinkers), then for each size
runs mypy with the plugin in a child process whose hooks (the checks, the records of semantic
analysis, and the hook lookups mypy makes) are wrapped in a timer, and prints each hook's calls
and seconds beside the run's CPU seconds (a fresh cache each run, ``--repeat`` runs, medians).
Also counts how often mypy asks the plugin for a hook, by kind, and times one such question
with and without the plugin in mypy's plugin chain (a hook the plugin does not define still
costs a call through mypyc's glue into a Python subclass).

``--instructions`` counts instead the instructions of one plain and one plugin run per size
under ``valgrind --tool=cachegrind`` (about 30 times slower than a run): a count another
process on the machine does not change, where CPU seconds on a busy machine drift by more than
the plugin costs. A script, not a test::

    python benchmarks/plugin_hooks.py [--sizes 160,640] [--repeat 3]
    python benchmarks/plugin_hooks.py --sizes 160,640 --instructions
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from plugin import Project  # noqa: E402

#: Run in the child: wrap each hook in a timer, run mypy once, print the figures as JSON.
CHILD = r"""
import collections, functools, glob, json, sys, time
import mypy_plugin._definition as definition
import mypy_plugin._palette_site as site
import mypy_plugin._plugin as plugin
import mypy_plugin._record as record
from mypy import api
from mypy.plugin import Plugin

seconds = collections.Counter()
calls = collections.Counter()
asked = collections.Counter()

def timed(name, function):
    @functools.wraps(function)
    def wrapper(*args):
        started = time.perf_counter()
        try:
            return function(*args)
        finally:
            seconds[name] += time.perf_counter() - started
            calls[name] += 1
    return wrapper

for module, names in (
    (definition, ["check_tool_definition"]),
    (site, ["check_super_init", "check_explicit_init", "check_direct_thinker"]),
):
    for name in names:
        setattr(module, name, timed(name, getattr(module, name)))
plugin.record_tool_name = timed("record_tool_name", record.record_tool_name)
plugin.record_other_decorator = timed("record_other_decorator", record.record_other_decorator)
own = {name for name in vars(plugin.HarnessPlugin) if name.startswith("get_")}
for name in sorted(own | {"report_config_data"}):
    setattr(plugin.HarnessPlugin, name, timed(name, getattr(plugin.HarnessPlugin, name)))

def counted(name, function):
    def wrapper(self, *args):
        asked[name] += 1
        return function(self, *args)
    return wrapper

if sys.argv[2] == "count":  # a separate run: counting costs a Python call per question
    for name in dir(Plugin):
        if name.startswith("get_") and name not in own:
            setattr(plugin.HarnessPlugin, name, counted(name, getattr(Plugin, name)))

files = ["artifacts.py", *sorted(glob.glob("mod*.py"))]
started = time.process_time()
out, err, status = api.run(["--config-file", "plugin.ini", "--cache-dir", sys.argv[1], *files])
cpu = time.process_time() - started
if status:
    raise SystemExit(out + err)
print(json.dumps({"cpu": cpu, "seconds": seconds, "calls": calls, "asked": asked}))
"""

#: Run in the child: one question about a hook the plugin does not define, asked of plain
#: mypy's plugin (the default one alone: no chain) and of the chain the plugin puts it in
#: (nanoseconds per question, best of 5).
LOOKUP = r"""
import json, time
from mypy.options import Options
from mypy.plugin import ChainedPlugin
from mypy.plugins.default import DefaultPlugin
from mypy_plugin._plugin import HarnessPlugin

options = Options()
chains = {
    "plain": DefaultPlugin(options),
    "plugin": ChainedPlugin(options, [HarnessPlugin(options), DefaultPlugin(options)]),
}
n = 200_000
found = {}
for label, chain in chains.items():
    ask = chain.get_type_analyze_hook
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(n):
            ask("mod.Name")
        best = min(best, time.perf_counter() - started)
    found[label] = best / n * 1e9
print(json.dumps(found))
"""


def _child(project: Project, code: str, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=project.root,
        env=project.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the timed mypy run failed:\n{done.stdout}{done.stderr}")
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _instructions(project: Project, label: str) -> int:
    """Instructions of one cold mypy run of ``label``'s config, counted by cachegrind."""
    files = ["artifacts.py", *(f"mod{m}.py" for m in range(project.modules))]
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    command += [sys.executable, "-m", "mypy", "--config-file", f"{label}.ini"]
    command += ["--cache-dir", f"cache-count-{label}", *files]
    done = subprocess.run(
        command, cwd=project.root, env=project.env(), capture_output=True, text=True, check=False
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"mypy ({label}) under cachegrind failed:\n{done.stdout}{done.stderr}")
    return int(found.group(1).replace(",", ""))


def _count_instructions(project: Project) -> None:
    """Print the instructions of a plain and a plugin run of ``project`` and their ratio."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind: install it (apt-get install valgrind)")
    _child(project, CHILD, "cache-warmup", "time")  # byte code written once
    plain, plugin = (_instructions(project, label) for label in ("plain", "plugin"))
    print(
        f"{project.thinkers} thinkers, {project.tools} tools: plain mypy {plain / 1e9:.2f} G"
        f" instructions, with the plugin {plugin / 1e9:.2f} G ({plugin / plain:.3f}x)"
    )


def _numbers(value: object) -> dict[str, float]:
    return {str(k): float(v) for k, v in value.items()} if isinstance(value, dict) else {}


def main() -> None:
    """Time the hooks per size, print them beside the run's CPU seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="160,640", help="thinkers per code base")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per size")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions (valgrind) instead"
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="harness-plugin-hooks-"))
    load_before = os.getloadavg()[0]
    try:
        for size in (int(part) for part in args.sizes.split(",")):
            project = Project(root / f"thinkers-{size}", size)
            if args.instructions:
                _count_instructions(project)
                continue
            _child(project, CHILD, "cache-warmup", "time")  # byte code written once
            runs = [_child(project, CHILD, f"cache-{n}", "time") for n in range(args.repeat)]
            cpu = statistics.median(float(str(run["cpu"])) for run in runs)
            names = sorted({name for run in runs for name in _numbers(run["seconds"])})
            hooks = {
                name: statistics.median(_numbers(run["seconds"]).get(name, 0.0) for run in runs)
                for name in names
            }
            total = sum(hooks.values())
            print(
                f"{project.thinkers} thinkers, {project.tools} tools: mypy with the plugin"
                f" {cpu:.3f} s CPU (median of {len(runs)}), its hooks {total:.3f} s"
                f" ({100 * total / cpu:.1f}%)"
            )
            counts = _numbers(runs[0]["calls"])
            for name, spent in sorted(hooks.items(), key=lambda item: -item[1]):
                calls = int(counts.get(name, 0))
                each = f"{spent / calls * 1e6:7.1f} µs each" if calls else ""
                print(f"  {name:<32} {calls:8d} calls {spent:7.3f} s {each}")
            asked = _numbers(_child(project, CHILD, "cache-count", "count")["asked"])
            shown = ", ".join(
                f"{name} {int(n)}" for name, n in sorted(asked.items(), key=lambda i: -i[1])[:4]
            )
            print(
                f"  questions about hooks it does not define: {int(sum(asked.values()))}"
                f" ({shown}, ...)"
            )
        if args.instructions:
            return
        lookup = _numbers(_child(project, LOOKUP))
        print(
            f"one such question: {lookup['plain']:.0f} ns in plain mypy (no chain),"
            f" {lookup['plugin']:.0f} ns with the plugin in it"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
