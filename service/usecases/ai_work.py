"""AI work as the HTTP side asks for it: hints and best moves (asked, then awaited), the AI seats' turns
(queued before the move that hands them the turn is saved), and waiting for a match's AI seats.

Nothing here searches: every decision is a job on the queue (:mod:`service.aitier.queue`), run by an AI
worker process (:mod:`service.aitier.worker`). Admission is by cost: the caller's AI-time budgets first
(:mod:`service.aitier.budget`), then the queue's capacity; a refused request changed nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import GameOverError, NotYourTurnError
from engine.game import Game
from service.aitier.budget import AiBudget
from service.aitier.queue import Admission, Job, JobQueue, estimate_cost, retry_after
from service.config import Config
from service.live import Notifier
from service.store import MatchStore, StoredMatch, version_channel
from service.usecases.errors import AiBusyError, AiUnavailableError, InvalidRequestError, RateLimitedError
from service.usecases.loading import LoadedMatch, MatchCache, load
from service.usecases.tokens import token_hash

MAX_SEED = 2**62
#: The longest ``wait`` a move, a creation or ``/advance`` may ask for, and a long poll.
MAX_TURN_WAIT = 10.0
MAX_POLL_WAIT = 30.0
#: Waiters look at Redis again at least this often, whatever they were told (a lost notification costs this).
RECHECK_SECONDS = 1.0


def buckets_for(token: str | None, client: str | None) -> list[str]:
    """The AI-time budgets a request is charged to: its seat (or bearer) token's and its client's."""
    out = []
    if token:
        out.append("tok:" + token_hash(token))
    if client:
        out.append("ip:" + client)
    return out


def seat_buckets(stored: StoredMatch, client: str | None) -> list[str]:
    """The budgets the AI seats' turns of a match are charged to when no token asks for them: its human
    seats' (its players') and the client's."""
    out = ["tok:" + s["token_hash"] for s in stored.seats if s.get("token_hash")][:1]
    if client:
        out.append("ip:" + client)
    return out


def seat_level(stored: StoredMatch, seat: int, config: Config) -> int:
    level = int((stored.seats[seat].get("ai") or {}).get("level", config.ai_default_level))
    return min(level, config.ai_max_level)


def seat_seed(stored: StoredMatch, version: int) -> int:
    """The seed of the AI seat's decision at ``version``: from the match's seed and the version, so that a
    replayed match (or a job run twice) decides the same."""
    return (int(stored.start.get("seed", 0)) * 1_000_003 + version) % MAX_SEED


def hint_view(match: LoadedMatch, seat: int) -> dict[str, Any]:
    """The view the AI decides a hint from: the seat's own, when it is the seat's decision."""
    if match.state.is_over:
        raise GameOverError("the game is over: there is nothing to hint")
    if match.state.to_move != seat:
        raise NotYourTurnError(f"it is seat {match.state.to_move}'s decision, not seat {seat}'s")
    return match.game.observation(match.state, seat)


@dataclass
class Decided:
    """A finished hint or best move: the AI's decision, and how long the search itself took."""

    decision: dict[str, Any]
    search_seconds: float
    round_trip: float


