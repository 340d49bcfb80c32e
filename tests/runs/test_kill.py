"""A run killed with SIGKILL and resumed gives the uninterrupted run's record, asks no
journalled decision again, and a tool honouring its idempotency key applies its effect once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness import resume_sync, run_sync
from harness.runs import read_journal
from harness.runs._journal import JournalledRun
from tests.runs import chores

ROOT = Path(__file__).resolve().parents[2]


def comparable(record: dict[str, object]) -> dict[str, object]:
    """A record's JSON without its timing fields."""
    data = dict(record)
    data.pop("timing")
    calls = data["calls"]
    assert isinstance(calls, list)
    data["calls"] = [{k: v for k, v in c.items() if k != "latency"} for c in calls]
    return data


def reference(tmp_path: Path, thinker: str, model: str, plan: str) -> dict[str, object]:
    """The uninterrupted run's record (in this process, in a folder of its own)."""
    folder = tmp_path / "reference"
    folder.mkdir()
    chores.FOLDER = folder
    try:
        result = run_sync(chores.THINKERS[thinker], chores.Plan(plan), model=chores.model(model))
    finally:
        chores.FOLDER = Path(".")
    return comparable(result.record().to_json())


def killed(folder: Path, thinker: str, model: str, plan: str, kill: str) -> int:
    """Run the scenario in a new process with the crash planted; its exit status."""
    env = {**os.environ, "CHORES_DIR": str(folder), "CHORES_KILL": kill}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.runs.chores",
            thinker,
            model,
            plan,
            str(folder / "run.journal"),
            str(folder / "record.json"),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    return done.returncode


def journalled_calls(journal: JournalledRun) -> int:
    """How many model calls the journal holds (each turn's own and its tools')."""
    count = 0
    for entry in journal.entries:
        for key in ("decision", "tool_calls"):
            groups = entry.data.get(key)
            assert isinstance(groups, list)
            count += sum(len(group) for group in groups)
    return count


PLAN = "sweep; dust; mop; bad shelf; water"


@pytest.mark.parametrize(
    ("thinker", "model", "kill"),
    [
        ("chores", "fake", "model:3"),
        ("chores", "fake", "tool:2"),
        ("chores", "fake", "journal:4"),
        ("reviewed", "fake", "between:3"),
        ("chores", "embedded", "model:2"),
    ],
)
def test_a_run_killed_with_sigkill_resumes_to_the_uninterrupted_record(
    tmp_path: Path, thinker: str, model: str, kill: str
) -> None:
    expected = reference(tmp_path, thinker, model, PLAN)
    folder = tmp_path / "killed"
    folder.mkdir()
    status = killed(folder, thinker, model, PLAN, kill)
    assert status == -signal.SIGKILL  # the planted crash, not a failure of the run
    assert not (folder / "record.json").exists()
    journal = folder / "run.journal"
    before = read_journal(journal)
    journalled = {e.data["request"] for e in before.entries}
    asked_before = (folder / "calls.log").read_text().split()
    (folder / "calls.log").unlink()

    chores.FOLDER = folder
    try:
        result = resume_sync(chores.THINKERS[thinker], journal, model=chores.model(model))
    finally:
        chores.FOLDER = Path(".")
    assert comparable(result.record().to_json()) == expected
    log = folder / "calls.log"
    asked_after = log.read_text().split() if log.exists() else []
    assert not journalled & set(asked_after)  # no journalled decision asked again
    calls = expected["calls"]
    assert isinstance(calls, list)
    assert len(asked_after) == len(calls) - journalled_calls(before)
    assert len(asked_before) >= len(journalled)
    effects = (folder / "effects.log").read_text().splitlines()
    keys = [line.split("\t")[0] for line in effects]
    assert len(keys) == len(set(keys))  # each effect once
    assert sorted(line.split("\t")[1] for line in effects) == sorted(
        c.strip() for c in PLAN.split(";") if "bad" not in c
    )
    assert read_journal(journal).finished()


def test_the_tool_killed_after_its_effect_runs_again_with_the_same_key(tmp_path: Path) -> None:
    folder = tmp_path / "killed"
    folder.mkdir()
    assert killed(folder, "chores", "fake", PLAN, "tool:1") == -signal.SIGKILL
    chores.FOLDER = folder
    try:
        resume_sync(chores.Chores, folder / "run.journal", model=chores.model("fake"))
    finally:
        chores.FOLDER = Path(".")
    runs = [line.split("\t") for line in (folder / "executions.log").read_text().splitlines()]
    first_key = runs[0][0]
    assert [key for key, _ in runs].count(first_key) == 2  # at-least-once: it ran again ...
    effects = (folder / "effects.log").read_text().splitlines()
    assert [line.split("\t")[0] for line in effects].count(first_key) == 1  # ... applied once
    assert first_key.endswith("/2/do_chore/chore#1")
    assert first_key.startswith(read_journal(folder / "run.journal").run_id)


def test_a_finished_journal_resumes_to_its_result_without_asking(tmp_path: Path) -> None:
    chores.FOLDER = tmp_path
    try:
        first = run_sync(
            chores.Chores, chores.Plan(PLAN), model=chores.model("fake"), journal=tmp_path / "j"
        )
        (tmp_path / "calls.log").unlink()
        again = resume_sync(chores.Chores, tmp_path / "j", model=chores.model("fake"))
    finally:
        chores.FOLDER = Path(".")
    assert not (tmp_path / "calls.log").exists()
    assert comparable(again.record().to_json()) == comparable(first.record().to_json())
    assert again.items == first.items
    assert json.loads(json.dumps([d.chore for d in again.items])) == [
        "sweep",
        "dust",
        "mop",
        "water",
    ]


@pytest.mark.slow
def test_200_runs_killed_at_random_points_resume_to_their_uninterrupted_records(
    tmp_path: Path,
) -> None:
    # Fake and embedded models, a nested thinker, failures fed back; killed in a model call,
    # in a tool after its effect, half-way through a journal line, between turns.
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("CHORES_KILL", None)
    done = subprocess.run(
        [sys.executable, "-m", "tests.runs.kill_many", "200", "24", str(tmp_path)],
        env=env, cwd=ROOT, capture_output=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    summary = json.loads(done.stdout.decode().splitlines()[-1])
    assert summary["problems"] == []
    assert summary["runs"] == 200
    assert set(summary["seen"]) == {
        "model", "tool", "journal", "between", "fake", "embedded", "chores", "reviewed",
    }  # fmt: skip
