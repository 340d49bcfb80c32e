"""Job events and the snapshots they carry."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from types import MappingProxyType

import attrs

__all__ = ["EventKind", "JobEvent", "JobSnapshot", "Subscription"]


class EventKind(enum.Enum):
    """What happened to a job."""

    SCHEDULED = "scheduled"
    ADMISSION_WAIT = "admission_wait"
    STARTED = "started"
    PROGRESS = "progress"
    RETRY = "retry"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        """Whether the job is over after this event."""
        return self in _TERMINAL


_TERMINAL = frozenset(
    {EventKind.COMPLETED, EventKind.FAILED, EventKind.TIMED_OUT, EventKind.CANCELLED}
)


def _read_only(metadata: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(metadata))


@attrs.frozen
class JobSnapshot:
    """A job as it was when an event was published: ids, class and a copy of its metadata."""

    job_id: str
    parent_id: str | None
    workflow_id: str
    user_id: str | None
    job_class: str
    tool_name: str | None
    metadata: Mapping[str, str] = attrs.field(converter=_read_only)


@attrs.frozen
class JobEvent:
    """One event of one job. ``message`` is a progress line, a retry's reason or a failure's
    message; ``delay`` is a retry's pause in seconds."""

    kind: EventKind
    job: JobSnapshot
    message: str | None = None
    attempt: int = 0
    delay: float | None = None
    error: BaseException | None = attrs.field(default=None, eq=False, repr=False)
    live_job: object = attrs.field(default=None, eq=False, repr=False)
    """The live job (a :class:`harness.jobs.Job`), for observers that read its request, tool or
    record; never change it from a subscriber."""


_ALL_KINDS: frozenset[EventKind] = frozenset(EventKind)


@attrs.define(eq=False)
class Subscription:
    """A subscriber's callback, predicate and kinds of event; ``cancel()`` stops delivery.

    ``kinds`` (``None``: every kind) is checked before an event is built, ``predicate`` after:
    a dispatcher builds no event that no subscription's kinds take.
    """

    callback: Callable[[JobEvent], None]
    predicate: Callable[[JobEvent], bool] | None
    active: bool = True
    kinds: frozenset[EventKind] | None = attrs.field(default=None, kw_only=True)

    @property
    def heard(self) -> frozenset[EventKind]:
        """The kinds of event this subscription may take (none once cancelled)."""
        if not self.active:
            return frozenset()
        return _ALL_KINDS if self.kinds is None else self.kinds

    def cancel(self) -> None:
        """Deliver nothing more to this subscriber."""
        self.active = False

    def deliver(self, event: JobEvent) -> None:
        """Hand ``event`` to the callback when active, of a kind taken, and the predicate
        accepts it."""
        if (
            self.active
            and (self.kinds is None or event.kind in self.kinds)
            and (self.predicate is None or self.predicate(event))
        ):
            self.callback(event)
