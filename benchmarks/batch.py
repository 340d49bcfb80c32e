"""Batch throughput for 1 and 2 worker processes under one shared cap, in one run.

A fake System One server with a fixed service time answers; each worker process runs
``harness batch`` over its own share of the inputs with ``--admission`` on a redis-server started
here (loopback, random port, no persistence); the entry's cap is shared. Printed: inputs a second
for 1 and 2 processes, their ratio, and the server's peak in flight against the cap. On a 2-core
machine the speedup is bounded by the cores; the point is the cap holding while processes share
it. A script, not a test::

    python benchmarks/batch.py [--inputs 400] [--cap 4] [--service 0.01]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.testing import FakeSystemOneServer  # noqa: E402
from tests.batch.conftest import catalog_file, write_inputs  # noqa: E402


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def _round(
    folder: Path, processes: int, inputs: int, cap: int, service: float, url: str
) -> tuple[float, int]:
    async with FakeSystemOneServer(service_time=service) as server:
        catalog = catalog_file(
            folder / f"catalog-{processes}.toml", server.entry(max_concurrent=cap)
        )
        share = inputs // processes
        runs = []
        began = time.perf_counter()
        for p in range(processes):
            texts = [f"p{processes}-{p}-{i}" for i in range(share)]
            path = write_inputs(folder / f"in-{processes}-{p}.jsonl", texts)
            command = [
                sys.executable,
                "-m",
                "harness.cli",
                "batch",
                "tests.batch.thinkers:EchoTickets",
                str(path),
                "--out",
                str(folder / f"out-{processes}-{p}.jsonl"),
                "--catalog",
                str(catalog),
                "--admission",
                url,
                "--concurrency",
                str(cap * 2),
            ]
            runs.append(
                await asyncio.create_subprocess_exec(
                    *command,
                    cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
            )
        for run in runs:
            await run.wait()
        took = time.perf_counter() - began
        return share * processes / took, server.peak_in_flight


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=400)
    parser.add_argument("--cap", type=int, default=4)
    parser.add_argument("--service", type=float, default=0.01, help="seconds a decision")
    args = parser.parse_args()
    server = shutil.which("redis-server")
    if server is None:
        sys.exit("redis-server is not installed (apt-get install redis-server)")
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        redis = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", tmp],
            stdout=subprocess.DEVNULL,
        )
        try:
            time.sleep(0.5)
            url = f"redis://127.0.0.1:{port}/0"
            folder = Path(tmp)
            one, peak1 = asyncio.run(_round(folder, 1, args.inputs, args.cap, args.service, url))
            two, peak2 = asyncio.run(_round(folder, 2, args.inputs, args.cap, args.service, url))
        finally:
            redis.terminate()
    print(json.dumps({"inputs": args.inputs, "cap": args.cap, "service_s": args.service}))
    print(f"1 process:   {one:7.1f} inputs/s, peak in flight {peak1} (cap {args.cap})")
    print(f"2 processes: {two:7.1f} inputs/s, peak in flight {peak2} (cap {args.cap})")
    print(f"2 / 1: {two / one:.2f}")


if __name__ == "__main__":
    main()
