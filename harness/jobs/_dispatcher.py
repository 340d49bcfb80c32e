"""The dispatcher: runs jobs with admission, timeouts, paced re-runs and events."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from harness.errors import (
    ExternalServiceError,
    JobTimeoutError,
    OverloadSignal,
    RateLimitSignal,
    RetrySignal,
    UpstreamThrottleError,
)
from harness.jobs._events import EventKind, JobEvent, JobSnapshot, Subscription
from harness.jobs._hooks import DISPATCHER_HOOKS
from harness.jobs._job import Job, JobContext
from harness.jobs._pacing import Pacing
from harness.jobs._requirements import ResolvedBinding
from harness.models import Admission, Catalog, CatalogEntry, Permit, check_ceiling

if TYPE_CHECKING:
    from harness.llm import DecisionClient

__all__ = ["Dispatcher", "JobHandle", "JobTimeoutError"]

log = logging.getLogger("harness.jobs")

R = TypeVar("R")

_DEADLINE_SLACK = 0.001
"""Seconds before a job's deadline at which a retry signal counts as its timeout."""


def _timeout_of(job: Job[Any]) -> JobTimeoutError:
    """The timeout of ``job``."""
    return JobTimeoutError(
        f"{job.describe()} did not finish within its timeout of {job.timeout:g} s",
        job_id=job.identity.job_id,
    )


class JobHandle(Generic[R]):
    """A submitted job: await :meth:`result`, or :meth:`cancel` it."""

    def __init__(self, job: Job[R], task: asyncio.Task[R]) -> None:
        self.job = job
        self._task = task
        task.add_done_callback(_retrieve)

    def result(self) -> asyncio.Future[R]:
        """The job's result (await it), or its failure raised. Cancelling the wait cancels the
        job, so a cancelled parent never leaves its children running. It is the job's own
        future, so ``asyncio.gather(*(h.result() for h in handles))`` wraps nothing."""
        return self._task

    def cancel(self) -> None:
        """Cancel the job; its permits come back."""
        self._task.cancel()

    def done(self) -> bool:
        """Whether the job is over."""
        return self._task.done()

    def __await__(self):  # type: ignore[no-untyped-def]  # the generator type of a Task is private
        return self._task.__await__()


def _release(permits: list[Permit]) -> None:
    for permit in permits:
        permit.release()
    permits.clear()


def _retrieve(task: asyncio.Task[object]) -> None:
    # A failure is delivered through result() and the events; never "exception never retrieved".
    if not task.cancelled():
        task.exception()


ClientFactory = Callable[[CatalogEntry], "DecisionClient"]


def _client_for(entry: CatalogEntry) -> DecisionClient:
    from harness.llm import client_for  # the llm package imports jobs: resolve at first use

    return client_for(entry)


