"""The AI worker: a process (``cardtable ai-worker``) that runs AI jobs from the queue, one at a time.

Any number of workers, on any machine, share one Redis. Each one:

1. reads the next job as a member of the consumer group (``XREADGROUP``); the job is now pending under its
   name. Before that, about once a second, it takes over a job whose worker went silent for longer than the
   visibility timeout (``XAUTOCLAIM``): a worker killed mid-job (``kill -9``) loses nothing;
2. renews the lease of the job it runs from a heartbeat thread (which also keeps it counted as live);
3. runs the job:

   * a **hint** or a **best move**: the AI decides from the view in the job; the answer is stored and
     published to the process that waits for it (unless that one gave up);
   * an **AI seat's turn**: the match is loaded; the job plays only if the match is at exactly the job's
     version with that AI seat to move (a job run twice, or whose human move never got saved, plays
     nothing). If the seat after it is an AI seat too, that turn is queued *before* this one is saved;
     then the move is saved through the one save path (:func:`service.usecases.moves.commit`) whose
     version check refuses a second save of the same turn: a turn is never lost and never played twice;

4. finishes the job (``XACK`` + ``XDEL`` and the queue's cost counter, in one script), and charges the AI time
   it really took to the budgets named in the job.

A job whose every worker dies on it is failed after ``ai_max_deliveries`` deliveries. If the AI raises, the
turn is recorded as failed (``POST /advance`` queues it again); a hint gets an ``ai_unavailable`` answer.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import socket
import threading
import time
from typing import Any

import redis

from engine.registry import get_game
from service.aitier.budget import AiBudget
from service.aitier.queue import Delivery, Job, JobQueue
from service.config import Config
from service.extensions import Metrics
from service.store import RedisMatchStore
from service.usecases.ai_work import seat_level, seat_seed
from service.usecases.errors import MatchNotFoundError, StaleVersionError
from service.usecases.loading import LoadedMatch, MatchCache, load
from service.usecases.moves import commit, play_move

log = logging.getLogger("cardtable.aiworker")

#: How long a turn's job waits for the save of the move before it (queued first, saved right after); a job
#: still ahead of the match after this was queued by a request whose save never happened, and is dropped.
SAVE_GRACE_SECONDS = 10.0
HEARTBEAT_SECONDS = 1.0
TAKE_OVER_EVERY = 1.0


def warm_up() -> None:
    """Let the AI load what it needs before the first job (``ai.warm_up()``, where the AI package has one)."""
    import ai

    warm = getattr(ai, "warm_up", None)
    if callable(warm):
        warm()


class AiWorker:
    """One worker: :meth:`run` until :meth:`stop`."""

    def __init__(self, client: Any, config: Config, *, name: str | None = None,
                 metrics: Metrics | None = None) -> None:
        self.config = config
        self.store = RedisMatchStore(client, match_ttl=config.match_ttl_seconds,
                                     idempotency_ttl=config.idempotency_ttl_seconds)
        self.queue = JobQueue(client, capacity_per_worker=config.ai_queue_seconds_per_worker,
                              visibility_timeout=config.ai_visibility_timeout)
        self.budget = AiBudget(client, per_token_minute=config.ai_seconds_per_token_minute,
                               per_client_minute=config.ai_seconds_per_client_minute,
                               enabled=config.rate_limit_enabled)
        self.cache = MatchCache(256)
        self.metrics = metrics or Metrics()
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.jobs_done = 0
        self._stopping = threading.Event()
        self.counted = threading.Event()  # set by the first heartbeat that reached Redis: admission counts it
        self._running: str | None = None  # the stream entry of the job being run
        # a blocking read must return well inside the socket timeout (else it reads as a dead server)
        self._block_ms = int(min(TAKE_OVER_EVERY, config.redis_socket_timeout / 2) * 1000)

    def stop(self) -> None:
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- the loop --------------------------------------------------------------------------------------

    def run(self, *, warm: bool = True) -> None:
        # counted live first (admission counts its capacity), then warmed: jobs wait in the stream meanwhile
        beat = threading.Thread(target=self._heartbeats, name="ai-worker-heartbeat", daemon=True)
        beat.start()
        if warm:
            warm_up()
        log.info("AI worker %s started", self.name)
        next_take_over = 0.0
        backoff = 0.1
        while not self.stopping:
            try:
                delivery = None
                if time.monotonic() >= next_take_over:
                    delivery, missing = self.queue.take_over(self.name)
                    self.queue.ack_missing(missing)
                    if delivery is None:
                        next_take_over = time.monotonic() + TAKE_OVER_EVERY
                if delivery is None:
                    delivery = self.queue.read(self.name, block_ms=self._block_ms)
                if delivery is not None:
                    self.handle(delivery)
                backoff = 0.1
            except redis.RedisError as exc:
                # the job (if any) stays pending: this worker or another takes it over after the timeout
                log.warning("AI worker %s: the store failed (%s); retrying", self.name, exc.__class__.__name__)
                self._stopping.wait(backoff)
                backoff = min(2.0, backoff * 2)
        with contextlib.suppress(redis.RedisError):
            self.queue.leave(self.name)
        log.info("AI worker %s stopped after %d jobs", self.name, self.jobs_done)

    def _heartbeats(self) -> None:
        while not self.stopping:
            try:
                self.queue.heartbeat(self.name)
                self.counted.set()
                running = self._running
                if running is not None:
                    self.queue.renew(self.name, running)
            except redis.RedisError:
                pass
            self._stopping.wait(HEARTBEAT_SECONDS)

    def handle(self, delivery: Delivery) -> None:
        job = delivery.job
        spent = 0.0
        self._running = delivery.entry_id
        try:
            if delivery.deliveries > self.config.ai_max_deliveries:
                self._give_up(job, delivery.deliveries)
            elif not self.queue.is_cancelled(job):
                spent = self.play_turn(job) if job.kind == "seat" else self.answer(job)
        finally:
            self._running = None
        self.queue.done(delivery)
        self.budget.charge(job.charges, spent - job.charged)
        self.jobs_done += 1

    # -- the jobs --------------------------------------------------------------------------------------

    def _decide(self, game_id: str, view: dict[str, Any], level: int, time_ms: int | None, seed: int,
                kind: str) -> tuple[Any, float]:
        from ai import choose_move

        game = get_game(game_id)
        started = time.perf_counter()
        decision = choose_move(game, view, level=level, time_ms=time_ms, seed=seed)
        spent = time.perf_counter() - started
        self.metrics.ai_seconds.labels(game=game_id, kind=kind).observe(spent)
        return decision, spent

    def answer(self, job: Job) -> float:
        """A hint or a best move: decide, and hand the answer to the process waiting for it."""
        assert job.view is not None
        time_ms = min(job.time_ms, self.config.ai_max_time_ms) if job.time_ms else None
        try:
            decision, spent = self._decide(job.game, job.view, min(job.level, self.config.ai_max_level), time_ms,
                                           job.seed, job.kind)
            payload: dict[str, Any] = {"decision": decision.to_json(), "search_seconds": spent}
        except Exception as exc:  # an AI bug is the AI being unavailable, never a trace for the client
            log.exception("the AI failed (%s, %s)", job.game, job.kind)
            payload, spent = {"error": f"the AI failed to decide ({exc.__class__.__name__})"}, 0.0
        self.queue.publish_answer(job, json.dumps(payload, separators=(",", ":")).encode())
        return spent

    def play_turn(self, job: Job) -> float:
        """The AI seat's turn at ``job.version``; the AI time it took."""
        assert job.match_id is not None and job.version is not None
        match = self._when_saved(job)
        if match is None or match.version != job.version:
            return 0.0  # played already, or its human move never got saved
        seat = match.ai_seat_to_move()
        if seat is None:
            return 0.0
        game, state = match.game, match.state
        try:
            decision, spent = self._decide(game.info.id, game.observation(state, seat),
                                           seat_level(match.stored, seat, self.config), self.config.ai_move_time_ms,
                                           seat_seed(match.stored, job.version), "seat")
            applied = play_move(game, state, decision.move, seat, job.version, ai=True, hands=match.hands)
        except Exception as exc:
            log.exception("the AI could not play seat %s of match %s at version %s", seat, job.match_id, job.version)
            self.store.mark_ai_failed(job.match_id, job.version, f"the AI failed to move ({exc.__class__.__name__});"
                                      " POST /advance tries again")
            return 0.0
        after = LoadedMatch(match.stored, game, applied.state)
        next_seat = after.ai_seat_to_move()
        paused = None
        if next_seat is not None:  # queued before this turn is saved: once saved, the next turn is waiting
            paused = self._queue_next(job, match, next_seat)
        try:
            commit(self.store, match, applied.state, [applied.entry], hands=applied.hands, cache=self.cache)
        except (StaleVersionError, MatchNotFoundError):
            return spent  # another worker played this turn (or the match expired)
        if paused is not None:
            self.store.mark_ai_failed(job.match_id, job.version + 1, paused)
        return spent

    def _queue_next(self, job: Job, match: LoadedMatch, seat: int) -> str | None:
        """Queue the next AI seat's turn, charged to the same budgets; if those are spent, the match pauses
        (why is returned) until someone asks ``/advance``."""
        from service.aitier.queue import estimate_cost

        assert job.match_id is not None and job.version is not None
        level = seat_level(match.stored, seat, self.config)
        cost = estimate_cost(job.game, level, match.state.num_players)
        nxt = Job("seat", job.game, level, cost, match_id=job.match_id,
                  version=job.version + 1, charges=job.charges)
        refusal = self.budget.fits(job.charges, nxt.cost)
        if refusal is not None:
            return (f"the AI seats paused: the AI-time budget of the players who set them off is spent; "
                    f"POST /advance in {refusal.retry_after} s")
        self.queue.enqueue(nxt, force=True)
        return None

    def _when_saved(self, job: Job) -> LoadedMatch | None:
        """The match once it has reached the job's version (the move before the job is saved right after the
        job is queued); ``None`` if it had not :data:`SAVE_GRACE_SECONDS` after the job was queued (by Redis'
        clock: the stream entry's id is its time in ms)."""
        assert job.match_id is not None and job.version is not None
        queued_ms = int((self._running or "0-0").split("-")[0])
        delay = 0.002
        while True:
            try:
                match: LoadedMatch | None = load(self.store, job.match_id, cache=self.cache)
            except MatchNotFoundError:
                match = None
            if match is not None and match.version >= job.version:
                return match
            now = self.store.client.time()
            seconds, micros = next(iter(now.values())) if isinstance(now, dict) else now  # a cluster: per node
            if seconds + micros / 1e6 - queued_ms / 1000 > SAVE_GRACE_SECONDS:
                return None
            time.sleep(delay)
            delay = min(0.1, delay * 2)

    def _give_up(self, job: Job, deliveries: int) -> None:
        detail = f"the AI job was delivered {deliveries} times and never finished (its workers died on it)"
        log.error("%s: %s", detail, job.id)
        if job.kind == "seat" and job.match_id is not None and job.version is not None:
            self.store.mark_ai_failed(job.match_id, job.version, detail + "; POST /advance tries again")
        else:
            self.queue.publish_answer(job, json.dumps({"error": detail}).encode())


