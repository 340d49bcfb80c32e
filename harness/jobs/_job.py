"""Jobs: a unit of work with an identity, a timeout, a retry budget, metadata and a record."""

from __future__ import annotations

import abc
from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, ClassVar, Final, Generic, Protocol, TypeVar

from harness.jobs._record import JobRecord
from harness.jobs._requirements import Requirements, ResolvedBinding
from harness.jobs._retry import RetryPolicy
from harness.scope import BudgetAccount, Identifiable, Identity, new_job_id

if TYPE_CHECKING:
    from harness.catalog import Catalog, CatalogEntry
    from harness.providers import DecisionClient

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_UPSTREAM_RETRIES",
    "DefaultTimeout",
    "Job",
    "JobContext",
    "JobRunner",
]

R = TypeVar("R")
R2 = TypeVar("R2")


class _PolicyRetries(int):
    """An ``int`` that means "the retry policy's count": what ``upstream_retries`` defaults to."""

    def __repr__(self) -> str:
        return "DEFAULT_UPSTREAM_RETRIES"


DEFAULT_UPSTREAM_RETRIES: Final[int] = _PolicyRetries(RetryPolicy().max_retries)
"""``upstream_retries``'s default: the count of whichever retry policy applies (the entry's
``[entries.retry] max_retries``, else the SDK's 2). Passing it on keeps that meaning."""


class DefaultTimeout:
    """The type of :data:`DEFAULT_TIMEOUT`."""

    def __repr__(self) -> str:
        return "DEFAULT_TIMEOUT"


DEFAULT_TIMEOUT: Final = DefaultTimeout()
"""A job's ``timeout`` left to its class: ``default_timeout``, or for a class with
``timeout_from_entry`` (a decision call) the limit its resolved catalog entry sets."""


