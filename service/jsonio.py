"""The service's JSON codec: orjson, compact UTF-8, for answers, request bodies, stored matches and log lines.

One codec for every hot path: a move decodes its body, encodes its answer, the new state and its log entry, and
writes a log line. Differences from ``json`` that matter here, and what this module does about them:

* non-ASCII text is written as UTF-8, not ``\\uXXXX`` escapes (the same JSON); dict keys that are not strings
  (ints) become strings, as with ``json``;
* orjson encodes integers of at most 64 bits: a value with a larger one (a client's seed, say) is encoded by
  ``json`` instead, so it is kept exactly;
* orjson decodes an integer past 64 bits as a float: a document with a run of 20 digits or more is decoded by
  ``json`` instead (integers stay exact);
* decoding refuses ``NaN`` and ``Infinity`` (both decoders here) and numbers that overflow a double;
  :mod:`service.bodies` bounds the nesting of request bodies.

Request fingerprints of idempotent retries keep the standard library's encoding (:mod:`service.usecases.moves`):
they are compared with ones stored before an upgrade.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS
_LONG_NUMBER = re.compile(rb"\d{20}")  # 20 digits: possibly past 64 bits


def dumpb(value: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """``value`` as compact JSON bytes (UTF-8)."""
    try:
        return orjson.dumps(value, default=default, option=_OPTIONS)
    except TypeError as exc:
        if "64-bit" not in str(exc):
            raise
        return json.dumps(value, default=default, separators=(",", ":"), ensure_ascii=False).encode()


def dumps(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """``value`` as compact JSON text."""
    return dumpb(value, default).decode()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(raw: bytes | bytearray | memoryview | str) -> Any:
    """A JSON document decoded (``ValueError`` if it is not JSON)."""
    data = raw.encode() if isinstance(raw, str) else bytes(raw) if isinstance(raw, memoryview) else raw
    if _LONG_NUMBER.search(data):
        return json.loads(data, parse_constant=_no_constant)
    return orjson.loads(data)
