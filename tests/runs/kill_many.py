"""Many runs killed at random points, each resumed and checked (``python -m tests.runs.kill_many
COUNT SEED FOLDER``; prints one JSON object: how many ran, were killed, and every problem).

The driver imports harness once and forks a child per run (cheap: no interpreter start-up); the
child plants its crash (``CHORES_KILL``: during a model call, in a tool after its effect,
half-way through a journal line, right after one) and dies by SIGKILL; the driver resumes the
journal and compares with the uninterrupted run's record.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from pathlib import Path
from typing import Any

from harness import resume_sync, run_sync
from harness.runs import read_journal
from tests.runs import chores

WORDS = ("sweep", "dust", "mop", "water", "iron", "cook", "shop", "bad sink", "bad door")


def comparable(record: dict[str, Any]) -> dict[str, Any]:  # a record's JSON
    data = dict(record)
    data.pop("timing")
    data["calls"] = [{k: v for k, v in c.items() if k != "latency"} for c in data["calls"]]
    return data


def lines(path: Path) -> list[str]:
    return path.read_text().split("\n")[:-1] if path.exists() else []


def uninterrupted(folder: Path, thinker: str, model: str, plan: str) -> dict[str, Any]:
    """The reference run, and how many model calls, tool runs and journal lines it makes."""
    folder.mkdir(parents=True)
    chores.FOLDER = folder
    result = run_sync(
        chores.THINKERS[thinker], chores.Plan(plan), model=chores.model(model),
        journal=folder / "j",
    )  # fmt: skip
    return {
        "record": comparable(result.record().to_json()),
        "model": len(lines(folder / "calls.log")),
        "tool": len(lines(folder / "effects.log")),
        "journal": len(lines(folder / "j")),
        "between": len(lines(folder / "j")),
    }


def one(
    folder: Path, rng: random.Random, cache: dict[tuple[str, str, str], Any], seen: list[str]
) -> list[str]:
    """One run killed and resumed; the problems found (none when all is well)."""
    thinker = rng.choice(("chores", "chores", "reviewed"))
    model = "embedded" if rng.random() < 0.15 else "fake"
    plan = "; ".join(rng.sample(WORDS, rng.randint(2, 6)))
    key = (thinker, model, plan)
    if key not in cache:
        cache[key] = uninterrupted(folder / "reference", thinker, model, plan)
    reference = cache[key]
    kinds = [k for k in ("model", "tool", "journal", "between") if reference[k] > 1]
    kind = rng.choice(kinds)
    first = 2 if kind in ("journal", "between") else 1  # line 1 is the header: no run yet
    point = rng.randint(first, reference[kind])
    seen.extend((kind, model, thinker))
    where = folder / "killed"
    where.mkdir(parents=True)
    journal = where / "j"
    pid = os.fork()
    if pid == 0:  # the child: run until the planted crash
        os.environ["CHORES_KILL"] = f"{kind}:{point}"
        chores.FOLDER = where
        chores._counts.clear()
        try:
            run_sync(
                chores.THINKERS[thinker], chores.Plan(plan), model=chores.model(model),
                journal=journal,
            )  # fmt: skip
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    problems = []
    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
        problems.append(f"{key} {kind}:{point}: the child was not killed ({status})")
    journalled = {
        line.split('"request":"')[1][:32] for line in lines(journal)[1:] if '"request"' in line
    }
    asked_before = len(lines(where / "calls.log"))
    chores.FOLDER = where
    result = resume_sync(chores.THINKERS[thinker], journal, model=chores.model(model))
    asked_after = lines(where / "calls.log")[asked_before:]
    if comparable(result.record().to_json()) != reference["record"]:
        problems.append(f"{key} {kind}:{point}: the resumed record differs")
    if journalled & set(asked_after):
        problems.append(f"{key} {kind}:{point}: a journalled decision was asked again")
    effects = [line.split("\t")[0] for line in lines(where / "effects.log")]
    if len(effects) != len(set(effects)) or len(effects) != reference["tool"]:
        problems.append(f"{key} {kind}:{point}: effects {len(effects)} != {reference['tool']}")
    last = reference["record"]["turns"][-1]
    decided = last["next"] is not None or last["selection"]  # else no decision to journal
    if decided and not read_journal(journal).finished():
        problems.append(f"{key} {kind}:{point}: the journal does not end finished")
    return problems


def main(count: int, seed: int, folder: Path) -> dict[str, Any]:
    """Run ``count`` scenarios drawn from ``seed`` under ``folder``."""
    chores.plant_journal_kill()
    rng = random.Random(seed)
    cache: dict[tuple[str, str, str], Any] = {}
    problems: list[str] = []
    seen: list[str] = []
    for index in range(count):
        problems.extend(one(folder / str(index), rng, cache, seen))
    chores.FOLDER = Path(".")
    return {"runs": count, "problems": problems, "seen": sorted(set(seen))}


if __name__ == "__main__":
    os.environ.pop("CHORES_KILL", None)
    summary = main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
    print(json.dumps(summary))
