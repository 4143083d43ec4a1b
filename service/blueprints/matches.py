"""``/v1/matches``: server-held matches (state blobs in Redis), seat tokens, moves, AI seats, hints, logs."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from service.blueprints._common import body, idempotency_key, json_body, json_response, query, services
from service.errors import ApiError
from service.extensions import ai_ip_rate_limit, ai_rate_limit, limiter, token_key
from service.schemas import (
    AdvanceRequest,
    CreateMatchRequest,
    Hint,
    HintQuery,
    LegalMoves,
    MatchCreated,
    MatchLog,
    MatchView,
    MoveRequest,
    MoveResult,
    ViewQuery,
)
from service.usecases import creating, moves, tokens, views
from service.usecases.loading import LoadedMatch, load

bp = Blueprint("matches", __name__)

_create_in, _created = CreateMatchRequest(), MatchCreated()
_view_q, _view = ViewQuery(), MatchView()
_moves_out = LegalMoves()
_move_in, _move_out = MoveRequest(), MoveResult()
_advance_in = AdvanceRequest()
_hint_q, _hint = HintQuery(), Hint()
_log = MatchLog()

MIN_CREATE_KEY = 16  # the key seeds the seat tokens of a retried creation: it must be unguessable


def _seat(match: LoadedMatch, required: bool) -> int | None:
    return tokens.seat_of(match.stored.seats, tokens.bearer_token(request.headers.get("Authorization")),
                          required=required)


@bp.post("/v1/matches")
def create_match() -> Any:
    svc = services()
    req = body(_create_in)
    key = idempotency_key(MIN_CREATE_KEY)
    if key:
        replayed = creating.replay_created(svc.store, req, key)
        if replayed is not None:
            return _created.dump(replayed), 201
    answer = creating.create_match(svc.store, svc.autoplayer, req, key)
    return _created.dump(answer), 201, {"Location": f"/v1/matches/{answer['match_id']}"}


@bp.get("/v1/matches/<match_id>")
def get_match(match_id: str) -> Any:
    svc = services()
    args = query(_view_q)
    match = load(svc.store, match_id, cache=svc.cache)
    seat = _seat(match, required=False)
    return _view.dump(views.match_view(svc.store, match, seat, args["since"]))


@bp.get("/v1/matches/<match_id>/legal-moves")
def legal_moves(match_id: str) -> Any:
    svc = services()
    match = load(svc.store, match_id, cache=svc.cache)
    seat = _seat(match, required=True)
    assert seat is not None
    body = match.memo.get(("legal-moves", seat))
    if body is None:  # worked out once per version and seat (clients ask again until someone moves)
        body = match.memo["legal-moves", seat] = json_body(_moves_out.dump(views.legal_moves_for(match, seat)))
    return json_response(body)


@bp.post("/v1/matches/<match_id>/moves")
def post_move(match_id: str) -> Any:
    svc = services()
    req = body(_move_in)
    key = idempotency_key()
    match = svc.cache.get(match_id, req["expected_version"]) or load(svc.store, match_id, cache=svc.cache)
    seat = _seat(match, required=True)
    assert seat is not None
    answer = moves.submit_move(svc.store, svc.autoplayer, match, seat, req["move"], req["expected_version"],
                               key, req, svc.cache)
    return _move_out.dump(answer)


@bp.post("/v1/matches/<match_id>/advance")
@limiter.shared_limit(ai_ip_rate_limit, scope="ai-ip")
@limiter.shared_limit(ai_rate_limit, scope="ai-token", key_func=token_key)
def advance(match_id: str) -> Any:
    svc = services()
    raw = request.get_json(force=True, silent=True)
    req = _advance_in.load(raw if raw is not None else {})
    match = load(svc.store, match_id, cache=svc.cache)
    seat = _seat(match, required=False)
    return _move_out.dump(moves.advance(svc.store, svc.autoplayer, match, seat, req["expected_version"]))


@bp.get("/v1/matches/<match_id>/hint")
@limiter.shared_limit(ai_ip_rate_limit, scope="ai-ip")
@limiter.shared_limit(ai_rate_limit, scope="ai-token", key_func=token_key)
def hint(match_id: str) -> Any:
    svc = services()
    args = query(_hint_q)
    cfg = svc.config
    level = args["level"] or cfg.ai_default_level
    time_ms = args["time_ms"] or cfg.ai_move_time_ms
    if time_ms > cfg.ai_max_time_ms:
        raise ApiError("invalid_request", f"time_ms may be at most {cfg.ai_max_time_ms}",
                       errors={"time_ms": [f"must be at most {cfg.ai_max_time_ms}"]})
    match = load(svc.store, match_id, cache=svc.cache)
    seat = _seat(match, required=True)
    assert seat is not None
    if match.state.is_over:
        raise ApiError("game_over", "the game is over: there is nothing to hint")
    if match.state.to_move != seat:
        raise ApiError("not_your_turn", f"it is seat {match.state.to_move}'s decision, not seat {seat}'s")
    view = match.game.observation(match.state, seat)
    decision = svc.autoplayer.decide(match.game, view, level, time_ms, match.version, "hint")
    out = decision.to_json()
    out.update(version=match.version, seat=seat)
    return _hint.dump(out)


@bp.get("/v1/matches/<match_id>/log")
def get_log(match_id: str) -> Any:
    svc = services()
    args = query(_view_q)
    match = load(svc.store, match_id, cache=svc.cache)
    seat = _seat(match, required=False)
    return _log.dump(views.match_log(svc.store, match, seat, args["since"] or 0))
