"""Admission shared by every process through Redis (the ``redis`` extra).

Each catalog entry's gate and token bucket live in Redis and are taken and given back by
server-side scripts, so two processes asking the same model together never exceed its limits:

* a gate is a sorted set of holders, each with a lease that expires (a killed worker's permits
  come back when their lease runs out; a live holder renews its lease while it holds it);
* a bucket is a hash holding its level and when it was last taken from, refilled from Redis's own
  clock (one clock for every process), taken from whole or not at all;
* an ``adaptive = true`` entry's effective limit is a key every process reads and moves.

The semantics are those of the in-process :class:`~harness.admission.Admission`: a call takes its
whole demand or nothing, and waiting holds nothing (a waiter polls; it is not served first come,
first served across processes). When Redis cannot be reached a call fails with
:class:`AdmissionUnavailableError`; it never runs unadmitted. The scripts Redis runs are
``_redis_scripts.py``.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from typing import TYPE_CHECKING

import attrs

from harness.admission._admission import Admission, Demand, Permit, fitting
from harness.admission._internal import shown_url
from harness.admission._redis_scripts import Scripts
from harness.catalog import CatalogEntry, Reservation
from harness.errors import HarnessError

if TYPE_CHECKING:
    pass

__all__ = ["AdmissionUnavailableError", "RedisAdmission"]


class AdmissionUnavailableError(HarnessError):
    """The shared admission (Redis) could not be reached: the call was not run."""


class _Cancellation:
    """Whether the running task was asked to cancel since this was made. redis-py's asyncio
    client can swallow a ``CancelledError`` delivered during a command (seen with redis 8.1:
    ``asyncio.wait_for`` around a waiting acquire never returned, as the wait went on polling);
    the request stays counted on the task (``Task.cancelling``), so a loop that asks Redis
    checks it after each command and ends as the cancellation would have ended it."""

    __slots__ = ("_before", "_task")

    def __init__(self) -> None:
        self._task = asyncio.current_task()
        self._before = 0 if self._task is None else self._task.cancelling()

    def requested(self) -> bool:
        """Whether a cancellation was asked for since this was made."""
        return self._task is not None and self._task.cancelling() > self._before

    def check(self) -> None:
        """Raise ``CancelledError`` when a cancellation was asked for since this was made."""
        if self.requested():
            raise asyncio.CancelledError


class RedisPermit(Permit):
    """A permit held in Redis: a gate's lease is renewed while held and removed on release."""

    def __init__(
        self, admission: RedisAdmission, entry: CatalogEntry, kind: str, amount: int, token: str
    ) -> None:
        super().__init__("gate" if kind == "gate" else "bucket", entry.id, amount, None)
        self._admission = admission
        self._entry = entry
        self._token = token
        self._renewing: asyncio.Task[None] | None = None
        if kind == "gate":
            self._renewing = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        every = self._admission.lease / 3
        cancelled = _Cancellation()
        while True:
            await asyncio.sleep(every)
            try:
                await self._admission._renew(self._entry, self._token)
            except AdmissionUnavailableError:
                return  # the lease runs out by itself: nobody keeps a permit it cannot renew
            cancelled.check()  # released while Redis was asked

    def release(self) -> None:
        """Give the permit back (a gate's lease is removed in Redis; tokens stay spent)."""
        if self.released:
            return
        super().release()
        if self._renewing is not None:
            self._renewing.cancel()
            self._admission._give_back(self._entry, self._token)


@attrs.frozen
class RedisDemand(Demand):
    """A demand on an entry's gate or bucket in Redis."""

    _admission: RedisAdmission | None = attrs.field(default=None, repr=False, eq=False)
    _entry: CatalogEntry | None = attrs.field(default=None, repr=False, eq=False)

    def would_wait(self) -> bool:
        """Whether the last try for this entry had to wait (Redis is not asked synchronously)."""
        assert self._admission is not None
        return self.name in self._admission.busy

    async def acquire(self) -> Permit:
        """Poll Redis until the whole demand is taken; a cancelled wait holds nothing."""
        assert self._admission is not None
        assert self._entry is not None
        return await self._admission._acquire(self._entry, self.kind, self.amount)


