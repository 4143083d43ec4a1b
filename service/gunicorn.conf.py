"""gunicorn settings for the cardtable API (``cardtable serve`` uses this file).

AI calls are CPU-bound (up to ``AI_MAX_TIME_MS``), so concurrency comes from
processes: one worker per core by default. Each worker serves every open
connection on a thread of its own and balances connections with the other
workers (:mod:`service.worker`), so an AI request holds up only its own
connection. Timeouts leave room for the longest AI request. Environment:
``CARDTABLE_BIND``, ``CARDTABLE_WORKERS``, ``CARDTABLE_WORKER_CLASS`` (e.g.
``gthread``, with ``CARDTABLE_THREADS`` threads), ``CARDTABLE_TIMEOUT``, ``CARDTABLE_CONTROL_SOCKET``.

Metrics: with several workers, prometheus-client runs in multiprocess mode
(``PROMETHEUS_MULTIPROC_DIR``, created here when unset) so ``/metrics`` sums
every worker.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from typing import Any

from gunicorn.glogging import Logger

bind = os.environ.get("CARDTABLE_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("CARDTABLE_WORKERS", "0")) or multiprocessing.cpu_count()
worker_class = os.environ.get("CARDTABLE_WORKER_CLASS", "service.worker.ConnectionThreads")
threads = int(os.environ.get("CARDTABLE_THREADS", "4"))  # gthread only
worker_connections = 1000  # open connections (so threads) per worker; beyond it a worker stops accepting
timeout = int(os.environ.get("CARDTABLE_TIMEOUT", "60"))  # > AI_MAX_TIME_MS + AI_REQUEST_BUDGET_MS
graceful_timeout = 30
keepalive = 5
max_requests = int(os.environ.get("CARDTABLE_MAX_REQUESTS", "20000"))  # recycle workers now and then
max_requests_jitter = max_requests // 10
accesslog = None  # the app logs one JSON line per request itself
# gunicorn's control socket (for gunicornc) defaults to one path per user ($HOME/.gunicorn/gunicorn.ctl), shared
# by every gunicorn of that user: stopping one removed it for the others. Off, unless CARDTABLE_CONTROL_SOCKET
# names a socket of this server's own.
control_socket = os.environ.get("CARDTABLE_CONTROL_SOCKET", "")
control_socket_disable = not control_socket


class AppLogsRequests(Logger):
    """gunicorn's logger without its access log unless ``accesslog`` is set: the app logs each request.

    gunicorn turns its access log on whenever ``logconfig_dict`` is given, which logged every request a
    second time (and built that line: a tenth of the CPU of a ``/healthz``)."""

    def access(self, resp: Any, req: Any, environ: Any, request_time: Any) -> None:
        if self.cfg.accesslog:
            super().access(resp, req, environ, request_time)


logger_class = AppLogsRequests
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# gunicorn's own messages (boot, worker exits) as JSON lines too, like the app's
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "service.extensions.JsonFormatter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
        "error_console": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"},
    },
    "root": {"level": loglevel.upper(), "handlers": ["console"]},
    "loggers": {
        "gunicorn.error": {"handlers": ["error_console"], "level": loglevel.upper(), "propagate": False},
        "gunicorn.access": {"handlers": ["console"], "level": loglevel.upper(), "propagate": False},
    },
}

_own_metrics_dir = None
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _own_metrics_dir = tempfile.mkdtemp(prefix="cardtable-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _own_metrics_dir


def child_exit(server: Any, worker: Any) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server: Any) -> None:
    if _own_metrics_dir:
        shutil.rmtree(_own_metrics_dir, ignore_errors=True)
