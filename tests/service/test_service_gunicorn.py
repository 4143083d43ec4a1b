"""The API as ``cardtable serve`` runs it: gunicorn's gevent worker (with its connection ledger) and
service/gunicorn.conf.py, on a real Redis. Slow clients are cut off at the header-read deadline; open event
streams and long polls pin nothing scarce (a single worker keeps answering while hundreds are open)."""

from __future__ import annotations

import contextlib
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

from tests.servers import RedisServer, free_port, pythonpath_env

ROOT = Path(__file__).resolve().parents[2]


class Gunicorn:
    """gunicorn with service/gunicorn.conf.py (the process this test started, and only it, is signalled)."""

    def __init__(self, redis_url: str, tmp: Path, **env: str) -> None:
        self.port = free_port()
        environ = {**pythonpath_env(), "REDIS_URL": redis_url, "CARDTABLE_BIND": f"127.0.0.1:{self.port}",
                   "PROMETHEUS_MULTIPROC_DIR": str(tmp), "LOG_LEVEL": "warning", "REQUEST_LOG": "0", **env}
        self.proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "service/gunicorn.conf.py"),
                                      "service.app:create_app()"], env=environ, cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.get("/readyz")[0] == 200:
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("gunicorn did not come up")
            time.sleep(0.1)

    def get(self, path: str, timeout: float = 10) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("GET", path)
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def post(self, path: str, body: Any) -> Any:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
            return json.loads(conn.getresponse().read())
        finally:
            conn.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    server = RedisServer().start()
    yield server.url
    server.cleanup()


def healthz_time(server: Gunicorn) -> float:
    started = time.monotonic()
    status, _ = server.get("/healthz", timeout=5)
    assert status == 200
    return time.monotonic() - started


def test_a_client_dribbling_its_headers_is_cut_off_at_the_deadline(redis_url: str, tmp_path: Path) -> None:
    server = Gunicorn(redis_url, tmp_path, CARDTABLE_WORKERS="1", CARDTABLE_HEADER_TIMEOUT="2")
    slow: list[socket.socket] = []
    try:
        for _ in range(200):  # many slow clients at once: each holds a greenlet, none holds the worker
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        started = time.monotonic()
        for _ in range(8):  # a header line every half second: never idle, but never done
            assert healthz_time(server) < 1.0
            for s in slow:
                with contextlib.suppress(OSError):  # closed already
                    s.sendall(b"X-Slow: 1\r\n")
            time.sleep(0.5)
        # the whole head had 2 s: every slow connection was closed, whatever it kept sending
        closed = 0
        for s in slow:
            s.settimeout(5)
            try:
                closed += s.recv(100) == b""
            except (ConnectionResetError, BrokenPipeError):
                closed += 1
        assert closed == len(slow) and time.monotonic() - started < 10
    finally:
        for s in slow:
            s.close()
        server.stop()


def test_open_streams_and_long_polls_pin_nothing(redis_url: str, tmp_path: Path) -> None:
    server = Gunicorn(redis_url, tmp_path, CARDTABLE_WORKERS="1")
    held: list[socket.socket] = []
    try:
        mid = server.post("/v1/matches", {"game": "threezies", "players": [{}, {}], "seed": 1})["match_id"]
        for i in range(300):  # one worker; 150 event streams and 150 long polls stay open
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            path = f"/v1/matches/{mid}/events" if i % 2 else f"/v1/matches/{mid}?since=0&wait=30"
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            held.append(s)
        time.sleep(1.0)
        times = sorted(healthz_time(server) for _ in range(20))
        assert times[len(times) // 2] < 0.2 and times[-1] < 1.0, times
        status, body = server.get(f"/v1/matches/{mid}")
        assert status == 200 and json.loads(body)["version"] == 0
        # the streams are live: each got its first event
        streams = held[1::2]
        for s in streams[:20]:
            s.settimeout(5)
            got = b""
            while b"event: view" not in got:
                chunk = s.recv(65536)
                assert chunk, got
                got += chunk
    finally:
        for s in held:
            s.close()
        server.stop()


def test_a_worker_that_has_loaded_the_app_leaves_it_out_of_the_collector(tmp_path: Path) -> None:
    """gunicorn.conf.py's post_worker_init freezes what the worker holds once the app is loaded (full
    collections no longer walk it: they took 25-36 ms each under load)."""
    script = ("import gc, runpy; conf = runpy.run_path('service/gunicorn.conf.py'); "
              "before = gc.get_freeze_count(); conf['post_worker_init'](None); print(before, gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}).stdout.split()
    assert int(out[0]) == 0 and int(out[1]) > 1000, out
