"""Warm-cache, daemon and parallel runs give a cold run's diagnostics after edits in other modules.

The project: ``artifacts.py``, ``bases.py`` (a generic base tool), ``tools.py`` and ``app.py`` (a
thinker whose key tool takes ``Part``; ``MakeSub`` produces ``Sub`` through ``Base``). While
``Sub`` subclasses ``Part`` the palette is legal. Each edit changes a verdict in ``app.py`` (or
at a tool's definition) although ``app.py`` never names what changed:

- ``sub``: ``Sub`` becomes a ``Note``: the key tool is unreachable (``[harness-graph]``);
- ``swap``: ``Mid(Base[In, Out])`` becomes ``Mid(Base[Out, In])``, so ``MakeSub(Mid[Note, Sub])``
  takes ``Sub`` and makes ``Note`` (``[harness-dead-tool]``);
- ``ctor``: ``Base`` gets a constructor needing more than the parent, which ``MakeSub``
  inherits (``[harness-ctor]`` at ``tools.py``, a note in ``app.py``);
- ``name``: ``MakeSub``'s ``@tool_name`` string becomes ``"judge_part"``, the key tool's name
  (``[harness-duplicate]``);
- ``call``: the ``tool_name("read_csv")(CsvReader)`` call in ``naming.py`` (which ``tools.py``
  imports, so ``app.py`` only imports it through another module) names the vendored class
  ``"judge_part"`` instead (``[harness-duplicate]``);
- ``nested``: that call moves into a function, so no type checker can promise it ran
  (``[harness-undecidable]``);
- ``unnamed``: ``tools.py`` stops importing ``naming.py``; nothing the palette's module imports
  names the class (``[harness-name]``).

A second thinker's palette is plain (tools with one concrete base and a literal name each),
which the plugin proves fine in a few questions: the ``sub`` edit must reach it too.

The vendored class is an attrs class that writes its own ``__init__`` (attrs keeps it; mypy's
attrs plugin gives the class one of no parameters): a warm run reads the constructor recorded in
the cache, as a cold run reads the class body.

Every edit is reverted before the next one; the cold run of each state is computed once.
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
class Sub({sub_base}, alias="sub"):
    pass


@attrs.frozen
class Verdict(Artifact, alias="verdict"):
    ok: bool
"""

BASES = """\
from typing import Generic, TypeVar

from harness.artifacts import Artifact
from harness.tools import DecisionTool, Identifiable

In = TypeVar("In", bound=Artifact)
Out = TypeVar("Out", bound=Artifact)


class Base(DecisionTool[In, Out], Generic[In, Out]):
    def __init__(self, parent: Identifiable{ctor}) -> None:
        super().__init__(parent)


class Mid(Base[{arguments}], Generic[In, Out]):
    pass
"""

VENDORED = """\
import attrs
from harness.jobs import JobContext
from harness.tools import DecisionTool, Identifiable

from artifacts import Note


@attrs.define
class CsvReader(DecisionTool[Note, Note]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(parent)

    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError
"""

NAMING = """\
from harness.tools import tool_name

from vendored import CsvReader

ReadCsv = tool_name("{name}")(CsvReader)
"""

NAMING_LATE = """\
from harness.tools import tool_name

from vendored import CsvReader


def name_it() -> None:
    tool_name("read_csv")(CsvReader)


name_it()
"""

TOOLS = """\
{naming}from harness.artifacts import ListArtifact
from harness.jobs import JobContext
from harness.tools import DecisionTool, tool_name

from artifacts import Note, Part, Sub, Verdict
from bases import Mid


@tool_name("{make_sub}")
class MakeSub(Mid[Note, Sub]):
    async def execute(self, input: Note, context: JobContext) -> Sub:
        raise NotImplementedError


@tool_name("judge_part")
class JudgePart(DecisionTool[Part, ListArtifact[Verdict]]):
    async def execute(self, input: Part, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("make_plain_sub")
class MakePlainSub(DecisionTool[Note, Sub]):
    async def execute(self, input: Note, context: JobContext) -> Sub:
        raise NotImplementedError
"""

