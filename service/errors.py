"""The one place where failures become HTTP answers: ``application/problem+json`` (RFC 9457).

Every problem has ``type``, ``title``, ``status``, ``detail`` and a stable
machine-readable ``code``; validation problems add ``errors`` (field →
messages). The engine's errors (:mod:`engine.errors`) and the service's domain
errors (:mod:`service.usecases.errors`) map by their ``code`` through the one
table :data:`PROBLEMS`; a 5xx never carries a trace.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, request
from marshmallow import ValidationError
from redis.exceptions import (
    BusyLoadingError,
    ClusterDownError,
    ReadOnlyError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.sentinel import MasterNotFoundError
from werkzeug.exceptions import HTTPException

from engine.errors import EngineError
from service import jsonio
from service.usecases.errors import ServiceError, StoreTimeoutError, UnauthorizedError

log = logging.getLogger("cardtable.service")

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "https://cardtable.dev/problems/"

#: Every stable code: the HTTP status it answers with and the problem's title (engine codes included).
PROBLEMS: dict[str, tuple[int, str]] = {
    "invalid_request": (422, "The request is malformed"),
    "invalid_card": (422, "Not a card"),
    "invalid_option": (422, "Invalid option"),
    "invalid_setup": (422, "Invalid starting position"),
    "invalid_state": (422, "Invalid state"),
    "invalid_move": (422, "Malformed move"),
    "invalid_view": (422, "Invalid view"),
    "invalid_hand": (422, "Invalid hand"),
    "invalid_idempotency_key": (422, "Invalid Idempotency-Key"),
    "idempotency_key_reused": (422, "Idempotency-Key reused for another request"),
    "illegal_move": (422, "Illegal move"),
    "engine_error": (422, "Rejected by the rules engine"),
    "analysis_unsupported": (422, "No analysis for this game"),
    "not_your_turn": (409, "Not your turn"),
    "game_over": (409, "The game is over"),
    "stale_version": (409, "Stale version"),
    "unknown_game": (404, "Unknown game"),
    "match_not_found": (404, "Match not found"),
    "invitation_not_found": (404, "Invitation not found"),
    "invitation_expired": (410, "Invitation expired"),
    "seat_taken": (409, "Seat already taken"),
    "match_waiting": (409, "The match is waiting for its players"),
    "seat_not_idle": (409, "The seat is not idle"),
    "match_not_over": (409, "The match is not over"),
    "not_found": (404, "Not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "unsupported_media_type": (415, "Unsupported media type"),
    "payload_too_large": (413, "Request body too large"),
    # answered by nginx in the reference deployment (deploy/nginx.conf), in the same shape
    "request_timeout": (408, "Request timeout"),
    "uri_too_long": (414, "URI too long"),
    "headers_too_large": (431, "Request headers too large"),
    "too_many_connections": (429, "Too many connections"),
    "service_unavailable": (503, "Service unavailable"),
    "unauthorized": (401, "Unauthorized"),
    "rate_limited": (429, "Too many requests"),
    "store_unavailable": (503, "Match store unavailable"),
    "store_timeout": (503, "Match store did not confirm the write"),
    "ai_unavailable": (503, "The AI is unavailable"),
    "ai_busy": (503, "The AI is busy"),
    "internal_error": (500, "Internal server error"),
}


def status_of(code: str) -> int:
    return PROBLEMS.get(code, (422, ""))[0]


def title_of(code: str) -> str:
    return PROBLEMS.get(code, (0, ""))[1] or code.replace("_", " ").capitalize()


#: The code of a validation problem confined to one part of a request body.
BODY_PART_CODES = {"state": "invalid_state", "view": "invalid_view", "options": "invalid_option"}


class ApiError(ServiceError):
    """A failure with a stable code given where it is raised (the HTTP layer's own checks, e.g. a header)."""

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        status: int | None = None,
        errors: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail, errors=errors, **(extra or {}))
        self.code = code
        self.status = status or status_of(code)
        self.headers = headers or {}


class StoreUnavailable(Exception):
    """The match store cannot be reached; nothing was written."""


#: A problem answers in a few hundred bytes whatever the request was: its detail and its list of field errors
#: are cut to these sizes (a body with 3,000 bad items made a 150 KB answer).
MAX_DETAIL_CHARS = 1000
MAX_ERROR_FIELDS = 20


