"""The ``minilm`` encoder's runtime: harness's numpy forward pass, and what it was chosen over.

Each round starts one fresh process a runtime (in rotating order, so none always runs first on a
warmer machine) that imports it, loads all-MiniLM-L6-v2, and times encodes of digest lines
(``statement#3 (statement): ...``, 20 to 30 tokens) after one warm-up: **one** line, **8**
batched, **32** batched, each the median of ``--repeats`` calls. Per runtime: the import and
load seconds, the peak RSS after loading and after the encodes, the three latencies (medians over
the rounds), and each ratio against the numpy pass measured in the same run:

* **numpy**: ``harness/providers/_fitted/_minilm.py`` as it runs (BLAS pinned to one thread);
* **numpy, BLAS threads**: the same with the pin removed (what the pin saves);
* with ``--reference PYTHON`` (an interpreter with sentence-transformers and torch, such as the
  throwaway venv of ``scripts/minilm_golden.py``): **torch** (sentence-transformers on torch CPU,
  its default threads) and **torch, 1 thread** (``torch.set_num_threads(1)``), from the same zip
  unpacked into a temporary folder (unpacking not timed), and the largest difference between
  its vectors and numpy's.

Targets: the numpy encoder loads in at most 2 s and peaks at most 400 MB (what loading a fitted
file and its encoder may take in all); 8 lines batched cost at most 8 times one line.
``--json FILE`` writes the results (``benchmarks/_results.py``).

A script, not a test: ``python benchmarks/minilm.py [--rounds 3] [--reference
/tmp/st-venv/bin/python] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import conditions, target, write

from harness.providers._fitted._minilm import model_zip

LOAD_TARGET_S = 2.0
RSS_TARGET_MB = 400.0
BATCH_TARGET = 8.0

SUBJECTS = ("Pro plan", "Starter plan", "annual discount", "support hours", "refund window")
VERBS = ("approved raising", "postponed", "rejected", "asked finance to review", "kept")
LINES = [
    f"statement#{n} (statement): The board {VERBS[n % 5]} the {SUBJECTS[n // 5 % 5]} change "
    f"from ${10 + n} to ${12 + n} a month, effective {1 + n % 28} March."
    for n in range(32)
]

# What a probe process runs: argv is the runtime and the unpacked folder (torch only); the lines
# and the repeats come on stdin; one JSON object goes to stdout.
PROBE = r"""
import json, resource, statistics, sys, time
runtime, folder = sys.argv[1], sys.argv[2]
given = json.loads(sys.stdin.read())
lines, repeats = given["lines"], given["repeats"]

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

started = time.perf_counter()
if runtime.startswith("numpy"):
    from harness.providers._fitted import _minilm
    imported = time.perf_counter()
    if runtime == "numpy, BLAS threads":
        import contextlib
        _minilm._one_blas_thread = contextlib.nullcontext
    model = _minilm.MiniLM.load()
    encode = model.encode
else:
    import torch
    from sentence_transformers import SentenceTransformer
    imported = time.perf_counter()
    if runtime == "torch, 1 thread":
        torch.set_num_threads(1)
    model = SentenceTransformer(folder, device="cpu")
    def encode(texts):
        return model.encode(texts, batch_size=32, convert_to_numpy=True)
loaded = time.perf_counter()
peak_loaded = peak_mb()
encode(lines[:8])
times = {"one": [], "eight": [], "thirty_two": []}
sizes = {"one": 1, "eight": 8, "thirty_two": 32}
for round_ in range(repeats):
    for name in list(times)[round_ % 3:] + list(times)[:round_ % 3]:
        at = time.perf_counter()
        encode(lines[: sizes[name]])
        times[name].append(time.perf_counter() - at)
vectors = encode(lines)
print(json.dumps({
    "import_s": imported - started,
    "load_s": loaded - imported,
    "peak_loaded_mb": peak_loaded,
    "peak_mb": peak_mb(),
    **{f"{name}_ms": statistics.median(values) * 1000 for name, values in times.items()},
    "vectors": [[float(x) for x in row] for row in vectors],
}))
"""


def probe(python: str, runtime: str, folder: str, repeats: int) -> dict[str, object]:
    """One fresh process's figures for ``runtime``."""
    done = subprocess.run(
        [python, "-c", PROBE, runtime, folder],
        input=json.dumps({"lines": LINES, "repeats": repeats}),
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
    )
    if done.returncode != 0:
        raise SystemExit(f"the {runtime} probe failed:\n{done.stderr[-2000:]}")
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


