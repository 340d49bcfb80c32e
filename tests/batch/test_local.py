"""harness batch in one process: a result line per input, resumable, bad lines, adaptive 429s."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from harness.admission._adaptive import AdaptiveAdmission, AdaptiveLimit
from harness.batch import BatchError, BatchSpec, run_batch_async
from harness.batch._inputs import clipped
from harness.catalog import Catalog
from harness.testing import FakeSystemOneServer, Fault
from tests.batch.conftest import read_results, write_inputs

TARGET = "tests.batch.thinkers:EchoTickets"


def catalog_of(server: FakeSystemOneServer, **overrides: object) -> Catalog:
    entry = server.entry(**overrides)
    return Catalog([entry], {"decision": entry.id})


async def test_every_input_gets_one_result_line_and_a_rerun_runs_nothing(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "in.jsonl", [f"ticket {i}" for i in range(30)])
    out = tmp_path / "out.jsonl"
    async with FakeSystemOneServer() as server:
        catalog = catalog_of(server, input_price_per_million=1.0)
        spec = BatchSpec(TARGET, concurrency=6, records_dir=str(tmp_path / "records"))
        summary = await run_batch_async(spec, inputs, out, catalog=catalog)
        assert (summary.completed, summary.failed, summary.already_done) == (30, 0, 0)
        decisions = server.requests
        assert decisions >= 30
        results = read_results(out)
        assert sorted(r["line"] for r in results) == list(range(1, 31))  # type: ignore[type-var]
        first = next(r for r in results if r["line"] == 1)
        assert first["status"] == "completed"
        assert first["answer"] == [{"text": "ticket 0"}]
        assert first["refs"] == ["echo#1"]
        usage = first["usage"]
        assert isinstance(usage, dict)
        assert usage["decisions"] >= 1
        assert usage["counted_input_tokens"] > 0
        assert usage["billed_calls"] == usage["calls"]  # the fake server reports every count
        assert usage["cost"] > 0
        assert await asyncio.to_thread(Path(str(first["record"])).is_file)
        again = await run_batch_async(spec, inputs, out, catalog=catalog)
        assert (again.ran, again.already_done) == (0, 30)
        assert server.requests == decisions  # nothing ran twice
    assert len(read_results(out)) == 30


async def test_bad_lines_are_reported_by_number_or_stop_the_batch(tmp_path: Path) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(
        '{"text": "fine"}\nnot json\n\n{"txt": "wrong field"}\n{"text": "also fine"}\n',
        encoding="utf-8",
    )
    async with FakeSystemOneServer() as server:
        catalog = catalog_of(server)
        with pytest.raises(BatchError, match=r"2 line\(s\).*line 2.*line 4"):
            await run_batch_async(
                BatchSpec(TARGET),
                inputs,
                tmp_path / "strict.jsonl",
                on_bad_line="fail",
                catalog=catalog,
            )
        assert server.requests == 0  # nothing ran
        summary = await run_batch_async(
            BatchSpec(TARGET), inputs, tmp_path / "out.jsonl", catalog=catalog
        )
    assert (summary.completed, summary.invalid) == (2, 2)
    by_line = {r["line"]: r for r in read_results(tmp_path / "out.jsonl")}
    assert sorted(int(n) for n in by_line) == [1, 2, 4, 5]  # type: ignore[call-overload]  # a blank line is no input
    assert by_line[2]["status"] == "invalid"
    assert by_line[4]["status"] == "invalid"
    assert "not json" not in json.dumps(by_line[2])  # the reason, never the line itself


async def test_a_line_cut_short_by_a_kill_is_run_again(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "in.jsonl", ["a", "b", "c"])
    out = tmp_path / "out.jsonl"
    out.write_text('{"line":1,"status":"completed","answer":[]}\n{"line":2,"sta', encoding="utf-8")
    async with FakeSystemOneServer() as server:
        summary = await run_batch_async(BatchSpec(TARGET), inputs, out, catalog=catalog_of(server))
        assert server.requests in (2, 4)  # lines 2 and 3 only (one or two decisions each)
    assert (summary.already_done, summary.ran) == (1, 2)
    assert sorted(r["line"] for r in read_results(out)) == [1, 2, 3]  # type: ignore[type-var]


async def test_adaptive_concurrency_settles_under_a_server_that_takes_three(
    tmp_path: Path,
) -> None:
    inputs = write_inputs(tmp_path / "in.jsonl", [f"t{i}" for i in range(60)])
    out = tmp_path / "out.jsonl"
    async with FakeSystemOneServer(
        max_in_flight=3, queue_limit=0, busy_retry_after=0, service_time=0.01
    ) as server:
        catalog = catalog_of(server, max_concurrent=8, adaptive=True)
        spec = BatchSpec(TARGET, concurrency=16, upstream_retries=3)
        from harness.batch import BatchWorker

        worker_admissions: list[AdaptiveAdmission] = []
        original = BatchWorker.__init__

        def keep(self: BatchWorker, *args: object, **kwargs: object) -> None:
            original(self, *args, **kwargs)  # type: ignore[arg-type]
            assert isinstance(self.admission, AdaptiveAdmission)
            worker_admissions.append(self.admission)

        BatchWorker.__init__ = keep  # type: ignore[method-assign]
        try:
            summary = await run_batch_async(spec, inputs, out, catalog=catalog)
        finally:
            BatchWorker.__init__ = original  # type: ignore[method-assign]
        throttled = server.requests - server.answered
    assert (summary.completed, summary.failed) == (60, 0)
    assert throttled > 0  # the server did refuse: the limit had something to learn
    (admission,) = worker_admissions
    limit = admission.limits["fake-systemone"]
    assert limit.allowed <= 3
    assert limit.learned <= 3


def test_adaptive_needs_a_concurrency_bound_and_reads_from_toml(tmp_path: Path) -> None:
    from harness.catalog import CatalogEntry, CatalogError, load_catalog

    with pytest.raises(CatalogError, match="adaptive = true needs max_concurrent"):
        CatalogEntry(
            id="w",
            provider="systemone",
            wire_model_id="m",
            base_url="http://127.0.0.1:9",
            max_context_tokens=100,
            tpm=1000,
            adaptive=True,
        )
    path = tmp_path / "c.toml"
    path.write_text(
        '[[entries]]\nid = "a"\nprovider = "systemone"\nwire_model_id = "m"\n'
        'base_url = "http://127.0.0.1:9"\nmax_context_tokens = 100\nmax_concurrent = 4\n'
        'adaptive = true\n\n[pins]\ndecision = "a"\n',
        encoding="utf-8",
    )
    assert load_catalog(str(path)).entry("a").adaptive is True
    path.write_text(path.read_text().replace("adaptive = true", 'adaptive = "yes"'))
    with pytest.raises(CatalogError, match="adaptive has the wrong type"):
        load_catalog(str(path))


def test_the_adaptive_limit_halves_learns_and_grows_back() -> None:
    now = [0.0]
    limit = AdaptiveLimit(8, clock=lambda: now[0], cooldown=0.5, probe_after=30.0)
    limit.throttled(in_flight=6)
    assert (limit.allowed, limit.learned) == (4, 5)
    limit.throttled(in_flight=6)  # same burst: no second cut
    assert limit.allowed == 4
    for _ in range(50):
        limit.succeeded()
    assert limit.allowed == 5  # grows back to what it learned, no further
    now[0] = 31.0
    limit.succeeded()
    assert limit.learned == 6  # probing again after a quiet half minute


async def test_failed_inputs_run_again_on_resume_unless_told_not_to(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "in.jsonl", ["a", "b", "c"])
    out = tmp_path / "out.jsonl"
    spec = BatchSpec(TARGET, concurrency=1, upstream_retries=0)
    async with FakeSystemOneServer() as server:
        catalog = catalog_of(server)
        server.fail_next(Fault.unauthorized(), times=1)  # the first input's run fails
        first = await run_batch_async(spec, inputs, out, catalog=catalog)
        assert (first.completed, first.failed, first.exit_code) == (2, 1, 1)
        kept = await run_batch_async(spec, inputs, out, catalog=catalog, retry_failed=False)
        assert (kept.ran, kept.already_done, kept.exit_code) == (0, 3, 1)
        again = await run_batch_async(spec, inputs, out, catalog=catalog)
        assert (again.ran, again.completed, again.already_done) == (1, 1, 2)
        assert again.exit_code == 0
    results = read_results(out)
    assert sorted(r["line"] for r in results) == [1, 2, 3]  # type: ignore[type-var]  # one each
    assert {r["status"] for r in results} == {"completed"}


def test_progress_counts_by_outcome_and_waits_for_a_rate() -> None:
    import io

    from harness.batch._progress import Progress

    stream = io.StringIO()
    meter = Progress(3, stream, every=0.0)
    meter.advance("invalid")
    meter.advance("completed")
    meter.advance("failed")
    lines = stream.getvalue().splitlines()
    assert lines[0] == "batch: 1/3 done (1 invalid), rate: measuring"
    assert lines[-1].startswith("batch: 3/3 done (1 completed, 1 failed, 1 invalid), ")
    assert "/s" not in "".join(lines[:-1])  # under a second: no burst of a rate
    assert lines[-1].endswith("/s")  # the last line: the time and the rate


async def test_a_line_with_a_field_the_input_does_not_have_is_invalid_unless_allowed(
    tmp_path: Path,
) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"text": "fine", "urgency": 3}\n', encoding="utf-8")
    async with FakeSystemOneServer() as server:
        catalog = catalog_of(server)
        summary = await run_batch_async(
            BatchSpec(TARGET), inputs, tmp_path / "out.jsonl", catalog=catalog
        )
        assert (summary.completed, summary.invalid) == (0, 1)
        (result,) = read_results(tmp_path / "out.jsonl")
        assert result["error"] == (
            "unknown field 'urgency' for Ticket: expected one of text; remove it (or pass "
            "--allow-extra)"
        )
        allowed = await run_batch_async(
            BatchSpec(TARGET, allow_extra=True), inputs, tmp_path / "kept.jsonl", catalog=catalog
        )
    assert (allowed.completed, allowed.invalid) == (1, 0)


def test_a_long_reason_is_cut_at_a_word_and_never_inside_a_quote() -> None:
    reason = "the input is not valid: " + "; ".join(f"field 'name_{i}' is wrong" for i in range(40))
    shown = clipped(reason, 200)
    assert len(shown) <= 200
    assert shown.endswith(" ...")
    assert shown.count("'") % 2 == 0, shown
    assert reason.startswith(shown.removesuffix(" ..."))
    assert clipped("short 'one'", 200) == "short 'one'"


async def test_an_in_process_model_bills_nothing_in_results_and_records(
    tmp_path: Path,
) -> None:
    from harness.catalog import CatalogEntry
    from harness.record import load_record
    from harness.testing import FakeDecisionModel

    # an entry whose model runs in this process, answered by a client that reports a count
    local = CatalogEntry(
        id="local",
        provider="embedded",
        wire_model_id="sparrow-decider",
        max_context_tokens=32_768,
        max_concurrent=4,
    )
    catalog = Catalog([local], {"decision": "local"})
    model = FakeDecisionModel()
    inputs = write_inputs(tmp_path / "in.jsonl", ["ticket 1", "ticket 2"])
    out = tmp_path / "out.jsonl"
    spec = BatchSpec(TARGET, records_dir=str(tmp_path / "records"))
    await run_batch_async(spec, inputs, out, catalog=catalog, clients={"local": model})
    for line in read_results(out):
        usage = line["usage"]
        assert isinstance(usage, dict)
        assert usage["calls"] >= 1
        assert usage["billed_input_tokens"] is None
        assert usage["billed_calls"] == 0
        assert usage["in_process_calls"] == usage["calls"]
        assert usage["counted_input_tokens"] > 0  # harness's own count stays
        record = await asyncio.to_thread(load_record, str(line["record"]))
        assert record.calls
        assert all(call.input_tokens is None for call in record.calls)