class Job(Generic[R], abc.ABC):
    """A unit of work the dispatcher runs.

    ``timeout`` (seconds, ``None`` for none) bounds the job's running time on the monotonic
    clock, over all its attempts and the pauses between them; waiting for admission does not
    count. ``retry`` replaces the retry policy of the job's catalog entry (a child job made with
    a :class:`JobContext` as its parent inherits its parent's); ``upstream_retries`` sets the
    number of re-runs of whichever policy applies (one counter per execution).
    """

    default_timeout: ClassVar[float | None] = None
    timeout_from_entry: ClassVar[bool] = False
    """When true, a job built without a ``timeout`` takes its limit from the first catalog entry
    it resolves to (:meth:`limit_by`): a decision's from its entry's ``decision_timeout_s``."""
    kind: ClassVar[str] = "job"
    runs_inline: ClassVar[bool] = False
    """When true, :meth:`Dispatcher.run` and :meth:`JobContext.run` run the job in the task that
    awaits it instead of a task of its own (:meth:`Dispatcher.submit` still makes one): for a
    job that sets no context variable and whose caller waits for it anyway, a decision call.
    Its timeout, events, record, retries and cancellation behave as in a task of its own."""

    def __init__(
        self,
        parent: Identifiable,
        *,
        timeout: float | DefaultTimeout | None = DEFAULT_TIMEOUT,
        upstream_retries: int | None = DEFAULT_UPSTREAM_RETRIES,
        retry: RetryPolicy | None = None,
    ) -> None:
        # The common job (a decision call a thinker makes) passes every argument as its default:
        # nothing of them to check, and the same fields as the general way below makes.
        common = (
            timeout is DEFAULT_TIMEOUT
            and upstream_retries is DEFAULT_UPSTREAM_RETRIES
            and retry is None
            and not isinstance(parent, JobContext)
        )
        if not common:
            if upstream_retries is not None and upstream_retries < 0:
                raise ValueError(f"upstream_retries must be >= 0, got {upstream_retries}")
            if retry is not None and not isinstance(retry, RetryPolicy):
                raise TypeError(f"retry must be a RetryPolicy or None, not {type(retry).__name__}")
        # The identity is made on first read (events, errors, budgets, a child's parent); its
        # job id is drawn now, so ids follow the order jobs were made in.
        self._parent: Identity = parent.identity
        self._job_id = new_job_id(self.kind)
        self._identity: Identity | None = None
        if common:
            self.timeout: float | None = self.default_timeout
            self.limit_from_entry: bool = self.timeout_from_entry
            """Whether the dispatcher sets :attr:`timeout` from the entry (:meth:`limit_by`)."""
            if self.timeout is not None and self.timeout <= 0:
                raise ValueError(f"timeout must be > 0 seconds or None, got {self.timeout}")
            self._retries: int | None = None
        else:
            self.timeout = self.default_timeout if isinstance(timeout, DefaultTimeout) else timeout
            self.limit_from_entry = self.timeout_from_entry and isinstance(timeout, DefaultTimeout)
            if self.timeout is not None and self.timeout <= 0:
                raise ValueError(f"timeout must be > 0 seconds or None, got {self.timeout}")
            self._retries = (
                None
                if upstream_retries is None or type(upstream_retries) is _PolicyRetries
                else int(upstream_retries)
            )
            if retry is None and isinstance(parent, JobContext):
                retry = parent.job.retry
        self.retry: RetryPolicy | None = retry
        """The job's own retry policy, ``None`` to take its catalog entry's."""
        self._metadata: dict[str, str] | None = None
        self._record: JobRecord | None = None

    @property
    def identity(self) -> Identity:
        """Who the job acts for: its own id, its parent's, its workflow's and its user's, and the
        budgets it spends against (its parent's)."""
        identity = self._identity
        if identity is None:
            identity = self._identity = self._parent.child(self._job_id)
        return identity

    @identity.setter
    def identity(self, identity: Identity) -> None:
        self._identity = identity

    def _budgets(self) -> tuple[BudgetAccount, ...]:
        """The accounts the job spends against (its identity's), without making its identity."""
        identity = self._identity
        return (self._parent if identity is None else identity).budgets

    @property
    def metadata(self) -> dict[str, str]:
        """The job's metadata (made on first use); events carry it."""
        metadata = self._metadata
        if metadata is None:
            metadata = self._metadata = {}
        return metadata

    @metadata.setter
    def metadata(self, metadata: dict[str, str]) -> None:
        self._metadata = metadata

    def limit_by(self, entry: CatalogEntry) -> float | None:
        """The time limit this job takes from ``entry`` when :attr:`limit_from_entry` (the
        dispatcher asks once, before the first attempt's clock starts); :attr:`timeout` here."""
        return self.timeout

    @property
    def record(self) -> JobRecord:
        """The job's record of model calls, made on first use (a job that calls no model never
        makes one)."""
        record = self._record
        if record is None:
            record = self._record = JobRecord()
        return record

    @record.setter
    def record(self, record: JobRecord) -> None:
        self._record = record

    @property
    def upstream_retries(self) -> int:
        """The re-runs this job was given (``upstream_retries=``, else its own policy's); without
        either, :data:`DEFAULT_UPSTREAM_RETRIES` ("the policy's count")."""
        if self._retries is not None:
            return self._retries
        if self.retry is not None:
            return self.retry.max_retries
        return DEFAULT_UPSTREAM_RETRIES

    def retry_policy(self, entry: CatalogEntry | None) -> RetryPolicy:
        """The policy that applies to this job calling ``entry``: its own, else the entry's
        (else the default), with ``upstream_retries`` as its count when given."""
        policy = self.retry if self.retry is not None else RetryPolicy.for_entry(entry)
        return policy if self._retries is None else policy.with_retries(self._retries)

    @property
    def tool_name(self) -> str | None:
        """The name a model could call this job by; ``None`` for jobs no model can call."""
        return None

    def requirements(self) -> Requirements:
        """The model bindings the dispatcher must price and admit before each attempt."""
        return Requirements.none()

    @abc.abstractmethod
    async def run(self, context: JobContext) -> R:
        """Do the work. Raise a ``RetryableError`` to be re-run within the retry budget."""

    def describe(self) -> str:
        """A short name for messages: class and job id."""
        return f"{type(self).__qualname__} {self.identity.job_id}"


class JobRunner(Protocol):
    """What a running job uses of the dispatcher that runs it (:class:`~harness.jobs.Dispatcher`
    is the one). Declared beside the job so this module never imports the dispatcher's, which
    imports it."""

    @property
    def catalog(self) -> Catalog:
        """The catalog the job's bindings resolve in."""
        ...

    @property
    def clock(self) -> Callable[[], float]:
        """The clock the job's time limit runs on."""
        ...

    def client_for(self, entry: CatalogEntry) -> DecisionClient:
        """The client for ``entry``."""
        ...

    def publish_progress(self, job: Job[object], message: str) -> None:
        """Publish a progress event for ``job``."""
        ...

    async def run(self, job: Job[R2]) -> R2:
        """Run ``job`` and return its result."""
        ...


class JobContext:
    """What a running job sees: its identity, metadata, record, progress, the model bindings the
    dispatcher resolved for this attempt, and a way to run child jobs."""

    __slots__ = ("_deadline", "attempt", "dispatcher", "job", "resolved")

    def __init__(
        self,
        job: Job[object],
        dispatcher: JobRunner,
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
        """The job's re-run count, for handing on to the decisions it asks (the default means
        "the policy's count", so handing it on keeps each entry's own)."""
        return self.job.upstream_retries

    @property
    def retry(self) -> RetryPolicy | None:
        """The job's own retry policy (``None``: each entry's); a child made with this context
        as its parent inherits it."""
        return self.job.retry

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
        """Run a child job through the dispatcher and return its result (in this task when the
        job :attr:`~Job.runs_inline`)."""
        return await self.dispatcher.run(job)
