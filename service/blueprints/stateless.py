"""``/v1/games/{game}/…``: stateless endpoints for clients that keep the state themselves."""

from __future__ import annotations

import json
import random
from typing import Any

from flask import Blueprint, request

from engine.errors import EngineError
from service import analysis
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
    return analysis.analyze(game, req["hand"], req["round"], req["options"])


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


def check_view(game: Any, view: dict[str, Any]) -> None:
    """422 ``invalid_view`` unless ``view`` is a real observation of a seat to move: it must survive
    re-dealing its unseen cards unchanged (the AI never gets anything else)."""
    if view.get("game") != game.info.id:
        raise ApiError("invalid_view", f"the view is not a {game.info.id} view (its game is {view.get('game')!r})")
    seat = view.get("seat")
    if isinstance(seat, bool) or not isinstance(seat, int) or seat != view.get("to_move"):
        raise ApiError("invalid_view", "the view must be the observation of the seat to move "
                       "(its 'seat' equal to its 'to_move')")
    try:
        state = game.determinize(view, random.Random(0))
        again = game.observation(state, seat)
        moves = game.legal_moves(state)
    except EngineError as exc:
        raise ApiError("invalid_view", f"the view is not consistent: {exc}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, AssertionError) as exc:
        raise ApiError("invalid_view", f"the view is malformed ({exc.__class__.__name__}: {exc})") from None
    if json.dumps(again, sort_keys=True) != json.dumps(view, sort_keys=True):
        raise ApiError("invalid_view", "the view is not an observation the engine would give (some field was "
                       "changed or is missing)")
    if not moves:
        raise ApiError("invalid_view", "the seat has no legal move in this view")