class RedisAdmission(Admission):
    """Gates and buckets in the Redis at ``url``, shared by every process that uses it.

    ``lease`` is how long a gate permit outlives a holder that stopped renewing it (a killed
    worker); ``poll`` the longest pause between two tries of a waiting call.
    """

    def __init__(
        self,
        url: str,
        *,
        lease: float = 10.0,
        poll: float = 0.02,
        namespace: str = "harness",
        cooldown: float = 0.5,
        probe_after: float = 30.0,
    ) -> None:
        try:
            import redis.asyncio  # noqa: F401  (the extra's presence is checked here)
        except ImportError:
            raise ImportError(
                "shared admission needs the Redis client: pip install 'harness[redis]'"
            ) from None
        super().__init__()
        self.url = url
        self.lease = lease
        self.poll = poll
        self.namespace = namespace
        self.cooldown = cooldown
        self.probe_after = probe_after
        self.busy: set[str] = set()
        self._scripts: dict[int, Scripts] = {}
        self._pending: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"RedisAdmission({shown_url(self.url)!r})"

    def _on_loop(self) -> Scripts:
        loop = asyncio.get_running_loop()
        scripts = self._scripts.get(id(loop))
        if scripts is None:
            from redis.asyncio import Redis

            client = Redis.from_url(self.url, socket_connect_timeout=2.0, socket_timeout=5.0)
            scripts = self._scripts[id(loop)] = Scripts(client)
        return scripts

    def _keys(self, kind: str, entry: CatalogEntry) -> list[str]:
        base = f"{self.namespace}:{kind}:{entry.id}"
        return [base, f"{self.namespace}:limit:{entry.id}"]

    def _limit_keys(self, entry: CatalogEntry) -> dict[str, str]:
        at = entry.id
        return {
            "limit": f"{self.namespace}:limit:{at}",
            "cut": f"{self.namespace}:cut:{at}",
            "learned": f"{self.namespace}:learned:{at}",
            "holders": f"{self.namespace}:gate:{at}",
            "last": f"{self.namespace}:last-cut:{at}",
        }

    def _unavailable(self, error: Exception) -> AdmissionUnavailableError:
        return AdmissionUnavailableError(
            f"the shared admission at {shown_url(self.url)} could not be reached "
            f"({type(error).__name__}); the call was not run: start Redis or drop --admission"
        )

    def demand(self, entry: CatalogEntry, reservation: Reservation) -> Demand:
        """What a call of ``entry`` must take in Redis before it is sent."""
        if entry.max_concurrent is not None:
            return RedisDemand("gate", entry.id, 1, admission=self, entry=entry)
        amount = fitting(entry, reservation)
        return RedisDemand("bucket", entry.id, amount, admission=self, entry=entry)

    async def _acquire(self, entry: CatalogEntry, kind: str, amount: int) -> Permit:
        import redis.exceptions

        scripts = self._on_loop()
        token = secrets.token_hex(8)
        lease_ms = int(self.lease * 1000)
        cancelled = _Cancellation()
        while True:
            try:
                if kind == "gate":
                    assert entry.max_concurrent is not None
                    got = await scripts.gate_acquire(
                        keys=self._keys("gate", entry)[:2],
                        args=[entry.max_concurrent, token, lease_ms],
                    )
                    wait = self.poll
                else:
                    assert entry.tpm is not None
                    rpm = entry.rpm or 0
                    reply = await scripts.bucket_acquire(
                        keys=self._keys("bucket", entry)[:1],
                        args=[entry.tpm, entry.tpm / 60_000, amount, rpm, rpm / 60_000],
                    )
                    got, wait_ms = int(reply[0]), int(reply[1])
                    wait = min(max(wait_ms / 1000, 0.001), 1.0)
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as error:
                raise self._unavailable(error) from None
            if cancelled.requested():  # the wait was cancelled while Redis was asked
                if int(got) == 1 and kind == "gate":
                    self._give_back(entry, token)  # a bucket's tokens stay spent, as always
                raise asyncio.CancelledError
            if int(got) == 1:
                self.busy.discard(entry.id)
                return RedisPermit(self, entry, kind, amount, token)
            self.busy.add(entry.id)
            await asyncio.sleep(wait * random.uniform(0.5, 1.0))

    async def _renew(self, entry: CatalogEntry, token: str) -> None:
        import redis.exceptions

        scripts = self._on_loop()
        try:
            await scripts.gate_renew(
                keys=self._keys("gate", entry)[:1], args=[token, int(self.lease * 1000)]
            )
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as error:
            raise self._unavailable(error) from None

    def _give_back(self, entry: CatalogEntry, token: str) -> None:
        scripts = self._on_loop()
        key = self._keys("gate", entry)[0]

        async def remove() -> None:
            try:
                await scripts.client.zrem(key, token)
            except Exception:  # the lease expires by itself: a lost release costs only time
                return

        task = asyncio.get_running_loop().create_task(remove())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def throttled(self, entry: CatalogEntry) -> None:
        """``entry`` answered 429: halve its shared limit (once per cooldown)."""
        if not entry.adaptive or entry.max_concurrent is None:
            return
        k = self._limit_keys(entry)
        await self._on_loop().limit_cut(
            keys=[k["limit"], k["cut"], k["learned"], k["holders"], k["last"]],
            args=[entry.max_concurrent, int(self.cooldown * 1000)],
        )

    async def succeeded(self, entry: CatalogEntry) -> None:
        """``entry`` answered: grow its shared limit by one over a limit's worth of successes."""
        if not entry.adaptive or entry.max_concurrent is None:
            return
        k = self._limit_keys(entry)
        await self._on_loop().limit_grow(
            keys=[k["limit"], k["learned"], k["last"]],
            args=[entry.max_concurrent, int(self.probe_after * 1000)],
        )

    async def limit_of(self, entry: CatalogEntry) -> float:
        """The entry's shared adaptive limit now (its ``max_concurrent`` until a 429)."""
        value = await self._on_loop().client.get(self._limit_keys(entry)["limit"])
        return float(value) if value is not None else float(entry.max_concurrent or 0)

    async def aclose(self) -> None:
        """Wait for pending releases and close this loop's connection."""
        if self._pending:
            await asyncio.gather(*tuple(self._pending), return_exceptions=True)
        scripts = self._scripts.pop(id(asyncio.get_running_loop()), None)
        if scripts is not None:
            await scripts.client.aclose()
