"""No import circle between packages: the layers of docs/architecture.md run one way, and a
package uses another through its public face.

Three views: every use of a ``harness`` module in a package's source (imports at module level,
under ``TYPE_CHECKING`` and inside functions, ``importlib.import_module``, ``__import__`` and
module paths in strings; see ``tests/api/layers.py``) names only its own layer or lower ones;
private modules of another package are used only where :data:`ALLOWED_REACH_INS` says why; and
importing a package in a fresh interpreter loads no ``harness`` package above it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.api import layers

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "harness"

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"errors", "_guard", "_public"}),
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
    frozenset(
        {"runs", "evals", "fit", "testing", "pytest_plugin", "serve", "demo", "batch", "observe"}
    ),
    frozenset({"cli", "__main__", "mypy"}),
)
"""Lowest first: a package may import its own layer and the layers below it (the picture in
docs/architecture.md)."""

ALLOWED_UPWARD: set[tuple[str, str]] = set()
"""None: even a type-only import upward makes an import cycle for mypy, whose parallel mode can
then lose the plugin's verdicts (the thinker importing the run API's types would do it)."""

ALLOWED_REACH_INS: dict[tuple[str, str], str] = {
    ("harness/cli/_observe.py", "harness.observe._console"): (
        "ConsoleTree imports the OpenTelemetry SDK (the otel extra) at import time; the face of "
        "harness.observe must import without it, and --otel-console turns a missing SDK into "
        "one line with the fix"
    ),
}
"""(file, another package's private module) -> why the file cannot use the public face."""


def layer_of(package: str) -> int:
    for number, members in enumerate(LAYERS):
        if package in members:
            return number
    raise AssertionError(f"harness.{package} has no layer: add it to LAYERS")


def harness_imports(path: Path) -> set[str]:
    """The ``harness`` packages ``path`` uses anywhere in its source, in any of the ways."""
    here = layers.module_name(path, ROOT)
    text = path.read_text(encoding="utf-8")
    found = layers.uses(
        text,
        here,
        is_package=path.name == "__init__.py",
        is_module=layers.is_module_under(HARNESS),
    )
    return {use.package for use in found}


def test_every_package_has_a_layer() -> None:
    for path in layers.sources(HARNESS):
        layer_of(layers.package_of(layers.module_name(path, ROOT)))


def test_no_package_imports_a_higher_layer() -> None:
    upward = layers.upward(HARNESS, LAYERS, ALLOWED_UPWARD)
    assert [str(v) for v in upward] == []


def test_private_modules_are_used_from_outside_only_where_listed() -> None:
    found = layers.reach_ins(HARNESS)
    unlisted = sorted(str(uses[0]) for key, uses in found.items() if key not in ALLOWED_REACH_INS)
    assert unlisted == [], (
        "use the package's public face (add the name to its __init__), or list the reach-in "
        "with its reason in ALLOWED_REACH_INS"
    )
    stale = sorted(key for key in ALLOWED_REACH_INS if key not in found)
    assert stale == [], "listed reach-ins no longer made: remove them from ALLOWED_REACH_INS"
    assert len(ALLOWED_REACH_INS) <= 12
    assert all(reason.strip() for reason in ALLOWED_REACH_INS.values())


def test_no_import_circle_between_modules() -> None:
    """Two modules that import each other, directly or around a ring, are a type living in the
    wrong module: move it so each imports one way. Imports at module level, under
    ``TYPE_CHECKING`` and inside functions all count (see ``layers.imported_modules``)."""
    found = layers.circles(HARNESS)
    named = [" <-> ".join(circle) for circle in found]
    assert named == [], "move the shared type into the module both use (or a new one)"
    assert layers.circles(ROOT / "mypy_plugin") == []  # the plugin's modules import one way too


def test_jobs_providers_and_replay_import_nothing_that_uses_them() -> None:
    """The jobs take identities from ``harness.scope``, not the tools; the clients write no job
    record and make no tool; the override and replay load none of the jobs, the thinker or the
    records: each of these imports would close a circle of packages with the ones that use it."""
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


def test_each_name_has_one_home() -> None:
    """A name lives at one path: a package serves only its own names (no shim re-exports one
    from another package), and the paths listed below, where no module belongs, hold none."""
    import harness.decision
    import harness.errors
    import harness.record
    from harness.jobs import JobRecord, ModelCall
    from harness.jobs._record import JobRecord as RecordedHere
    from harness.replay import Cassette
    from harness.scope import Identifiable, Identity, Workflow
    from harness.tools import Identifiable as ToolsIdentifiable
    from harness.tools import Identity as ToolsIdentity
    from harness.tools import Workflow as ToolsWorkflow

    assert JobRecord is RecordedHere
    assert ModelCall.__module__ == "harness.jobs._record"
    assert (ToolsIdentifiable, ToolsIdentity, ToolsWorkflow) == (Identifiable, Identity, Workflow)
    assert not hasattr(harness.decision, "JobRecord")
    assert not hasattr(harness.record, "Cassette")
    assert Cassette.__module__ == "harness.replay._cassette"
    import harness.runs

    assert harness.runs.RunFailedError is harness.record.RunFailedError  # one class, not two
    for name in ("RetrySignal", "RateLimitSignal", "OverloadSignal", "TransientSignal"):
        assert not hasattr(harness.errors, name)
    no_module_here = [
        "harness/tools/_identity.py",
        "harness/record/_cassette.py",
        "harness/palette.py",
        "harness/_palette",
        "harness/deciding",
        "harness/llm",
        "harness/models",
    ]
    assert [path for path in no_module_here if (ROOT / path).exists()] == []


def test_no_harness_module_is_loaded_by_name() -> None:
    """``importlib.import_module("harness...")`` and ``__import__`` hide an import from readers;
    the top face (``harness/__init__.py``) loads its names with plain imports too."""
    is_module = layers.is_module_under(HARNESS)
    loaded = [
        f"{path.relative_to(ROOT)}:{use.line} {use.module}"
        for path in [*layers.sources(HARNESS), HARNESS / "__init__.py"]
        for use in layers.uses(
            path.read_text(encoding="utf-8"),
            layers.module_name(path, ROOT),
            is_package=path.name == "__init__.py",
            is_module=is_module,
        )
        if use.kind in ("importlib", "__import__")
    ]
    assert loaded == []
