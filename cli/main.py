"""The ``cardtable`` command.

* ``cardtable games`` (also with no arguments): list the registered games.
* ``cardtable serve [--host H] [--port P] [--workers N] [--ai-workers N]``: run the API under gunicorn with
  ``service/gunicorn.conf.py`` (flags > ``CARDTABLE_BIND`` > 127.0.0.1:8000), and AI worker processes beside it
  (one per core by default); with ``REDIS_URL`` unset an embedded Redis (:mod:`service.embedded_redis`) is
  started first for this server alone, shared by its workers, and stopped when the server stops.
* ``cardtable ai-worker``: one AI worker (:mod:`service.aitier.worker`) on the queue of ``REDIS_URL``; run
  any number, on any machine.
* ``cardtable play`` (the terminal game, :mod:`cli.play`), ``cardtable simulate`` (tournaments,
  :mod:`cli.simulate`) and ``cardtable state`` (a state blob or a view for the stateless endpoints,
  :mod:`cli.state`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from cli import play, simulate, state

SERVICE = Path(__file__).resolve().parent.parent / "service"
#: How much lower than the HTTP workers' the CPU priority of the AI workers ``serve`` starts is.
AI_WORKER_NICE = 10


def list_games(args: argparse.Namespace | None = None) -> int:
    from engine.registry import all_games

    for game in all_games():
        print(f"{game.info.id}: {game.info.name} ({game.info.players_text})")
    return 0


DEFAULT_BIND = "127.0.0.1:8000"


def resolve_bind(host: str | None, port: int | None, env_bind: str | None) -> str:
    """Where the server listens: ``--host``/``--port`` where given, else ``CARDTABLE_BIND``, else 127.0.0.1:8000.

    A flag overrides only its own half: ``CARDTABLE_BIND=0.0.0.0:9000`` with ``--port 8123`` is 0.0.0.0:8123.
    """
    env_bind = (env_bind or "").strip()
    if host is None and port is None:
        return env_bind or DEFAULT_BIND
    base_host, sep, base_port = env_bind.rpartition(":")
    if not (sep and base_host and base_port.isdigit()):  # unset, or not host:port (e.g. unix:/path)
        base_host, _, base_port = DEFAULT_BIND.rpartition(":")
    if host is not None and ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    return f"{host if host is not None else base_host}:{port if port is not None else base_port}"


def serve(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    bind = resolve_bind(args.host, args.port, env.get("CARDTABLE_BIND"))
    env["CARDTABLE_BIND"] = bind
    embedded = None
    if not env.get("REDIS_URL"):
        from service.embedded_redis import EmbeddedRedis, EmbeddedRedisError, instance_data_dir

        if args.redis_db:
            data_dir, dbfilename = Path(args.redis_db).resolve().parent, Path(args.redis_db).name
        else:
            data_dir, dbfilename = instance_data_dir(bind), "dump.rdb"
        try:
            embedded = EmbeddedRedis(data_dir, dbfilename=dbfilename)
        except EmbeddedRedisError as exc:
            print(f"cardtable serve: {exc}", file=sys.stderr)
            return 1
        env["REDIS_URL"] = embedded.url
        print(f"cardtable: REDIS_URL is not set; embedded Redis at {embedded.url} "
              f"(data in {data_dir / dbfilename})", file=sys.stderr)
    if args.workers:
        env["CARDTABLE_WORKERS"] = str(args.workers)
    own_metrics = None
    if not env.get("PROMETHEUS_MULTIPROC_DIR"):  # the server's and the AI workers' metrics, summed in /metrics
        own_metrics = env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="cardtable-metrics-")
    ai_workers = AiWorkerProcesses(env, args.ai_workers if args.ai_workers is not None else os.cpu_count() or 1)
    cmd = [sys.executable, "-m", "gunicorn", "-c", str(SERVICE / "gunicorn.conf.py"), "service.app:create_app()"]
    try:
        proc = subprocess.Popen(cmd, env=env)
        # let gunicorn's master handle Ctrl-C / TERM; forward TERM so `docker stop` works
        signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
        try:
            while True:
                try:
                    return proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    ai_workers.restart_exited()
        except KeyboardInterrupt:
            proc.terminate()
            return proc.wait()
    finally:
        ai_workers.stop()
        if embedded is not None:
            embedded.close()  # after gunicorn: the workers' last requests still reach Redis
        if own_metrics:
            shutil.rmtree(own_metrics, ignore_errors=True)


class AiWorkerProcesses:
    """The AI worker processes ``serve`` started: only these (by the Popen objects that started them) are ever
    signalled, and one that exits is started again."""

    def __init__(self, env: dict[str, str], count: int) -> None:
        self.env = env
        self.procs: list[subprocess.Popen[bytes]] = [self._start() for _ in range(count)]

    def _start(self) -> subprocess.Popen[bytes]:
        # below the HTTP workers' priority: on a shared core the short requests go first
        return subprocess.Popen([sys.executable, "-m", "cli.main", "ai-worker", "--nice", str(AI_WORKER_NICE)],
                                env=self.env)

    def restart_exited(self) -> None:
        for i, proc in enumerate(self.procs):
            if proc.poll() is not None:
                print(f"cardtable: AI worker {proc.pid} exited ({proc.returncode}); starting another", file=sys.stderr)
                self.procs[i] = self._start()

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()  # the worker finishes the job in hand, then exits
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def ai_worker(args: argparse.Namespace) -> int:
    from service.aitier.worker import main as run_worker
    from service.config import Config

    if args.nice:
        os.nice(args.nice)
    return run_worker(Config.from_env(), name=args.name)


SERVE_DESCRIPTION = """\
Run the REST API (and the browser client at /play) under gunicorn, with service/gunicorn.conf.py, and one
AI worker process per core beside it (--ai-workers N), at a lower CPU priority.

