"""``/v1/games/{game}/…``: stateless endpoints for clients that keep the state themselves."""

from __future__ import annotations

import random
from typing import Any

from flask import Blueprint

from engine.errors import EngineError
from engine.game import Game
from service import play
from service.blueprints._common import body, services
from service.errors import ApiError
from service.extensions import ai_ip_rate_limit, limiter
from service.schemas import (
    AnalyzeRequest,
    BestMoveRequest,
    Decision,
    StatelessLegalMoves,
    StateRequest,
    ValidateRequest,
    ValidateResult,
)

bp = Blueprint("stateless", __name__)
_analyze_in = AnalyzeRequest()
_state_in, _moves_out = StateRequest(), StatelessLegalMoves()
_validate_in, _validate_out = ValidateRequest(), ValidateResult()
_best_in, _decision = BestMoveRequest(), Decision()


@bp.post("/v1/games/<game_id>/analyze")
def analyze(game_id: str) -> Any:
    game = play.game_or_404(game_id)
    req = body(_analyze_in)
    try:
        return game.analyze(req["hand"], req["round"], req["options"])
    except EngineError as exc:
        if exc.errors is None:
            raise
        raise ApiError(exc.code, str(exc), errors=exc.errors) from None  # (the fields it names, as errors)


@bp.post("/v1/games/<game_id>/legal-moves")
def legal_moves(game_id: str) -> Any:
    game = play.game_or_404(game_id)
    state = play.parse_state(game, body(_state_in)["state"])
    return _moves_out.dump({"to_move": state.to_move, "moves": game.legal_moves(state)})


@bp.post("/v1/games/<game_id>/validate")
def validate(game_id: str) -> Any:
    game = play.game_or_404(game_id)
    req = body(_validate_in)
    state = play.parse_state(game, req["state"])
    try:
        new_state, events = game.apply(state, req["move"])
    except EngineError as exc:
        return _validate_out.dump({"legal": False, "code": exc.code, "detail": str(exc)})
    return _validate_out.dump({"legal": True, "state": game.to_json(new_state), "events": events})


@bp.post("/v1/games/<game_id>/best-move")
@limiter.shared_limit(ai_ip_rate_limit, scope="ai-ip")
def best_move(game_id: str) -> Any:
    svc = services()
    game = play.game_or_404(game_id)
    req = body(_best_in)
    cfg = svc.config
    time_ms = req["time_ms"] or cfg.ai_move_time_ms
    if time_ms > cfg.ai_max_time_ms:
        raise ApiError("invalid_request", f"time_ms may be at most {cfg.ai_max_time_ms}",
                       errors={"time_ms": [f"must be at most {cfg.ai_max_time_ms}"]})
    view = req["view"]
    check_view(game, view)
    decision = svc.autoplayer.decide(game, view, req["level"] or cfg.ai_default_level, time_ms, 0, "best_move")
    return _decision.dump(decision.to_json())


def check_view(game: Game, view: dict[str, Any]) -> None:
    """422 ``invalid_view`` unless ``view`` is an observation the game could give (``Game.check_view``:
    bounded, typed, consistent) of a seat whose decision it is, with a move to make."""
    game.check_view(view)
    if view["seat"] is None or view["seat"] != view["to_move"]:
        raise ApiError("invalid_view", "the view must be the observation of the seat to move "
                       "(its 'seat' equal to its 'to_move')")
    if not game.legal_moves(game.determinize(view, random.Random(0))):
        raise ApiError("invalid_view", "the seat has no legal move in this view")
