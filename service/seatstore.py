"""Where the seats of a match change hands, and where invitations live: a small Redis adapter beside
:mod:`service.store` (same keys, same log, same notifications).

A change of seats (a seat claimed with an invitation, handed to an AI, taken over) is a version of the match
like a move: one script checks the stored version, writes the seats, appends one log entry (``"m": null``,
its events say what changed) and publishes the new version, so that event streams, long polls and
``ETag``\\ s see it exactly as they see a move. The state itself does not change.

``ct:{inv-<sha256 of the code>}:i``
    an invitation: JSON ``{"match_id", "seat"}``, kept as long as a match lives (the code's own expiry is
    in the seat, so that an expired code can be told from a wrong one). Only the code's hash is stored.

How long a seat has been idle is read from the match key's own expiry: every save (a move, a change of
seats) sets it to ``match_ttl`` again, so ``match_ttl - PTTL`` is the time since the match last changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis
from redis.sentinel import MasterNotFoundError

from service import jsonio
from service.store import (
    APPEND_LOG_LUA,
    MatchNotFound,
    RedisMatchStore,
    StaleVersion,
    WriteUnconfirmed,
    log_key,
    match_key,
    new_wid,
    tail_key,
    version_channel,
)

# KEYS: match, log, tail
# ARGV: expected version, expected wid, new version, new wid, seats, ttl, reset, channel, log... (see APPEND_LOG_LUA)
# Returns {-2} when saved (or saved by this very call already: a resent script after a lost reply), {-1} when
# the match is gone, else the stored {version, wid} (as the move's save script does).
_CHANGE_SEATS = APPEND_LOG_LUA + """
local cur = redis.call('HMGET', KEYS[1], 'version', 'wid')
local v, w = cur[1], cur[2] or ''
if not v then return {-1} end
if v == ARGV[3] and w == ARGV[4] then return {-2} end
if v ~= ARGV[1] or w ~= ARGV[2] then return {tonumber(v), w} end
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'wid', ARGV[4], 'seats', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[6])
append(9, ARGV[7], ARGV[6])
redis.call('PUBLISH', ARGV[8], ARGV[3])
return {-2}
"""


def invitation_key(code_hash: str) -> str:
    return f"ct:{{inv-{code_hash}}}:i"


class SeatStore:
    """Seat changes and invitations on the Redis of a :class:`RedisMatchStore`."""

    def __init__(self, store: RedisMatchStore) -> None:
        self.store = store
        self.client = store.client
        self._change = self.client.register_script(_CHANGE_SEATS)

    def change_seats(self, match_id: str, expected: tuple[int, str], seats: Sequence[dict[str, Any]],
                     entry: dict[str, Any], wid: str | None = None) -> str:
        """Write ``seats`` and append ``entry`` (the next version, with the write id ``wid`` or a fresh one,
        returned) if the stored state is ``expected`` (version, write id); else :class:`StaleVersion` (nothing
        written). No answer (a timeout, a broken connection): :class:`WriteUnconfirmed` (it may have been
        applied)."""
        wid = wid or new_wid()
        reset, log_args = self.store.log_args(match_id, expected[0], [entry])
        args: list[Any] = [expected[0], expected[1], expected[0] + 1, wid,
                           jsonio.dumps(list(seats)), self.store.match_ttl, reset,
                           version_channel(match_id), *log_args]
        try:
            result = self.store.run_script(self._change, [match_key(match_id), log_key(match_id), tail_key(match_id)],
                                     args)
        except (redis.exceptions.BusyLoadingError, MasterNotFoundError):
            raise  # refused before running, or no primary to send it to: nothing written
        except (redis.exceptions.TimeoutError, redis.exceptions.ConnectionError) as exc:
            raise WriteUnconfirmed(f"the change of seats of match {match_id} got no answer "
                                   f"({exc.__class__.__name__})") from exc
        code = int(result[0])
        if code == -1:
            raise MatchNotFound(match_id)
        if code != -2:
            raise StaleVersion(code, result[1].decode() if isinstance(result[1], bytes) else str(result[1]))
        return wid

    def idle_seconds(self, match_id: str) -> float:
        """Seconds since the match was last saved (a move or a change of seats)."""
        left = int(self.client.pttl(match_key(match_id)))
        if left < 0:
            raise MatchNotFound(match_id)
        return max(0.0, self.store.match_ttl - left / 1000)

    # -- rematches ---------------------------------------------------------------

    def rematch_of(self, match_id: str, new_id: str) -> str:
        """The id of ``match_id``'s rematch: ``new_id`` if this call is the first to ask, else the first's."""
        key = f"ct:{{{match_id}}}:rematch"
        if self.client.set(key, new_id, nx=True, ex=self.store.match_ttl):
            return new_id
        found = self.client.get(key)
        return new_id if found is None else found.decode()

    # -- invitations -----------------------------------------------------------

    def put_invitation(self, code_hash: str, match_id: str, seat: int) -> None:
        self.client.set(invitation_key(code_hash), jsonio.dumps({"match_id": match_id, "seat": seat}),
                        ex=self.store.match_ttl)

    def invitation(self, code_hash: str) -> dict[str, Any] | None:
        raw = self.client.get(invitation_key(code_hash))
        return None if raw is None else dict(jsonio.loads(raw))
