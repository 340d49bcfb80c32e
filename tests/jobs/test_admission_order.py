"""Jobs with several bindings: all or nothing, never waiting while holding, no deadlock."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from harness.admission import Admission
from harness.catalog import Catalog, CatalogEntry
from harness.jobs import DecisionBinding, Dispatcher, Job, JobContext, Requirements
from harness.tools import Workflow

from .stack import REQUEST


def gated(entry_id: str) -> CatalogEntry:
    return CatalogEntry(
        id=entry_id, provider="fake", wire_model_id="m", max_context_tokens=10_000, max_concurrent=1
    )


class TwoSeats(Job[tuple[int, int]]):
    """A job pinned to two entries, in the order given; it holds both while it runs."""

    kind: ClassVar[str] = "two-seats"

    def __init__(self, first: str, second: str, admission: Admission, hold: float) -> None:
        super().__init__(Workflow())
        self.order = (first, second)
        self.admission = admission
        self.hold = hold

    def requirements(self) -> Requirements:
        return Requirements(tuple(DecisionBinding(pinned=e, request=REQUEST) for e in self.order))

    async def run(self, context: JobContext) -> tuple[int, int]:
        in_use = tuple(self.admission.gate_for(r.entry).in_use for r in context.resolved)
        await asyncio.sleep(self.hold)
        return in_use  # type: ignore[return-value]


async def test_crossed_demands_on_gates_of_one_complete_without_deadlock() -> None:
    admission = Admission()
    catalog = Catalog([gated("a"), gated("b")], {"decision": "a"})
    async with Dispatcher(catalog, admission=admission) as dispatcher:
        jobs = [
            TwoSeats("a", "b", admission, 0.01)
            if i % 2 == 0
            else TwoSeats("b", "a", admission, 0.01)
            for i in range(12)
        ]
        handles = [dispatcher.submit(job) for job in jobs]
        results = await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), 10)
    assert all(result == (1, 1) for result in results)
    for entry_id in ("a", "b"):
        gate = admission.gate_for(catalog.entry(entry_id))
        assert gate.in_use == 0
        assert gate.waiting == 0


async def test_a_job_waiting_for_one_gate_holds_no_other() -> None:
    admission = Admission()
    catalog = Catalog([gated("a"), gated("b")], {"decision": "a"})
    gate_a = admission.gate_for(catalog.entry("a"))
    gate_b = admission.gate_for(catalog.entry("b"))
    async with Dispatcher(catalog, admission=admission) as dispatcher:
        await gate_b.acquire()  # someone else holds b
        handle = dispatcher.submit(TwoSeats("a", "b", admission, 0.0))
        for _ in range(20):
            await asyncio.sleep(0)
        assert gate_b.waiting == 1
        assert gate_a.in_use == 0  # a is not held while waiting for b
        gate_b.release()
        assert await asyncio.wait_for(handle.result(), 5) == (1, 1)
    assert gate_a.in_use == gate_b.in_use == 0