def problem(code: str, detail: str, status: int, *, errors: Any = None,
            headers: dict[str, str] | None = None, extra: dict[str, Any] | None = None) -> Response:
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[: MAX_DETAIL_CHARS - 1] + "…"
    body: dict[str, Any] = {
        "type": TYPE_BASE + code,
        "title": title_of(code),
        "status": status,
        "detail": detail,
        "code": code,
    }
    if isinstance(errors, dict) and len(errors) > MAX_ERROR_FIELDS:
        kept = dict(list(errors.items())[:MAX_ERROR_FIELDS])
        kept["_more"] = [f"{len(errors) - MAX_ERROR_FIELDS} more fields have errors"]
        errors = kept
    if errors is not None:
        body["errors"] = errors
    if extra:
        body.update(extra)
    resp = Response(jsonio.dumpb(body), status=status, mimetype=PROBLEM_JSON)
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def service_problem(exc: ServiceError) -> Response:
    """The answer to a domain error: its code's status (a missing thing named in the request body rather than
    in the URL is a field error: 422), ``Retry-After`` when it says when to retry, and the bearer challenge
    of an ``unauthorized``."""
    status = getattr(exc, "status", None) or status_of(exc.code)
    if status == 404 and exc.errors:
        status = 422
    headers = dict(getattr(exc, "headers", None) or {})
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    if isinstance(exc, UnauthorizedError):
        headers.setdefault("WWW-Authenticate", exc.challenge)
    return problem(exc.code, exc.detail, status, errors=exc.errors, headers=headers, extra=exc.extra)


def engine_problem(exc: EngineError) -> Response:
    option = getattr(exc, "option", None)
    return problem(exc.code, str(exc), status_of(exc.code), extra={"option": option} if option else None)


def _flatten_errors(messages: Any, prefix: str = "") -> dict[str, list[str]]:
    """marshmallow's nested messages as ``{"field.sub": [messages]}``."""
    out: dict[str, list[str]] = {}
    if isinstance(messages, dict):
        for key, value in messages.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                out[name] = list(value)
            else:
                out.update(_flatten_errors(value, name))
    elif isinstance(messages, list):
        out[prefix or "_schema"] = [str(m) for m in messages]
    else:
        out[prefix or "_schema"] = [str(messages)]
    return out


def register_error_handlers(app: Flask, metrics: Any = None) -> None:
    retry_after = str(app.config["CARDTABLE"].store_retry_after)

    app.register_error_handler(ServiceError, service_problem)
    app.register_error_handler(EngineError, engine_problem)

    @app.errorhandler(ValidationError)
    def _validation_error(exc: ValidationError) -> Response:
        errors = _flatten_errors(exc.messages)
        first = next(iter(errors.items()), ("request", ["invalid"]))
        detail = f"{first[0]}: {first[1][0]}" if first[1] else "the request body is invalid"
        # a malformed state blob or view has the code the engine gives one (invalid_state, invalid_view)
        parts = {name.split(".", 1)[0] if "." in name else "" for name in errors}
        code = BODY_PART_CODES.get(parts.pop(), "invalid_request") if len(parts) == 1 else "invalid_request"
        extra = {"option": first[0].split(".")[1]} if code == "invalid_option" else None  # as the engine names it
        return problem(code, detail, 422, errors=errors, extra=extra)

    def _store_down(exc: Exception) -> Response:
        log.warning("store unavailable: %s", exc.__class__.__name__)
        if metrics is not None:
            metrics.store_errors.labels(operation=request.endpoint or "unknown").inc()
        return problem("store_unavailable", "the match store is unreachable; nothing was changed, retry later",
                       503, headers={"Retry-After": retry_after})

    @app.errorhandler(StoreTimeoutError)
    def _store_timeout(exc: StoreTimeoutError) -> Response:
        # a write that may have been applied: said so in the detail (service.usecases.moves.submit_move)
        log.warning("store timeout: a write was not confirmed")
        if metrics is not None:
            metrics.store_errors.labels(operation=request.endpoint or "unknown").inc()
        return problem(exc.code, exc.detail, 503, headers={"Retry-After": retry_after})

    app.register_error_handler(StoreUnavailable, _store_down)
    # an unreachable or failing-over server; other Redis errors are bugs (500)
    for exc_type in (RedisConnectionError, RedisTimeoutError, BusyLoadingError, ReadOnlyError, MasterNotFoundError,
                     ClusterDownError, TryAgainError):
        app.register_error_handler(exc_type, _store_down)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        code = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large",
                415: "unsupported_media_type", 429: "rate_limited"}.get(
            status, "invalid_request" if status < 500 else "internal_error")
        if status == 400:
            status = 422 if code == "invalid_request" else status
        detail = exc.description or title_of(code)
        headers = {"Allow": exc.get_headers()[-1][1]} if status == 405 and exc.get_headers() else None
        return problem(code, str(detail), status, headers=headers)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return problem("internal_error", "an unexpected error occurred; it has been logged", 500)

    @app.errorhandler(ResponseError)
    def _response_error(exc: ResponseError) -> Response:
        # NOREPLICAS (redis-py has no class for it): a primary with min-replicas-to-write refuses writes once
        # its replicas are gone, as an old primary does during a Sentinel switchover: unavailable, not a bug
        if "NOREPLICAS" in str(exc):
            return _store_down(exc)
        return _unexpected(exc)
