"""Installs that mypy sees: a user's project in another folder type-checks with
``plugins = ["harness.mypy"]`` against harness installed as a wheel (``pip install .``) and as an
editable install (``pip install -e .``).

Each install goes into a fresh virtual environment of its own, built offline: the wheel and the
editable wheel are made by the build backend's own hooks (what pip calls), installed with
``--no-deps``, and harness's dependencies (mypy among them) come from this test run's environment
through a path entry placed after the new environment's own site-packages, so the ``harness`` mypy
finds is the one just installed. mypy runs with the new environment's interpreter, from the
user's folder, which holds no harness source.

Why it matters: setuptools' editable install is an import hook in site-packages that mypy cannot
follow (mypy reads only path entries of ``.pth`` files): ``import harness`` was then
``[import-not-found]`` and the plugin never ran. The build backend is hatchling, whose editable
install is a path entry.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE_SITE = Path(sysconfig.get_paths()["purelib"])

USER_MODULE = """\
from __future__ import annotations

import attrs
from harness.artifacts import Artifact, ListArtifact
from harness.thinker import DecisionThinker
from harness.jobs import JobContext
from harness.tools import DecisionTool, Identifiable, tool_name


@attrs.frozen
class Note(Artifact, alias="user_note"):
    text: str


@attrs.frozen
class Verdict(Artifact, alias="user_verdict"):
    ok: bool


@attrs.frozen
class Orphan(Artifact, alias="user_orphan"):
    n: int


@tool_name("judge_note")
class JudgeNote(DecisionTool[Note, ListArtifact[Verdict]]):
    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("read_orphan")
class ReadOrphan(DecisionTool[Orphan, Note]):
    async def execute(self, input: Orphan, context: JobContext) -> Note:
        raise NotImplementedError


class Triage(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=(ReadOrphan,),
            objective="Judge the note",
        )
"""

USER_CONFIG = """\
[tool.mypy]
python_version = "3.11"
strict = true
plugins = ["harness.mypy"]
"""

DEAD_TOOL = re.compile(
    r'^app\.py:\d+: error: Tool "ReadOrphan" can never run: .*\[harness-dead-tool\]$'
)


def _build(hook: str, out: Path) -> Path:
    """Run the build backend's PEP 517/660 hook, as pip does, with no network."""
    code = (
        "import sys\n"
        "from hatchling.build import build_editable, build_wheel\n"
        f"print({hook}(sys.argv[1]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out / done.stdout.strip().splitlines()[-1]


def _environment(root: Path, wheel: Path) -> Path:
    """A new virtual environment holding harness from ``wheel``; its other imports from here."""
    venv.EnvBuilder(with_pip=False, clear=True).create(root)
    python = root / "bin" / "python"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", "--no-build-isolation", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    # after the environment's own entries: its harness wins over any harness found here
    (Path(site) / "zz_dependencies_from_the_test_run.pth").write_text(f"{HERE_SITE}\n")
    return python


def _mypy_in_user_folder(python: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    folder.mkdir()
    (folder / "pyproject.toml").write_text(USER_CONFIG)
    (folder / "app.py").write_text(USER_MODULE)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run(
        [str(python), "-m", "mypy", "--cache-dir", str(folder / ".cache"), "app.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _where_harness_is(python: Path, folder: Path) -> Path:
    found = subprocess.run(
        [str(python), "-c", "import harness, sys; print(harness.__file__)"],
        cwd=folder,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return Path(found.stdout.strip())


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["wheel", "editable"])
def test_a_user_project_elsewhere_type_checks_with_the_plugin(kind: str, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = _build("build_wheel" if kind == "wheel" else "build_editable", wheels)
    python = _environment(tmp_path / "env", wheel)
    user = tmp_path / "user_project"

    done = _mypy_in_user_folder(python, user)

    output = done.stdout + done.stderr
    assert "import-not-found" not in output, output
    assert "Traceback" not in output, output
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert len(errors) == 1, output  # the plugin ran: the one illegal palette is reported
    assert DEAD_TOOL.match(errors[0]), output
    assert done.returncode == 1, output
    harness_file = _where_harness_is(python, user)
    if kind == "wheel":  # the installed copy, not the repository's
        assert harness_file.is_relative_to(tmp_path / "env"), harness_file
    else:  # the repository itself, through the editable install's path entry
        assert harness_file == REPO / "harness" / "__init__.py", harness_file
