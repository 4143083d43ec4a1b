"""The one place where failures become HTTP answers: ``application/problem+json`` (RFC 9457).

Every problem has ``type``, ``title``, ``status``, ``detail`` and a stable
machine-readable ``code``; validation problems add ``errors`` (field →
messages). Engine errors map by their ``code``; a 5xx never carries a trace.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, json, request
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

log = logging.getLogger("cardtable.service")

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "https://cardtable.dev/problems/"

#: HTTP status of each stable code (engine codes included).
STATUS_OF_CODE: dict[str, int] = {
    "invalid_request": 422,
    "invalid_card": 422,
    "invalid_option": 422,
    "invalid_setup": 422,
    "invalid_state": 422,
    "invalid_move": 422,
    "invalid_view": 422,
    "invalid_hand": 422,
    "invalid_idempotency_key": 422,
    "idempotency_key_reused": 422,
    "illegal_move": 422,
    "engine_error": 422,
    "not_your_turn": 409,
    "game_over": 409,
    "stale_version": 409,
    "unknown_game": 404,
    "match_not_found": 404,
    "not_found": 404,
    "method_not_allowed": 405,
    "unsupported_media_type": 415,
    "payload_too_large": 413,
    # answered by nginx in the reference deployment (deploy/nginx.conf), in the same shape
    "request_timeout": 408,
    "uri_too_long": 414,
    "headers_too_large": 431,
    "too_many_connections": 429,
    "service_unavailable": 503,
    "unauthorized": 401,
    "rate_limited": 429,
    "store_unavailable": 503,
    "ai_unavailable": 503,
    "analysis_unsupported": 422,
    "internal_error": 500,
}

TITLES: dict[str, str] = {
    "invalid_request": "The request is malformed",
    "invalid_card": "Not a card",
    "invalid_option": "Invalid option",
    "invalid_setup": "Invalid starting position",
    "invalid_state": "Invalid state",
    "invalid_move": "Malformed move",
    "invalid_view": "Invalid view",
    "invalid_hand": "Invalid hand",
    "invalid_idempotency_key": "Invalid Idempotency-Key",
    "idempotency_key_reused": "Idempotency-Key reused for another request",
    "illegal_move": "Illegal move",
    "engine_error": "Rejected by the rules engine",
    "not_your_turn": "Not your turn",
    "game_over": "The game is over",
    "stale_version": "Stale version",
    "unknown_game": "Unknown game",
    "match_not_found": "Match not found",
    "not_found": "Not found",
    "method_not_allowed": "Method not allowed",
    "unsupported_media_type": "Unsupported media type",
    "payload_too_large": "Request body too large",
    "request_timeout": "Request timeout",
    "uri_too_long": "URI too long",
    "headers_too_large": "Request headers too large",
    "too_many_connections": "Too many connections",
    "service_unavailable": "Service unavailable",
    "unauthorized": "Unauthorized",
    "rate_limited": "Too many requests",
    "store_unavailable": "Match store unavailable",
    "ai_unavailable": "The AI is unavailable",
    "analysis_unsupported": "No analysis for this game",
    "internal_error": "Internal server error",
}


#: The code of a validation problem confined to one part of a request body.
BODY_PART_CODES = {"state": "invalid_state", "view": "invalid_view", "options": "invalid_option"}


class ApiError(Exception):
    """A failure with a stable code; raise it anywhere in a view."""

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
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.status = status or STATUS_OF_CODE.get(code, 422)
        self.errors = errors
        self.headers = headers or {}
        self.extra = extra or {}

    @classmethod
    def from_engine(cls, exc: EngineError, status: int | None = None) -> ApiError:
        option = getattr(exc, "option", None)
        extra = {"option": option} if option else None
        return cls(exc.code, str(exc), status=status, extra=extra)


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
        "title": TITLES.get(code, code.replace("_", " ").capitalize()),
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
    resp = Response(json.dumps(body), status=status, mimetype=PROBLEM_JSON)
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


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

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> Response:
        return problem(exc.code, exc.detail, exc.status, errors=exc.errors, headers=exc.headers, extra=exc.extra)

    @app.errorhandler(EngineError)
    def _engine_error(exc: EngineError) -> Response:
        e = ApiError.from_engine(exc)
        return problem(e.code, e.detail, e.status, extra=e.extra)

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

    app.register_error_handler(StoreUnavailable, _store_down)
    # an unreachable or failing-over server; other Redis errors are bugs (500)
    for exc_type in (RedisConnectionError, RedisTimeoutError, BusyLoadingError, ReadOnlyError, MasterNotFoundError,
                     ClusterDownError, TryAgainError):
        app.register_error_handler(exc_type, _store_down)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        if status == 429:
            return _rate_limited(exc)
        code = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large",
                415: "unsupported_media_type"}.get(
            status, "invalid_request" if status < 500 else "internal_error")
        if status == 400:
            status = 422 if code == "invalid_request" else status
        detail = exc.description or TITLES.get(code, "")
        headers = {"Allow": exc.get_headers()[-1][1]} if status == 405 and exc.get_headers() else None
        return problem(code, str(detail), status, headers=headers)

    def _rate_limited(exc: HTTPException) -> Response:
        limiter = app.extensions.get("limiter")
        retry = 1
        limit = getattr(limiter, "current_limit", None) if limiter else None
        if limit is not None:
            import time

            retry = max(1, int(limit.reset_at - time.time()) + 1)
        return problem("rate_limited", f"rate limit exceeded ({getattr(exc, 'description', '')}); "
                       f"retry after {retry} s", 429, headers={"Retry-After": str(retry)})

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
