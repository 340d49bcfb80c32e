"""The public face: what type checkers read is what the runtime serves."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import harness

INIT = Path(harness.__file__)
PUBLIC = [
    "harness",
    "harness.artifacts",
    "harness.decision",
    "harness.thinker",
    "harness.errors",
    "harness.jobs",
    "harness.providers",
    "harness.catalog",
    "harness.admission",
    "harness.replay",
    "harness.palette",
    "harness.runs",
    "harness.scope",
    "harness.testing",
    "harness.tools",
    "harness.evals",
    "harness.evals.metrics",
]


def static_names() -> set[str]:
    """The names harness/__init__.py imports under TYPE_CHECKING."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom)
                names.update(alias.asname or alias.name for alias in item.names)
    return names


def test_static_and_runtime_faces_agree() -> None:
    assert static_names() == set(harness.__all__)
    for name in harness.__all__:
        assert getattr(harness, name) is not None
        assert name in dir(harness)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        harness.no_such_thing  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_module_exports_what_it_lists(module: str) -> None:
    imported = importlib.import_module(module)
    for name in getattr(imported, "__all__", []):
        assert hasattr(imported, name), f"{module}.__all__ lists {name} but it is missing"


def test_import_harness_loads_no_http_stack() -> None:
    code = "import sys, harness; print('aiohttp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_run_api_is_on_the_public_face() -> None:
    from harness.runs import run, run_sync

    assert harness.run is run
    assert harness.run_sync is run_sync
    assert harness.RunResult.__module__ == "harness.runs"
