"""The AI job queue: a Redis Stream read by a consumer group of AI workers, admitted by cost.

Keys (all with the hash tag ``{ai}``: one Redis Cluster slot, so each script below runs there whole):

``ct:{ai}:jobs`` (stream, consumer group ``workers``)
    one entry per job, field ``job`` (JSON, :class:`Job`). An entry is read by one worker (``XREADGROUP``),
    stays pending under that worker's name until it is done (``XACK`` and ``XDEL``), and is taken over by
    another worker (``XAUTOCLAIM``) once it has been idle for the visibility timeout: a running worker
    renews its job's lease every second or so, a dead one does not.
``ct:{ai}:cost``
    the AI time of the jobs admitted and not yet done, in milliseconds (their estimated cost,
    :func:`estimate_cost`; an integer: ``INCRBYFLOAT`` inside a script corrupted the heap of Redis 6.2).
``ct:{ai}:workers`` (sorted set)
    each live worker by name, scored by the time of its last heartbeat: the queue admits
    ``ai_queue_seconds_per_worker`` AI-seconds per live worker.
``ct:{ai}:turn:<match id>:<version>``
    the AI seat's turn at that version of that match is queued or running: at most one job per turn.

A job's answer (hints, best moves) goes to ``ct:{job-<id>}:answer`` (its own slot) and is published on the
reply channel of the process that waits for it (:mod:`service.live`). Every admission and every completion
is one script, so the cost counter and the stream never disagree.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import redis

JOBS = "ct:{ai}:jobs"
COST = "ct:{ai}:cost"
WORKERS = "ct:{ai}:workers"
GROUP = "workers"
#: A worker whose heartbeat is older than this is not counted as live.
WORKER_STALE_SECONDS = 10.0
#: How long the marker of a queued AI turn lives at most (it is removed when the job ends).
TURN_MARKER_SECONDS = 3600
ANSWER_SECONDS = 120

#: Mean seconds of one AI decision, by game and level, at the table size ``bench/ai_speed.py`` measures
#: (2 players; 4 for contract rummy and Least Score): ``bench/ai_speed.py --json --level L --positions 24
#: --fresh 0`` on a 2-core machine running one other job (2026-12-07; the fixed-work loop took 23 ms against
#: 13-15 idle; Three Thirteen and Threezies levels 3-5 measured again that afternoon, idle, loop 22-30 ms, once
#: their leaf sampled the others' draws), rounded up. The queue admits by these: the sum of the admitted jobs'
#: estimates is the expected AI time queued, so means, not tails; the rate limits then charge the time each job
#: really took.
DECISION_SECONDS: dict[str, dict[int, float]] = {
    "contract-rummy": {1: 0.002, 2: 0.007, 3: 0.035, 4: 0.13, 5: 0.35},
    "least-score": {1: 0.001, 2: 0.025, 3: 0.07, 4: 0.25, 5: 1.2},
    "less-than-three": {1: 0.001, 2: 0.008, 3: 0.05, 4: 0.31, 5: 0.67},
    "three-thirteen": {1: 0.002, 2: 0.003, 3: 0.077, 4: 0.095, 5: 0.26},
    "threezies": {1: 0.001, 2: 0.003, 3: 0.06, 4: 0.065, 5: 0.2},
}
#: Three Thirteen deals from two decks from 3 players on (one per two players): its decisions took 1.8-2.4
#: times the 2-player ones at levels 3 and 5 with 3 and 4 players (mean 149 / 111 ms at level 3, 548 / 500 ms at
#: level 5, against 63 and 253 with 2 players, in the same minutes), so with a quarter more per player its
#: estimate is twice the table's there. In the other games a seat more or less moved the mean by less than 2
#: times either way (contract rummy 3 players: 66 ms at level 3; Least Score 3 players 52 ms): a quarter more per
#: player beyond the measured table, none less.
SEVERAL_DECKS_FACTOR = {"three-thirteen": 2.0}
BENCH_PLAYERS = {"contract-rummy": 4, "least-score": 4}
MIN_JOB_SECONDS = 0.005  # a job's own round trips


def estimate_cost(game_id: str, level: int, num_players: int, time_ms: int | None = None) -> float:
    """AI-seconds one decision of ``game_id`` at ``level`` with ``num_players`` is expected to take (see
    :data:`DECISION_SECONDS`), at most the ``time_ms`` a caller bounds it by (the level's work ends it sooner
    or later, whichever comes first). A game not in the table costs what the dearest game does."""
    row = DECISION_SECONDS.get(game_id)
    if row is None:
        seconds = max(r.get(level, max(r.values())) for r in DECISION_SECONDS.values())
    else:
        seconds = row.get(level, max(row.values()))
    base = BENCH_PLAYERS.get(game_id, 2)
    seconds *= 1 + 0.25 * max(0, num_players - base)
    if num_players >= 3:
        seconds *= SEVERAL_DECKS_FACTOR.get(game_id, 1.0)
    if time_ms is not None:
        seconds = min(seconds, time_ms / 1000)
    return max(MIN_JOB_SECONDS, seconds)


def millis(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def turn_key(match_id: str, version: int) -> str:
    return f"ct:{{ai}}:turn:{match_id}:{version}"


def answer_key(job_id: str) -> str:
    return f"ct:{{job-{job_id}}}:answer"


@dataclass
class Job:
    """One AI decision to make.

    ``kind``: ``seat`` (the AI seat to move at ``version`` of ``match_id`` plays), ``hint`` or ``best_move``
    (decide for ``view`` and publish the answer on ``reply_to``). ``charges`` are the rate-limit buckets the
    AI time is charged to, ``charged`` what they were charged at admission (the estimate)."""

    kind: str
    game: str
    level: int
    cost: float
    id: str = field(default_factory=lambda: secrets.token_hex(8))
    match_id: str | None = None
    version: int | None = None
    view: dict[str, Any] | None = None
    time_ms: int | None = None
    seed: int = 0
    reply_to: str | None = None
    charges: list[str] = field(default_factory=list)
    charged: float = 0.0
    created: float = field(default_factory=time.time)

    def dumps(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def loads(cls, raw: bytes | str) -> Job:
        return cls(**json.loads(raw))


@dataclass
class Delivery:
    """A job as one worker received it: the stream entry and how many times it was delivered."""

    entry_id: str
    job: Job
    deliveries: int = 1


@dataclass
class Admission:
    admitted: bool
    queued: float  # AI-seconds queued (before this job, if it was refused)
    capacity: float
    workers: int
    duplicate: bool = False


# KEYS: jobs, cost, workers, turn marker (or jobs)   ARGV: job JSON, cost, capacity per worker, stale after,
# force ('1': a turn that follows one just played: never refused), marker ttl, need a worker ('1': refused when
# no worker is live, for a client that waits for the answer)
_ADMIT = """
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
if KEYS[4] ~= KEYS[1] and redis.call('EXISTS', KEYS[4]) == 1 then return {'dup', '0', '0', '0'} end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[4]))
local workers = redis.call('ZCARD', KEYS[3])
local queued = tonumber(redis.call('GET', KEYS[2]) or '0') / 1000
local capacity = tonumber(ARGV[3]) * math.max(workers, 1)
local cost = tonumber(ARGV[2]) / 1000
if ARGV[7] == '1' and workers == 0 then return {'busy', tostring(queued), tostring(capacity), '0'} end
if ARGV[5] ~= '1' and queued > 0 and queued + cost > capacity then
  return {'busy', tostring(queued), tostring(capacity), tostring(workers)}