class AiWork:
    """The HTTP side of the AI tier: admits jobs, queues them, and waits for what they do."""

    def __init__(self, queue: JobQueue, budget: AiBudget, notifier: Notifier, config: Config,
                 metrics: Any = None) -> None:
        self.queue = queue
        self.budget = budget
        self.notifier = notifier
        self.config = config
        self.metrics = metrics

    # -- hints and best moves --------------------------------------------------------------------------

    def decide(self, kind: str, game: Game, view: dict[str, Any], *, level: int, time_ms: int | None, seed: int,
               buckets: Sequence[str]) -> Decided:
        """The AI's decision for ``view`` (``kind``: ``hint`` or ``best_move``), from a worker."""
        if time_ms is not None and time_ms > self.config.ai_max_time_ms:
            limit = f"must be at most {self.config.ai_max_time_ms}"
            raise InvalidRequestError(f"time_ms {limit}", errors={"time_ms": [limit]})
        level = min(level, self.config.ai_max_level)
        cost = estimate_cost(game.info.id, level, int(view.get("num_players", 2)), time_ms)
        job = Job(kind, game.info.id, level, cost,
                  view=view, time_ms=time_ms, seed=seed, reply_to=self.notifier.reply_channel,
                  charges=list(buckets))
        self._charge_up_front(job)
        started = time.perf_counter()
        with self.notifier.expect(job.id) as waiter:
            admission = self.queue.enqueue(job, need_worker=True)
            if not admission.admitted:
                self.budget.charge(job.charges, -job.charged)
                self._refuse(admission)
            deadline = time.monotonic() + self.config.ai_answer_timeout
            payload = None
            while payload is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    if self.queue.cancel(job.id):
                        self._count("timeout")
                        raise AiBusyError(f"the AI did not answer within {self.config.ai_answer_timeout:g} s; "
                                          "retry later", retry_after=retry_after(admission.queued,
                                                                                 admission.capacity,
                                                                                 admission.workers))
                    payload = self.queue.answer(job.id)  # answered as we gave up
                    break
                woken = waiter.wait(min(left, RECHECK_SECONDS))
                payload = waiter.payload if woken and waiter.payload else self.queue.answer(job.id)
        answer: dict[str, Any] = json.loads(payload) if payload else {"error": "the AI's answer was lost"}
        round_trip = time.perf_counter() - started
        if "error" in answer:
            self._count("failed")
            raise AiUnavailableError(answer["error"])
        self._count("answered")
        if self.metrics is not None:
            self.metrics.ai_seconds.labels(game=game.info.id, kind=kind).observe(answer["search_seconds"])
            self.metrics.ai_queue_seconds.labels(kind=kind).observe(max(0.0, round_trip - answer["search_seconds"]))
        return Decided(answer["decision"], answer["search_seconds"], round_trip)

    # -- the AI seats' turns ---------------------------------------------------------------------------

    def queue_turn(self, match: StoredMatch, num_players: int, seat: int, version: int,
                   buckets: Sequence[str]) -> None:
        """Queue the turn of the AI ``seat`` to move at ``version`` — before the save that moves the match
        there, so that no crash between the two can leave the turn unplayed (a job that finds the match at
        another version is dropped). Refused (nothing queued): :class:`RateLimitedError`, :class:`AiBusyError`."""
        level = seat_level(match, seat, self.config)
        job = Job("seat", match.game, level, estimate_cost(match.game, level, num_players), match_id=match.match_id,
                  version=version, charges=list(buckets))
        self._charge_up_front(job)
        admission = self.queue.enqueue(job)
        if admission.duplicate:  # this turn is queued already (a concurrent request, or a retry)
            self.budget.charge(job.charges, -job.charged)
        elif not admission.admitted:
            self.budget.charge(job.charges, -job.charged)
            self._refuse(admission)

    def _charge_up_front(self, job: Job) -> None:
        refusal = self.budget.admit(job.charges, job.cost)
        if refusal is not None:
            self._count("rate_limited")
            who = "this seat token" if refusal.bucket.startswith("tok:") else "this client"
            raise RateLimitedError(f"{who} has used its AI time for now (a budget of AI-seconds per minute); "
                                   f"retry after {refusal.retry_after} s", retry_after=refusal.retry_after)
        job.charged = job.cost if self.budget.enabled else 0.0

    def _refuse(self, admission: Admission) -> None:
        if admission.workers == 0:
            self._count("no_worker")
            raise AiUnavailableError("no AI worker is running: the AI cannot answer now; retry later", retry_after=5)
        self._count("busy")
        wait = retry_after(admission.queued, admission.capacity, admission.workers)
        raise AiBusyError(f"the AI queue is full ({admission.queued:.1f} of {admission.capacity:.0f} AI-seconds "
                          f"queued); retry after {wait} s", retry_after=wait)

    def _count(self, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.ai_admissions.labels(outcome=outcome).inc()


def wait_for_turn(store: MatchStore, notifier: Notifier, cache: MatchCache | None, match_id: str,
                  seconds: float) -> tuple[LoadedMatch, dict[str, Any] | None]:
    """Wait up to ``seconds`` until no AI seat is to move in the match (a human's turn, or the end), or the AI
    seat to move could not play; the match then, and why the AI could not play (or ``None``)."""
    deadline = time.monotonic() + min(seconds, MAX_TURN_WAIT)
    match = load(store, match_id, cache=cache)
    if seconds <= 0 or match.ai_seat_to_move() is None:
        return match, None
    with notifier.watch(version_channel(match_id)) as waiter:
        while True:
            match = load(store, match_id, cache=cache)
            if match.ai_seat_to_move() is None:
                return match, None
            failure = store.ai_failure(match_id)
            if failure is not None and failure.get("version") == match.version:
                return match, failure
            left = deadline - time.monotonic()
            if left <= 0:
                return match, None
            waiter.wait(min(left, RECHECK_SECONDS))


def wait_for_version(store: MatchStore, notifier: Notifier, cache: MatchCache | None, match_id: str, since: int,
                     seconds: float) -> LoadedMatch:
    """Wait up to ``seconds`` (at most :data:`MAX_POLL_WAIT`) until the match is past version ``since``; at
    once if it is before ``since`` (the store lost moves the client saw: the match as it is now)."""
    deadline = time.monotonic() + min(seconds, MAX_POLL_WAIT)
    match = load(store, match_id, cache=cache)
    if match.version != since or seconds <= 0:
        return match
    with notifier.watch(version_channel(match_id)) as waiter:
        while True:
            match = load(store, match_id, cache=cache)
            left = deadline - time.monotonic()
            if match.version != since or left <= 0:
                return match
            waiter.wait(min(left, RECHECK_SECONDS))
