"""gunicorn settings for the cardtable API (``cardtable serve`` uses this file).

No AI search runs in these processes (AI jobs go to the AI workers, :mod:`service.aitier.worker`): every
request is short, or waits on Redis (a long poll, an event stream, a hint awaiting its job). So each worker is
gunicorn's ``gevent`` worker: a greenlet per connection, cheap enough that an open event stream or a long poll
pins nothing scarce (up to ``worker_connections`` per worker), where a thread per request would (``gthread``:
``CARDTABLE_THREADS`` streams would stall a worker). One addition (:mod:`service.http_worker`): the workers keep
a shared ledger of their open connections, so that none takes more than its share of the kept-alive ones.
``bench/api_load.py`` measures the worker classes against each other (``--worker-class``).

**A header-read deadline of its own.** gunicorn's async workers read each request's line and headers under a
deadline of ``keepalive`` seconds, for the whole head, not between bytes (a client that sends a header line
every second is cut off all the same), and a kept-alive connection that sends nothing for that long is closed:
``CARDTABLE_HEADER_TIMEOUT`` (default 5 s). The reference deployment also sits behind nginx (``deploy/``).

Environment: ``CARDTABLE_BIND``, ``CARDTABLE_WORKERS`` (default: one per core), ``CARDTABLE_WORKER_CLASS``
(``service.http_worker.BalancedGeventWorker``; the stock ``gevent``, or ``gthread`` with ``CARDTABLE_THREADS``,
also work), ``CARDTABLE_CONNECTIONS`` (per worker),
``CARDTABLE_HEADER_TIMEOUT``, ``CARDTABLE_TIMEOUT``, ``CARDTABLE_MAX_REQUESTS``, ``CARDTABLE_CONTROL_SOCKET``.

Metrics: with several workers, prometheus-client runs in multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``,
created here when unset) so ``/metrics`` sums every worker (and the AI workers ``cardtable serve`` starts).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import tempfile
from typing import Any

from gunicorn.glogging import Logger

bind = os.environ.get("CARDTABLE_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("CARDTABLE_WORKERS", "0")) or multiprocessing.cpu_count()
worker_class = os.environ.get("CARDTABLE_WORKER_CLASS", "service.http_worker.BalancedGeventWorker")
threads = int(os.environ.get("CARDTABLE_THREADS", "4"))  # gthread only
worker_connections = int(os.environ.get("CARDTABLE_CONNECTIONS", "1000"))  # open connections per worker
keepalive = int(os.environ.get("CARDTABLE_HEADER_TIMEOUT", "5"))  # the deadline for a request's head (see above)
timeout = int(os.environ.get("CARDTABLE_TIMEOUT", "30"))  # a worker silent this long is restarted
graceful_timeout = 30
max_requests = int(os.environ.get("CARDTABLE_MAX_REQUESTS", "20000"))  # recycle workers now and then
max_requests_jitter = max_requests // 10
limit_request_line = 8190
limit_request_fields = 100
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
# the JSON log lines (service.extensions.JsonFormatter) name no thread or process: not looked up for every record
logging.logThreads = False
logging.logProcesses = False
logging.logMultiprocessing = False
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


def post_worker_init(worker: Any) -> None:
    """Once a worker has loaded the app: what exists now (modules, the app, the engine's tables) lives as long
    as the worker, so the garbage collector stops scanning it. Each full collection used to walk all of it,
    25-36 ms every few seconds under load, with every request of that worker waiting (``bench/api_load.py``:
    POST moves p99 26-31 ms before, 20-22 after)."""
    import gc

    gc.freeze()
