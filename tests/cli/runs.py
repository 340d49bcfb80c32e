"""Running the `harness` command in a subprocess, offline, for the CLI tests."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).parents[2]


CONFIGURATION = (
    "HARNESS_CATALOG",
    "TYPESAFE_API_KEY",
    "TYPESAFE_BASE_URL",
    "TYPESAFE_DEFAULT_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)
"""The variables harness reads for its configuration: unset unless a test gives them."""


def harness(
    *args: str,
    cwd: pathlib.Path,
    timeout: float = 30.0,
    env: dict[str, str] | None = None,
    module: str = "harness.cli",
) -> subprocess.CompletedProcess[str]:
    """``python -m harness.cli ARGS`` in ``cwd`` with the configuration variables unset (``env``
    adds some); the repository root is on ``PYTHONPATH`` so ``tests.cli.words`` imports."""
    given = env
    env = {k: v for k, v in os.environ.items() if k not in CONFIGURATION}
    env.update(given or {})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
