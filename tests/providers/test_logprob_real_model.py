"""A real LLM, offline, in the default suite: Gemma 3 270M behind llama-cpp-python's server on
loopback (``real_model.py``), read through chat directly and behind ``harness serve
--upstream``. Collected only when llama-cpp-python and the model are installed
(``conftest.py``; docs/llama.md says how to build the wheel once); a few seconds a test.

The long runs (the triage example through the thinker, the demo, the completions reading, which
takes about 1 s per echoed token) are in ``test_logprob_real_model_long.py``, collected only
with ``HARNESS_REAL_MODEL=all`` as well: about 10 minutes on an idle 2-core machine, far more on
a loaded one, too long for every CI run."""

from __future__ import annotations

import json
import math
import os
import pathlib
import shlex
import subprocess
import sys
import urllib.request

import pytest

from harness.catalog import entry_for_model
from harness.decision import RefusedAnswer
from tests.serve.servers import harness_serve

from .real_model import MODEL, TICKET, ask, check_read

pytestmark = [pytest.mark.slow, pytest.mark.realmodel, pytest.mark.interop]


async def test_chat_refuses_by_name_what_gemma_does_not_put_on_the_labels(
    llama_server: str,
) -> None:
    # Gemma 3 270M (the base model) answers '{"', "The", "Question" ... before any label: the
    # mass on the labels is far below the default floor, and the answer says so instead of
    # renormalising it.
    chosen = entry_for_model(f"openai-chat:{MODEL}@{llama_server}", {})
    assert chosen is not None
    (response,) = await ask([TICKET], chosen)
    mass = check_read(response, "chat-labels")
    for question_id, answer in response.answers.items():
        assert isinstance(answer, RefusedAnswer)
        assert answer.reason is not None
        assert f"{mass[question_id]:.1%}" in answer.reason


def test_serve_upstream_answers_system_one_through_chat(
    llama_server: str, tmp_path: pathlib.Path
) -> None:
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(
        f"""[pins]
decision = "gemma-chat"

[[entries]]
id = "gemma-chat"
provider = "openai-chat"
wire_model_id = "{MODEL}"
base_url = "{llama_server}"
max_context_tokens = 4096
max_concurrent = 1
mass_floor = 0.0
""",
        encoding="utf-8",
    )
    body = {
        "model": MODEL,
        "state": "The March invoice charges twice; please refund the second charge.",
        "questions": {
            "team": {
                "type": "choice",
                "instructions": "Which team handles the ticket?",
                "criteria": {"billing": "invoices", "tech": "outages", "sales": "contracts"},
            }
        },
    }
    env = {"PYTHONPATH": os.pathsep.join(sys.path)}
    with harness_serve(
        "--catalog", str(catalog), "--upstream", "gemma-chat", "--quiet", env=env
    ) as (
        _,
        root,
    ):
        sent = urllib.request.Request(
            f"{root}/v1/systemone",
            json.dumps(body).encode(),
            {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(sent, timeout=120) as reply:
            status, answer = reply.status, json.loads(reply.read())
    print(status, answer)
    # 'A' shows in Gemma's top 20 (about 1.5 %), the other labels are read in another round.
    assert status == 200
    team = answer["answers"]["team"]
    assert set(team["probabilities"]) == {"billing", "tech", "sales"}
    assert math.fsum(team["probabilities"].values()) == pytest.approx(1.0)
    assert team["choice"] == "billing"


def test_the_documented_command_collects_the_long_runs_and_the_default_does_not() -> None:
    """docs/llama.md's command for the long runs, as written (collected, not run)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    page = (root / "docs" / "llama.md").read_text(encoding="utf-8")
    (line,) = [x for x in page.splitlines() if x.startswith("HARNESS_REAL_MODEL=all pytest ")]
    assignment, *words = shlex.split(line)
    name, _, value = assignment.partition("=")
    listed = {}
    for extra in ({name: value}, {}):
        env = {k: v for k, v in os.environ.items() if k != name} | extra
        done = subprocess.run(
            [sys.executable, "-m", *words, "--collect-only", "-q", "-p", "no:cacheprovider"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        listed[bool(extra)] = {x for x in done.stdout.splitlines() if "::test_" in x}
    long_runs = {x for x in listed[True] if "test_logprob_real_model_long.py" in x}
    assert len(long_runs) == 4
    assert listed[False] == listed[True] - long_runs
    assert any("test_logprob_real_model.py" in x for x in listed[False])
