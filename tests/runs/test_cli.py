"""``harness run --journal / --resume / --approve`` and ``harness replay --branch``, in a
subprocess on the embedded model: a resumed run's record equals the uninterrupted one's, usage
mistakes are one line and exit 2, a run below its approval bar pauses with exit 3."""

from __future__ import annotations

import json
import pathlib

from harness.runs import read_journal
from tests.cli.runs import harness

PLAN = '{"text": "sweep; risky roof; mop"}'


def record(path: pathlib.Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text())
    data.pop("timing")
    calls = data["calls"]
    assert isinstance(calls, list)
    data["calls"] = [{k: v for k, v in c.items() if k != "latency"} for c in calls]
    return data


def run(*args: str, cwd: pathlib.Path) -> tuple[int, str, str]:
    done = harness(*args, cwd=cwd, timeout=120, env={"CHORES_DIR": str(cwd)})
    return done.returncode, done.stdout, done.stderr


def test_run_journal_then_resume_gives_the_same_record(tmp_path: pathlib.Path) -> None:
    journal = tmp_path / "run.journal"
    code, _, err = run(
        "run", "tests.runs.chores:Chores", "--input", PLAN, "--journal", str(journal),
        "--bodies", "--record", str(tmp_path / "whole.json"), cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:3]) + "\n" + lines[3][:30])  # two turns and a torn one
    code, _, err = run(
        "run", "--resume", str(journal), "--record", str(tmp_path / "resumed.json"), cwd=tmp_path
    )
    assert code == 0, err
    assert f"resumed: 2 of {len(lines) - 1} turns replayed from {journal}" in err
    shown = [line.split(":")[0] for line in err.splitlines() if line.startswith("turn ")]
    assert "turn 3" in shown  # the turns run again, each on a line as it ended
    assert record(tmp_path / "resumed.json") == record(tmp_path / "whole.json")
    assert len(read_journal(journal).entries) == len(lines) - 1

    code, out, err = run(
        "replay", str(tmp_path / "whole.json"), "tests.runs.chores:Chores", "--branch",
        "2=do_chore:chore#3", "--fallback", "embedded", cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert "branched at turn 2 (do_chore:chore#3)" in out
    row = next(line for line in out.splitlines() if line.startswith("   2 >"))
    assert "do_chore on chore#3" in row.split("  ")[-1]

    code, out, err = run(
        "replay", str(journal), "tests.runs.chores:Chores", "--branch", "3=finish", cwd=tmp_path
    )  # a journal: the turns before 3 replayed, the model asked only from turn 3 on
    assert code == 0, err
    assert out.splitlines()[1].split()[:2] == ["journalled", "branch"]
    row = next(line for line in out.splitlines() if line.startswith("   3 >"))
    assert row.rstrip().endswith("finish []")


def test_usage_mistakes_are_one_line_and_exit_2(tmp_path: pathlib.Path) -> None:
    journal = tmp_path / "run.journal"
    assert run("run", "tests.runs.chores:Chores", "--input", PLAN, "--journal", str(journal),
               cwd=tmp_path)[0] == 0  # fmt: skip
    cases = [
        (("run",), "pass MODULE:CLASS and --input JSON"),
        (("run", "--resume", str(tmp_path / "nothing")), "no such journal"),
        (("run", "--resume", str(journal), "--input", PLAN), "drop --input"),
        (
            ("run", "tests.runs.chores:Chores", "--input", PLAN, "--journal", str(journal)),
            "a journal is already there: resume it",
        ),
        (
            ("run", "--resume", str(journal), "--entry", "systemone:other"),
            "model changed from embedded",
        ),
    ]
    for args, message in cases:
        code, _, err = run(*args, cwd=tmp_path)
        assert code == 2, (args, err)
        assert message in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err
    _, _, err = run("run", "--resume", str(journal), "--entry", "systemone:other", cwd=tmp_path)
    assert "--accept-model-change" in err


def test_replay_branch_mistakes_exit_2(tmp_path: pathlib.Path) -> None:
    code, _, err = run(
        "run", "tests.runs.chores:Chores", "--input", PLAN, "--bodies",
        "--record", str(tmp_path / "r.json"), cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    base = ("replay", str(tmp_path / "r.json"), "tests.runs.chores:Chores")
    for extra, message in [
        (("--branch", "two=finish", "--fallback", "embedded"), "is not K=MOVE"),
        (("--branch", "2=finish"), "pass --fallback ID"),
        (("--branch", "2=mop", "--fallback", "embedded"), "not a legal move there; legal: do_"),
    ]:
        code, _, err = run(*base, *extra, cwd=tmp_path)
        assert code == 2, (extra, err)
        assert message in err, (extra, err)


def test_a_run_below_its_bar_pauses_with_exit_3_and_resumes_with_approve(
    tmp_path: pathlib.Path,
) -> None:
    journal = tmp_path / "careful.journal"
    code, _, err = run(
        "run", "tests.runs.chores:CarefulChores", "--input", PLAN, "--journal", str(journal),
        cwd=tmp_path,
    )  # fmt: skip
    assert code == 3, err
    assert "paused: turn 3: run do_chore on" in err
    assert f"resume: harness run --resume {journal} --approve yes|no" in err
    assert read_journal(journal).pending is not None
    code, _, err = run("run", "--resume", str(journal), cwd=tmp_path)
    assert code == 2
    assert "paused at turn 3" in err
    code, _, err = run("run", "--resume", str(journal), "--approve", "no", cwd=tmp_path)
    assert code == 0, err
    turns = [e for e in read_journal(journal).entries if e.kind == "turn"]
    assert turns[2].data["approval"] == {
        "kind": "reject",
        "tool": None,
        "artifact": None,
        "reason": "rejected by a person",
    }
    assert read_journal(journal).finished()
    code, _, err = run(
        "run", "tests.runs.chores:CarefulChores", "--input", PLAN, cwd=tmp_path
    )  # no journal, no --approve, no terminal: the run fails naming both
    assert code == 1
    assert "needs a person's approval" in err


def test_on_a_terminal_harness_run_asks_the_person(tmp_path: pathlib.Path) -> None:
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    from tests.cli.runs import ROOT

    master, slave = pty.openpty()
    env = {**os.environ, "CHORES_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "run", "tests.runs.chores:CarefulChores",
         "--input", PLAN],
        stdin=slave, stderr=slave, stdout=subprocess.PIPE, cwd=tmp_path, env=env,
    )  # fmt: skip
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    answered = 0
    while process.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            continue
        try:
            seen += os.read(master, 4096)
        except OSError:
            break
        if seen.count(b"empty to pause: ") > answered:
            answered += 1
            os.write(master, b"n\n")  # reject: the pair is spent
    process.communicate(timeout=60)
    os.close(master)
    text = seen.decode()
    assert process.returncode == 0, text
    assert "turn 3: run do_chore on" in text
    assert "legal moves: do_chore on" in text
    assert answered >= 1
    import re

    texts = {"chore#1": "sweep", "chore#2": "risky roof", "chore#3": "mop"}
    rejected = {texts[ref] for ref in re.findall(r"run do_chore on (chore#\d)\?", text)}
    log = tmp_path / "executions.log"
    done = {line.split("\t")[1] for line in log.read_text().splitlines()} if log.exists() else set()
    assert rejected
    assert not rejected & done  # a rejected move's tool never ran
