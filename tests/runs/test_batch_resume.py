"""``harness batch --journals DIR``: a batch whose process died mid-item, started again, resumes
that item at its next turn (its journalled turns are not run again) and gives the records an
uninterrupted batch gives."""

from __future__ import annotations

import json
import pathlib
import signal

import pytest

from harness.batch import BatchSpec, run_batch
from harness.runs import read_journal
from tests.cli.runs import harness

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLANS = ["sweep; dust", "mop; water; iron", "cook; shop"]


def batch(folder: pathlib.Path, kill: str | None = None) -> int:
    env = {"CHORES_DIR": str(folder)}
    if kill is not None:
        env["CHORES_KILL"] = kill
    done = harness(
        "batch", "tests.runs.chores:Chores", str(folder / "in.jsonl"), "--out",
        str(folder / "out.jsonl"), "--journals", str(folder / "journals"), "--records",
        str(folder / "records"), "--concurrency", "1",
        cwd=folder, env=env, timeout=180,
    )  # fmt: skip
    return done.returncode


def records(folder: pathlib.Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for path in sorted((folder / "records").glob("*.json")):
        data = json.loads(path.read_text())
        data.pop("timing")
        data["calls"] = [{k: v for k, v in c.items() if k != "latency"} for c in data["calls"]]
        found[path.name] = data
    return found


def test_a_batch_killed_mid_item_resumes_that_item_at_its_next_turn(
    tmp_path: pathlib.Path,
) -> None:
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    for folder in (clean, killed):
        folder.mkdir()
        lines = [json.dumps({"text": plan}) for plan in PLANS]
        (folder / "in.jsonl").write_text("\n".join(lines) + "\n")
    assert batch(clean) == 0
    # the 4th chore done is the second of line 2: line 1 finished, line 2 half way
    assert batch(killed, kill="tool:4") in (-signal.SIGKILL, 128 + signal.SIGKILL)
    cut = read_journal(killed / "journals" / "line-00000002.journal")
    assert 2 <= len(cut.entries) < 5  # mid-run: split and a chore journalled, not finished
    assert not cut.finished()
    runs_before = (killed / "executions.log").read_text().splitlines()
    assert batch(killed) == 0
    runs_after = (killed / "executions.log").read_text().splitlines()[len(runs_before) :]
    done_before = {line.split("\t")[0] for line in runs_before[:-1]}  # journalled chores
    assert not done_before & {line.split("\t")[0] for line in runs_after}  # not run again
    assert records(killed) == records(clean)
    effects = [line.split("\t")[0] for line in (killed / "effects.log").read_text().splitlines()]
    assert len(effects) == len(set(effects)) == 7  # every chore applied once
    results = [json.loads(line) for line in (killed / "out.jsonl").read_text().splitlines()]
    assert sorted(r["line"] for r in results) == [1, 2, 3]
    assert {r["status"] for r in results} == {"completed"}


@pytest.mark.slow
def test_on_ray_a_worker_killed_mid_item_has_the_item_resumed_by_another(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "in.jsonl").write_text("".join(json.dumps({"text": p}) + "\n" for p in PLANS))
    assert batch(clean) == 0
    monkeypatch.setenv("CHORES_DIR", str(tmp_path))
    monkeypatch.setenv("CHORES_KILL", "tool:2")  # the second chore a worker does ...
    monkeypatch.setenv("CHORES_KILL_ONCE", str(tmp_path / "died"))  # ... in the first worker
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    (tmp_path / "in.jsonl").write_text((clean / "in.jsonl").read_text())
    spec = BatchSpec(
        "tests.runs.chores:Chores",
        concurrency=1,
        journals_dir=str(tmp_path / "journals"),
        records_dir=str(tmp_path / "records"),
    )
    summary = run_batch(spec, tmp_path / "in.jsonl", tmp_path / "out.jsonl", ray="local", chunk=1)
    assert (tmp_path / "died").read_text() == "died"  # a worker really died mid-item
    assert (summary.completed, summary.failed) == (3, 0)
    assert records(tmp_path) == records(clean)
    effects = [line.split("\t")[0] for line in (tmp_path / "effects.log").read_text().splitlines()]
    assert len(effects) == len(set(effects)) == 7  # the item resumed: no chore applied twice
    runs = [line.split("\t")[0] for line in (tmp_path / "executions.log").read_text().splitlines()]
    assert len(runs) == 8  # the chore in flight ran again (same key), no journalled one did
