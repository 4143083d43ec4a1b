"""Request bodies: JSON, bounded in size and in depth before anything reads them.

The size is Flask's ``MAX_CONTENT_LENGTH`` (:data:`service.config.MAX_REQUEST_BYTES`: 413 past it). The
depth is checked here, in the app's JSON provider, so that every reader of a body (``request.get_json``
included) gets it: no request of this API nests deeper than :data:`MAX_JSON_DEPTH` (the deepest, a
Contract rummy go-down inside a move request, nests 5 levels), and a body nested ~1000 levels deep used to
raise ``RecursionError`` in the parser (a 500). A body past the limit is a 422 ``invalid_request``.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, request
from flask.json.provider import DefaultJSONProvider
from werkzeug.sansio.response import Response as SansIOResponse

from service import jsonio
from service.errors import ApiError

#: The deepest nesting of arrays and objects a request body may have.
MAX_JSON_DEPTH = 16


def too_deep() -> ApiError:
    return ApiError("invalid_request", f"the JSON body is nested more than {MAX_JSON_DEPTH} levels deep "
                    "(no request of this API needs that many)", errors={"_body": [f"at most {MAX_JSON_DEPTH} "
                                                                                   "levels of nesting"]})


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` levels deep (iteratively: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def _brackets(text: str | bytes | bytearray) -> int:
    if isinstance(text, str):
        return text.count("[") + text.count("{")
    return text.count(b"[") + text.count(b"{")


class BoundedJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider on the service's codec (:mod:`service.jsonio`), whose ``loads`` refuses
    documents nested deeper than :data:`MAX_JSON_DEPTH` with an :class:`~service.errors.ApiError` (not a
    ``ValueError``: ``get_json(silent=True)`` must not take a refused body for an absent one). Answers are
    compact, in the order the views build them."""

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return jsonio.dumps(obj, default=self.default)

    def response(self, *args: Any, **kwargs: Any) -> SansIOResponse:
        body = jsonio.dumpb(self._prepare_response_obj(args, kwargs), default=self.default) + b"\n"
        return self._app.response_class(body, mimetype=self.mimetype)  # type: ignore[arg-type]

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        try:
            value = jsonio.loads(s)
        except RecursionError:  # the standard library's decoder (see service.jsonio), ~1000 levels deep
            raise too_deep() from None
        except ValueError as exc:
            if "depth limit" in str(exc):  # orjson's own limit (1024 levels), far past ours
                raise too_deep() from None
            raise
        # fewer brackets than the limit cannot nest past it: most bodies skip the walk
        if _brackets(s) > MAX_JSON_DEPTH and depth_exceeds(value, MAX_JSON_DEPTH):
            raise too_deep()
        return value


def request_json() -> Any:
    """The request's body parsed as JSON (whatever its Content-Type), ``None`` if it is empty; a 422 that
    says why if it is not JSON."""
    raw = request.get_data(cache=True)
    if not raw:
        return None
    try:
        return current_app.json.loads(raw)
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        raise ApiError("invalid_request", f"the body is not valid JSON: {exc}",
                       errors={"_body": ["not valid JSON"]}) from None
