"""Warm-cache and daemon runs give a cold run's diagnostics after an edit in a third module.

The project: ``artifacts.py`` (the edited module), ``tools.py`` and ``app.py`` (a thinker whose
key tool takes ``Part``; ``MakeSub`` produces ``Sub``). While ``Sub`` subclasses ``Part`` the
palette is legal; the edit makes ``Sub`` a ``Note``, so ``app.py``'s key tool becomes unreachable
(``[harness-graph]``) although ``app.py`` never names ``Sub``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DIAGNOSTIC = re.compile(r"^\S+\.py:\d+: (error|note): ")

ARTIFACTS = """\
import attrs
from harness.artifacts import Artifact


@attrs.frozen
class Note(Artifact, alias="note"):
    text: str


@attrs.frozen
class Part(Artifact, alias="part"):
    text: str


@attrs.frozen
class Sub({base}, alias="sub"):
    pass


@attrs.frozen
class Verdict(Artifact, alias="verdict"):
    ok: bool
"""

TOOLS = """\
from harness.artifacts import ListArtifact
from harness.jobs import JobContext
from harness.tools import DecisionTool, tool_name

from artifacts import Note, Part, Sub, Verdict


@tool_name("make_sub")
class MakeSub(DecisionTool[Note, Sub]):
    async def execute(self, input: Note, context: JobContext) -> Sub:
        raise NotImplementedError


@tool_name("judge_part")
class JudgePart(DecisionTool[Part, ListArtifact[Verdict]]):
    async def execute(self, input: Part, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError
"""

APP = """\
from harness.deciding._thinker import DecisionThinker
from harness.tools import Identifiable

from artifacts import Note, Verdict
from tools import JudgePart, MakeSub


class Triage(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgePart,
            palette=(MakeSub,),
            objective="Judge the parts",
        )
"""

CONFIG = """\
[mypy]
python_version = 3.11
strict = True
plugins = mypy_plugin

[mypy-harness.*]
follow_imports = silent
"""

FILES = ("app.py", "tools.py", "artifacts.py")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env["MYPYPATH"] = str(REPO)
    return env


def _diagnostics(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if DIAGNOSTIC.match(line))


def _write_artifacts(project: Path, base: str) -> None:
    path = project / "artifacts.py"
    before = path.stat().st_mtime if path.exists() else 0.0
    path.write_text(ARTIFACTS.format(base=base) + ("\n" if base == "Note" else ""))
    os.utime(path, (before + 2, before + 2))  # a new mtime even within one clock tick


def _mypy(project: Path, cache: str) -> list[str]:
    done = subprocess.run(
        [str(BIN / "mypy"), "--config-file", "mypy.ini", "--cache-dir", cache, *FILES],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return _diagnostics(done.stdout)


def _cold(project: Path, tmp_path: Path, name: str) -> list[str]:
    return _mypy(project, str(tmp_path / f"cold-{name}"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "mypy.ini").write_text(CONFIG)
    (root / "tools.py").write_text(TOOLS)
    (root / "app.py").write_text(APP)
    _write_artifacts(root, "Part")
    return root


def _expect_graph_error(diagnostics: list[str]) -> None:
    assert any("[harness-graph]" in line and line.startswith("app.py:") for line in diagnostics)


def test_warm_cache_matches_cold_runs(project: Path, tmp_path: Path) -> None:
    warm = str(tmp_path / "warm")
    legal = _mypy(project, warm)
    assert legal == [], legal

    _write_artifacts(project, "Note")
    edited_warm = _mypy(project, warm)
    assert edited_warm == _cold(project, tmp_path, "edited")
    _expect_graph_error(edited_warm)

    _write_artifacts(project, "Part")
    reverted_warm = _mypy(project, warm)
    assert reverted_warm == _cold(project, tmp_path, "reverted") == legal


@pytest.fixture
def daemon(project: Path, tmp_path: Path) -> Iterator[list[str]]:
    status = str(tmp_path / "dmypy.json")
    base = [str(BIN / "dmypy"), "--status-file", status]
    started = subprocess.run(
        [*base, "start", "--", "--config-file", "mypy.ini", "--cache-dir", str(tmp_path / "d")],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield base
    finally:
        stopped = subprocess.run(
            [*base, "stop"], cwd=project, env=_env(), capture_output=True, timeout=60
        )
        if stopped.returncode != 0:
            subprocess.run([*base, "kill"], cwd=project, env=_env(), timeout=60, check=False)


def _dmypy_check(base: list[str], project: Path) -> list[str]:
    done = subprocess.run(
        [*base, "check", *FILES],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return _diagnostics(done.stdout)


def test_daemon_matches_cold_runs(project: Path, tmp_path: Path, daemon: list[str]) -> None:
    legal = _dmypy_check(daemon, project)
    assert legal == _cold(project, tmp_path, "start") == []

    _write_artifacts(project, "Note")
    edited = _dmypy_check(daemon, project)
    assert edited == _cold(project, tmp_path, "edited")
    _expect_graph_error(edited)

    _write_artifacts(project, "Part")
    assert _dmypy_check(daemon, project) == _cold(project, tmp_path, "reverted") == legal