class Dispatcher:
    """Runs jobs: resolves and prices their bindings, admits them, runs them under their
    timeout, re-runs them on retry signals within their budget, and publishes events.

    Use it as an async context manager (or call :meth:`aclose`) so clients are closed.
    """

    def __init__(
        self,
        catalog: Catalog | None = None,
        *,
        clients: Mapping[str, DecisionClient] | None = None,
        client_factory: ClientFactory | None = None,
        admission: Admission | None = None,
        pacing: Pacing | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if catalog is None:
            from harness.models import load_catalog

            catalog = load_catalog()
        self.catalog = catalog
        self.admission = admission if admission is not None else Admission()
        self.pacing = pacing if pacing is not None else Pacing()
        self.clock = clock
        self._clients: dict[str, DecisionClient] = dict(clients or {})
        self._owned: dict[str, DecisionClient] = {}
        self._factory = client_factory or _client_for
        self._subscriptions: list[Subscription] = []
        self._tasks: set[asyncio.Task[Any]] = set()  # tasks of any job's result type
        self._closed = False
        for hook in tuple(DISPATCHER_HOOKS):  # observers (harness.observe) subscribe here
            hook(self)

    async def __aenter__(self) -> Dispatcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- clients -------------------------------------------------------------------------

    def client_for(self, entry: CatalogEntry) -> DecisionClient:
        """The client installed for ``entry``'s id, else one per provider made on first use."""
        client = self._clients.get(entry.id)
        if client is None:
            client = self._owned.get(entry.provider)
            if client is None:
                client = self._factory(entry)
                self._owned[entry.provider] = client
        return client

    # -- events --------------------------------------------------------------------------

    def subscribe(
        self,
        callback: Callable[[JobEvent], None],
        predicate: Callable[[JobEvent], bool] | None = None,
    ) -> Subscription:
        """Call ``callback`` with every event ``predicate`` accepts (all when ``None``)."""
        subscription = Subscription(callback, predicate)
        self._subscriptions.append(subscription)
        return subscription

    def _publish(self, kind: EventKind, job: Job[object], **fields: object) -> None:
        if not self._subscriptions:
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
        for subscription in tuple(self._subscriptions):
            try:
                subscription.deliver(event)
            except Exception:  # a subscriber's bug never fails a job
                log.exception("event subscriber failed on %s", kind.value)
        self._subscriptions = [s for s in self._subscriptions if s.active]

    def publish_progress(self, job: Job[object], message: str) -> None:
        """Publish a progress event for ``job`` (see :meth:`JobContext.progress`)."""
        self._publish(EventKind.PROGRESS, job, message=message)

    # -- running -------------------------------------------------------------------------

    def submit(self, job: Job[R]) -> JobHandle[R]:
        """Schedule ``job`` on the running loop and return its handle."""
        if self._closed:
            raise RuntimeError("the dispatcher is closed: create a new Dispatcher")
        task: asyncio.Task[R] = asyncio.get_running_loop().create_task(self._execute(job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self._publish(EventKind.SCHEDULED, job)  # type: ignore[arg-type]
        return JobHandle(job, task)

    async def run(self, job: Job[R]) -> R:
        """Submit ``job`` and wait for its result."""
        return await self.submit(job).result()

    def _resolve(self, job: Job[object]) -> tuple[ResolvedBinding, ...]:
        resolved = []
        for binding in job.requirements().bindings:
            entry = self.catalog.resolve_decision(binding.pinned, asked_by=job.describe())
            reservation = binding.price(entry)
            check_ceiling(entry, reservation)
            resolved.append(ResolvedBinding(binding, entry, reservation))
        return tuple(resolved)

    async def _admit(self, job: Job[object], resolved: tuple[ResolvedBinding, ...]) -> list[Permit]:
        """Take every demand or none, never waiting while holding a permit.

        Demands are taken in one global order (by kind and name). When one would wait, the job
        gives back what it holds, waits for that one alone, and tries the rest again without
        waiting; so two jobs with crossed demands cannot deadlock.
        """
        demands = sorted(
            (self.admission.demand(item.entry, item.reservation) for item in resolved),
            key=lambda d: (d.kind, d.name),
        )
        held: list[Permit] = []
        try:
            blocking = None
            while True:
                if blocking is not None:
                    self._publish(
                        EventKind.ADMISSION_WAIT,
                        job,
                        message=f"waiting for {blocking.amount} on the {blocking.kind} "
                        f"{blocking.name!r}",
                    )
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
                _release(held)
        except BaseException:
            _release(held)
            raise

    async def _attempt(self, job: Job[R], attempt: int, used: float, began: list[float]) -> R:
        any_job: Job[object] = job  # type: ignore[assignment]
        resolved = self._resolve(any_job)
        permits = await self._admit(any_job, resolved)
        began.append(self.clock())  # the job's clock starts once admitted
        try:
            if attempt == 0:
                self._publish(EventKind.STARTED, any_job)
            left = None if job.timeout is None else max(0.0, job.timeout - used)
            deadline = None if left is None else self.clock() + left
            context = JobContext(any_job, self, resolved, attempt, deadline)
            try:
                async with asyncio.timeout(left) as scope:
                    return await job.run(context)
            except TimeoutError as error:
                if scope.expired():
                    raise _timeout_of(job) from error
                raise
            except RetrySignal as signal:
                # A client given the job's remaining time (aiohttp's total) can hit it in the
                # same loop tick as the scope above: with no time left, that is the timeout.
                if deadline is not None and self.clock() >= deadline - _DEADLINE_SLACK:
                    raise _timeout_of(job) from signal
                raise
        finally:
            _release(permits)

    async def _execute(self, job: Job[R]) -> R:
        any_job: Job[object] = job  # type: ignore[assignment]
        attempt = 0
        used = 0.0  # seconds of the job's timeout spent (running and pacing, not admission)
        try:
            while True:
                began: list[float] = []
                try:
                    result = await self._attempt(job, attempt, used, began)
                except RetrySignal as signal:
                    used += self.clock() - began[-1] if began else 0.0
                    wait = self._pause_for(job, signal, attempt, used)
                    self._publish(
                        EventKind.RETRY,
                        any_job,
                        message=signal.message,
                        attempt=attempt + 1,
                        delay=wait,
                        error=signal,
                    )
                    log.info("re-running %s in %.3f s: %s", job.describe(), wait, signal.message)
                    await self.pacing.sleep(wait)
                    used += wait
                    attempt += 1
                    continue
                self._publish(EventKind.COMPLETED, any_job)
                return result
        except JobTimeoutError as error:
            # A child's timeout fails its parent; only the job whose clock ran out timed out.
            kind = EventKind.TIMED_OUT if error.job_id == job.identity.job_id else EventKind.FAILED
            self._publish(kind, any_job, message=error.message, error=error)
            raise
        except asyncio.CancelledError:
            self._publish(EventKind.CANCELLED, any_job)
            raise
        except Exception as error:
            self._publish(EventKind.FAILED, any_job, message=str(error), error=error)
            raise

    def _pause_for(self, job: Job[R], signal: RetrySignal, attempt: int, used: float) -> float:
        budget = job.upstream_retries
        if attempt >= budget:
            kind = (
                UpstreamThrottleError
                if isinstance(signal, RateLimitSignal | OverloadSignal)
                else ExternalServiceError
            )
            spent = kind(
                f"{signal.message}; gave up after the retry budget ({budget}) was spent",
                status=signal.status,
            )
            spent.request_id = signal.request_id
            raise spent from signal
        wait = self.pacing.delay(attempt, signal.retry_after)
        if job.timeout is not None and used + wait > job.timeout:
            asked = signal.retry_after if signal.retry_after is not None else wait
            raise ExternalServiceError(
                f"{signal.message}; a re-run was asked for after {asked:g} s, which would outlast "
                f"the {max(0.0, job.timeout - used):g} s left of the job's timeout",
                status=signal.status,
            ) from signal
        return wait

    async def aclose(self) -> None:
        """Cancel what still runs and close the clients this dispatcher made."""
        self._closed = True
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        owned = list(self._owned.values())
        self._owned.clear()
        for client in owned:
            await client.aclose()
