"""The ``cardtable`` command.

* ``cardtable games`` (also with no arguments): list the registered games.
* ``cardtable serve [--host H] [--port P] [--workers N]``: run the API under gunicorn with
  ``service/gunicorn.conf.py`` (flags > ``CARDTABLE_BIND`` > 127.0.0.1:8000); with ``REDIS_URL`` unset an
  embedded Redis (:mod:`service.embedded_redis`) is started first for this server alone, shared by its
  workers, and stopped when the server stops.
* ``cardtable play`` (the terminal game, :mod:`cli.play`), ``cardtable simulate`` (tournaments,
  :mod:`cli.simulate`) and ``cardtable state`` (a state blob or a view for the stateless endpoints,
  :mod:`cli.state`).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from cli import play, simulate, state

SERVICE = Path(__file__).resolve().parent.parent / "service"


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
    cmd = [sys.executable, "-m", "gunicorn", "-c", str(SERVICE / "gunicorn.conf.py"), "service.app:create_app()"]
    try:
        proc = subprocess.Popen(cmd, env=env)
        # let gunicorn's master handle Ctrl-C / TERM; forward TERM so `docker stop` works
        signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.terminate()
            return proc.wait()
    finally:
        if embedded is not None:
            embedded.close()  # after gunicorn: the workers' last requests still reach Redis


SERVE_DESCRIPTION = """\
Run the REST API (and the browser client at /play) under gunicorn, with service/gunicorn.conf.py.

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
             "  CARDTABLE_TIMEOUT          seconds before a silent worker is restarted (60)",
             "  CARDTABLE_MAX_REQUESTS     requests before a worker is recycled (20000)",
             "  CARDTABLE_ACTIVE_REQUESTS  requests a worker runs at once (6; 0: no limit)",
             "  CARDTABLE_WORKER_CLASS     gunicorn worker class (service.worker.ConnectionThreads)",
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
    srv.set_defaults(func=serve)
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
