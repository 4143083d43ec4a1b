"""Where server-held matches live: a small port and its Redis adapter.

Layout of one match (every key shares the hash tag ``{match_id}``, so one
match lives in one Redis Cluster slot and its scripts run there unchanged):

``ct:{id}:m`` (hash)
    ``game``, ``version``, ``wid`` (the write id: random, new at every save), ``state`` (the engine's
    versioned JSON), ``seats``
    (names, AI levels and the SHA-256 of each seat token — never a token),
    ``start`` (seed, options, setup: what replays the match), ``created``.
``ct:{id}:log`` (list)
    the older log entries, in zlib-compressed chunks of :data:`CHUNK` entries
    (the moves log lives next to the state, not inside it);
``ct:{id}:tail`` (list)
    the newest log entries (fewer than :data:`CHUNK`), one JSON string each.
``ct:{id}:idem:<sha256 of key>``
    the first answer to a POST sent with that ``Idempotency-Key``.
``ct:{id}:aifail``
    why the AI seat to move at the stored version could not play (JSON
    ``{"version", "detail"}``); the next save removes it.
``ct:{id}:v`` (a pub/sub channel, not a key)
    every save publishes the new version there, so that the processes
    watching the match (long polls, event streams, waits for the AI) wake up.

Writes go through one Lua script that checks the stored version *and write id*
first, so a move applies only to the state it was checked against (no lost
update) and the state, the log, the idempotent answer and the notification are
written together or not at all. A version number alone does not name a state:
after Redis lost writes (restarted from an older snapshot, or a failover to a
lagging replica) the same version can be reached again by other moves, with
another write id. The write id is the ``state_id`` clients see. All keys of a
match expire together after ``match_ttl_seconds`` without a move.
"""

from __future__ import annotations

import secrets
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.sentinel import MasterNotFoundError, SentinelConnectionPool

from service import jsonio

CHUNK = 64  # log entries per compressed chunk


class MatchNotFound(Exception):
    pass


class StaleVersion(Exception):
    """The stored state is not the one the save expected: ``current`` and ``wid`` are the stored ones."""

    def __init__(self, current: int, wid: str = "") -> None:
        super().__init__(f"the match is at version {current} ({wid or 'no write id'})")
        self.current = current
        self.wid = wid


class WriteUnconfirmed(redis.exceptions.ConnectionError):
    """A save got no answer (a timeout, or the connection broke under it): it may or may not have been
    applied. A :class:`redis.ConnectionError`, so that code that only knows Redis errors still treats it as
    the store failing."""


def new_wid() -> str:
    """A fresh write id (72 random bits)."""
    return secrets.token_urlsafe(9)


@dataclass
class StoredMatch:
    match_id: str
    game: str
    version: int
    state: str  # the engine's JSON, as stored
    seats: list[dict[str, Any]]
    start: dict[str, Any] = field(default_factory=dict)
    created: float = 0.0
    wid: str = field(default_factory=new_wid)  # the write id: with the version, names this state


@dataclass(frozen=True)
class IdempotentAnswer:
    """A remembered answer: the request's fingerprint, the status and the body."""

    fingerprint: str
    status: int
    body: dict[str, Any]

    def dumps(self) -> str:
        return jsonio.dumps({"fp": self.fingerprint, "status": self.status, "body": self.body})

    @classmethod
    def loads(cls, raw: bytes | str) -> IdempotentAnswer:
        data = jsonio.loads(raw)
        return cls(data["fp"], data["status"], data["body"])


class MatchStore(Protocol):
    """The port the views use; :class:`RedisMatchStore` is the adapter."""

    def create(self, match: StoredMatch, entries: Sequence[dict[str, Any]] = ()) -> None: ...

    def load(self, match_id: str) -> StoredMatch: ...

    def load_unless(self, match_id: str, version: int, wid: str) -> StoredMatch | None: ...

    def save(self, match_id: str, expected: tuple[int, str], new: tuple[int, str], state: str,
             entries: Sequence[dict[str, Any]], idem: tuple[str, IdempotentAnswer] | None = None) -> None: ...

    def log(self, match_id: str, since: int = 0) -> tuple[int, list[dict[str, Any]]]: ...

    def idempotent(self, key: str) -> IdempotentAnswer | None: ...

    def remember(self, key: str, answer: IdempotentAnswer) -> bool: ...

    def update_idempotent(self, key: str, answer: IdempotentAnswer) -> bool: ...

    def mark_ai_failed(self, match_id: str, version: int, detail: str) -> bool: ...

    def ai_failure(self, match_id: str) -> dict[str, Any] | None: ...

    def clear_ai_failure(self, match_id: str) -> None: ...

    def ping(self) -> bool: ...

    def stored_bytes(self, match_id: str) -> int: ...


