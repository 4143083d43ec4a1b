"""The gunicorn worker of service/worker.py, run by gunicorn with service/gunicorn.conf.py on a real Redis:
kept-alive connections, connections spread over the workers, a slow request that holds up only its own
connection, worker recycling, and the shared ledger of open connections."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.worker import Ledger
from tests.servers import RedisServer, free_port

ROOT = Path(__file__).resolve().parents[2]


class Gunicorn:
    def __init__(self, redis_url: str, tmp: Path, workers: int, **env: str) -> None:
        self.port = free_port()
        environ = dict(os.environ, REDIS_URL=redis_url, CARDTABLE_BIND=f"127.0.0.1:{self.port}",
                       CARDTABLE_WORKERS=str(workers), PROMETHEUS_MULTIPROC_DIR=str(tmp), PYTHONPATH=str(ROOT),
                       LOG_LEVEL="info", **env)
        self.log_path = tmp / "gunicorn.log"
        self.log = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "service/gunicorn.conf.py"),
                                      "service.app:create_app()"], env=environ, cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 30
        while self.log_path.read_text().count("accepting connections") < workers or not self._ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"gunicorn did not come up:\n{self.log_path.read_text()}")
            time.sleep(0.1)

    def _ready(self) -> bool:
        try:
            return self.get(self.connect(), "/readyz")[0] == 200
        except OSError:
            return False

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    @staticmethod
    def get(conn: http.client.HTTPConnection, path: str, **headers: str) -> tuple[int, Any, http.client.HTTPResponse]:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        return r.status, json.loads(r.read()), r

    def workers(self) -> list[int]:
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                    out.append(int(entry))
        return out

    def connections_per_worker(self) -> dict[int, int]:
        """Established connections to our port held by each worker (from /proc: socket inodes)."""
        established = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                lines = Path(table).read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == self.port and fields[3] == "01":
                    established.add(fields[9])
        counts = {}
        for pid in self.workers():
            inodes = set()
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
            counts[pid] = len(inodes & established)
        return counts

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.log.close()
        return code


@pytest.fixture()
def two_workers(redis_server: RedisServer, tmp_path: Path) -> Iterator[Gunicorn]:
    server = Gunicorn(redis_server.url, tmp_path, 2)
    yield server
    assert server.stop() == 0, server.log_path.read_text()


def test_connections_are_kept_alive_and_spread_over_the_workers(two_workers: Gunicorn) -> None:
    conns = [two_workers.connect() for _ in range(16)]
    for conn in conns:  # 16 connections at once, as a load balancer or a busy client opens them
        conn.connect()
    sockets = [c.sock for c in conns]
    for _ in range(3):  # requests on the same connections
        for conn in conns:
            status, body, r = two_workers.get(conn, "/healthz")
            assert status == 200 and body == {"status": "ok"} and r.getheader("Connection") != "close"
    assert [c.sock for c in conns] == sockets
    counts = two_workers.connections_per_worker()
    assert sum(counts.values()) == 16 and len(counts) == 2, counts
    # one worker taking nearly all of them was the rule before the workers balanced (each takes its share;
    # one that is slow to wake on a busy machine may leave a few more to the other)
    assert min(counts.values()) >= 5, counts
    for conn in conns:
        conn.close()


def test_a_slow_request_holds_up_only_its_own_connection(redis_server: RedisServer, tmp_path: Path) -> None:
    server = Gunicorn(redis_server.url, tmp_path, 1)
    try:
        body = json.dumps({"game": "three-thirteen", "players": [{}, {}]}).encode()
        head = (b"POST /v1/matches HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body))
        slow = []
        for _ in range(5):  # more requests under way than a pool of 4 threads serves at once
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(head + body[:10])  # the app waits for the rest of the body
            slow.append(s)
        time.sleep(0.3)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        asked = time.monotonic()
        assert server.get(conn, "/healthz")[0] == 200
        assert time.monotonic() - asked < 1.0
        for s in slow:
            s.sendall(body[10:])
            assert s.recv(64).startswith(b"HTTP/1.1 201 ")
            s.close()
    finally:
        assert server.stop() == 0, server.log_path.read_text()


def test_a_worker_is_recycled_after_max_requests(redis_server: RedisServer, tmp_path: Path) -> None:
    server = Gunicorn(redis_server.url, tmp_path, 1, CARDTABLE_MAX_REQUESTS="5")
    try:
        first = server.workers()
        conn = server.connect()
        statuses = []
        for _ in range(12):
            try:
                statuses.append(server.get(conn, "/healthz")[0])
            except (http.client.HTTPException, OSError):  # the recycled worker closed the connection
                conn.close()
                conn = server.connect()
                statuses.append(server.get(conn, "/healthz")[0])
        assert statuses == [200] * 12
        assert server.workers() != first
    finally:
        assert server.stop() == 0, server.log_path.read_text()


def test_the_ledger_counts_connections_of_live_workers_only() -> None:
    ledger = Ledger(slots=4)
    mine = ledger.claim(os.getpid())
    assert mine is not None and ledger.fewest_elsewhere(mine) is None
    ledger.set(mine, os.getpid(), 5)
    parent = ledger.claim(os.getppid())  # another live process
    assert parent is not None and parent != mine
    ledger.set(parent, os.getppid(), 3)
    assert ledger.fewest_elsewhere(mine) == 3 and ledger.fewest_elsewhere(parent) == 5
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead = int(gone.stdout)
    ledger.set(3, dead, 0)  # a worker that died without releasing its slot
    assert ledger.fewest_elsewhere(mine) == 3  # is not counted
    ledger.release(parent)
    assert ledger.fewest_elsewhere(mine) is None
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        # the released slot, a slot never used, then the dead worker's
        assert [ledger.claim(pid) for pid in (os.getppid(), 1, sleeper.pid)] == [parent, 2, 3]
        assert ledger.claim(sleeper.pid + 1_000_000) is None  # every slot is held by a live process
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_gate_holds_neither_slow_bodies_nor_ai_work(redis_server: RedisServer, tmp_path: Path) -> None:
    """With one admission slot per worker, a client slow to send its body and a long AI hint still leave the
    slot to the other connections (the body is read first; the search steps out of the gate)."""
    server = Gunicorn(redis_server.url, tmp_path, 1, CARDTABLE_ACTIVE_REQUESTS="1")
    try:
        conn = server.connect()
        body = json.dumps({"game": "three-thirteen", "players": [{}, {}], "seed": 5})
        conn.request("POST", "/v1/matches", body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        created = json.loads(r.read())
        assert r.status == 201, created
        mid, token = created["match_id"], created["seats"][created["view"]["to_move"]]["token"]

        head = (b"POST /v1/matches HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body))
        slow = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        slow.sendall(head + body.encode()[:10])  # the rest of the body comes later
        time.sleep(0.3)
        asked = time.monotonic()
        assert server.get(server.connect(), "/v1/games")[0] == 200
        assert time.monotonic() - asked < 1.0

        hint_conn = server.connect()
        hint_conn.request("GET", f"/v1/matches/{mid}/hint?level=5&time_ms=2500",
                          headers={"Authorization": f"Bearer {token}"})
        time.sleep(0.3)  # the search is under way
        asked = time.monotonic()
        assert server.get(server.connect(), "/v1/games")[0] == 200
        assert time.monotonic() - asked < 1.0  # not 2.5 s behind the hint
        hint = hint_conn.getresponse()
        assert hint.status == 200 and "move" in json.loads(hint.read())

        slow.sendall(body.encode()[10:])
        assert slow.recv(64).startswith(b"HTTP/1.1 201 ")
        slow.close()
    finally:
        assert server.stop() == 0, server.log_path.read_text()
