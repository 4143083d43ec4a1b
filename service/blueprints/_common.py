"""Small helpers the blueprints share."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, request

from service.app import Services
from service.bodies import request_json
from service.errors import ApiError
from service.schemas import load
from service.usecases import tokens
from service.usecases.loading import LoadedMatch


def services() -> Services:
    svc: Services = current_app.extensions["cardtable"]
    return svc


def body(schema: Any) -> Any:
    """The JSON body loaded through ``schema`` (422 ``invalid_request`` if it is not valid)."""
    return load(schema, request_json())


def query(schema: Any) -> Any:
    return schema.load(request.args.to_dict())


def request_token() -> str | None:
    """The seat token of the request's ``Authorization: Bearer`` header (``None`` without one)."""
    return tokens.bearer_token(request.headers.get("Authorization"))


def request_seat(match: LoadedMatch, *, required: bool, token: str | None = None) -> int | None:
    """The seat of ``match`` whose token the request carries (``token``, else the header's); ``None`` for a
    spectator unless ``required``."""
    return tokens.seat_of(match.stored.seats, token or request_token(), required=required)


def idempotency_key(min_length: int = 1) -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not min_length <= len(key) <= 255 or not key.isprintable():
        raise ApiError("invalid_idempotency_key",
                       f"Idempotency-Key must be {min_length}-255 printable characters (use a random UUID)")
    return key


def json_body(value: Any) -> bytes:
    """``value`` as the bytes of a JSON answer, exactly as a view returning it would send them."""
    answer = current_app.json.response(value)
    assert isinstance(answer, Response)
    return answer.get_data()


def json_response(body: bytes) -> Response:
    """A JSON answer from :func:`json_body`'s bytes (kept to answer the same question again)."""
    return current_app.response_class(body, mimetype="application/json")
