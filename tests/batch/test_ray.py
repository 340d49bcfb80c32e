"""harness batch on a local Ray cluster (2 CPUs, no dashboard): a worker killed mid-task."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from harness.batch import BatchSpec, run_batch
from harness.testing import FakeSystemOneServer
from tests.batch.conftest import catalog_file, read_results, write_inputs


async def test_a_worker_killed_mid_task_has_its_inputs_run_elsewhere_and_counted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "died"
    monkeypatch.setenv("HARNESS_TEST_DIE_MARKER", str(marker))
    texts = [f"ray ticket {i}" for i in range(40)]
    texts[17] = "die once, then echo"
    inputs = write_inputs(tmp_path / "in.jsonl", texts)
    out = tmp_path / "out.jsonl"
    async with FakeSystemOneServer() as server:
        catalog = catalog_file(tmp_path / "catalog.toml", server.entry(max_concurrent=4))
        spec = BatchSpec(
            "tests.batch.thinkers:EchoTickets", catalog_path=str(catalog), concurrency=4
        )
        progress = io.StringIO()
        summary = await asyncio.to_thread(
            run_batch, spec, inputs, out, ray="local", chunk=5, progress=progress
        )
    assert marker.read_text() == "died"  # a worker really died mid-task
    assert (summary.completed, summary.failed) == (40, 0)
    results = read_results(out)
    assert sorted(int(r["line"]) for r in results) == list(range(1, 41))  # type: ignore[call-overload]
    by_line = {int(r["line"]): r for r in results}  # type: ignore[call-overload]
    assert by_line[18]["answer"] == [{"text": "die once, then echo"}]
    assert "40/40" in progress.getvalue()
