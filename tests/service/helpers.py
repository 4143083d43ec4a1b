"""Helpers for the service tests: the app on a given Redis, bearer headers, creating matches, finding cards."""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

CARD_RE = re.compile(r"^(?:[A2-9TJQK][CDHS]|JK)$")


def make_app(url: str, **overrides: Any) -> Any:
    from service.app import create_app

    config = {"redis_url": url, "request_log": False, "log_level": "WARNING", "rate_limit_enabled": False,
              "redis_socket_timeout": 1.0, **overrides}
    return create_app(config)


def local_ai_workers(url: str, count: int = 1, **overrides: Any) -> Any:
    """AI workers on threads of this process, serving the queue of the Redis at ``url`` (stop() them)."""
    from service.aitier.worker import LocalWorkers
    from service.config import Config
    from service.store import connect

    config = Config(redis_url=url, log_level="WARNING", redis_socket_timeout=1.0, **overrides)
    return LocalWorkers(connect(url, socket_timeout=1.0), config, count)


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def cards_in(value: Any) -> set[str]:
    """Every string in a JSON value that is a canonical card name."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if CARD_RE.match(v):
                out.add(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def create(client: Any, game: str, n: int = 2, wait: float | None = None, **body: Any) -> dict[str, Any]:
    """A new match (``wait``: seconds to wait for the AI seats that move first)."""
    players = body.pop("players", [{"name": f"p{i}"} for i in range(n)])
    r = client.post("/v1/matches", json={"game": game, "players": players, **body},
                    query_string={} if wait is None else {"wait": wait})
    assert r.status_code == 201, r.get_data(as_text=True)
    return dict(r.get_json())


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@contextlib.contextmanager
def local_service() -> Iterator[str]:
    """The service on a loopback port of this process (werkzeug's threaded server), over an embedded Redis, with
    AI workers on threads; yields its base URL and stops everything it started."""
    from werkzeug.serving import make_server

    from service.app import create_app
    from service.embedded_redis import EmbeddedRedis

    redis = EmbeddedRedis()
    app = create_app({"redis_url": redis.url, "rate_limit_enabled": False, "request_log": False})
    workers = local_ai_workers(redis.url)  # the AI seats' turns and the hints are AI jobs
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        workers.stop()
        redis.close()
