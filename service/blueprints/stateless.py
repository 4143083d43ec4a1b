"""``/v1/games/{game}/…``: stateless endpoints for clients that keep the state themselves."""

from __future__ import annotations

import random
from typing import Any

from flask import Blueprint, request

from engine.errors import EngineError
from engine.game import Game
from service.blueprints._common import body, services
from service.errors import ApiError
from service.schemas import (
    AnalyzeRequest,
    BestMoveRequest,
    Decision,
    StatelessLegalMoves,
    StateRequest,
    ValidateRequest,
    ValidateResult,
)
from service.usecases.ai_work import buckets_for
from service.usecases.loading import game_by_id, parse_state
from service.usecases.tokens import bearer_token

bp = Blueprint("stateless", __name__)
_analyze_in = AnalyzeRequest()
_state_in, _moves_out = StateRequest(), StatelessLegalMoves()
_validate_in, _validate_out = ValidateRequest(), ValidateResult()
_best_in, _decision = BestMoveRequest(), Decision()


@bp.post("/v1/games/<game_id>/analyze")
def analyze(game_id: str) -> Any:
    game = game_by_id(game_id)
    req = body(_analyze_in)
    try:
        return game.analyze(req["hand"], req["round"], req["options"])
    except EngineError as exc:
        if exc.errors is None:
            raise
        raise ApiError(exc.code, str(exc), errors=exc.errors) from None  # (the fields it names, as errors)


@bp.post("/v1/games/<game_id>/legal-moves")
def legal_moves(game_id: str) -> Any:
    game = game_by_id(game_id)
    state = parse_state(game, body(_state_in)["state"])
    return _moves_out.dump({"to_move": state.to_move, "moves": game.legal_moves(state)})


@bp.post("/v1/games/<game_id>/validate")
def validate(game_id: str) -> Any:
    game = game_by_id(game_id)
    req = body(_validate_in)
    state = parse_state(game, req["state"])
    try:
        new_state, events = game.apply(state, req["move"])
    except EngineError as exc:
        return _validate_out.dump({"legal": False, "code": exc.code, "detail": str(exc)})
    return _validate_out.dump({"legal": True, "state": game.to_json(new_state), "events": events})


@bp.post("/v1/games/<game_id>/best-move")
def best_move(game_id: str) -> Any:
    svc = services()
    game = game_by_id(game_id)
    req = body(_best_in)
    view = req["view"]
    check_view(game, view)
    token = bearer_token(request.headers.get("Authorization"))  # any bearer token: its own AI-time budget
    decided = svc.ai.decide("best_move", game, view, level=req["level"] or svc.config.ai_default_level,
                            time_ms=req["time_ms"], seed=0, buckets=buckets_for(token, request.remote_addr))
    return _decision.dump(decided.decision)


def check_view(game: Game, view: dict[str, Any]) -> None:
    """422 ``invalid_view`` unless ``view`` is an observation the game could give (``Game.check_view``:
    bounded, typed, consistent) of a seat whose decision it is, with a move to make."""
    game.check_view(view)
    if view["seat"] is None or view["seat"] != view["to_move"]:
        raise ApiError("invalid_view", "the view must be the observation of the seat to move "
                       "(its 'seat' equal to its 'to_move')")
    if not game.legal_moves(game.determinize(view, random.Random(0))):
        raise ApiError("invalid_view", "the seat has no legal move in this view")
