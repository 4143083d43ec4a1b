"""Rate limits on AI work, in AI time: how many seconds of search a seat token, and a client, may use.

Each budget is a leaky bucket in Redis (``ct:{rl-<kind>-<id>}``: its own slot, one key per script): it fills
with the AI-seconds charged to it and drains at the configured rate (per minute); its capacity is one minute's
worth. A job is admitted while its estimated cost fits in every bucket it is charged to; the worker that runs
it then charges the difference between the time it really took and the estimate (and a turn of an AI seat,
which was not charged up front, its whole time), so the buckets count AI time, not requests.

Bucket ids: ``tok:<sha256 of the seat token>`` (the token itself, whatever the spelling of its
``Authorization`` header) and ``ip:<client address>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: A bucket fills at most to this many times its capacity (a long AI chain costs its client at most two
#: minutes of waiting, not an hour).
MAX_OVERDRAFT = 2.0

# KEYS: bucket   ARGV: rate (AI-s per s), capacity (AI-s), amount (AI-s, may be < 0), mode ('admit': charge if it
# fits, 'peek': only say whether it fits, 'charge': charge whatever the level), overdraft.
# Returns {fits 0/1, ms until it would fit, level after in ms}.
_BUCKET = """
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local rate, capacity, amount = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local got = redis.call('HMGET', KEYS[1], 'level', 'at')
local level = tonumber(got[1] or '0')
local at = tonumber(got[2] or tostring(now))
level = math.max(0, level - (now - at) * rate)
if ARGV[4] ~= 'charge' and level + math.min(amount, capacity) > capacity then
  return {0, math.ceil((level + math.min(amount, capacity) - capacity) / rate * 1000), math.floor(level * 1000)}
end
if ARGV[4] == 'peek' then return {1, 0, math.floor(level * 1000)} end
level = math.min(math.max(0, level + amount), capacity * tonumber(ARGV[5]))
redis.call('HSET', KEYS[1], 'level', tostring(level), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(level / rate) + 1)
return {1, 0, math.floor(level * 1000)}
"""


def bucket_key(bucket: str) -> str:
    return f"ct:{{rl-{bucket}}}"


@dataclass
class Refusal:
    bucket: str
    retry_after: int  # seconds


class AiBudget:
    """The AI-time buckets of tokens (``tok:``) and clients (``ip:``)."""

    def __init__(self, client: Any, *, per_token_minute: float, per_client_minute: float, enabled: bool) -> None:
        self.client = client
        self.enabled = enabled
        self.per_minute = {"tok": per_token_minute, "ip": per_client_minute}
        self._script = client.register_script(_BUCKET)

    def _call(self, bucket: str, amount: float, mode: str) -> tuple[bool, float]:
        per_minute = self.per_minute[bucket.split(":", 1)[0]]
        got = self._script(keys=[bucket_key(bucket)], args=[per_minute / 60, per_minute, amount, mode, MAX_OVERDRAFT])
        return bool(int(got[0])), int(got[1]) / 1000

    def admit(self, buckets: Sequence[str], cost: float) -> Refusal | None:
        """Charge ``cost`` AI-seconds to every bucket if it fits in each; else charge nothing and say which
        bucket refused and when the cost would fit."""
        if not self.enabled:
            return None
        charged: list[str] = []
        for bucket in buckets:
            ok, wait = self._call(bucket, cost, "admit")
            if not ok:
                for done in charged:
                    self._call(done, -cost, "charge")
                return Refusal(bucket, max(1, math.ceil(wait)))
            charged.append(bucket)
        return None

    def fits(self, buckets: Sequence[str], cost: float) -> Refusal | None:
        """Whether ``cost`` would fit in every bucket now (charging nothing)."""
        if not self.enabled:
            return None
        for bucket in buckets:
            ok, wait = self._call(bucket, cost, "peek")
            if not ok:
                return Refusal(bucket, max(1, math.ceil(wait)))
        return None

    def charge(self, buckets: Sequence[str], amount: float) -> None:
        """Add ``amount`` AI-seconds (less than zero: give back) to every bucket, whatever their level."""
        if not self.enabled or not amount:
            return
        for bucket in buckets:
            self._call(bucket, amount, "charge")
