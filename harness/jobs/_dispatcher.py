"""The dispatcher: runs jobs with admission, timeouts, paced re-runs and events."""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from harness.admission import Admission, Demand, Permit
from harness.catalog import Catalog, CatalogEntry, check_ceiling
from harness.errors import (
    ExternalServiceError,
    JobTimeoutError,
    OverloadedError,
    RateLimitedError,
    RetryableError,
    StatusError,
    UpstreamThrottleError,
)
from harness.jobs._budget import charge_budgets
from harness.jobs._events import EventKind, JobEvent, JobSnapshot, Subscription
from harness.jobs._hooks import DISPATCHER_HOOKS
from harness.jobs._job import Job, JobContext
from harness.jobs._pacing import Pacing
from harness.jobs._requirements import ResolvedBinding
from harness.jobs._requirements import resolved as made_resolved
from harness.jobs._retry import RetryPolicy

if TYPE_CHECKING:
    from harness.providers import DecisionClient

__all__ = ["Dispatcher", "JobHandle", "JobTimeoutError"]

log = logging.getLogger("harness.jobs")

R = TypeVar("R")

_DEADLINE_SLACK = 0.001
"""Seconds before a job's deadline at which a retryable failure counts as its timeout."""

INTAKE_PER_SLICE: Final = 16
"""How many jobs may do their work before admission (resolve, encode, price) in one turn of the
event loop; the rest wait their turn, first come first served."""

_SWEEP_AT: Final = 64
"""The dispatcher's set of running tasks is swept of ended ones (a job cancelled before it ever
ran) when it reaches this size, or twice the size it had after the last sweep."""

_settled: weakref.WeakSet[StatusError] = weakref.WeakSet()
"""Failures a dispatcher already applied a retry policy to: a parent job never re-runs them."""


def _timeout_of(job: Job[Any]) -> JobTimeoutError:
    """The timeout of ``job``."""
    return JobTimeoutError(
        f"{job.describe()} did not finish within its timeout of {job.timeout:g} s",
        job_id=job.identity.job_id,
    )


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


def _release(permits: list[Permit]) -> None:
    for permit in permits:
        permit.release()
    permits.clear()


