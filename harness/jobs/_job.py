"""Jobs: a unit of work with an identity, a timeout, a retry budget, metadata and a record."""

from __future__ import annotations

import abc
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, ClassVar, Final, Generic, TypeVar

from harness.decision._record import JobRecord
from harness.jobs._requirements import Requirements, ResolvedBinding
from harness.scope import Identifiable, Identity, new_job_id

if TYPE_CHECKING:
    from harness.jobs._dispatcher import Dispatcher
    from harness.llm import DecisionClient

__all__ = ["DEFAULT_UPSTREAM_RETRIES", "Job", "JobContext"]

R = TypeVar("R")
R2 = TypeVar("R2")

DEFAULT_UPSTREAM_RETRIES: Final = 3


class _Inherit:
    """Marker: take the timeout from the job class."""


_INHERIT: Final = _Inherit()


class Job(Generic[R], abc.ABC):
    """A unit of work the dispatcher runs.

    ``timeout`` (seconds, ``None`` for none) bounds the job's running time; waiting for
    admission does not count. ``upstream_retries`` is the budget of paced re-runs after a retry
    signal, one counter per execution.
    """

    default_timeout: ClassVar[float | None] = None
    kind: ClassVar[str] = "job"

    def __init__(
        self,
        parent: Identifiable,
        *,
        timeout: float | _Inherit | None = _INHERIT,
        upstream_retries: int = DEFAULT_UPSTREAM_RETRIES,
    ) -> None:
        if upstream_retries < 0:
            raise ValueError(f"upstream_retries must be >= 0, got {upstream_retries}")
        self.identity: Identity = parent.identity.child(new_job_id(self.kind))
        self.timeout: float | None = (
            self.default_timeout if isinstance(timeout, _Inherit) else timeout
        )
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds or None, got {self.timeout}")
        self.upstream_retries = upstream_retries
        self.metadata: dict[str, str] = {}
        self.record = JobRecord()

    @property
    def tool_name(self) -> str | None:
        """The name a model could call this job by; ``None`` for jobs no model can call."""
        return None

    def requirements(self) -> Requirements:
        """The model bindings the dispatcher must price and admit before each attempt."""
        return Requirements.none()

    @abc.abstractmethod
    async def run(self, context: JobContext) -> R:
        """Do the work. Raise a ``RetrySignal`` to be re-run within the retry budget."""

    def describe(self) -> str:
        """A short name for messages: class and job id."""
        return f"{type(self).__qualname__} {self.identity.job_id}"


class JobContext:
    """What a running job sees: its identity, metadata, record, progress, the model bindings the
    dispatcher resolved for this attempt, and a way to run child jobs."""

    def __init__(
        self,
        job: Job[object],
        dispatcher: Dispatcher,
        resolved: tuple[ResolvedBinding, ...],
        attempt: int,
        deadline: float | None,
    ) -> None:
        self.job = job
        self.dispatcher = dispatcher
        self.resolved = resolved
        self.attempt = attempt
        self._deadline = deadline

    @property
    def identity(self) -> Identity:
        """The running job's identity (a context parents child jobs and tools)."""
        return self.job.identity

    @property
    def metadata(self) -> MutableMapping[str, str]:
        """The job's metadata; publish changes with :meth:`progress`."""
        return self.job.metadata

    @property
    def record(self) -> JobRecord:
        """The job's record of model calls."""
        return self.job.record

    @property
    def upstream_retries(self) -> int:
        """The job's retry budget, for handing on to the decisions it asks."""
        return self.job.upstream_retries

    def remaining(self) -> float | None:
        """Seconds left of the job's timeout, ``None`` without one."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - self.dispatcher.clock())

    def progress(self, message: str) -> None:
        """Publish a progress event carrying a snapshot of the job (metadata included)."""
        self.dispatcher.publish_progress(self.job, message)

    def client_for(self, resolved: ResolvedBinding) -> DecisionClient:
        """The dispatcher's client for a resolved entry."""
        return self.dispatcher.client_for(resolved.entry)

    async def run(self, job: Job[R2]) -> R2:
        """Run a child job through the dispatcher and return its result."""
        return await self.dispatcher.submit(job).result()
