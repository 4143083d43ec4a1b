"""Process-wide helpers: the metrics and the JSON log format."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

from service import jsonio


class Metrics:
    """The service's Prometheus metrics (one registry per app; multiprocess-aware for gunicorn)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("cardtable_http_requests", "HTTP requests by endpoint, method and status",
                                ["endpoint", "method", "status"], registry=self.registry)
        self.latency = Histogram("cardtable_http_request_seconds", "Request latency by endpoint",
                                 ["endpoint", "method"], registry=self.registry,
                                 buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
        self.ai_seconds = Histogram("cardtable_ai_search_seconds", "AI search time by game and kind "
                                    "(seat = an AI seat's move, hint, best_move)", ["game", "kind"],
                                    registry=self.registry,
                                    buckets=(.01, .05, .1, .25, .5, 1, 2, 5, 10, 30))
        self.ai_queue_seconds = Histogram("cardtable_ai_queue_seconds", "Round trip of an AI job through the queue "
                                          "without its search (enqueue to answer, minus the search)", ["kind"],
                                          registry=self.registry,
                                          buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30))
        self.ai_admissions = Counter("cardtable_ai_admissions", "AI jobs asked for, by outcome (answered, failed, "
                                     "busy, rate_limited, no_worker, timeout)", ["outcome"], registry=self.registry)
        self.store_errors = Counter("cardtable_store_errors", "Requests that failed because the store was "
                                    "unreachable", ["operation"], registry=self.registry)
        self._per_request: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def observe_request(self, endpoint: str, method: str, status: int, seconds: float) -> None:
        """Count one request and its latency (the labelled children are looked up once, not per request)."""
        children = self._per_request.get((endpoint, method, status))
        if children is None:
            children = (self.requests.labels(endpoint, method, str(status)), self.latency.labels(endpoint, method))
            self._per_request[endpoint, method, status] = children
        children[0].inc()
        children[1].observe(seconds)

    def exposition(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            from prometheus_client import multiprocess

            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            return generate_latest(registry), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any ``extra={"fields": {...}}``."""

    _second: tuple[int, str] = (-1, "")  # the last second formatted (one strftime a second, not one a line)

    def _stamp(self, created: float) -> str:
        second = int(created)
        cached = self._second
        if cached[0] != second:
            cached = self._second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        return cached[1]

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": f"{self._stamp(record.created)}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        extra = getattr(record, "fields", None)
        if isinstance(extra, dict):
            out.update(extra)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)  # logs only, never a response
        return jsonio.dumps(out, default=str)


class _ServiceHandler(logging.StreamHandler):
    """The service's own log handler (recognised, so that a second app in a process adds no second one)."""


def configure_logging(level: str) -> None:
    logger = logging.getLogger("cardtable")
    logger.setLevel(level.upper())
    if not any(isinstance(h, _ServiceHandler) for h in logger.handlers):
        handler = _ServiceHandler()
        handler.setFormatter(JsonFormatter())
        logger.addHandler(handler)
        logger.propagate = False
