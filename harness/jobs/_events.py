"""Job events: what happened to a job, the snapshots they carry, and their delivery to the
subscribers of a dispatcher (:class:`Publisher`)."""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from harness.jobs._job import Job

__all__ = ["EventKind", "JobEvent", "JobSnapshot", "Publisher", "Subscription"]

log = logging.getLogger("harness.jobs")


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


class Publisher:
    """A dispatcher's subscriptions, and the events of its jobs delivered to them.

    :attr:`heard` is every kind some subscription may take: an event of another kind is never
    built (the dispatcher checks it before it even calls :meth:`publish` on its hot path).
    """

    __slots__ = ("heard", "subscriptions")

    def __init__(self) -> None:
        self.subscriptions: list[Subscription] = []
        self.heard: frozenset[EventKind] = frozenset()

    def subscribe(
        self,
        callback: Callable[[JobEvent], None],
        predicate: Callable[[JobEvent], bool] | None,
        kinds: Iterable[EventKind] | None,
    ) -> Subscription:
        """A new subscription (see :meth:`harness.jobs.Dispatcher.subscribe`)."""
        subscription = Subscription(
            callback, predicate, kinds=None if kinds is None else frozenset(kinds)
        )
        self.subscriptions.append(subscription)
        self.heard = self.heard | subscription.heard
        return subscription

    def publish(self, kind: EventKind, job: Job[object], **fields: object) -> None:
        """Build ``job``'s event of ``kind`` and deliver it, when some subscription takes it."""
        if not self.heard or kind not in self.heard:  # an enum's hash is a Python call
            return
        snapshot = JobSnapshot(
            job_id=job.identity.job_id,
            parent_id=job.identity.parent_id,
            workflow_id=job.identity.workflow_id,
            user_id=job.identity.user_id,
            job_class=type(job).__qualname__,
            tool_name=job.tool_name,
            metadata=job.metadata,
        )
        event = JobEvent(kind, snapshot, live_job=job, **fields)  # type: ignore[arg-type]
        for subscription in tuple(self.subscriptions):
            try:
                subscription.deliver(event)
            except Exception:  # a subscriber's bug never fails a job
                log.exception("event subscriber failed on %s", kind.value)
        if not all(s.active for s in self.subscriptions):
            self.subscriptions = [s for s in self.subscriptions if s.active]
            self.heard = frozenset().union(*(s.heard for s in self.subscriptions))
