"""``/v1/matches``: server-held matches (state blobs in Redis), seat tokens, moves, AI seats, hints, logs,
live events and long polls."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, request

from service import jsonio
from service.blueprints._common import (
    body,
    idempotency_key,
    json_body,
    json_response,
    query,
    request_seat,
    request_token,
    services,
)
from service.blueprints.seats import with_rematch_tokens
from service.schemas import (
    AdvanceRequest,
    CreateMatchRequest,
    EventsQuery,
    Hint,
    HintQuery,
    LegalMoves,
    MatchCreated,
    MatchLog,
    MatchView,
    MoveRequest,
    MoveResult,
    ViewQuery,
    WaitQuery,
)
from service.store import IdempotentAnswer
from service.usecases import ai_work, creating, events, moves, seats, views
from service.usecases.errors import InvalidRequestError
from service.usecases.loading import load

bp = Blueprint("matches", __name__)

_create_in, _created = CreateMatchRequest(), MatchCreated()
_view_q, _view = ViewQuery(), MatchView()
_wait_q, _events_q = WaitQuery(), EventsQuery()
_moves_out = LegalMoves()
_move_in, _move_out = MoveRequest(), MoveResult()
_advance_in = AdvanceRequest()
_hint_q, _hint = HintQuery(), Hint()
_log = MatchLog()

MIN_CREATE_KEY = 16  # the key seeds the seat tokens of a retried creation: it must be unguessable
PREFER_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*\"?(\d+(?:\.\d+)?)", re.IGNORECASE)


def _turn_wait() -> tuple[float, dict[str, str]]:
    """Seconds to wait for the AI seats: ``?wait=N`` (at most 10), or ``Prefer: wait=N`` (RFC 7240: capped at 10);
    and the ``Preference-Applied`` header that says so."""
    wait = query(_wait_q)["wait"] if request.args else None  # most moves carry no query: no schema to run
    if wait is None:
        found = PREFER_WAIT.search(request.headers.get("Prefer", ""))
        if found is None:
            return 0.0, {}
        wait = min(float(found.group(1)), ai_work.MAX_TURN_WAIT)
        return wait, {"Preference-Applied": f"wait={wait:g}"}
    return wait, {}


@bp.after_request
def _caching(response: Response) -> Response:
    """What a seat token shows is for that seat only (never stored on the way); the rest is revalidated."""
    response.headers.setdefault("Cache-Control", "no-store" if request.headers.get("Authorization")
                                or request.args.get("access_token") else "no-cache")
    response.vary.add("Authorization")
    return response


@bp.post("/v1/matches")
def create_match() -> Any:
    svc = services()
    req = body(_create_in)
    key = idempotency_key(MIN_CREATE_KEY)
    wait, applied = _turn_wait()
    base = request.host_url.rstrip("/")
    if key:
        replayed = creating.replay_created(svc.store, req, key, base)
        if replayed is not None:
            return _created.dump(replayed), 201
    answer = creating.create_match(svc.store, svc.ai, req, key, request.remote_addr, seat_store=svc.seats,
                                   invitation_ttl=svc.config.invitation_ttl_seconds, base_url=base)
    if wait and answer["ai_pending"]:
        done = moves.answer_after_wait(svc.store, svc.notifier, svc.cache, answer["match_id"], answer["view_seat"],
                                       0, wait)
        answer.update(version=done["version"], state_id=done["state_id"], view=done["view"],
                      ai_pending=done["ai_pending"])
    return _created.dump(answer), 201, {"Location": f"/v1/matches/{answer['match_id']}", **applied}


@bp.get("/v1/matches/<match_id>")
def get_match(match_id: str) -> Any:
    svc = services()
    args = query(_view_q)
    if args["wait"] is not None and args["since"] is None:
        raise InvalidRequestError("wait needs since: the version you have", errors={"wait": ["needs since"]})
    if args["wait"]:
        match = ai_work.wait_for_version(svc.store, svc.notifier, svc.cache, match_id, args["since"],
                                         min(args["wait"], svc.config.long_poll_max_seconds))
    else:
        match = load(svc.store, match_id, cache=svc.cache)
    seat = request_seat(match, required=False)
    etag = (f"v{match.version}.{match.state_id}-{'p' if seat is None else seat}-"
            f"{'' if args['since'] is None else args['since']}")
    if etag in request.if_none_match:
        return Response(status=304, headers={"ETag": f'"{etag}"'})
    response = svc_json(_view.dump(views.match_view(svc.store, match, seat, args["since"])))
    response.set_etag(etag)
    return response


def svc_json(value: Any) -> Response:
    return json_response(json_body(value))


@bp.get("/v1/matches/<match_id>/legal-moves")
def legal_moves(match_id: str) -> Any:
    svc = services()
    match = load(svc.store, match_id, cache=svc.cache)
    seat = request_seat(match, required=True)
    assert seat is not None
    etag = f"v{match.version}.{match.state_id}-{seat}-moves"
    if etag in request.if_none_match:
        return Response(status=304, headers={"ETag": f'"{etag}"'})
    body = match.memo.get(("legal-moves", seat))
    if body is None:  # worked out once per version and seat (clients ask again until someone moves)
        body = match.memo["legal-moves", seat] = json_body(_moves_out.dump(views.legal_moves_for(match, seat)))
    response = json_response(body)
    response.headers["ETag"] = f'"{etag}"'
    return response


@bp.post("/v1/matches/<match_id>/moves")
def post_move(match_id: str) -> Any:
    svc = services()
    req = body(_move_in)
    key = idempotency_key()
    wait, applied = _turn_wait()
    match = (svc.cache.get(match_id, req["expected_version"], req.get("expected_state_id"))
             or load(svc.store, match_id, cache=svc.cache))
    token = request_token()
    seat = request_seat(match, required=True, token=token)
    assert seat is not None
    seats.refuse_while_waiting(match)
    buckets = ai_work.buckets_for(token, request.remote_addr)
    answer = moves.submit_move(svc.store, svc.ai, match, seat, req["move"], req["expected_version"], key, req,
                               buckets, svc.cache)
    if wait and answer.get("ai_pending"):
        idem = (moves.key_digest(key), IdempotentAnswer(moves.fingerprint(seat, req), 200, answer)) if key else None
        answer = moves.answer_after_move(svc.store, svc.notifier, svc.cache, match_id, seat, req["expected_version"],
                                         wait, answer, idem)
    return _move_out.dump(answer), 200, applied


@bp.post("/v1/matches/<match_id>/advance")
def advance(match_id: str) -> Any:
    svc = services()
    req = body(_advance_in) if request.get_data(cache=True) else _advance_in.load({})  # the body is optional
    wait, applied = _turn_wait()
    match = load(svc.store, match_id, cache=svc.cache)
    token = request_token()
    seat = request_seat(match, required=False, token=token)
    seats.refuse_while_waiting(match)
    buckets = ai_work.buckets_for(token, request.remote_addr)
    moves.advance(svc.store, svc.ai, match, req["expected_version"], buckets)
    answer = moves.answer_after_wait(svc.store, svc.notifier, svc.cache, match_id, seat, match.version, wait,
                                     failure_is_error=True)
    return _move_out.dump(answer), 200, applied


@bp.get("/v1/matches/<match_id>/hint")
def hint(match_id: str) -> Any:
    svc = services()
    args = query(_hint_q)
    match = load(svc.store, match_id, cache=svc.cache)
    token = request_token()
    seat = request_seat(match, required=True, token=token)
    assert seat is not None
    decided = svc.ai.decide("hint", match.game, ai_work.hint_view(match, seat),
                            level=args["level"] or svc.config.ai_default_level, time_ms=args["time_ms"],
                            seed=match.version, buckets=ai_work.buckets_for(token, request.remote_addr))
    return _hint.dump({**decided.decision, "version": match.version, "seat": seat})


@bp.get("/v1/matches/<match_id>/log")
def get_log(match_id: str) -> Any:
    svc = services()
    args = query(_view_q)
    match = load(svc.store, match_id, cache=svc.cache)
    seat = request_seat(match, required=False)
    return _log.dump(views.match_log(svc.store, match, seat, args["since"] or 0))


@bp.get("/v1/matches/<match_id>/events")
def match_events(match_id: str) -> Any:
    """Server-Sent Events: ``id:`` the version, ``event:`` the kind (``view``, ``move``, ``error``)."""
    svc = services()
    args = query(_events_q)
    match = load(svc.store, match_id, cache=svc.cache)
    token = request_token() or args["access_token"]
    seat = request_seat(match, required=False, token=token)
    after = args["since"]
    resume = request.headers.get("Last-Event-ID")
    if resume is not None:
        if not resume.strip().isdigit():
            raise InvalidRequestError("Last-Event-ID must be a version (the id of the last event you got)",
                                      errors={"Last-Event-ID": ["not a version"]})
        after = int(resume)
    cfg = svc.config
    stream = with_rematch_tokens(
        events.match_events(svc.store, svc.notifier, svc.cache, match_id, seat, after,
                            keepalive=cfg.events_keepalive_seconds, lifetime=cfg.events_max_seconds), seat, token)
    return Response(_sse(stream, cfg.store_retry_after), mimetype="text/event-stream",
                    headers={"X-Accel-Buffering": "no"})


def _sse(stream: Iterator[events.Event], retry_after: int) -> Iterator[bytes]:
    yield b"retry: 1000\n\n"
    for event in stream:
        if event.kind == "keepalive":
            yield b": keep-alive\n\n"
            continue
        lines = []
        if event.kind == "error":
            lines.append(f"retry: {retry_after * 1000}")
        if event.version is not None:
            lines.append(f"id: {event.version}")
        lines.append(f"event: {event.kind}")
        lines.append("data: " + jsonio.dumps(event.data))
        yield ("\n".join(lines) + "\n\n").encode()
