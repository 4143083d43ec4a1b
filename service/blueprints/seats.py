"""Seats changing hands: ``/v1/invitations/{code}/claim``, ``/v1/matches/{id}/seats/{n}/claim``,
``.../resign`` (the holder hands the seat to an AI) and ``.../takeover`` (the others hand an idle seat to an AI)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flask import Blueprint, request
from marshmallow import fields, validate

from service.blueprints._common import body, request_seat, request_token, services
from service.schemas import Int, Strict
from service.usecases.errors import InvalidRequestError, ServiceError
from service.usecases.events import Event
from service.usecases.loading import load
from service.usecases.seats import Rematches, Seats

bp = Blueprint("seats", __name__)

NAME = validate.Length(1, 40)


class ClaimRequest(Strict):
    #: a claim may name the player (else the seat keeps the name its creator gave it)
    name = fields.String(load_default=None, allow_none=True, validate=NAME)


class SeatClaimRequest(ClaimRequest):
    code = fields.String(required=True, validate=validate.Length(1, 40))


class ToAiRequest(Strict):
    level = Int(load_default=3, validate=validate.Range(1, 5))


_claim_in, _seat_claim_in, _to_ai_in = ClaimRequest(), SeatClaimRequest(), ToAiRequest()


def _seats() -> Seats:
    svc = services()
    return Seats(svc.store, svc.seats, svc.ai, svc.cache, svc.config.seat_idle_seconds)


def _body(schema: Any) -> Any:
    return body(schema) if request.get_data(cache=True) else schema.load({})  # the body is optional


@bp.after_request
def _no_store(response: Any) -> Any:
    response.headers["Cache-Control"] = "no-store"  # answers carry seat tokens
    return response


@bp.post("/v1/invitations/<code>/claim")
def claim_invitation(code: str) -> Any:
    """Take the seat an invitation code was made for: the seat's token, given this once."""
    req = _body(_claim_in)
    use = _seats()
    match_id, seat = use.find_invitation(code)
    return use.claim(match_id, seat, code, req["name"], request.remote_addr), 200


@bp.post("/v1/matches/<match_id>/seats/<seat>/claim")
def claim_seat(match_id: str, seat: str) -> Any:
    req = body(_seat_claim_in)
    return _seats().claim(match_id, _seat_no(seat), req["code"], req["name"], request.remote_addr), 200


def _seat_no(seat: str) -> int:
    if not seat.isdigit() or len(seat) > 2:
        raise InvalidRequestError(f"the seat in the path is a seat number (0, 1, ...), not {seat[:20]!r}",
                                  errors={"seat": ["not a seat number"]})
    return int(seat)


def _holder(match_id: str) -> int:
    svc = services()
    seat = request_seat(load(svc.store, match_id, cache=svc.cache), required=True)
    assert seat is not None
    return seat


@bp.post("/v1/matches/<match_id>/seats/<seat>/resign")
def resign(match_id: str, seat: str) -> Any:
    """The seat's holder hands it to an AI of the level asked for; the token stops being a seat token."""
    req = _body(_to_ai_in)
    holder = _holder(match_id)
    return _seats().resign(match_id, _seat_no(seat), holder, req["level"], request.remote_addr), 200


@bp.post("/v1/matches/<match_id>/seats/<seat>/takeover")
def take_over(match_id: str, seat: str) -> Any:
    """Another seat's holder asks an AI to play ``seat``: only while everyone waits for that seat's decision,
    and only once the match has waited ``SEAT_IDLE_SECONDS`` for it."""
    req = _body(_to_ai_in)
    asker = _holder(match_id)
    return _seats().take_over(match_id, _seat_no(seat), asker, req["level"], request.remote_addr), 200


@bp.post("/v1/matches/<match_id>/rematch")
def rematch(match_id: str) -> Any:
    """A new match of the same players and options once this one is over, seats rotated (the deal passes on);
    the caller's new token comes back here, every other player's through their event stream of this match."""
    svc = services()
    token = request_token()
    holder = request_seat(load(svc.store, match_id, cache=svc.cache), required=True, token=token)
    assert holder is not None and token is not None
    return Rematches(_seats()).rematch(match_id, holder, token, request.remote_addr), 200


def with_rematch_tokens(stream: Iterator[Event], seat: int | None, token: str | None) -> Iterator[Event]:
    """A seat's event stream, where the old match's ``rematch`` event is followed by a private ``rematch``
    event for that seat: the new match, its seat there and its token (derived from the token the stream was
    opened with, so nobody else's stream can carry it). (Made now: the stream runs after the request.)"""
    return _rematch_tokens(stream, seat, token, Rematches(_seats()), request.remote_addr)


def _rematch_tokens(stream: Iterator[Event], seat: int | None, token: str | None, rematches: Rematches,
                    client: str | None) -> Iterator[Event]:
    for event in stream:
        yield event
        if seat is None or token is None or event.kind != "move" or not event.data or event.data.get("move"):
            continue
        for ev in event.data.get("events") or []:
            if ev.get("type") != "rematch" or str(seat) not in (ev.get("seats") or {}):
                continue
            new_seat = int(ev["seats"][str(seat)])
            try:
                new_token = rematches.pick_up(ev["match_id"], new_seat, token, client)
            except ServiceError as exc:
                yield Event("rematch", event.version, {"match_id": ev["match_id"], "seat": new_seat,
                                                      "error": exc.code, "detail": exc.detail})
                continue
            yield Event("rematch", event.version, {"match_id": ev["match_id"], "seat": new_seat, "token": new_token})
