"""docs/testing.md's stand-in loop, run as written in a folder of its own: the teacher's cassette
(its python block), ``harness fit`` on it, the test file, and the ``pytest`` line, whose summary
must say what the page says (tests/docs runs the page's harness lines; the pytest line runs
here)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
HEADING = "## A distilled stand-in for cassette misses"


def _section() -> str:
    text = DOC.read_text(encoding="utf-8")
    assert HEADING in text, f"{DOC.name} lost its stand-in section"
    return text[text.index(HEADING) :]


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", _section(), re.DOTALL | re.MULTILINE)


def _run(words: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        words, cwd=folder, capture_output=True, text=True, timeout=600, check=False
    )


def test_the_page_s_loop_runs_as_written(tmp_path: Path) -> None:
    teacher = _blocks("py")[0]  # the teacher's cassette (the next py block is the test file)
    done = _run([sys.executable, "-c", teacher], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "138 recorded answers" in done.stdout

    (console,) = [b for b in _blocks("console") if "harness fit" in b]
    fit_line = next(line for line in console.splitlines() if line.startswith("$ harness"))
    words = shlex.split(fit_line.removeprefix("$ "))
    done = _run([sys.executable, "-m", "harness", *words[1:]], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "agreement with the teacher" in done.stdout

    section = _section()
    test_file = re.search(r"<!-- file: (\S+) -->\n```py\n(.*?)^```$", section, re.S | re.M)
    assert test_file is not None
    (tmp_path / test_file[1]).write_text(test_file[2], encoding="utf-8")

    (sh,) = _blocks("sh")
    command = shlex.split(sh.strip())
    assert command[0] == "pytest"
    replay_only = _run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", command[1]], tmp_path
    )
    assert replay_only.returncode == 1, replay_only.stdout
    assert "ReplayMissError" in replay_only.stdout
    done = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *command[1:]], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (shown,) = _blocks("text")[-1:]
    summary = next(line for line in shown.splitlines() if line.startswith("1 request(s)"))
    assert summary in done.stdout
    assert "1 passed" in done.stdout