FIGURES = ("import_s", "load_s", "peak_loaded_mb", "peak_mb", "one_ms", "eight_ms", "thirty_two_ms")
LABELS = {
    "import_s": "import, s",
    "load_s": "load, s",
    "peak_loaded_mb": "peak RSS loaded, MB",
    "peak_mb": "peak RSS after 32, MB",
    "one_ms": "one line, ms",
    "eight_ms": "8 batched, ms",
    "thirty_two_ms": "32 batched, ms",
}


def main() -> None:
    """Probe every runtime ``--rounds`` times in rotation; print the medians and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes a runtime")
    parser.add_argument("--repeats", type=int, default=7, help="timed encodes of each size")
    parser.add_argument("--reference", metavar="PYTHON", help="a python with sentence-transformers")
    parser.add_argument("--json", help="write the results there (- for stdout)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runtimes = [("numpy", sys.executable), ("numpy, BLAS threads", sys.executable)]
    if args.reference:
        runtimes += [("torch", args.reference), ("torch, 1 thread", args.reference)]
    runs: dict[str, list[dict[str, object]]] = {name: [] for name, _ in runtimes}
    with tempfile.TemporaryDirectory() as folder:
        if args.reference:
            with zipfile.ZipFile(model_zip()) as archive:
                archive.extractall(folder)
        for round_ in range(args.rounds):
            turn = runtimes[round_ % len(runtimes) :] + runtimes[: round_ % len(runtimes)]
            for name, python in turn:
                runs[name].append(probe(python, name, folder, args.repeats))
    medians = {
        name: {
            figure: statistics.median(float(str(run[figure])) for run in found)
            for figure in FIGURES
        }
        for name, found in runs.items()
    }
    print(f"load average: {load:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    print(f"medians of {args.rounds} fresh processes a runtime ({args.repeats} encodes each)")
    names = list(medians)
    print(f"{'':24}" + "".join(f"{name:>22}" for name in names))
    for figure in FIGURES:
        row = "".join(f"{medians[name][figure]:22.3f}" for name in names)
        print(f"{LABELS[figure]:24}{row}")
    numpy = medians["numpy"]
    print("ratios against numpy, same run:")
    for name in names[1:]:
        ratios = ", ".join(
            f"{LABELS[figure].split(',')[0]} {medians[name][figure] / numpy[figure]:.2f}x"
            for figure in FIGURES
        )
        print(f"  {name}: {ratios}")
    batch = numpy["eight_ms"] / numpy["one_ms"]
    print(f"numpy: 8 batched / one line = {batch:.2f} (target <= {BATCH_TARGET})")
    figures: dict[str, object] = {"medians": medians}
    if args.reference:
        own = [row for run in runs["numpy"] for row in run["vectors"]]  # type: ignore[attr-defined]  # JSON lists
        theirs = [row for run in runs["torch"] for row in run["vectors"]]  # type: ignore[attr-defined]  # JSON lists
        differences = [
            abs(a - b) for x, y in zip(own, theirs, strict=True) for a, b in zip(x, y, strict=True)
        ]
        figures["max_abs_difference"] = max(differences)
        print(f"largest |numpy - torch| over {len(LINES)} lines: {max(differences):.2e}")
    write(
        args.json,
        "minilm",
        conditions({"rounds": args.rounds, "repeats": args.repeats}, load),
        figures,
        [
            target("numpy load, s", numpy["load_s"], LOAD_TARGET_S, "<=", "2 s"),
            target("numpy peak RSS, MB", numpy["peak_mb"], RSS_TARGET_MB, "<=", "400 MB"),
            target("numpy 8 batched / one line", batch, BATCH_TARGET, "<=", "one line, same run"),
        ],
    )


if __name__ == "__main__":
    main()