class LocalWorkers:
    """AI workers on threads of this process (the same code as the worker processes, the same queue in
    Redis): for tests, and for running the whole service in one process."""

    def __init__(self, client: Any, config: Config, count: int = 1, *, counted_within: float = 10.0) -> None:
        """Start ``count`` workers and return once each is counted live by the queue's admission (or after
        ``counted_within`` seconds): a job sent right after finds its worker."""
        self.workers = [AiWorker(client, config) for _ in range(count)]
        self.threads = [threading.Thread(target=w.run, name=f"ai-worker-{i}", daemon=True)
                        for i, w in enumerate(self.workers)]
        for thread in self.threads:
            thread.start()
        deadline = time.monotonic() + counted_within
        for worker in self.workers:
            worker.counted.wait(max(0.0, deadline - time.monotonic()))

    def stop(self, timeout: float = 10.0) -> None:
        for worker in self.workers:
            worker.stop()
        for thread in self.threads:
            thread.join(timeout)


def main(config: Config, name: str | None = None) -> int:
    """``cardtable ai-worker``: run one worker until SIGTERM or SIGINT (the job in hand is finished first)."""
    import signal

    from service.extensions import configure_logging
    from service.store import connect

    configure_logging(config.log_level)
    if not config.redis_url:
        log.error("set REDIS_URL: an AI worker serves the queue of a running service's Redis")
        return 2
    client = connect(config.redis_url, socket_timeout=config.redis_socket_timeout,
                     max_connections=config.redis_max_connections)
    worker = AiWorker(client, config, name=name)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: worker.stop())
    worker.run()
    return 0