end
if KEYS[4] ~= KEYS[1] then redis.call('SET', KEYS[4], '1', 'EX', ARGV[6]) end
redis.call('INCRBY', KEYS[2], ARGV[2])
redis.call('XADD', KEYS[1], '*', 'job', ARGV[1])
return {'ok', tostring(queued), tostring(capacity), tostring(workers)}
"""

# KEYS: jobs, cost, turn marker (or jobs)   ARGV: group, entry id, cost. The job is done: its entry leaves the
# stream and its cost the counter (once, even if two workers finish it), its turn marker goes.
_DONE = """
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
if redis.call('XDEL', KEYS[1], ARGV[2]) == 1 then
  if redis.call('DECRBY', KEYS[2], ARGV[3]) < 0 then redis.call('SET', KEYS[2], '0') end
end
if KEYS[3] ~= KEYS[1] then redis.call('DEL', KEYS[3]) end
return 1
"""


class JobQueue:
    """Enqueue (admitted by cost), read, renew, finish and take over AI jobs."""

    def __init__(self, client: Any, *, capacity_per_worker: float, visibility_timeout: float) -> None:
        self.client = client
        self.capacity_per_worker = capacity_per_worker
        self.visibility_ms = max(1, int(visibility_timeout * 1000))
        self._admit = client.register_script(_ADMIT)
        self._done = client.register_script(_DONE)
        self._group_ready = False

    def ensure_group(self) -> None:
        if self._group_ready:
            return
        try:
            self.client.xgroup_create(JOBS, GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    # -- producers -------------------------------------------------------------------------------------

    def enqueue(self, job: Job, *, force: bool = False, need_worker: bool = False) -> Admission:
        """Queue ``job`` unless the queue is full (``force``: never refused; ``need_worker``: refused when no
        worker is live). An AI seat's turn is queued at most once (a second enqueue of the same turn is a
        ``duplicate`` and queues nothing)."""
        self.ensure_group()
        marker = self._marker(job)
        got = self._admit(keys=[JOBS, COST, WORKERS, marker],
                          args=[job.dumps(), millis(job.cost), self.capacity_per_worker, WORKER_STALE_SECONDS,
                                "1" if force else "0", TURN_MARKER_SECONDS, "1" if need_worker else "0"])
        status = got[0].decode() if isinstance(got[0], bytes) else got[0]
        queued, capacity, workers = float(got[1]), float(got[2]), int(float(got[3]))
        return Admission(status == "ok", queued, capacity, workers, duplicate=status == "dup")

    def live_workers(self) -> int:
        return int(self.client.zcount(WORKERS, time.time() - WORKER_STALE_SECONDS, "+inf"))

    def queued_seconds(self) -> float:
        return int(self.client.get(COST) or 0) / 1000

    def answer(self, job_id: str) -> bytes | None:
        """A job's stored answer (if it was answered and not yet expired)."""
        raw = self.client.get(answer_key(job_id))
        return None if raw is None else bytes(raw)

    def cancel(self, job_id: str) -> bool:
        """Tell the workers nobody waits for this job's answer any more (unless it is answered already)."""
        return bool(self.client.set(answer_key(job_id), b"cancelled", nx=True, ex=ANSWER_SECONDS))

    # -- workers ---------------------------------------------------------------------------------------

    def heartbeat(self, worker: str) -> None:
        self.client.zadd(WORKERS, {worker: time.time()})

    def leave(self, worker: str) -> None:
        self.client.zrem(WORKERS, worker)

    def read(self, worker: str, block_ms: int) -> Delivery | None:
        """The next new job for ``worker`` (waiting up to ``block_ms``), now pending under its name."""
        self.ensure_group()
        got = self.client.xreadgroup(GROUP, worker, {JOBS: ">"}, count=1, block=block_ms)
        for _stream, entries in got or ():
            for entry_id, fields in entries:
                return self._delivery(entry_id, fields, 1)
        return None

    def take_over(self, worker: str) -> tuple[Delivery | None, list[str]]:
        """A job idle for longer than the visibility timeout (its worker died), now ``worker``'s; and the ids
        of pending entries whose job is gone (to acknowledge)."""
        self.ensure_group()
        got = self.client.xautoclaim(JOBS, GROUP, worker, self.visibility_ms, "0-0", count=1)
        claimed = got[1] if len(got) > 1 else []
        deleted = [e.decode() if isinstance(e, bytes) else e for e in (got[2] if len(got) > 2 else [])]
        for item in claimed:
            if item is None or item[1] is None:  # Redis 6.2 lists a deleted entry as nil
                continue
            entry_id, fields = item
            entry = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
            pending = self.client.xpending_range(JOBS, GROUP, min=entry, max=entry, count=1)
            deliveries = int(pending[0]["times_delivered"]) if pending else 2
            return self._delivery(entry_id, fields, deliveries), deleted
        return None, deleted

    def renew(self, worker: str, entry_id: str) -> None:
        """Reset the idle time of a job ``worker`` is running (its lease), so nobody takes it over."""
        self.client.xclaim(JOBS, GROUP, worker, 0, [entry_id], justid=True)

    def done(self, delivery: Delivery) -> None:
        job = delivery.job
        marker = self._marker(job)
        self._done(keys=[JOBS, COST, marker], args=[GROUP, delivery.entry_id, millis(job.cost)])

    def ack_missing(self, entry_ids: list[str]) -> None:
        if entry_ids:
            self.client.xack(JOBS, GROUP, *entry_ids)

    def publish_answer(self, job: Job, payload: bytes) -> bool:
        """Store a job's answer and tell the process waiting for it; ``False`` if nobody waits any more."""
        if not self.client.set(answer_key(job.id), payload, nx=True, ex=ANSWER_SECONDS):
            return False
        if job.reply_to:
            self.client.publish(job.reply_to, job.id.encode() + b"\n" + payload)
        return True

    def is_cancelled(self, job: Job) -> bool:
        return job.kind != "seat" and self.client.get(answer_key(job.id)) == b"cancelled"

    @staticmethod
    def _marker(job: Job) -> str:
        """The key that says the job's AI turn is queued (the stream itself for other jobs: no marker)."""
        if job.kind == "seat" and job.match_id is not None and job.version is not None:
            return turn_key(job.match_id, job.version)
        return JOBS

    @staticmethod
    def _delivery(entry_id: Any, fields: dict[Any, Any], deliveries: int) -> Delivery:
        entry = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
        raw = fields[b"job"] if b"job" in fields else fields["job"]
        return Delivery(entry, Job.loads(raw), deliveries)


def retry_after(queued: float, capacity: float, workers: int) -> int:
    """Seconds until the queue has likely drained enough to admit a job: what is beyond capacity, shared by
    the live workers (at least 1 s)."""
    return max(1, math.ceil((queued - capacity / 2) / max(1, workers)))
