"""Plugin tests: point pytest-mypy-plugins at this directory's mypy config and the repo.

``pytest tests/plugin`` from the repository root is all it takes: the YAML cases run mypy with
``tests/plugin/mypy.ini``, the plugin importable from the repository root, and the shared
``palette_kit`` module on ``MYPYPATH``. Every case of one test run shares one mypy cache
directory, so harness itself is analysed once per run (per xdist worker).

That cache belongs to this run alone. pytest-mypy-plugins' default testing base is the system
temporary directory, so every run on the machine (other checkouts of harness, CI, a second
terminal) shared one ``/tmp/.mypy_cache``, and mypy's cache is not safe for concurrent use
(pytest-mypy-plugins gives each xdist worker its own cache for that reason, but not each run):
overlapping runs write the same keys (``harness.*`` from different checkouts, the cases'
``main`` and ``tools``) and pytest-mypy-plugins deletes a case's ``main``/``tools`` entries
after it, possibly while another run's case is reading them. A loaded machine is one where runs
overlap (several worktrees were running ``tests/plugin`` at once when this was found). Each run
now gets a private testing base, removed at the end (an explicit ``--mypy-testing-base`` is
kept).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _prepend(variable: str, *paths: Path) -> None:
    parts = [str(p) for p in paths]
    existing = os.environ.get(variable)
    if existing:
        parts.append(existing)
    os.environ[variable] = os.pathsep.join(parts)


_HOOK_MODULE = "harness_plugin_case_hooks"


def pass_plugin_path(item: Any) -> None:  # Any: pytest-mypy-plugins' YamlTestItem, untyped
    """pytest-mypy-plugins extension hook: let mypy import the plugin from the repository.

    (Its ``--mypy-modify-pythonpath`` would also put each case's own files on ``PYTHONPATH``,
    where mypy treats them as installed packages and silences their errors.)
    """
    item.environment_variables["PYTHONPATH"] = str(REPO)


def pytest_configure(config: pytest.Config) -> None:
    """Configure pytest-mypy-plugins for this directory (also when run from the repo root)."""
    if getattr(config.option, "mypy_testing_base", None) == tempfile.gettempdir():
        base = tempfile.mkdtemp(prefix="harness-plugin-cases-")
        config.option.mypy_testing_base = base
        config.add_cleanup(lambda: shutil.rmtree(base, ignore_errors=True))
    if getattr(config.option, "mypy_ini_file", None) is None:
        config.option.mypy_ini_file = str(HERE / "mypy.ini")
    if getattr(config.option, "mypy_pyproject_toml_file", None) is not None:
        config.option.mypy_pyproject_toml_file = None
    if getattr(config.option, "mypy_extension_hook", None) is None:
        sys.modules[_HOOK_MODULE] = sys.modules[__name__]
        config.option.mypy_extension_hook = f"{_HOOK_MODULE}.{pass_plugin_path.__name__}"
    _prepend("PATH", Path(sys.executable).parent)  # the mypy of this interpreter
    _prepend("MYPYPATH", REPO, HERE / "kit")
