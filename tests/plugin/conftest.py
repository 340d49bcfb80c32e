"""Plugin tests: point pytest-mypy-plugins at this directory's mypy config and the repo.

``pytest tests/plugin`` from the repository root is all it takes: the YAML cases run mypy with
``tests/plugin/mypy.ini``, the plugin importable from the repository root, and the shared
``palette_kit`` module on ``MYPYPATH``. Every case shares one mypy cache directory (under the
testing base), so harness itself is analysed once.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _prepend(variable: str, *paths: Path) -> None:
    parts = [str(p) for p in paths]
    existing = os.environ.get(variable)
    if existing:
        parts.append(existing)
    os.environ[variable] = os.pathsep.join(parts)


def pytest_configure(config: pytest.Config) -> None:
    """Configure pytest-mypy-plugins for this directory (also when run from the repo root)."""
    if getattr(config.option, "mypy_ini_file", None) is None:
        config.option.mypy_ini_file = str(HERE / "mypy.ini")
    if getattr(config.option, "mypy_pyproject_toml_file", None) is not None:
        config.option.mypy_pyproject_toml_file = None
    config.option.mypy_modify_pythonpath = True  # pass our PYTHONPATH on to mypy: the plugin
    _prepend("PATH", Path(sys.executable).parent)  # the mypy of this interpreter
    _prepend("PYTHONPATH", REPO)
    _prepend("MYPYPATH", REPO, HERE / "kit")
