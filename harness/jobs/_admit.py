"""Admission of an attempt: its bindings resolved and priced, then its demands taken.

One concern: what an attempt must hold before it runs. :func:`resolve_bindings` finds each binding's
catalog entry and prices it (refusing a state past the entry's ceiling); :func:`admit` takes
the demands of several bindings without deadlock; :func:`release` gives permits back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from harness.admission import Admission, Demand, Permit
from harness.catalog import Catalog, check_ceiling
from harness.jobs._requirements import ResolvedBinding
from harness.jobs._requirements import resolved as made_resolved

if TYPE_CHECKING:
    from harness.jobs._job import Job

__all__ = ["admit", "release", "resolve_bindings"]


def release(permits: list[Permit]) -> None:
    """Give every permit in ``permits`` back and empty the list."""
    for permit in permits:
        permit.release()
    permits.clear()


def resolve_bindings(catalog: Catalog, job: Job[object]) -> tuple[ResolvedBinding, ...]:
    """``job``'s bindings, each resolved to its catalog entry and priced under it."""
    bindings = job.requirements().bindings
    if not bindings:
        return ()
    resolved = []
    for binding in bindings:
        entry = catalog.decision_entry(binding.pinned)
        if entry is None:  # refused: the message names the job
            entry = catalog.resolve_decision(binding.pinned, asked_by=job.describe())
        reservation = binding.reserve(entry)
        if reservation.input_tokens + reservation.output_tokens > entry.max_context_tokens:
            check_ceiling(entry, reservation)  # refused, naming the count and the ceiling
        resolved.append(made_resolved(binding, entry, reservation))
    return tuple(resolved)


async def admit(
    admission: Admission,
    resolved: tuple[ResolvedBinding, ...],
    waiting: Callable[[Demand], None],
) -> list[Permit]:
    """Take every demand of several or none, never waiting while holding a permit (one demand,
    the common case, the dispatcher takes itself: nothing to order). ``waiting`` is told of each
    demand the attempt waits for.

    Demands are taken in one global order (by kind and name). When one would wait, the attempt
    gives back what it holds, waits for that one alone, and tries the rest again without
    waiting; so two jobs with crossed demands cannot deadlock.
    """
    demands = sorted(
        (admission.demand(item.entry, item.reservation) for item in resolved),
        key=lambda d: (d.kind, d.name),
    )
    held: list[Permit] = []
    try:
        blocking = None
        while True:
            if blocking is not None:
                waiting(blocking)
                held.append(await blocking.acquire())
            for demand in demands:
                if demand is blocking:
                    continue
                if demand.would_wait():
                    blocking = demand
                    break
                held.append(await demand.acquire())
            else:
                return held
            release(held)
    except BaseException:
        release(held)
        raise