def match_key(match_id: str) -> str:
    return f"ct:{{{match_id}}}:m"


def log_key(match_id: str) -> str:
    return f"ct:{{{match_id}}}:log"


def tail_key(match_id: str) -> str:
    return f"ct:{{{match_id}}}:tail"


def aifail_key(match_id: str) -> str:
    return f"ct:{{{match_id}}}:aifail"


def version_channel(match_id: str) -> str:
    """The pub/sub channel where every save of the match publishes its new version."""
    return f"ct:{{{match_id}}}:v"


def idem_key(match_id: str | None, digest: str) -> str:
    """The key of an idempotent answer: inside the match's slot, or its own slot for match creation."""
    if match_id is None:
        return f"ct:{{idem-{digest}}}:create"
    return f"ct:{{{match_id}}}:idem:{digest}"


# Lua helpers shared by the scripts: append to the log. ARGV layout from `first`: the number of chunks to
# push onto the log, those chunks, then the entries to push onto the tail; with `reset` the tail is emptied
# first (its entries went into the first chunk).
APPEND_LOG_LUA = """
local function append(first, reset, ttl)
  local n = tonumber(ARGV[first])
  if reset == '1' then redis.call('DEL', KEYS[3]) end
  for i = first + 1, first + n do redis.call('RPUSH', KEYS[2], ARGV[i]) end
  for i = first + n + 1, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
  for k = 2, 3 do
    if redis.call('EXISTS', KEYS[k]) == 1 then redis.call('EXPIRE', KEYS[k], ttl) end
  end
end
"""

# KEYS: match, log, tail   ARGV: ttl, game, version, state, seats, start, created, wid, then the log
# (see APPEND_LOG_LUA)
_CREATE = APPEND_LOG_LUA + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'game', ARGV[2], 'version', ARGV[3], 'state', ARGV[4], 'seats', ARGV[5],
           'start', ARGV[6], 'created', ARGV[7], 'wid', ARGV[8])