Where it listens: --host/--port where given, else CARDTABLE_BIND, else 127.0.0.1:8000.
With REDIS_URL unset, an embedded Redis server is started for this server alone (its data in a
directory per port under ~/.local/share/cardtable, kept between runs) and stopped when it stops."""


def serve_epilog() -> str:
    from dataclasses import MISSING, fields

    from service.config import Config

    settings = []
    for f in fields(Config):
        default = f.default if f.default is not MISSING else None
        shown = "" if default is None else str(default).lower() if isinstance(default, bool) else str(default)
        settings.append(f"{f.name.upper()}={shown!r}" if " " in shown else f"{f.name.upper()}={shown}")
    lines = ["environment (the server's):",
             "  CARDTABLE_BIND             host:port to listen on (127.0.0.1:8000); --host/--port override it",
             "  CARDTABLE_WORKERS          worker processes (0: one per CPU core)",
             "  CARDTABLE_TIMEOUT          seconds before a silent worker is restarted (30)",
             "  CARDTABLE_MAX_REQUESTS     requests before a worker is recycled (20000)",
             "  CARDTABLE_HEADER_TIMEOUT   seconds a request's whole head may take to arrive, and idle keep-alive (5)",
             "  CARDTABLE_CONNECTIONS      open connections per worker (1000)",
             "  CARDTABLE_WORKER_CLASS     gunicorn worker class (service.http_worker.BalancedGeventWorker)",
             "  CARDTABLE_THREADS          threads per worker with CARDTABLE_WORKER_CLASS=gthread (4)",
             "  PROMETHEUS_MULTIPROC_DIR   metrics directory of the workers (default: a temporary one)",
             "  XDG_DATA_HOME              where the embedded Redis keeps its data (~/.local/share)",
             "",
             "environment (the app's, see service/config.py; shown with their defaults):"]
    line = " "
    for item in settings:
        if len(line) + len(item) + 1 > 100:
            lines.append(line)
            line = " "
        line += " " + item
    lines.append(line)
    lines += ["", "example: CARDTABLE_BIND=127.0.0.1:8123 cardtable serve --workers 2"]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardtable", description="Card games rules engine, AI and REST API")
    sub = parser.add_subparsers(dest="command")
    games = sub.add_parser("games", help="list the registered games")
    games.set_defaults(func=list_games)
    srv = sub.add_parser("serve", help="run the REST API under gunicorn", description=SERVE_DESCRIPTION,
                         epilog=serve_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    srv.add_argument("--host", default=None,
                     help="interface to listen on (default: the host of CARDTABLE_BIND, else 127.0.0.1)")
    srv.add_argument("--port", type=int, default=None,
                     help="port to listen on (default: the port of CARDTABLE_BIND, else 8000)")
    srv.add_argument("--workers", type=int, default=None,
                     help="gunicorn worker processes (default: CARDTABLE_WORKERS, else one per CPU core)")
    srv.add_argument("--redis-db", default=None, metavar="FILE",
                     help="data file of the embedded Redis, when REDIS_URL is unset (default: "
                          "$XDG_DATA_HOME/cardtable/redis-PORT/dump.rdb, i.e. ~/.local/share/cardtable/...)")
    srv.add_argument("--ai-workers", type=int, default=None,
                     help="AI worker processes to start beside the server (default: one per CPU core; 0: none)")
    srv.set_defaults(func=serve)
    worker = sub.add_parser("ai-worker", help="run an AI worker on the queue of REDIS_URL (any number, anywhere)")
    worker.add_argument("--name", default=None, help="the worker's name in the queue (default: host:pid:random)")
    worker.add_argument("--nice", type=int, default=0, help="lower the worker's CPU priority by this much (serve: "
                        f"{AI_WORKER_NICE}, so that requests beside it go first)")
    worker.set_defaults(func=ai_worker)
    for module in (play, simulate, state):
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:  # bare `cardtable`: the games, as before
        return list_games()
    result: int = func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
