"""The dispatcher: runs jobs through the intake, admission, their time limits, re-runs and
events.

The parts are modules of their own, each one concern: the intake (``_intake.py``), resolution,
pricing and admission (``_admit.py``), time limits (``_deadline.py``), re-runs under the retry
policy (``_rerun.py``) and events (``_events.py``). This module holds what ties them: a job's
handle, the clients, submitting and running a job, and closing.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Generic, TypeVar

from harness.admission import Admission, Demand, Gate, Permit
from harness.catalog import Catalog, CatalogEntry, load_catalog
from harness.errors import JobTimeoutError, RetryableError, StatusError
from harness.jobs._admit import admit, release, resolve_bindings
from harness.jobs._budget import charge_budgets
from harness.jobs._deadline import DEADLINE_SLACK, Deadlines, JobRun, timeout_of
from harness.jobs._events import EventKind, JobEvent, Publisher, Subscription
from harness.jobs._intake import INTAKE_PER_SLICE, Intake
from harness.jobs._job import Job, JobContext
from harness.jobs._pacing import Pacing
from harness.jobs._rerun import pause, pause_for, settle
from harness.providers import DecisionClient, client_for
from harness.replay import overridden_client

__all__ = ["DISPATCHER_HOOKS", "Dispatcher", "JobHandle", "JobTimeoutError"]

log = logging.getLogger("harness.jobs")

R = TypeVar("R")

_SWEEP_AT: Final = 64
"""The dispatcher's set of running tasks is swept of ended ones (a job cancelled before it ever
ran) when it reaches this size, or twice the size it had after the last sweep."""

DISPATCHER_HOOKS: list[Callable[[Dispatcher], None]] = []
"""Called, in order, at the end of every ``Dispatcher.__init__``, so an observer above the jobs
layer (OpenTelemetry in ``harness.observe``) can subscribe to a dispatcher's events without this
layer importing it; add and remove freely."""


class JobHandle(Generic[R]):
    """A submitted job: await :meth:`result`, or :meth:`cancel` it."""

    __slots__ = ("_task", "job")

    def __init__(self, job: Job[R], task: asyncio.Task[R]) -> None:
        self.job = job
        self._task = task  # its failure is retrieved by the dispatcher's done callback

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


def _retrieve(task: asyncio.Task[Any]) -> None:
    """A failed job's done callback: its failure is delivered through its result and the
    events, never reported as "exception never retrieved"."""
    if not task.cancelled():
        task.exception()


ClientFactory = Callable[[CatalogEntry], DecisionClient]


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
            catalog = load_catalog()
        self.catalog = catalog
        self.admission = admission if admission is not None else Admission()
        self.pacing = pacing if pacing is not None else Pacing()
        self.clock = clock
        self._clients: dict[str, DecisionClient] = dict(clients or {})
        self._owned: dict[str, DecisionClient] = {}
        self._factory = client_factory or client_for
        self._events = Publisher()
        self._tasks: set[asyncio.Task[Any]] = set()  # tasks of any job's result type
        self._inline: set[JobRun] = set()  # jobs running in the tasks that await them
        self._closing: set[JobRun] = set()  # of those, the ones aclose cancelled
        self._drained: asyncio.Future[None] | None = None  # set when the last of those ends
        self._sweep_at = _SWEEP_AT
        self._intake = Intake(INTAKE_PER_SLICE)
        self._deadlines = Deadlines()
        self._closed = False
        for hook in tuple(DISPATCHER_HOOKS):  # observers (harness.observe) subscribe here
            hook(self)

    async def __aenter__(self) -> Dispatcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- clients -------------------------------------------------------------------------

    def client_for(self, entry: CatalogEntry) -> DecisionClient:
        """The client for ``entry``: an active ``harness.override``'s, else :meth:`installed_client`
        (refused when it is a real model over the network while tests block those)."""
        return overridden_client(entry, self.installed_client, self._owned)

    def installed_client(self, entry: CatalogEntry) -> DecisionClient:
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
        *,
        kinds: Iterable[EventKind] | None = None,
    ) -> Subscription:
        """Call ``callback`` with every event ``predicate`` accepts (all when ``None``).

        ``kinds`` limits the subscription to those kinds of event: an event no subscription
        takes is never built (a job's events cost nothing when nobody listens to them)."""
        return self._events.subscribe(callback, predicate, kinds)

    def publish_progress(self, job: Job[object], message: str) -> None:
        """Publish a progress event for ``job`` (see :meth:`JobContext.progress`)."""
        self._events.publish(EventKind.PROGRESS, job, message=message)

    # -- running -------------------------------------------------------------------------

    def submit(self, job: Job[R]) -> JobHandle[R]:
        """Schedule ``job`` on the running loop and return its handle."""
        return JobHandle(job, self._start(job))

    def _start(self, job: Job[R]) -> asyncio.Task[R]:
        """``job``'s task, made on the running loop: one task a job."""
        if self._closed:
            raise RuntimeError("the dispatcher is closed: create a new Dispatcher")
        loop = asyncio.get_running_loop()
        run = JobRun(job.timeout, self.clock)
        task: asyncio.Task[R] = loop.create_task(self._execute(job, run, loop))
        run.task = task
        tasks = self._tasks
        if len(tasks) >= self._sweep_at:  # a job cancelled before it started never ran its end
            tasks = self._tasks = {t for t in tasks if not t.done()}
            self._sweep_at = max(_SWEEP_AT, 2 * len(tasks))
        tasks.add(task)  # the job takes itself out when it ends
        events = self._events
        if events.heard and EventKind.SCHEDULED in events.heard:  # no hash when none listen
            events.publish(EventKind.SCHEDULED, job)  # type: ignore[arg-type]
        return task

    async def run(self, job: Job[R]) -> R:
        """Submit ``job`` and wait for its result.

        A job that :attr:`~harness.jobs.Job.runs_inline` (a decision call) runs in the awaiting
        task rather than a task of its own: no task to make and no turns of the loop to hand
        its result over. Its time limit cancels that task as ``asyncio.timeout`` would, and
        :meth:`aclose` cancels it as it cancels a job's own task."""
        if not job.runs_inline:
            return await self._start(job)
        if self._closed:
            raise RuntimeError("the dispatcher is closed: create a new Dispatcher")
        loop = asyncio.get_running_loop()
        host = asyncio.current_task(loop)
        if host is None:  # driven outside any task: the job gets one of its own
            return await self._start(job)
        run = JobRun(job.timeout, self.clock)
        run.task = host
        run.inline = True
        self._inline.add(run)
        events = self._events
        if events.heard and EventKind.SCHEDULED in events.heard:
            events.publish(EventKind.SCHEDULED, job)  # type: ignore[arg-type]
        return await self._execute(job, run, loop)

    def _publish_wait(self, job: Job[object], demand: Demand) -> None:
        self._events.publish(
            EventKind.ADMISSION_WAIT,
            job,
            message=f"waiting for {demand.amount} on the {demand.kind} {demand.name!r}",
        )

    async def _execute(self, job: Job[R], run: JobRun, loop: asyncio.AbstractEventLoop) -> R:
        """Run ``job`` to its end: each attempt waits its turn at the intake, is resolved,
        priced, charged and admitted, then runs under the job's time limit; a retry signal
        pauses and runs it again, within its retry policy. One coroutine a job: the attempt is
        inlined here, so every resumption of the job passes through one frame fewer. The job's
        clock (``run``) runs once an attempt is admitted and while it pauses."""
        any_job: Job[object] = job  # type: ignore[assignment]
        attempt = 0
        intake = self._intake
        clock = self.clock
        events = self._events
        try:
            while True:
                first: CatalogEntry | None = None  # the resolved entry (for the retry policy)
                try:
                    if not intake.passes(loop):
                        await intake.wait(loop)
                    resolved = resolve_bindings(self.catalog, any_job)
                    held: Gate | Permit | list[Permit] | None = None
                    if resolved:
                        if job._budgets():  # refused here, before admission
                            charge_budgets(job.identity, resolved)
                        first = resolved[0].entry
                        if attempt == 0 and any_job.limit_from_entry:
                            run.limit = any_job.timeout = any_job.limit_by(first)
                        if len(resolved) == 1:  # the common case: taken at once when free
                            demand = self.admission.demand(first, resolved[0].reservation)
                            held = demand.take_gate_now()  # a gate's permit: no object for it
                            if held is None:
                                held = demand.take_now()
                            if held is None:
                                if demand.would_wait():
                                    self._publish_wait(any_job, demand)
                                held = await demand.acquire()
                        else:
                            held = await admit(
                                self.admission,
                                resolved,
                                functools.partial(self._publish_wait, any_job),
                            )
                    try:
                        if attempt == 0 and events.heard and EventKind.STARTED in events.heard:
                            events.publish(EventKind.STARTED, any_job)
                        started = clock()  # the job's clock runs once admitted
                        limit = run.limit
                        deadline = None
                        try:
                            if limit is None:
                                context = JobContext(any_job, self, resolved, attempt, None)
                                result = await job.run(context)
                            else:
                                left = limit - run.used
                                if left < 0.0:
                                    left = 0.0
                                deadline = started + left
                                context = JobContext(any_job, self, resolved, attempt, deadline)
                                self._deadlines.start(loop, run, left)
                                try:
                                    result = await job.run(context)
                                except BaseException as error:
                                    if self._deadlines.stop(run) and isinstance(
                                        error, asyncio.CancelledError
                                    ):
                                        raise TimeoutError from error  # as asyncio.timeout
                                    raise
                                self._deadlines.stop(run)
                        except BaseException as error:
                            run.used += max(0.0, clock() - started)  # spent: a re-run has less
                            if isinstance(error, TimeoutError):
                                if deadline is not None and run.expired:
                                    raise timeout_of(job) from error
                            elif (
                                isinstance(error, RetryableError)
                                and deadline is not None
                                and clock() >= deadline - DEADLINE_SLACK
                            ):
                                # A client given the job's remaining time (aiohttp's total) can
                                # hit it in the same loop tick as the limit: with no time left,
                                # that is the timeout.
                                raise timeout_of(job) from error
                            raise
                    finally:
                        if held is not None:
                            if isinstance(held, list):
                                release(held)
                            else:
                                held.release()
                except StatusError as error:
                    policy = self.pacing.policy(job.retry_policy(first))
                    wait = pause_for(self.pacing, error, attempt, run, policy)
                    events.publish(
                        EventKind.RETRY,
                        any_job,
                        message=error.message,
                        attempt=attempt + 1,
                        delay=wait,
                        error=error,
                    )
                    log.info("re-running %s in %.3f s: %s", job.describe(), wait, error.message)
                    await pause(self.pacing, job, wait, run)
                    attempt += 1
                    continue
                if events.heard and EventKind.COMPLETED in events.heard:
                    events.publish(EventKind.COMPLETED, any_job)
                return result
        except JobTimeoutError as error:
            # A child's timeout fails its parent; only the job whose clock ran out timed out.
            kind = EventKind.TIMED_OUT if error.job_id == job.identity.job_id else EventKind.FAILED
            self._events.publish(kind, any_job, message=error.message, error=error)
            if not run.inline:
                run.task.add_done_callback(_retrieve)
            raise
        except asyncio.CancelledError:
            self._events.publish(EventKind.CANCELLED, any_job)
            if run.closing:  # the host task carries on as a job's awaiter would: uncancelled
                run.task.uncancel()
            raise
        except Exception as error:
            if isinstance(error, StatusError):
                settle(error)  # a parent job never re-runs what this one settled
            self._events.publish(EventKind.FAILED, any_job, message=str(error), error=error)
            if not run.inline:
                run.task.add_done_callback(_retrieve)
            raise
        finally:
            if run.inline:
                self._inline.discard(run)
                if run.closing:
                    self._closing.discard(run)
                    drained = self._drained
                    if not self._closing and drained is not None and not drained.done():
                        drained.set_result(None)
            else:
                self._tasks.discard(run.task)

    async def aclose(self) -> None:
        """Cancel what still runs and close the clients this dispatcher made."""
        self._closed = True
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        here = asyncio.current_task()
        fresh = [run for run in self._inline if run.task is not here and not run.closing]
        if fresh:  # cancelled in the tasks they run in, and waited for as a job's own task
            if self._drained is None or self._drained.done():
                self._drained = asyncio.get_running_loop().create_future()
            for run in fresh:
                run.closing = True
                self._closing.add(run)
                run.task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._drained is not None and not self._drained.done():
            await asyncio.shield(self._drained)
        owned = list(self._owned.values())
        self._owned.clear()
        for client in owned:
            await client.aclose()