class _Intake:
    """Spreads the work jobs do before admission over turns of the event loop.

    At most ``per_slice`` jobs pass per slice; the rest wait in line and are let through a slice
    at a time, one slice per later turn of the loop. A burst of submissions therefore never holds
    the loop for long while admitted jobs, whose clocks run, wait for their replies to be read
    (issue: 10,000 calls submitted at once used to spend seconds pricing in one turn).

    A slice ends only when a job finds it full: that job waits in line and the next slice opens
    in a later turn. Jobs that come one at a time therefore pass without scheduling anything
    (one job in ``per_slice`` waits one turn), and no turn ever lets more than ``per_slice``
    through.
    """

    __slots__ = ("_line", "_loop", "_passed", "_per_slice", "_turn_scheduled")

    def __init__(self, per_slice: int) -> None:
        self._per_slice = per_slice
        self._passed = 0
        self._line: deque[asyncio.Future[None]] = deque()
        self._turn_scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def passes(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether a job may do its work now (it is counted); else it must :meth:`wait`."""
        if loop is not self._loop:  # a dispatcher used again under a new loop starts afresh
            self._loop = loop
            self._line = deque()
            self._passed = 0
            self._turn_scheduled = False
        if not self._line and self._passed < self._per_slice:
            self._passed += 1
            return True
        return False

    def wait(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A place in line for a later slice: await it. A future, not a coroutine, so a job
        awaits it from its own frame (most of a burst waits once: no frame made for it). A
        cancelled ticket stays in line, done, and is skipped."""
        ticket: asyncio.Future[None] = loop.create_future()
        self._line.append(ticket)
        if not self._turn_scheduled:
            self._turn_scheduled = True
            loop.call_soon(self._next_slice)
        return ticket

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._turn_scheduled:
            self._turn_scheduled = True
            loop.call_soon(self._next_slice)

    def _next_slice(self) -> None:
        self._turn_scheduled = False
        self._passed = 0
        line = self._line
        while line and self._passed < self._per_slice:
            ticket = line.popleft()
            if not ticket.done():
                ticket.set_result(None)
                self._passed += 1
        if line and self._loop is not None:
            self._schedule(self._loop)


class _Run:
    """One job's running state, made once when the job is submitted: its task, its time limit
    spent on the dispatcher's clock over its attempts and pauses (admission does not count), and
    the running attempt's limit on the loop's clock (kept by :class:`_Deadlines`: when it ends,
    whether it was reached, and how many cancellations the task carried when it started)."""

    __slots__ = (
        "_clock",
        "_since",
        "cancelling",
        "closing",
        "expired",
        "inline",
        "limit",
        "task",
        "used",
        "when",
    )

    task: asyncio.Task[Any]

    def __init__(self, limit: float | None, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.used = 0.0
        self._clock = clock
        self._since: float | None = None
        self.when = math.inf
        self.cancelling = 0
        self.expired = False
        self.inline = False
        """The job runs in the task that awaits it (:meth:`Dispatcher.run`), not its own."""
        self.closing = False
        """:meth:`Dispatcher.aclose` cancelled the task an inline job runs in."""

    def start(self) -> float:
        """Start spending (a pause begins); the time now."""
        now = self._clock()
        if self._since is None:
            self._since = now
        return now

    def stop(self) -> None:
        """Stop spending: add the time since :meth:`start`."""
        if self._since is not None:
            self.used += max(0.0, self._clock() - self._since)
            self._since = None

    def left(self) -> float | None:
        """Seconds left (spending included up to now), ``None`` without a limit."""
        if self.limit is None:
            return None
        running = 0.0 if self._since is None else max(0.0, self._clock() - self._since)
        return max(0.0, self.limit - self.used - running)


class _Deadlines:
    """The time limits of the attempts running on one loop, kept by one timer for the earliest.

    What ``asyncio.timeout`` does per attempt (a timer pushed on the loop's heap and cancelled,
    two awaited context-manager steps), done with one timer for all: an attempt adds its limit
    (the timer moves only when the new limit is earlier than the one it waits for) and takes it
    away when it ends. When the timer fires, every limit reached is cancelled, as
    ``asyncio.timeout`` cancels its task, and the timer waits for the earliest left. The
    semantics are ``asyncio.timeout``'s (:meth:`stop` un-cancels as its exit does): only a
    cancellation the limit made becomes the job's timeout; one from outside stays one.
    """

    __slots__ = ("_limits", "_loop", "_timer", "_when")

    def __init__(self) -> None:
        self._limits: set[_Run] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._when = math.inf

    def start(self, loop: asyncio.AbstractEventLoop, run: _Run, left: float) -> None:
        """Limit ``run``'s attempt (running in its task) to ``left`` seconds from now."""
        if loop is not self._loop:  # a dispatcher used again under a new loop starts afresh
            if self._timer is not None:
                self._timer.cancel()
            self._loop = loop
            self._limits = set()
            self._timer = None
            self._when = math.inf
        run.when = when = loop.time() + left
        run.cancelling = run.task.cancelling()
        run.expired = False
        self._limits.add(run)
        if when < self._when:
            self._arm(loop, when)

    def stop(self, run: _Run) -> bool:
        """The attempt ended: forget its limit; whether the limit's own cancellation (and no
        other) is what the task carries, so a ``CancelledError`` it ended with is its timeout."""
        self._limits.discard(run)
        return run.expired and run.task.uncancel() <= run.cancelling

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._when = when
        self._timer = loop.call_at(when, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop is not self._loop:  # a timer of a loop this dispatcher has left
            return
        reached = max(self._when, loop.time())  # the loop runs a timer within its resolution
        self._timer = None
        self._when = math.inf
        earliest = math.inf
        for limit in tuple(self._limits):
            if limit.when <= reached:
                self._limits.discard(limit)
                limit.expired = True
                limit.task.cancel()
            elif limit.when < earliest:
                earliest = limit.when
        if earliest < math.inf:
            self._arm(loop, earliest)


ClientFactory = Callable[[CatalogEntry], "DecisionClient"]


def _client_for(entry: CatalogEntry) -> DecisionClient:
    from harness.providers import client_for

    return client_for(entry)


@functools.cache
def _overridden() -> Callable[
    [CatalogEntry, Callable[[CatalogEntry], DecisionClient], dict[str, DecisionClient]],
    DecisionClient,
]:
    """``harness.replay``'s override lookup, imported on first use (replay imports jobs)."""
    from harness.replay import overridden_client

    return overridden_client


def _given_up(error: RetryableError, why: str) -> ExternalServiceError:
    """The failure a retryable error becomes when it is not re-run: throttling (429, 503, 529)
    as :class:`UpstreamThrottleError`, the rest as :class:`ExternalServiceError`."""
    kind = (
        UpstreamThrottleError
        if isinstance(error, RateLimitedError | OverloadedError)
        else ExternalServiceError
    )
    failure = kind(f"{error.message}; {why}", status=error.status, request_id=error.request_id)
    _settled.add(failure)
    return failure


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
            from harness.catalog import load_catalog

            catalog = load_catalog()
        self.catalog = catalog
        self.admission = admission if admission is not None else Admission()
        self.pacing = pacing if pacing is not None else Pacing()
        self.clock = clock
        self._clients: dict[str, DecisionClient] = dict(clients or {})
        self._owned: dict[str, DecisionClient] = {}
        self._factory = client_factory or _client_for
        self._subscriptions: list[Subscription] = []
        self._heard: frozenset[EventKind] = frozenset()  # kinds some subscription may take
        self._tasks: set[asyncio.Task[Any]] = set()  # tasks of any job's result type
        self._inline: set[_Run] = set()  # jobs running in the tasks that await them
        self._closing: set[_Run] = set()  # of those, the ones aclose cancelled
        self._drained: asyncio.Future[None] | None = None  # set when the last of those ends
        self._sweep_at = _SWEEP_AT
        self._intake = _Intake(INTAKE_PER_SLICE)
        self._deadlines = _Deadlines()
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
        return _overridden()(entry, self.installed_client, self._owned)

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
        subscription = Subscription(
            callback, predicate, kinds=None if kinds is None else frozenset(kinds)
        )
        self._subscriptions.append(subscription)
        self._heard = self._heard | subscription.heard
        return subscription

    def _publish(self, kind: EventKind, job: Job[object], **fields: object) -> None:
        if not self._heard or kind not in self._heard:  # an enum's hash is a Python call
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
        if not all(s.active for s in self._subscriptions):
            self._subscriptions = [s for s in self._subscriptions if s.active]
            self._heard = frozenset().union(*(s.heard for s in self._subscriptions))

    def publish_progress(self, job: Job[object], message: str) -> None:
        """Publish a progress event for ``job`` (see :meth:`JobContext.progress`)."""
        self._publish(EventKind.PROGRESS, job, message=message)

    # -- running -------------------------------------------------------------------------

    def submit(self, job: Job[R]) -> JobHandle[R]:
        """Schedule ``job`` on the running loop and return its handle."""
        return JobHandle(job, self._start(job))

    def _start(self, job: Job[R]) -> asyncio.Task[R]:
        """``job``'s task, made on the running loop: one task a job."""
        if self._closed:
            raise RuntimeError("the dispatcher is closed: create a new Dispatcher")
        loop = asyncio.get_running_loop()
        run = _Run(job.timeout, self.clock)
        task: asyncio.Task[R] = loop.create_task(self._execute(job, run, loop))
        run.task = task
        tasks = self._tasks
        if len(tasks) >= self._sweep_at:  # a job cancelled before it started never ran its end
            tasks = self._tasks = {t for t in tasks if not t.done()}
            self._sweep_at = max(_SWEEP_AT, 2 * len(tasks))
        tasks.add(task)  # the job takes itself out when it ends
        if self._heard and EventKind.SCHEDULED in self._heard:  # no hash when none listen
            self._publish(EventKind.SCHEDULED, job)  # type: ignore[arg-type]
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
        run = _Run(job.timeout, self.clock)
        run.task = host
        run.inline = True
        self._inline.add(run)
        if self._heard and EventKind.SCHEDULED in self._heard:
            self._publish(EventKind.SCHEDULED, job)  # type: ignore[arg-type]
        return await self._execute(job, run, loop)

    def _resolve(self, job: Job[object]) -> tuple[ResolvedBinding, ...]:
        bindings = job.requirements().bindings
        if not bindings:
            return ()
        catalog = self.catalog
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

    async def _admit(self, job: Job[object], resolved: tuple[ResolvedBinding, ...]) -> list[Permit]:
        """Take every demand of several or none, never waiting while holding a permit (one
        demand, the common case, :meth:`_execute` takes itself: nothing to order).

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
                    self._publish_wait(job, blocking)
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

    def _publish_wait(self, job: Job[object], demand: Demand) -> None:
        self._publish(
            EventKind.ADMISSION_WAIT,
            job,
            message=f"waiting for {demand.amount} on the {demand.kind} {demand.name!r}",
        )

    async def _execute(self, job: Job[R], run: _Run, loop: asyncio.AbstractEventLoop) -> R:
        """Run ``job`` to its end: each attempt waits its turn at the intake, is resolved,
        priced, charged and admitted, then runs under the job's time limit; a retry signal
        pauses and runs it again, within its retry policy. One coroutine a job: the attempt is
        inlined here, so every resumption of the job passes through one frame fewer. The job's
        clock (``run``) runs once an attempt is admitted and while it pauses."""
        any_job: Job[object] = job  # type: ignore[assignment]
        attempt = 0
        intake = self._intake
        clock = self.clock
        try:
            while True:
                first: CatalogEntry | None = None  # the resolved entry (for the retry policy)
                try:
                    if not intake.passes(loop):
                        await intake.wait(loop)
                    resolved = self._resolve(any_job)
                    held: Permit | list[Permit] | None = None
                    if resolved:
                        if job._budgets():  # refused here, before admission
                            charge_budgets(job.identity, resolved)
                        first = resolved[0].entry
                        if attempt == 0 and any_job.limit_from_entry:
                            run.limit = any_job.timeout = any_job.limit_by(first)
                        if len(resolved) == 1:  # the common case: taken at once when free
                            demand = self.admission.demand(first, resolved[0].reservation)
                            held = demand.take_now()
                            if held is None:
                                if demand.would_wait():
                                    self._publish_wait(any_job, demand)
                                held = await demand.acquire()
                        else:
                            held = await self._admit(any_job, resolved)
                    try:
                        if attempt == 0 and self._heard and EventKind.STARTED in self._heard:
                            self._publish(EventKind.STARTED, any_job)
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
                                    raise _timeout_of(job) from error
                            elif (
                                isinstance(error, RetryableError)
                                and deadline is not None
                                and clock() >= deadline - _DEADLINE_SLACK
                            ):
                                # A client given the job's remaining time (aiohttp's total) can
                                # hit it in the same loop tick as the limit: with no time left,
                                # that is the timeout.
                                raise _timeout_of(job) from error
                            raise
                    finally:
                        if held is not None:
                            if isinstance(held, list):
                                _release(held)
                            else:
                                held.release()
                except StatusError as error:
                    policy = self.pacing.policy(job.retry_policy(first))
                    wait = self._pause_for(job, error, attempt, run, policy)
                    self._publish(
                        EventKind.RETRY,
                        any_job,
                        message=error.message,
                        attempt=attempt + 1,
                        delay=wait,
                        error=error,
                    )
                    log.info("re-running %s in %.3f s: %s", job.describe(), wait, error.message)
                    await self._pause(job, wait, run)
                    attempt += 1
                    continue
                if self._heard and EventKind.COMPLETED in self._heard:
                    self._publish(EventKind.COMPLETED, any_job)
                return result
        except JobTimeoutError as error:
            # A child's timeout fails its parent; only the job whose clock ran out timed out.
            kind = EventKind.TIMED_OUT if error.job_id == job.identity.job_id else EventKind.FAILED
            self._publish(kind, any_job, message=error.message, error=error)
            if not run.inline:
                run.task.add_done_callback(_retrieve)
            raise
        except asyncio.CancelledError:
            self._publish(EventKind.CANCELLED, any_job)
            if run.closing:  # the host task carries on as a job's awaiter would: uncancelled
                run.task.uncancel()
            raise
        except Exception as error:
            if isinstance(error, StatusError):
                _settled.add(error)  # a parent job never re-runs what this one settled
            self._publish(EventKind.FAILED, any_job, message=str(error), error=error)
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

    async def _pause(self, job: Job[Any], wait: float, budget: _Run) -> None:
        """Wait ``wait`` seconds before a re-run, on the job's clock and never past its limit."""
        budget.start()
        try:
            async with asyncio.timeout(budget.left()) as scope:
                await self.pacing.sleep(wait)
        except TimeoutError as error:
            if scope.expired():
                raise _timeout_of(job) from error
            raise
        finally:
            budget.stop()
        left = budget.left()
        if left is not None and left <= 0:
            raise _timeout_of(job)

    def _pause_for(
        self,
        job: Job[Any],
        error: StatusError,
        attempt: int,
        budget: _Run,
        policy: RetryPolicy,
    ) -> float:
        """The pause before re-running ``job`` after ``error``, or the failure to raise instead
        (the error itself when no policy ever re-runs it, else a settled error naming why)."""
        if error in _settled or not policy.covers(error):
            if isinstance(error, RetryableError):
                raise _given_up(error, "the job's retry policy does not re-run it") from error
            raise error
        if attempt >= policy.max_retries:
            if isinstance(error, RetryableError):
                spent = f"gave up after the retry budget ({policy.max_retries}) was spent"
                raise _given_up(error, spent) from error
            _settled.add(error)
            raise error
        hint = error.retry_after if isinstance(error, RetryableError) else None
        if (
            isinstance(error, RetryableError)
            and hint is not None
            and policy.honour_hints
            and policy.max_hint is not None
            and hint > policy.max_hint
        ):
            raise _given_up(
                error,
                f"the server asked for a pause of {hint:g} s, longer than the retry policy's "
                f"max_hint of {policy.max_hint:g} s",
            ) from error
        wait = self.pacing.delay(attempt, hint, policy)
        left = budget.left()
        if left is not None and wait >= left:
            asked = hint if hint is not None and policy.honour_hints else wait
            failure = ExternalServiceError(
                f"{error.message}; a re-run was asked for after {asked:g} s, which would outlast "
                f"the {left:g} s left of the job's timeout",
                status=error.status,
                request_id=error.request_id,
            )
            _settled.add(failure)
            raise failure from error
        return wait

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