APP = """\
from harness.thinker._thinker import DecisionThinker
from harness.tools import Identifiable

from artifacts import Note, Verdict
from tools import JudgePart, MakePlainSub, MakeSub
from vendored import CsvReader


class Triage(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgePart,
            palette=(MakeSub, CsvReader),
            objective="Judge the parts",
        )


class PlainTriage(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgePart,
            palette=(MakePlainSub,),
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

FILES = ("app.py", "tools.py", "bases.py", "artifacts.py", "vendored.py", "naming.py")

#: Each state of the project: what each edited file says.
STATES: dict[str, dict[str, str]] = {
    "legal": {},
    "sub": {"artifacts.py": ARTIFACTS.format(sub_base="Note")},
    "swap": {"bases.py": BASES.format(arguments="Out, In", ctor="")},
    "ctor": {"bases.py": BASES.format(arguments="In, Out", ctor=", times: int")},
    "name": {"tools.py": TOOLS.format(make_sub="judge_part", naming="import naming\n")},
    "call": {"naming.py": NAMING.format(name="judge_part")},
    "nested": {"naming.py": NAMING_LATE},
    "unnamed": {"tools.py": TOOLS.format(make_sub="make_sub", naming="")},
}
LEGAL: dict[str, str] = {
    "artifacts.py": ARTIFACTS.format(sub_base="Part"),
    "bases.py": BASES.format(arguments="In, Out", ctor=""),
    "tools.py": TOOLS.format(make_sub="make_sub", naming="import naming\n"),
    "vendored.py": VENDORED,
    "naming.py": NAMING.format(name="read_csv"),
    "app.py": APP,
}

#: What each edit must make a cold run say (a line of the output holding both parts).
EXPECTED: dict[str, tuple[str, str]] = {
    "sub": ("app.py:25:", "[harness-graph]"),
    "swap": ("app.py:", "[harness-dead-tool]"),
    "ctor": ("tools.py:", "[harness-ctor]"),
    "name": ("app.py:", "[harness-duplicate]"),
    "call": ("app.py:", "[harness-duplicate]"),
    "nested": ("app.py:", "[harness-undecidable]"),
    "unnamed": ("app.py:", "[harness-name]"),
}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env["MYPYPATH"] = str(REPO)
    env.pop("MYPY_NUM_WORKERS", None)
    return env


def _diagnostics(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if DIAGNOSTIC.match(line))


def _write(project: Path, state: str) -> None:
    """Put the project in ``state``: every file as in that state, a new mtime where it changed."""
    for name, text in {**LEGAL, **STATES[state]}.items():
        path = project / name
        if path.exists() and path.read_text() == text:
            continue
        before = path.stat().st_mtime if path.exists() else 0.0
        # a different size too, so no stat-based shortcut can miss the edit
        path.write_text(text + ("\n" * (len(state) if state != "legal" else 0)))
        os.utime(path, (before + 2, before + 2))  # a new mtime even within one clock tick


#: What mypy 2.4 prints when its parallel mode cannot start or hear from a worker in time: a
#: worker must write its status file within 3 s of being spawned (``WORKER_START_TIMEOUT``,
#: compiled into mypy) and answer each step within 10 s. On an overloaded machine it cannot; mypy
#: then exits 2 with no diagnostics at all, whatever the plugin would say.
WORKER_FAILURE = re.compile(
    r"Failed to establish connection with worker|Cannot connect to build worker"
    r"|Worker \d+ disconnected"
)


#: The parallel runs' workers start as ``early_worker.py`` (see there): reachable in
#: milliseconds, so mypy's 3 s start deadline holds on a loaded machine; the coordinator is mypy's
#: own ``console_entry``, told to spawn workers through a launcher that ``exec``s it.
EARLY_WORKER = Path(__file__).with_name("early_worker.py")
COORDINATOR = (
    "import sys; launcher = sys.argv[1]; sys.argv = ['mypy', *sys.argv[2:]]; "
    "sys.executable = launcher; from mypy.__main__ import console_entry; console_entry()"
)


def _launcher(directory: Path) -> Path:
    script = directory / "python-early-worker"
    if not script.exists():
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{EARLY_WORKER}" "$@"\n')
        script.chmod(0o755)
    return script


def _mypy(project: Path, cache: str, *extra: str, workers: int = 0) -> list[str]:
    args = ["--config-file", "mypy.ini", "--cache-dir", cache, *extra, *FILES]
    if workers:
        launcher = _launcher(project.parent)
        command = [sys.executable, "-c", COORDINATOR, str(launcher)]
        args = ["--python-executable", sys.executable, "--num-workers", str(workers), *args]
    else:
        command = [str(BIN / "mypy")]
    done = subprocess.run(
        [*command, *args],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert WORKER_FAILURE.search(output) is None, (
        "mypy's parallel mode could not start or reach its workers within its fixed deadlines "
        "(3 s to start, 10 s a step): the machine is overloaded; this is mypy's, not the "
        f"plugin's:\n{output}"
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), output  # 2: mypy itself failed, so no verdicts to compare
    return _diagnostics(done.stdout)


def _new_project(root: Path, state: str = "legal") -> Path:
    root.mkdir()
    (root / "mypy.ini").write_text(CONFIG)
    _write(root, state)
    return root


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The cold serial run's diagnostics of every state, each in a fresh project and cache."""
    out: dict[str, list[str]] = {}
    for state in STATES:
        root = _new_project(tmp_path_factory.mktemp("cold") / "project", state)
        out[state] = _mypy(root, str(root / ".cold-cache"))
    assert out["legal"] == [], out["legal"]
    for state, (where, code) in EXPECTED.items():
        assert any(line.startswith(where) and code in line for line in out[state]), out[state]
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return _new_project(tmp_path / "project")


