"""Live servers a test starts, owns and stops by the pid it recorded: gunicorn with service/gunicorn.conf.py,
and nginx with deploy/nginx.conf (its own prefix, port and upstream)."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.harness import wait_port
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
NGINX_CONF = ROOT / "deploy" / "nginx.conf"


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 30) -> None:
    try:
        wait_port(port, proc, timeout)
    except RuntimeError:
        raise AssertionError(f"no server on port {port}:\n{log.read_text()[-3000:]}") from None


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes


def http_get(port: int, path: str, timeout: float = 5.0) -> Answer:
    """A one-shot HTTP/1.1 GET over a fresh connection."""
    return raw_request(port, f"GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n".encode(), timeout)


def raw_request(port: int, data: bytes, timeout: float = 5.0) -> Answer:
    """Send ``data`` as it is and read the answer (until its Content-Length, or until the server closes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        raw = b""
        while not _complete(raw):
            chunk = s.recv(65536)
            if not chunk:
                break
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Answer(int(lines[0].split(" ", 2)[1]), headers, body)


def _complete(raw: bytes) -> bool:
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return False
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return match is not None and len(body) >= int(match.group(1))


class Gunicorn:
    """``gunicorn -c service/gunicorn.conf.py`` on a free port (its log in ``tmp``)."""

    def __init__(self, redis_url: str, tmp: Path, workers: int = 2, **env: str) -> None:
        self.port = free_port()
        self.tmp = tmp
        environ = dict(os.environ, REDIS_URL=redis_url, CARDTABLE_BIND=f"127.0.0.1:{self.port}",
                       CARDTABLE_WORKERS=str(workers), PROMETHEUS_MULTIPROC_DIR=str(tmp), PYTHONPATH=str(ROOT),
                       LOG_LEVEL="warning", REQUEST_LOG="false", **env)
        self.log_path = tmp / f"gunicorn-{self.port}.log"
        self.log = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", str(ROOT / "service/gunicorn.conf.py"),
                                      "service.app:create_app()"], env=environ, cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        wait_for_port(self.port, self.proc, self.log_path)
        deadline = time.monotonic() + 60
        while not self._ready():  # the workers import the app after the port opens: slow on a busy machine
            assert time.monotonic() < deadline, self.log_path.read_text()
            time.sleep(0.1)

    def _ready(self) -> bool:
        try:
            return http_get(self.port, "/readyz").status == 200
        except OSError:  # a timeout, or a reset while a worker boots
            return False

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.log.close()
        return code


class Nginx:
    """nginx with deploy/nginx.conf, its ``listen`` and upstream ``server`` set to this test's ports, in a
    prefix of its own (``-p``), in the foreground (``daemon off``): the test owns the master's pid."""

    def __init__(self, upstream_port: int, prefix: Path, binary: str) -> None:
        self.port = free_port()
        self.prefix = prefix
        for sub in ("logs", "tmp", "html"):
            (prefix / sub).mkdir(parents=True, exist_ok=True)
        conf = NGINX_CONF.read_text()
        user = pwd.getpwuid(os.geteuid()).pw_name
        for old, new in (("user www-data;", f"user {user};" if os.geteuid() == 0 else ""),
                         ("listen 8080;", f"listen 127.0.0.1:{self.port};"),
                         ("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream_port};")):
            assert conf.count(old) == 1, f"deploy/nginx.conf no longer has exactly one {old!r}"
            conf = conf.replace(old, new)
        self.conf_path = prefix / "nginx.conf"
        self.conf_path.write_text("daemon off;\n" + conf)
        self.log_path = prefix / "logs" / "error.log"
        self.log_path.touch()
        self.proc = subprocess.Popen([binary, "-p", str(prefix), "-c", str(self.conf_path), "-e", str(self.log_path)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc, self.log_path)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # nginx's fast shutdown; the workers are its children
        try:
            return self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
