"""Slack's limits kept by design: one message per second per channel, per-method tiers per workspace.

Every worker reserves from one shared schedule (GCRA: a "theoretical arrival time" per key),
in Redis when the queue is on Redis (server time, one round trip), else in the database.
A reservation is a promise: the caller posts at that time, so bursts are queued, never dropped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from redis import Redis
    from sqlalchemy import Engine

CHANNEL_PER_S = 1.0  # chat.postMessage: "about one message per second per channel"
# Web API tiers, calls per minute per workspace (api.slack.com/apis/rate-limits): the methods we call.
METHOD_PER_MINUTE = {
    "chat.postEphemeral": 100,  # Tier 4
    "chat.update": 50,  # Tier 3
    "chat.delete": 50,  # Tier 3
    "users.info": 100,  # Tier 4
    "views.publish": 100,  # Tier 4
    "conversations.info": 50,  # Tier 3
    "conversations.history": 50,  # Tier 3
    "conversations.replies": 50,  # Tier 3
    "auth.test": 100,  # Tier 4 (special, generous)
}
TIER_BURST_FRACTION = 0.25  # tiers tolerate short bursts: a quarter of a minute's calls at once


@dataclass(frozen=True, slots=True)
class Rate:
    per_s: float
    burst: int = 0  # calls allowed at once beyond the steady rate

    @property
    def interval_s(self) -> float:
        return 1.0 / self.per_s


def channel_rate() -> Rate:
    return Rate(CHANNEL_PER_S, 0)


def method_rate(method: str) -> Rate | None:
    per_minute = METHOD_PER_MINUTE.get(method)
    if per_minute is None:
        return None
    return Rate(per_minute / 60.0, int(per_minute * TIER_BURST_FRACTION))


class Limiter(Protocol):
    def reserve(self, key: str, rate: Rate) -> float:
        """Reserve the next slot for `key`: seconds from now until it (0 = go now)."""
        ...


class SqlLimiter:
    """Slots in the database (knowledge.slack_requests.reserve_slot): SQLite or PostgreSQL, any process."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def reserve(self, key: str, rate: Rate) -> float:
        from knowledge.slack_requests import reserve_slot

        now = time.time()
        slot = reserve_slot(self.engine, key, interval_s=rate.interval_s, now_s=now - rate.burst * rate.interval_s)
        return max(0.0, slot - now)


# KEYS[1] = the key; ARGV = interval, burst. Redis's own clock, so hosts with skewed clocks agree.
_GCRA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local floor = now - tonumber(ARGV[2]) * interval
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < floor then tat = floor end
redis.call('SET', KEYS[1], tostring(tat + interval), 'PX', math.ceil((tat + interval - now) * 1000) + 60000)
local wait = tat - now
if wait < 0 then wait = 0 end
return tostring(wait)
"""


class RedisLimiter:
    """Slots in Redis under `prefix` (one Lua script per reservation, atomic across workers)."""

    def __init__(self, client: Redis, prefix: str) -> None:
        self.prefix = prefix
        self._script = client.register_script(_GCRA)

    def reserve(self, key: str, rate: Rate) -> float:
        wait = self._script(keys=[f"{self.prefix}:rate:{key}"], args=[rate.interval_s, rate.burst])
        return float(wait.decode() if isinstance(wait, bytes) else wait)