redis.call('EXPIRE', KEYS[1], ARGV[1])
append(9, '0', ARGV[1])
return 1
"""

# KEYS: match, log, tail, idem, aifail
# ARGV: expected version, expected wid, new version, new wid, state, ttl, idem answer, idem ttl, reset, channel,
# log...  Returns {-2} when saved (or saved already by this very call: redis-py sent it again after a lost
# reply, and the new write id is unique to it), {-1} when the match is gone, else the stored {version, wid}.
_SAVE = APPEND_LOG_LUA + """
local cur = redis.call('HMGET', KEYS[1], 'version', 'wid')
local v, w = cur[1], cur[2] or ''
if not v then return {-1} end
if v == ARGV[3] and w == ARGV[4] then return {-2} end
if v ~= ARGV[1] or w ~= ARGV[2] then return {tonumber(v), w} end
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'wid', ARGV[4], 'state', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[6])
append(11, ARGV[9], ARGV[6])
if ARGV[7] ~= '' then redis.call('SET', KEYS[4], ARGV[7], 'EX', ARGV[8]) end
redis.call('DEL', KEYS[5])
redis.call('PUBLISH', ARGV[10], ARGV[3])
return {-2}
"""

# KEYS: match, aifail   ARGV: version, failure (JSON), ttl, channel. Records why the AI could not play at that
# version (if the match is still there) and wakes the processes watching it.
_AI_FAILED = """
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return 1
"""

# KEYS: match   ARGV: the version and write id the caller holds. The match's fields (as HMGET), or just
# {version} when the stored state is that one (the caller has it already: nothing else is sent back)
_LOAD_UNLESS = """
local cur = redis.call('HMGET', KEYS[1], 'version', 'wid')
if not cur[1] then return false end
if cur[1] == ARGV[1] and (cur[2] or '') == ARGV[2] then return {cur[1]} end
return redis.call('HMGET', KEYS[1], 'game', 'version', 'state', 'seats', 'start', 'created', 'wid')
"""

# KEYS: match, log, tail   ARGV: first chunk index
_READ_LOG = """
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return false end
return {v, redis.call('LRANGE', KEYS[2], ARGV[1], -1), redis.call('LRANGE', KEYS[3], 0, -1)}
"""


def _compress(entries: Sequence[dict[str, Any]]) -> bytes:
    return zlib.compress(jsonio.dumpb(list(entries)), 9)


def _decompress(chunk: bytes) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = jsonio.loads(zlib.decompress(chunk))
    return out


class RedisMatchStore:
    """:class:`MatchStore` on Redis (single server, Sentinel primary or Cluster).

    The log is compressed chunks of :data:`CHUNK` entries plus a tail list of the newest entries, one JSON
    string each. Version ``v`` means ``v`` entries, so the tail holds ``v % CHUNK`` of them: a save appends
    its entries to the tail, and only the save that fills a chunk reads the tail back to compress it.
    """

    def __init__(self, client: Any, *, match_ttl: int, idempotency_ttl: int) -> None:
        self.client = client
        self.match_ttl = match_ttl
        self.idempotency_ttl = idempotency_ttl
        self._create = client.register_script(_CREATE)
        self._save = client.register_script(_SAVE)
        self._read_log = client.register_script(_READ_LOG)
        self._load_unless = client.register_script(_LOAD_UNLESS)
        self._ai_failed = client.register_script(_AI_FAILED)

    def run_script(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """Run a registered script by its SHA (calling redis-py's Script checks the client's type each time, ~7 us
        of a ~50 us call); if the server has lost it (a restart), Script loads it again. Public for the adapters
        that write a match's keys beside this one (:mod:`service.seatstore`), with :data:`APPEND_LOG_LUA` and
        :meth:`log_args`."""
        try:
            return self.client.evalsha(script.sha, len(keys), *keys, *args)
        except redis.exceptions.NoScriptError:
            return script(keys=keys, args=args)

    # -- matches ---------------------------------------------------------------

    def create(self, match: StoredMatch, entries: Sequence[dict[str, Any]] = ()) -> None:
        mid = match.match_id
        _, log_args = self.log_args(mid, 0, entries)
        args: list[Any] = [self.match_ttl, match.game, match.version, match.state, jsonio.dumps(match.seats),
                           jsonio.dumps(match.start), repr(match.created), match.wid, *log_args]
        if not self.run_script(self._create, [match_key(mid), log_key(mid), tail_key(mid)], args):
            raise ValueError(f"match {mid} exists already")

    def load(self, match_id: str) -> StoredMatch:
        values = self.client.hmget(match_key(match_id),
                                   ["game", "version", "state", "seats", "start", "created", "wid"])
        return self._stored(match_id, values)

    def load_unless(self, match_id: str, version: int, wid: str) -> StoredMatch | None:
        """The match, or ``None`` if it is still the state ``version``/``wid`` (then only the version crosses
        the network)."""
        values = self.run_script(self._load_unless, [match_key(match_id)], [version, wid])
        if not values:
            raise MatchNotFound(match_id)
        return None if len(values) == 1 else self._stored(match_id, values)

    @staticmethod
    def _stored(match_id: str, values: list[Any]) -> StoredMatch:
        if values[0] is None:
            raise MatchNotFound(match_id)
        return StoredMatch(
            match_id=match_id,
            game=values[0].decode(),
            version=int(values[1]),
            state=values[2].decode(),
            seats=jsonio.loads(values[3]),
            start=jsonio.loads(values[4]),
            created=float(values[5]),
            wid=values[6].decode() if values[6] else "",
        )

    def save(self, match_id: str, expected: tuple[int, str], new: tuple[int, str], state: str,
             entries: Sequence[dict[str, Any]], idem: tuple[str, IdempotentAnswer] | None = None) -> None:
        """Write the new state (``new``: its version and a fresh write id) and append ``entries`` to the log if
        the stored state is ``expected`` (version, write id); else raise :class:`StaleVersion` (nothing
        written). No answer (a timeout, a broken connection): :class:`WriteUnconfirmed`, the save may have
        been applied."""
        reset, log_args = self.log_args(match_id, expected[0], entries)
        keys = [match_key(match_id), log_key(match_id), tail_key(match_id),
                idem_key(match_id, idem[0]) if idem else match_key(match_id), aifail_key(match_id)]
        args: list[Any] = [expected[0], expected[1], new[0], new[1], state, self.match_ttl,
                           idem[1].dumps() if idem else "", self.idempotency_ttl, reset, version_channel(match_id),
                           *log_args]
        try:
            result = self.run_script(self._save, keys, args)
        except (redis.exceptions.BusyLoadingError, MasterNotFoundError):
            raise  # refused before running, or no primary to send it to: nothing written
        except (redis.exceptions.TimeoutError, redis.exceptions.ConnectionError) as exc:
            raise WriteUnconfirmed(f"the save of match {match_id} got no answer ({exc.__class__.__name__})") from exc
        code = int(result[0])
        if code == -1:
            raise MatchNotFound(match_id)
        if code != -2:
            raise StaleVersion(code, result[1].decode() if result[1] else "")

    def log_args(self, match_id: str, version: int, entries: Sequence[dict[str, Any]]) -> tuple[str, list[Any]]:
        """How to append ``entries`` to the log of a match at ``version``: (reset the tail?, script args)."""
        in_tail = version % CHUNK
        if in_tail + len(entries) < CHUNK:
            return "0", [0, *(jsonio.dumps(e) for e in entries)]
        # this save fills a chunk: compress the tail with the new entries (if the tail changed meanwhile,
        # the version changed too, and the script rejects the save)
        tail = [jsonio.loads(e) for e in self.client.lrange(tail_key(match_id), 0, -1)] if in_tail else []
        pending = tail + list(entries)
        chunks = []
        while len(pending) >= CHUNK:
            chunks.append(_compress(pending[:CHUNK]))
            pending = pending[CHUNK:]
        return "1", [len(chunks), *chunks, *(jsonio.dumps(e) for e in pending)]

    def log(self, match_id: str, since: int = 0) -> tuple[int, list[dict[str, Any]]]:
        """The version and the log entries after version ``since`` (oldest first)."""
        first_chunk = max(0, since) // CHUNK
        got = self.run_script(self._read_log, [match_key(match_id), log_key(match_id), tail_key(match_id)],
                              [first_chunk])
        if not got:
            raise MatchNotFound(match_id)
        version = int(got[0])
        entries: list[dict[str, Any]] = []
        for chunk in got[1]:
            entries.extend(_decompress(chunk))
        entries.extend(jsonio.loads(e) for e in got[2])
        return version, [e for e in entries if since < e["v"] <= version]

    # -- the AI seats ------------------------------------------------------------

    def mark_ai_failed(self, match_id: str, version: int, detail: str) -> bool:
        """Record that the AI seat to move at ``version`` could not play (if the match is still there)."""
        failure = jsonio.dumps({"version": version, "detail": detail})
        return bool(self.run_script(self._ai_failed, [match_key(match_id), aifail_key(match_id)],
                              [version, failure, self.match_ttl, version_channel(match_id)]))

    def ai_failure(self, match_id: str) -> dict[str, Any] | None:
        """Why the AI could not play at the stored version, if it could not (``{"version", "detail"}``)."""
        raw = self.client.get(aifail_key(match_id))
        return None if raw is None else dict(jsonio.loads(raw))

    def clear_ai_failure(self, match_id: str) -> None:
        self.client.delete(aifail_key(match_id))

    def update_idempotent(self, key: str, answer: IdempotentAnswer) -> bool:
        """Replace a remembered answer (keeping its expiry), if it is still there."""
        return bool(self.client.set(key, answer.dumps(), xx=True, keepttl=True))

    # -- idempotency -------------------------------------------------------------

    def idempotent(self, key: str) -> IdempotentAnswer | None:
        raw = self.client.get(key)
        return None if raw is None else IdempotentAnswer.loads(raw)

    def remember(self, key: str, answer: IdempotentAnswer) -> bool:
        """Store ``answer`` under ``key`` unless one is there already (first answer wins)."""
        return bool(self.client.set(key, answer.dumps(), nx=True, ex=self.idempotency_ttl))

    # -- operations --------------------------------------------------------------

    def ping(self) -> bool:
        """Whether every server holding matches answers: on a cluster every primary (redis-py sends a
        cluster's PING to one node only, which answers while another node's matches are unreachable)."""
        if isinstance(self.client, redis.RedisCluster):
            return bool(self.client.ping(target_nodes=redis.RedisCluster.PRIMARIES))
        return bool(self.client.ping())

    def stored_bytes(self, match_id: str) -> int:
        """Bytes Redis holds for the match's values (MEMORY USAGE where available, else value lengths)."""
        total = 0
        for key in (match_key(match_id), log_key(match_id), tail_key(match_id)):
            try:
                total += int(self.client.memory_usage(key) or 0)
            except redis.ResponseError:
                total += int(self.client.strlen(key) or 0)
        return total

    def payload_bytes(self, match_id: str) -> int:
        """Bytes of the stored values themselves (state, seats, log chunks...), without Redis' overhead."""
        fields = self.client.hgetall(match_key(match_id))
        total = sum(len(k) + len(v) for k, v in fields.items())
        for key in (log_key(match_id), tail_key(match_id)):
            total += sum(len(c) for c in self.client.lrange(key, 0, -1))
        return total


