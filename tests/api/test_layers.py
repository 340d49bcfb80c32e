"""No import circle between packages: the layers of docs/architecture.md run one way.

Two views: every ``import`` in a package's source (module level, under ``TYPE_CHECKING`` and
inside functions) names only its own layer or lower ones; and importing a package in a fresh
interpreter loads no ``harness`` package above it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "harness"

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"errors", "_guard"}),
    frozenset({"decision", "artifacts", "scope"}),
    frozenset({"catalog"}),
    frozenset({"admission"}),
    frozenset({"providers"}),
    frozenset({"replay"}),
    frozenset({"jobs"}),
    frozenset({"tools"}),
    frozenset({"palette"}),
    frozenset({"thinker"}),
    frozenset({"record"}),
    frozenset({"runs", "testing", "pytest_plugin", "serve", "demo", "batch", "observe"}),
    frozenset({"cli", "__main__", "mypy"}),
)
"""Lowest first: a package may import its own layer and the layers below it."""

ALLOWED_UPWARD: set[tuple[str, str]] = set()
"""None: even a type-only import upward makes an import cycle for mypy (whose parallel mode then
lost the plugin's verdicts when the thinker imported the run API's types)."""


def layer_of(package: str) -> int:
    for number, members in enumerate(LAYERS):
        if package in members:
            return number
    raise AssertionError(f"harness.{package} has no layer: add it to LAYERS")


def package_of(path: Path) -> str:
    return path.relative_to(HARNESS).parts[0].removesuffix(".py")


def harness_imports(path: Path) -> set[str]:
    """The ``harness`` packages ``path`` imports anywhere in its source."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "harness" and len(parts) > 1:
                found.add(parts[1])
    return found


SOURCES = sorted(
    p for p in HARNESS.rglob("*.py") if "corpus" not in p.parts and p.parent != HARNESS
) + [p for p in sorted(HARNESS.glob("*.py")) if p.name not in ("__init__.py",)]


def test_every_package_has_a_layer() -> None:
    for path in SOURCES:
        layer_of(package_of(path))


def test_no_package_imports_a_higher_layer() -> None:
    upward: list[str] = []
    for path in SOURCES:
        source = package_of(path)
        for target in harness_imports(path):
            if target == source or (source, target) in ALLOWED_UPWARD:
                continue
            if layer_of(target) > layer_of(source):
                upward.append(f"{path.relative_to(ROOT)} imports harness.{target}")
    assert upward == []


def test_the_old_circle_is_gone() -> None:
    """tools <- jobs <- providers used to run both ways: jobs took Identity from tools, the clients
    took the record types from jobs, jobs took the clients; and the override loaded the record
    package at call time, closing a circle of llm, jobs, thinker and record."""
    jobs = {t for p in (HARNESS / "jobs").rglob("*.py") for t in harness_imports(p)}
    providers = {t for p in (HARNESS / "providers").rglob("*.py") for t in harness_imports(p)}
    replay = {t for p in (HARNESS / "replay").rglob("*.py") for t in harness_imports(p)}
    assert providers
    assert "tools" not in jobs
    assert "jobs" not in providers
    assert "tools" not in providers
    assert not replay & {"jobs", "thinker", "record"}


ABOVE = {
    "errors": {
        "decision",
        "artifacts",
        "scope",
        "catalog",
        "providers",
        "jobs",
        "tools",
        "thinker",
    },
    "scope": {"catalog", "admission", "providers", "replay", "jobs", "tools", "thinker", "runs"},
    "decision": {"catalog", "admission", "providers", "replay", "jobs", "tools", "thinker"},
    "catalog": {"admission", "providers", "replay", "jobs", "tools", "thinker", "runs"},
    "admission": {"providers", "replay", "jobs", "tools", "thinker", "runs"},
    "providers": {"replay", "jobs", "tools", "thinker", "runs", "record"},
    "replay": {"jobs", "tools", "thinker", "runs", "record", "testing"},
    "jobs": {"tools", "thinker", "runs", "record", "testing"},
    "tools": {"thinker", "runs", "record", "testing", "providers"},
    "thinker": {"runs", "record", "testing", "cli", "serve", "demo"},
    "runs": {"cli", "testing", "serve", "demo"},
}


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_importing_a_package_loads_nothing_above_it(package: str) -> None:
    code = (
        "import sys\n"
        f"import harness.{package}\n"
        "print(' '.join(sorted({m.split('.')[1] for m in sys.modules "
        "if m.startswith('harness.')})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert package in loaded
    assert not loaded & ABOVE[package], (
        f"harness.{package} loaded {sorted(loaded & ABOVE[package])}"
    )


def test_old_import_paths_still_work() -> None:
    from harness.jobs import JobRecord, ModelCall
    from harness.jobs import JobRecord as JobsRecord
    from harness.jobs import ModelCall as JobsCall
    from harness.scope import Identifiable, Identity, Workflow
    from harness.tools import Identifiable as ToolsIdentifiable
    from harness.tools import Identity as ToolsIdentity
    from harness.tools import Workflow as ToolsWorkflow
    from harness.tools._identity import Workflow as OldWorkflow

    assert (JobsRecord, JobsCall) == (JobRecord, ModelCall)
    assert (ToolsIdentifiable, ToolsIdentity, ToolsWorkflow) == (Identifiable, Identity, Workflow)
    assert OldWorkflow is Workflow
