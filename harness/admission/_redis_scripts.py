"""The scripts Redis runs for the shared admission: gates with leases, token buckets on Redis's
clock, and the adaptive limit every process reads and moves.

One concern: what runs server-side, atomically, in Redis (Lua), and registering it on a client.
The admission that calls these scripts is ``_redis_admission.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

__all__ = ["Scripts"]

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""
"""Every script's first lines: ``now`` in milliseconds on Redis's clock (one clock for all)."""

_LEASE = (
    _NOW
    + """
local function lease(mode, holder, ms)
  redis.call('ZADD', KEYS[1], mode, now + ms, holder)
  redis.call('PEXPIRE', KEYS[1], ms * 2)
  return 1
end
"""
)
"""The gate scripts' start: ``lease`` gives ``holder`` (a new one, ``NX``, or a present one,
``XX``) a lease of ``ms`` on the gate ``KEYS[1]``, the set itself kept twice as long."""

_GATE_ACQUIRE = (
    _LEASE
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local cap = tonumber(ARGV[1])
local limit = redis.call('GET', KEYS[2])
if limit then cap = math.min(cap, math.max(1, math.floor(tonumber(limit)))) end
if redis.call('ZCARD', KEYS[1]) < cap then return lease('NX', ARGV[2], tonumber(ARGV[3])) end
return 0
"""
)

_GATE_RENEW = (
    _LEASE
    + """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return lease('XX', ARGV[1], tonumber(ARGV[2])) end
return 0
"""
)

_BUCKET_ACQUIRE = (
    _NOW
    + """
local function level(lf, sf, cap, per_ms)
  local l = tonumber(redis.call('HGET', KEYS[1], lf) or cap)
  local s = tonumber(redis.call('HGET', KEYS[1], sf) or now)
  return math.min(cap, l + math.max(0, now - s) * per_ms)
end
local cap = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local amount = tonumber(ARGV[3])
local rcap = tonumber(ARGV[4])
local rper_ms = tonumber(ARGV[5])
local tl = level('t', 'ts', cap, per_ms)
local wait = 0
if amount - tl > 1e-9 then wait = (amount - tl) / per_ms end
local rl = 0
if rcap > 0 then
  rl = level('r', 'rs', rcap, rper_ms)
  if 1 - rl > 1e-9 then wait = math.max(wait, (1 - rl) / rper_ms) end
end
if wait > 0 then return {0, math.ceil(wait)} end
redis.call('HSET', KEYS[1], 't', tostring(tl - amount), 'ts', tostring(now))
if rcap > 0 then redis.call('HSET', KEYS[1], 'r', tostring(rl - 1), 'rs', tostring(now)) end
return {1, 0}
"""
)

_LIMIT_CUT = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
local out = redis.call('ZCARD', KEYS[4])
local learned = tonumber(redis.call('GET', KEYS[3]) or ARGV[1])
learned = math.max(1, math.min(learned, out - 1))
redis.call('SET', KEYS[3], tostring(learned))
local v = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
if redis.call('SET', KEYS[2], tostring(now), 'NX', 'PX', tonumber(ARGV[2])) then
  v = math.max(1, math.min(v * 0.5, learned))
else
  v = math.min(v, learned)
end
redis.call('SET', KEYS[1], tostring(v))
redis.call('SET', KEYS[5], tostring(now))
return tostring(v)
"""
)

_LIMIT_GROW = (
    _NOW
    + """
local learned = tonumber(redis.call('GET', KEYS[2]) or ARGV[1])
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
if last > 0 and now - last > tonumber(ARGV[2]) then
  learned = math.min(tonumber(ARGV[1]), learned + 1)
  redis.call('SET', KEYS[2], tostring(learned))
  redis.call('SET', KEYS[3], tostring(now))
end
local v = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
v = math.min(learned, v + 1 / v)
redis.call('SET', KEYS[1], tostring(v))
return tostring(v)
"""
)


class Scripts:
    """The scripts registered on one Redis client (one per event loop)."""

    def __init__(self, client: Redis) -> None:
        self.client = client
        self.gate_acquire: AsyncScript = client.register_script(_GATE_ACQUIRE)
        self.gate_renew: AsyncScript = client.register_script(_GATE_RENEW)
        self.bucket_acquire: AsyncScript = client.register_script(_BUCKET_ACQUIRE)
        self.limit_cut: AsyncScript = client.register_script(_LIMIT_CUT)
        self.limit_grow: AsyncScript = client.register_script(_LIMIT_GROW)
