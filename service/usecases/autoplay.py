"""The AI seats' turns, played with the AI package within a time budget per move and per request."""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from engine.game import Game, State
from service.config import Config
from service.store import StoredMatch
from service.usecases.errors import AiUnavailableError, ServiceError
from service.usecases.moves import play_move

MAX_SEED = 2**62

log = logging.getLogger("cardtable.service")


@dataclass
class Played:
    state: State
    entries: list[dict[str, Any]]
    error: ServiceError | None = None  # why the AI stopped early, if it failed
    hands: list[Counter[int]] | None = None
    views: list[dict[str, Any]] | None = None  # each seat's view of ``state``, when known


class Autoplayer:
    """Plays the turns of AI seats with the AI package, within a time budget per move and per request."""

    def __init__(self, config: Config, metrics: Any = None) -> None:
        self.config = config
        self.metrics = metrics

    def is_ai_turn(self, stored: StoredMatch, state: State) -> bool:
        return (not state.is_over and state.to_move is not None
                and bool(stored.seats[state.to_move].get("ai")))

    def decide(self, game: Game, view: dict[str, Any], level: int, time_ms: int, seed: int, kind: str) -> Any:
        from service import gate

        try:
            from ai import choose_move
        except ImportError as exc:  # the AI package is not installed or not ready
            raise AiUnavailableError(f"the AI cannot be loaded: {exc}") from None
        started = time.perf_counter()
        try:
            with gate.outside():  # the search holds no admission slot: short requests pass it meanwhile
                decision = choose_move(game, view, level=level, time_ms=time_ms, seed=seed)
        except Exception as exc:  # an AI bug is the AI being unavailable, not a 500 with a trace
            log.exception("the AI failed (%s, %s)", game.info.id, kind)
            raise AiUnavailableError(f"the AI failed to decide ({exc.__class__.__name__})") from None
        if self.metrics is not None:
            self.metrics.ai_seconds.labels(game=game.info.id, kind=kind).observe(time.perf_counter() - started)
        return decision

    def run(self, stored: StoredMatch, game: Game, state: State, version: int,
            hands: list[Counter[int]] | None = None, views: list[dict[str, Any]] | None = None) -> Played:
        """Play AI turns until a human seat is to move, the game ends or the request budget is spent."""
        entries: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.config.ai_request_budget_ms / 1000
        seed_base = int(stored.start.get("seed", 0))
        while self.is_ai_turn(stored, state) and time.monotonic() < deadline:
            seat = state.to_move
            assert seat is not None
            level = int(stored.seats[seat]["ai"].get("level", self.config.ai_default_level))
            view = game.observation(state, seat)
            try:
                decision = self.decide(game, view, level, self.config.ai_move_time_ms,
                                       (seed_base * 1_000_003 + version) % MAX_SEED, "seat")
                applied = play_move(game, state, decision.move, seat, version, ai=True, hands=hands)
            except ServiceError as exc:
                # a failing AI must not lose the human move before it: keep what was played and let
                # /advance retry the AI turn later
                return Played(state, entries, exc, hands, views)
            except Exception as exc:  # the AI's move was refused by the engine
                log.exception("the AI's move for seat %s of match %s failed", seat, stored.match_id)
                return Played(state, entries, AiUnavailableError(
                    f"the AI failed to move ({exc.__class__.__name__}); retry with /advance"), hands, views)
            state, hands, views = applied.state, applied.hands, applied.views
            entries.append(applied.entry)
            version += 1
        return Played(state, entries, None, hands, views)