def test_each_edit_changes_the_verdicts(cold: dict[str, list[str]]) -> None:
    ctor_note = [line for line in cold["ctor"] if line.startswith("app.py:")]
    assert ctor_note == [
        'app.py:15: note: "MakeSub" breaks the palette rules where it is defined '
        '(module "tools", line 11)'
    ]


def test_warm_cache_matches_cold_runs(
    project: Path, tmp_path: Path, cold: dict[str, list[str]]
) -> None:
    warm = str(tmp_path / "warm")
    assert _mypy(project, warm) == cold["legal"]
    for state in EXPECTED:
        _write(project, state)
        assert _mypy(project, warm) == cold[state], state
        if state == "ctor":  # only app.py re-checked: the tool's class comes from the cache
            app = project / "app.py"
            app.write_text(APP + "# touched\n")
            os.utime(app, (app.stat().st_mtime + 2,) * 2)
            assert _mypy(project, warm) == cold[state], "ctor, tool from the cache"
        _write(project, "legal")
        assert _mypy(project, warm) == cold["legal"], f"reverted {state}"


def test_parallel_run_matches_cold_serial_run(
    project: Path, tmp_path: Path, cold: dict[str, list[str]]
) -> None:
    _write(project, "ctor")
    cache = str(tmp_path / "parallel")
    assert _mypy(project, cache, workers=2) == cold["ctor"]
    _write(project, "name")  # warm and parallel: the tool's module comes from the cache
    assert _mypy(project, cache, workers=2) == cold["name"]


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


def test_daemon_matches_cold_runs(
    project: Path, daemon: list[str], cold: dict[str, list[str]]
) -> None:
    assert _dmypy_check(daemon, project) == cold["legal"]
    for state in EXPECTED:
        _write(project, state)
        assert _dmypy_check(daemon, project) == cold[state], state
        _write(project, "legal")
        assert _dmypy_check(daemon, project) == cold["legal"], f"reverted {state}"
