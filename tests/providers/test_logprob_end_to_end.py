"""End to end on the test model: `harness demo` through both logprob providers, and
`harness serve --upstream` serving each as System One under jevcompat's MUST suite, with the
triage example and the demo run through it."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from collections.abc import Iterator

import pytest

from harness.testing import LogprobServer
from tests.providers.jevcompat_suite import assert_every_must_passes
from tests.serve.servers import harness_serve, offline_env

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def upstream() -> Iterator[LogprobServer]:
    with LogprobServer().in_thread() as server:
        yield server


def chat_catalog(folder: pathlib.Path, server: LogprobServer) -> pathlib.Path:
    """A catalog whose chat entry accepts the test model's spread-out label mass."""
    path = folder / "catalog.toml"
    path.write_text(
        f"""[pins]
decision = "local-chat"

[[entries]]
id = "local-chat"
provider = "openai-chat"
wire_model_id = "bigram-test"
base_url = "{server.root}"
max_context_tokens = 32768
max_concurrent = 8
mass_floor = 0.05
""",
        encoding="utf-8",
    )
    return path


def harness_cli(*args: str, cwd: pathlib.Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=cwd,
        env={**offline_env(), **(env or {}), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("provider", ["openai-chat", "openai-completions"])
def test_the_demo_runs_through_each_provider(
    upstream: LogprobServer, provider: str, tmp_path: pathlib.Path
) -> None:
    if provider == "openai-chat":
        args = ["--catalog", str(chat_catalog(tmp_path, upstream))]
    else:
        args = ["--model", f"openai-completions:bigram-test@{upstream.root}"]
    calls = upstream.calls
    out = harness_cli("demo", *args, "--max-turns", "3", cwd=tmp_path)
    assert "score against the folder's answer key" in out
    assert f"({provider}, bigram-test)" in out
    assert upstream.calls > calls
    record = json.loads((tmp_path / "harness-record.json").read_text(encoding="utf-8"))
    assert record  # the run's record was written


def test_the_demo_runs_on_a_chat_model_string(
    upstream: LogprobServer, tmp_path: pathlib.Path
) -> None:
    """`harness demo --model openai-chat:<model>@<url>`, nothing else configured: the issue's
    "done when" (the test model's selections fall below the default floor and are refused)."""
    calls = upstream.calls
    model = f"openai-chat:bigram-test@{upstream.root}"
    out = harness_cli("demo", "--model", model, "--max-turns", "3", cwd=tmp_path)
    assert f"model: entry '{model}' (openai-chat, bigram-test)" in out
    assert "score against the folder's answer key" in out
    assert upstream.calls > calls


@pytest.mark.slow
@pytest.mark.parametrize("provider", ["openai-chat", "openai-completions"])
def test_serve_upstream_passes_every_must_of_jevcompat_and_runs_the_triage_example(
    upstream: LogprobServer, provider: str, tmp_path: pathlib.Path
) -> None:
    if provider == "openai-chat":
        args = ["--catalog", str(chat_catalog(tmp_path, upstream)), "--upstream", "local-chat"]
    else:
        args = ["--upstream", f"openai-completions:bigram-test@{upstream.root}"]
    with harness_serve(*args, "--quiet") as (_, root):
        assert_every_must_passes(root, tmp_path, call_timeout=60, suite_timeout=600)
        out = harness_cli(
            "run",
            "examples.triage:Triage",
            "--input",
            '{"text": "alpha is due; beta can wait"}',
            "--entry",
            "systemone:bigram-test",
            cwd=pathlib.Path(__file__).resolve().parents[2],
            env={"TYPESAFE_BASE_URL": root},
        )
        demo = harness_cli(
            "demo",
            "--model",
            "systemone:bigram-test",
            "--max-turns",
            "3",
            cwd=tmp_path,
            env={"TYPESAFE_BASE_URL": root},
        )
    assert '"urgent":' in out  # the verdicts, as JSON
    assert "score against the folder's answer key" in demo