class _BlockingSentinelPool(SentinelConnectionPool, redis.BlockingConnectionPool):
    """A Sentinel-managed primary's pool that waits for a free connection (as :class:`redis.BlockingConnectionPool`)."""


def connect(url: str, *, socket_timeout: float = 2.0, max_connections: int = 64) -> Any:
    """A pooled redis-py client for ``url``: a single server (``redis://``, ``rediss://``, ``unix://``),
    a Sentinel-managed primary (``redis+sentinel://[:pw@]h1:p1[,h2:p2]/service[/db]``) or a Cluster
    (``redis+cluster://host:port``, or ``rediss+cluster://``).

    The pools *wait* (up to the socket timeout) for a free connection when ``max_connections`` are in use,
    instead of failing: under the gevent worker hundreds of requests may want one at the same moment."""
    common: dict[str, Any] = {
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": socket_timeout,
        "health_check_interval": 30,
        # one quick retry on a fresh connection (a restarted server); a lost reply is retried safely
        # because every write checks the version first
        "retry": Retry(NoBackoff(), 1),
    }
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("redis+sentinel", "rediss+sentinel"):
        from redis.sentinel import Sentinel

        parts = urlsplit(url)
        hosts = []
        for hp in parts.netloc.rsplit("@", 1)[-1].split(","):
            host, _, port = hp.rpartition(":")
            hosts.append((host or "localhost", int(port or 26379)))
        path = [p for p in parts.path.split("/") if p]
        if not path:
            raise ValueError("a sentinel URL names the service: redis+sentinel://host:26379/mymaster")
        password = unquote(parts.password) if parts.password else None
        db = int(path[1]) if len(path) > 1 else 0
        sentinel = Sentinel(hosts, sentinel_kwargs={"socket_timeout": socket_timeout},
                            password=password, db=db, ssl=scheme.startswith("rediss"), **common)
        return sentinel.master_for(path[0], max_connections=max_connections, timeout=socket_timeout,
                                   connection_pool_class=_BlockingSentinelPool)
    if scheme in ("redis+cluster", "rediss+cluster"):
        from redis.cluster import RedisCluster

        plain = ("rediss" if scheme.startswith("rediss") else "redis") + "://" + url.split("://", 1)[1]
        return RedisCluster.from_url(plain, max_connections=max_connections,
                                     connection_pool_class=redis.BlockingConnectionPool, **common)
    pool = redis.BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=socket_timeout,
                                                 **common)
    return redis.Redis(connection_pool=pool)


def now() -> float:
    return time.time()
