"""A fitted file answers wherever a model goes: the one-call run API, a batch, `harness serve`
behind the System One client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness
from harness.catalog import CatalogEntry, default_catalog
from harness.cli import main
from harness.decision import DecisionRequest, Noul
from harness.demo.triage import Note, Triage
from harness.providers import SystemOneClient
from harness.serve import DecisionServer

URGENT = 'verdict#1 (verdict): {"note":"renew the gym card right now","urgent":true}'
CALM = 'verdict#2 (verdict): {"note":"no rush to send the invoice","urgent":false}'


def test_the_run_api_takes_a_fitted_model_string() -> None:
    path = default_catalog().entry("triage-fitted").file
    assert path is not None
    result = harness.run_sync(
        Triage,
        Note("no rush with the invoice; renew the gym card right now"),
        model=f"fitted:{path}",
    )
    assert result.entry.provider == "fitted"
    assert result.calls
    assert all(call.model == "fitted:triage.json" for call in result.calls)
    assert result.threshold == pytest.approx(0.788409)  # the file's own selection threshold
    assert all(item.urgent for item in result.items)  # never a verdict that can wait


def test_a_batch_runs_on_a_fitted_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "notes.jsonl"
    notes = ["pay the water bill today; the garden looks fine", "call the bank now; maybe later"]
    inputs.write_text("".join(json.dumps({"text": n}) + "\n" for n in notes))
    out = tmp_path / "results.jsonl"
    code = main(
        [
            "batch",
            "harness.demo.triage:Triage",
            str(inputs),
            "--out",
            str(out),
            "--entry",
            "triage-fitted",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2
    assert all(row["status"] == "completed" for row in rows), rows


async def test_harness_serve_fronts_a_fitted_entry() -> None:
    request = DecisionRequest(
        {"objective": "keep what needs action", "artifacts": [URGENT, CALM], "done": ["x"]},
        {f"select_verdict#{k}": Noul(f"Does verdict#{k} belong?") for k in (1, 2)},
    )
    async with DecisionServer(default_catalog(), entry_id="triage-fitted") as server:
        entry = CatalogEntry(
            id="served",
            provider="systemone",
            wire_model_id="triage-fitted",
            base_url=server.root,
            max_context_tokens=32_768,
            max_concurrent=2,
        )
        client = SystemOneClient()
        try:
            response = await client.decide(request, entry)
        finally:
            await client.aclose()
    assert response.noul("select_verdict#1").probability > 0.9
    assert response.noul("select_verdict#2").probability < 0.1
    assert response.model is not None
    assert response.model.endswith("triage.json")
