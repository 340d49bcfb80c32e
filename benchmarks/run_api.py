"""The one-call run API against the dispatcher by hand: what ``Triage.run_sync`` costs on top.

Both sides run the example thinker on the fake model (in-process, so the figure is the
framework's), each in a fresh event loop: ``run_sync(Triage, note, model=fake)`` against
``asyncio.run`` of a ``Dispatcher`` running a ``ThinkerRun``, the baseline measured in the same
run. Prints milliseconds per run and the ratio, best of ``--rounds``.

Run: ``python benchmarks/run_api.py [--runs N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from examples.triage import Note, Triage
from harness import Catalog, CatalogEntry, Dispatcher, ThinkerRun, Workflow, run_sync
from harness.testing import FakeDecisionModel
from tests.api.policies import triage_policy

NOTE = Note("alpha is due today; beta can wait; gamma shipped")
ENTRY = CatalogEntry(
    id="client", provider="fake", wire_model_id="x", max_context_tokens=10**6, max_concurrent=64
)


def one_call() -> None:
    run_sync(Triage, NOTE, model=FakeDecisionModel(triage_policy))


async def _by_hand() -> None:
    catalog = Catalog([ENTRY], {"decision": "client"})
    async with Dispatcher(catalog, clients={"client": FakeDecisionModel(triage_policy)}) as d:
        await d.run(ThinkerRun(Workflow(), Triage(Workflow()), NOTE))


def by_hand() -> None:
    asyncio.run(_by_hand())


def per_run(step: Callable[[], None], runs: int) -> float:
    started = time.perf_counter()
    for _ in range(runs):
        step()
    return (time.perf_counter() - started) / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    one_call()
    by_hand()  # warm both paths
    best_one = min(per_run(one_call, args.runs) for _ in range(args.rounds))
    best_hand = min(per_run(by_hand, args.runs) for _ in range(args.rounds))
    print(f"Triage.run_sync       {best_one * 1000:8.2f} ms per run")
    print(f"dispatcher by hand    {best_hand * 1000:8.2f} ms per run (baseline)")
    print(f"ratio                 {best_one / best_hand:8.2f}")


if __name__ == "__main__":
    main()
