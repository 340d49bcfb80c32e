"""`harness run` and `harness record` against a server that quotes the request back.

The run's input (the state the model sees) carries a canary, the entry's key another. The server
answers every decision with an echoing error. Neither canary, nor any 8-character piece of the
key, may appear on the run's stderr or stdout, in the record's ``failure`` field or its calls'
reasons, or in what ``harness record`` prints about the failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import sys

import pytest

from harness.testing import EchoShape, FakeSystemOneServer, Fault
from tests.cli.runs import ROOT
from tests.providers.test_redaction_echo import KEY, KEY_ENV, STATE_CANARY, leaks

CATALOG = """
[[entries]]
id = "echoing"
provider = "{provider}"
wire_model_id = "fake-decider"
base_url = "{root}"
api_key_env = "{env}"
max_context_tokens = 65536
max_concurrent = 4

[pins]
decision = "echoing"
"""


async def harness(*args: str, cwd: pathlib.Path) -> tuple[int, str, str]:
    """``python -m harness.cli ARGS`` without blocking the loop the fake server runs on."""
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_CATALOG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env[KEY_ENV] = KEY
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "harness.cli",
        *args,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.parametrize(
    ("provider", "status", "shape"),
    [
        ("systemone", 401, "error"),
        ("systemone", 422, "detail_list"),
        ("systemone", 200, "text"),
        ("openai", 400, "detail_object"),
        ("openai", 503, "message"),
    ],
)
async def test_harness_run_and_record_never_show_the_key_or_the_state(
    tmp_path: pathlib.Path, provider: str, status: int, shape: EchoShape
) -> None:
    async with FakeSystemOneServer() as server:
        server.faults = lambda _: Fault.echo(status, shape)
        catalog = tmp_path / "catalog.toml"
        catalog.write_text(CATALOG.format(provider=provider, root=server.root, env=KEY_ENV))
        record = tmp_path / "run.json"
        sentence = json.dumps({"text": f"alpha beta {STATE_CANARY} gamma"})
        code, out, err = await harness(
            "run",
            "tests.cli.words:WordFinder",
            "--input",
            sentence,
            "--catalog",
            str(catalog),
            "--record",
            str(record),
            cwd=tmp_path,
        )
        assert server.requests >= 1
    assert code == 1, err
    assert "the run failed" in err
    assert leaks(out) == []
    assert leaks(err) == [], err
    saved = json.loads(record.read_text(encoding="utf-8"))
    assert saved["failure"]
    assert leaks(saved["failure"]) == []
    assert saved["calls"]
    for made in saved["calls"]:
        assert leaks(json.dumps(made)) == []
    code, shown, problems = await harness("record", str(record), cwd=tmp_path)
    assert code == 0, problems
    # The record holds the run's input (that is what a record is for); every line about the
    # failure and the calls shows neither secret.
    assert any("fail" in line.lower() for line in shown.splitlines())
    for line in shown.splitlines():
        if "fail" in line.lower() or "HTTP" in line:
            assert leaks(line) == [], line
    assert not [piece for piece in leaks(shown) if piece != STATE_CANARY]
