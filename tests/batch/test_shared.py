"""Admission shared through a real redis-server by several processes: caps hold globally."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from harness.admission._redis_admission import AdmissionUnavailableError, RedisAdmission
from harness.catalog import CatalogEntry
from harness.catalog._pricing import Reservation
from harness.testing import FakeSystemOneServer
from tests.batch.conftest import catalog_file, read_results, write_inputs

TARGET = "tests.batch.thinkers:EchoTickets"
ROOT = Path(__file__).resolve().parents[2]


def _batch_command(catalog: Path, inputs: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harness.cli",
        "batch",
        TARGET,
        str(inputs),
        "--out",
        str(out),
        "--catalog",
        str(catalog),
        *extra,
    ]


async def _wait(process: asyncio.subprocess.Process, limit: float = 240) -> tuple[int, str]:
    _, err = await asyncio.wait_for(process.communicate(), limit)
    assert process.returncode is not None
    return process.returncode, err.decode()


async def _start(command: list[str], **env: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *command,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_two_processes_never_exceed_the_shared_cap(tmp_path: Path, redis_url: str) -> None:
    async with FakeSystemOneServer(service_time=0.003) as server:
        catalog = catalog_file(tmp_path / "catalog.toml", server.entry(max_concurrent=4))
        runs = []
        for name in ("a", "b"):
            inputs = write_inputs(tmp_path / f"{name}.jsonl", [f"{name}{i}" for i in range(1000)])
            runs.append(
                await _start(
                    _batch_command(
                        catalog,
                        inputs,
                        tmp_path / f"{name}.out.jsonl",
                        "--admission",
                        redis_url,
                        "--concurrency",
                        "8",
                    )
                )
            )
        for run in runs:
            code, err = await _wait(run)
            assert code == 0, err[-2000:]
        assert server.answered >= 2000  # at least one decision on the wire per input
        assert server.peak_in_flight <= 4
        assert server.peak_in_flight >= 3  # the cap was reached, not avoided
    for name in ("a", "b"):
        assert len(read_results(tmp_path / f"{name}.out.jsonl")) == 1000


def _take_tokens(url: str, seconds: float, queue: multiprocessing.Queue[object]) -> None:
    entry = CatalogEntry(
        id="windowed",
        provider="systemone",
        wire_model_id="m",
        base_url="http://127.0.0.1:9",
        max_context_tokens=10_000,
        tpm=600,
    )

    async def run() -> list[tuple[float, int]]:
        admission = RedisAdmission(url, poll=0.005)
        grants: list[tuple[float, int]] = []
        end = time.time() + seconds
        while time.time() < end:
            demand = admission.demand(entry, Reservation(20, 0))
            try:
                await asyncio.wait_for(demand.acquire(), max(0.01, end - time.time()))
            except TimeoutError:
                break
            grants.append((time.time(), 20))
        await admission.aclose()
        return grants

    queue.put(asyncio.run(run()))


def test_two_processes_share_one_token_bucket(redis_url: str) -> None:
    """tpm = 600: a bucket of 600 tokens refilled at 10 a second, shared by two processes. In any
    window of T seconds at most 600 + 10 T tokens are admitted in all (two separate buckets would
    admit twice that); once the bucket is empty, any second admits at most its 10 tokens (plus one
    demand of 20 at a window's edge)."""
    context = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue[object] = context.Queue()
    workers = [context.Process(target=_take_tokens, args=(redis_url, 4.0, queue)) for _ in range(2)]
    for worker in workers:
        worker.start()
    grants: list[tuple[float, int]] = []
    for _ in workers:
        got = queue.get(timeout=60)
        assert isinstance(got, list)
        grants.extend(got)
    for worker in workers:
        worker.join(timeout=30)
    grants.sort()
    total = sum(amount for _, amount in grants)
    span = grants[-1][0] - grants[0][0]
    assert total <= 600 + 10 * span + 20
    assert total >= 600  # the burst was taken: the bucket was really shared, not starved
    burst_end = next(t for t, _ in grants if sum(a for s, a in grants if s <= t) >= 600)
    after = [(t, a) for t, a in grants if t > burst_end]
    for start, _ in after:
        window = sum(a for t, a in after if start <= t < start + 1.0)
        assert window <= 10 + 20


LEASE = 4.0
"""The lease of the killed-worker test's permits, in seconds."""


async def test_a_killed_workers_permits_come_back_within_their_lease(
    tmp_path: Path, redis_url: str
) -> None:
    entry = CatalogEntry(
        id="leased",
        provider="systemone",
        wire_model_id="m",
        base_url="http://127.0.0.1:9",
        max_context_tokens=10_000,
        max_concurrent=2,
    )
    holder = await asyncio.create_subprocess_exec(
        *[
            sys.executable,
            "-c",
            "import asyncio, sys\n"
            "from harness.catalog import CatalogEntry, Reservation\n"
            "from harness.admission import RedisAdmission\n"
            "async def main():\n"
            "    e = CatalogEntry(id='leased', provider='systemone', wire_model_id='m',\n"
            "        base_url='http://127.0.0.1:9', max_context_tokens=10000, max_concurrent=2)\n"
            f"    a = RedisAdmission({redis_url!r}, lease={LEASE})\n"
            "    held = [await a.demand(e, Reservation(1, 0)).acquire() for _ in range(2)]\n"
            "    print('held', flush=True)\n"
            "    await asyncio.sleep(3600)\n"
            "asyncio.run(main())\n",
        ],
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert (await holder.stdout.readline()).strip() == b"held"
        admission = RedisAdmission(redis_url, lease=LEASE)
        demand = admission.demand(entry, Reservation(1, 0))
        # Both permits are held elsewhere, and renewed every LEASE / 3 s: waiting longer than a
        # lease proves the renewals. (The lease is long enough that a holder starved of the CPU
        # for a second on a loaded 2-core machine still renews in time: with 1.5 s it once
        # lost its permits in CI.)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(demand.acquire(), LEASE + 0.5)
        holder.send_signal(signal.SIGKILL)
        await holder.wait()
        killed = time.monotonic()
        permit = await asyncio.wait_for(demand.acquire(), 10)
        waited = time.monotonic() - killed
        assert waited <= LEASE + 2.0  # the lease, plus polling and scheduling on a loaded machine
        permit.release()
        await admission.aclose()
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.wait()


def _gated(entry_id: str, max_concurrent: int) -> CatalogEntry:
    """An entry with a gate of ``max_concurrent`` (its server is never asked)."""
    return CatalogEntry(
        id=entry_id,
        provider="systemone",
        wire_model_id="m",
        base_url="http://127.0.0.1:9",
        max_context_tokens=10_000,
        max_concurrent=max_concurrent,
    )


async def test_a_cancelled_wait_for_a_redis_permit_always_ends(redis_url: str) -> None:
    """redis-py can swallow a cancellation that lands during a command; the wait ends whichever
    command the cancellation lands in (a swallowed one would leave it polling for ever; unguarded,
    about one cancellation in a few dozen lands there, so 150 find it), and a permit it took as it
    was cancelled goes back."""
    entry = _gated("full", 2)
    holder = RedisAdmission(redis_url, lease=4.0)
    held = [await holder.demand(entry, Reservation(1, 0)).acquire() for _ in range(2)]
    other = RedisAdmission(redis_url, lease=4.0, poll=0.005)
    for attempt in range(150):
        waiting = asyncio.ensure_future(other.demand(entry, Reservation(1, 0)).acquire())
        await asyncio.sleep(0.001 * (attempt % 11))
        waiting.cancel()
        done, _ = await asyncio.wait({waiting}, timeout=2.0)
        assert done, f"cancelled wait {attempt} was still polling Redis 2 s later"
        assert waiting.cancelled()
    for permit in held:
        permit.release()
    taken = await asyncio.wait_for(other.demand(entry, Reservation(1, 0)).acquire(), 5)
    second = await asyncio.wait_for(other.demand(entry, Reservation(1, 0)).acquire(), 5)
    for permit in (taken, second):  # both free: no cancelled wait kept one
        permit.release()
    await holder.aclose()
    await other.aclose()


async def test_a_released_permit_stops_renewing_its_lease(redis_url: str) -> None:
    entry = _gated("renewed", 1)
    admission = RedisAdmission(redis_url, lease=0.03)  # renewed every 10 ms
    for attempt in range(60):
        permit = await admission.demand(entry, Reservation(1, 0)).acquire()
        renewing = permit._renewing  # type: ignore[attr-defined]  # the permit's renewal task
        assert isinstance(renewing, asyncio.Task)
        await asyncio.sleep(0.001 * (attempt % 13))
        permit.release()
        done, _ = await asyncio.wait({renewing}, timeout=2.0)
        assert done, f"permit {attempt} went on renewing its lease after its release"
    await admission.aclose()


async def test_redis_down_fails_calls_by_name_and_runs_nothing(tmp_path: Path) -> None:
    entry = CatalogEntry(
        id="gone",
        provider="systemone",
        wire_model_id="m",
        base_url="http://127.0.0.1:9",
        max_context_tokens=10_000,
        max_concurrent=2,
    )
    admission = RedisAdmission("redis://:secret-pass@127.0.0.1:1/0")
    with pytest.raises(AdmissionUnavailableError) as refused:
        await admission.demand(entry, Reservation(1, 0)).acquire()
    assert "could not be reached" in str(refused.value)
    assert "secret-pass" not in str(refused.value)
    await admission.aclose()


async def test_a_batch_killed_mid_way_resumes_without_running_an_input_twice(
    tmp_path: Path,
) -> None:
    texts = [f"resume ticket {i:03d}" for i in range(300)]
    inputs = write_inputs(tmp_path / "in.jsonl", texts)
    out = tmp_path / "out.jsonl"
    async with FakeSystemOneServer(service_time=0.005) as server:
        catalog = catalog_file(tmp_path / "catalog.toml", server.entry(max_concurrent=4))
        first = await _start(_batch_command(catalog, inputs, out, "--concurrency", "4"))
        while not out.exists() or len(out.read_bytes().splitlines()) < 60:  # noqa: ASYNC110 - another process writes the file
            await asyncio.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        await first.wait()
        done_before = {int(r["line"]) for r in read_results(out)}  # type: ignore[call-overload]
        bodies_before = len(server.bodies)
        second = await _start(_batch_command(catalog, inputs, out, "--concurrency", "4"))
        code, err = await _wait(second)
        assert code == 0, err[-2000:]
        later = [body.decode() for body in server.bodies[bodies_before:]]
    results = read_results(out)
    lines = [int(r["line"]) for r in results]  # type: ignore[call-overload]
    assert sorted(lines) == list(range(1, 301))  # every input once, none missing
    assert len(done_before) >= 60
    for line in done_before:  # an input with a result before the kill never ran again
        text = texts[line - 1]
        assert not any(text in body for body in later), line
