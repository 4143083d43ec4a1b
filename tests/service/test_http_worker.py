"""The HTTP worker's connection ledger (service/http_worker.py): its arithmetic, and two gunicorn workers that
split a burst of kept-alive connections evenly."""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import time
from pathlib import Path

import pytest

from bench.harness import open_connections_by_worker, worker_pids
from service.http_worker import SHED_ABOVE, SLACK, STALE_AFTER, Ledger
from tests.servers import RedisServer
from tests.service.live import Gunicorn, raw_request


def test_each_worker_claims_its_own_slot_and_a_released_one_is_claimed_again() -> None:
    ledger = Ledger(4)
    slots = [ledger.claim() for _ in range(4)]
    assert sorted(slots) == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="no free slot"):
        ledger.claim()
    ledger.release(2)
    assert ledger.claim() == 2


def test_a_worker_is_over_its_share_only_against_live_workers() -> None:
    ledger = Ledger(4)
    a, b = ledger.claim(), ledger.claim()
    ledger.write(a, 10)
    assert ledger.excess(a) == 10 and ledger.over_share(a)  # b is live and holds none
    assert ledger.excess(b) == -10 and not ledger.over_share(b)
    ledger.write(b, 10 - SLACK)
    assert ledger.excess(a) == SLACK and not ledger.over_share(a)  # within the slack: a accepts
    ledger.stamps[b] = time.monotonic() - STALE_AFTER - 1  # b stuck (or gone): it does not count
    assert ledger.excess(a) == 0 and not ledger.over_share(a)


def test_a_lone_worker_is_never_over_its_share() -> None:
    ledger = Ledger(4)
    a = ledger.claim()
    ledger.write(a, 1000)
    assert ledger.excess(a) == 0 and not ledger.over_share(a)


def healthz(conn: socket.socket) -> bytes:
    """One ``GET /healthz`` on a kept-alive connection: the answer's head (its body read and dropped)."""
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
    raw = b""
    while b"\r\n\r\n" not in raw:
        chunk = conn.recv(65536)
        assert chunk, f"the connection closed before a whole answer: {raw!r}"
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = int(next(line.split(b":")[1] for line in lines if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += conn.recv(65536)
    assert head.startswith(b"HTTP/1.1 200"), head
    return head + b"\r\n"


def test_two_workers_split_a_burst_of_kept_alive_connections(redis_server: RedisServer, tmp_path: Path) -> None:
    server = Gunicorn(redis_server.url, tmp_path, 2)
    try:
        pids = worker_pids(server.proc.pid, 2)
        assert len(pids) == 2
        time.sleep(2)  # both workers have loaded the app (the first /readyz may come from one of them)
        for _ in range(3):
            conns = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(32)]
            try:
                for c in conns:
                    assert b"Connection: close" not in healthz(c)  # each stays open (kept alive)
                split = open_connections_by_worker(pids, server.port)
                assert sum(split.values()) == 32, split
                assert max(split.values()) - min(split.values()) <= SLACK + 2, split
                assert SHED_ABOVE > SLACK + 2  # so this split never sheds: all 32 stayed open
            finally:
                for c in conns:
                    c.close()
            time.sleep(0.3)
    finally:
        assert server.stop() == 0, server.log_path.read_text()[-3000:]


def test_a_worker_holding_too_many_connections_closes_some_after_their_answers(redis_server: RedisServer,
                                                                                 tmp_path: Path) -> None:
    """One worker is paused (SIGSTOP: it stops writing the ledger) while 32 connections open, so the other
    takes them all; once it resumes, the busy one answers with ``Connection: close`` until the spread is
    within bounds, and the clients' new connections go to the one that resumed."""
    server = Gunicorn(redis_server.url, tmp_path, 2)
    paused: int | None = None
    try:
        pids = worker_pids(server.proc.pid, 2)  # the children of the master this test started
        assert len(pids) == 2
        time.sleep(2)  # both workers have loaded the app
        paused = pids[1]
        os.kill(paused, signal.SIGSTOP)
        time.sleep(STALE_AFTER + 0.5)
        conns = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(32)]
        for c in conns:
            healthz(c)
        assert open_connections_by_worker(pids, server.port)[pids[0]] == 32
        os.kill(paused, signal.SIGCONT)
        paused = None
        time.sleep(0.5)
        closed = 0
        for _ in range(5):  # rounds of one request per connection; a closed one is opened again
            for i, c in enumerate(conns):
                if b"\r\nConnection: close\r\n" in healthz(c):
                    closed += 1
                    c.close()
                    conns[i] = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        split = open_connections_by_worker(pids, server.port)
        assert sum(split.values()) == 32, split
        assert abs(split[pids[0]] - split[pids[1]]) <= SHED_ABOVE + SLACK + 1, (split, closed)
        assert closed >= (32 - SHED_ABOVE) // 2 - SLACK, closed
        for c in conns:
            c.close()
    finally:
        if paused is not None:
            os.kill(paused, signal.SIGCONT)
        assert server.stop() == 0, server.log_path.read_text()[-3000:]


def test_zero_timeout_readiness_checks_of_redis_connections_are_answered_without_waiting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from redis._parsers import hiredis as parser

    from service.http_worker import _os_poll_for_zero_timeouts

    monkeypatch.setattr(parser, "_socket_can_read", parser._socket_can_read)  # put back after the test
    _os_poll_for_zero_timeouts()
    _os_poll_for_zero_timeouts()  # a second call changes nothing
    can_read = parser._socket_can_read
    assert getattr(can_read, "zero_timeouts_on_os_poll", False)
    a, b = socket.socketpair()
    try:
        assert not can_read(a, 0)  # nothing to read
        started = time.monotonic()
        assert not can_read(a, 0.05)  # a wait goes through the original check (and waits)
        assert time.monotonic() - started >= 0.04
        b.sendall(b"+PONG\r\n")
        assert can_read(a, 0) and can_read(a, 0.05)
        assert a.recv(16) == b"+PONG\r\n"  # only looked at, not read
        b.close()
        assert can_read(a, 0)  # a closed peer reads as ready, as before (redis-py then reconnects)
    finally:
        a.close()


def open_stream(port: int, match_id: str) -> socket.socket:
    """An event stream of ``match_id`` (as a spectator), read up to its first event."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    conn.sendall(f"GET /v1/matches/{match_id}/events HTTP/1.1\r\nHost: test\r\n\r\n".encode())
    raw = b""
    while b"event: view" not in raw:
        chunk = conn.recv(65536)
        assert chunk, raw
        raw += chunk
    assert raw.startswith(b"HTTP/1.1 200"), raw[:200]
    return conn


def ended_within(conns: list[socket.socket], seconds: float) -> int:
    """How many of ``conns`` the server ends (EOF) within ``seconds`` (what it sends meanwhile is dropped)."""
    ended = 0
    with selectors.DefaultSelector() as selector:
        for c in conns:
            selector.register(c, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while selector.get_map() and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(left):
                if not key.fileobj.recv(65536):  # type: ignore[union-attr]
                    selector.unregister(key.fileobj)
                    ended += 1
    return ended


def test_a_stopping_worker_ends_its_event_streams_and_the_other_keeps_accepting(redis_server: RedisServer,
                                                                               tmp_path: Path) -> None:
    """A worker told to stop (SIGTERM: gunicorn's graceful stop, as when it is recycled) leaves the ledger at
    once, so the other one does not hold back for it, and ends its open event streams (their clients resume
    elsewhere with Last-Event-ID) instead of keeping them until the graceful timeout (30 s)."""
    server = Gunicorn(redis_server.url, tmp_path, 2)
    streams: list[socket.socket] = []
    try:
        pids = worker_pids(server.proc.pid, 2)  # the children of the master this test started
        assert len(pids) == 2
        time.sleep(2)  # both workers have loaded the app
        body = b'{"game": "three-thirteen", "players": [{}, {}], "seed": 3}'
        created = raw_request(server.port, b"POST /v1/matches HTTP/1.1\r\nHost: test\r\nContent-Type: "
                              b"application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body), 10)
        assert created.status == 201, created
        match_id = json.loads(created.body)["match_id"]
        streams = [open_stream(server.port, match_id) for _ in range(8)]
        split = open_connections_by_worker(pids, server.port)
        stopping = max(pids, key=lambda pid: split[pid])
        held = split[stopping]
        assert held >= 3, split  # the ledger split them (4/4 or so)
        started = time.monotonic()
        os.kill(stopping, signal.SIGTERM)
        ended = ended_within(streams, 3.0)
        assert ended == held, (ended, split)  # its streams ended, the other's go on
        # meanwhile the other worker accepts every new connection, though it holds more streams than the
        # stopping one now
        fresh = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(12)]
        for c in fresh:
            healthz(c)
            c.close()
        deadline = started + 10
        while os.path.exists(f"/proc/{stopping}") and time.monotonic() < deadline:
            time.sleep(0.1)  # it exits (and the master reaps it) long before the graceful timeout
        assert not os.path.exists(f"/proc/{stopping}"), "the stopping worker was still there after 10 s"
    finally:
        for s in streams:
            s.close()
        assert server.stop() == 0, server.log_path.read_text()[-3000:]


def test_a_pool_whose_worker_left_the_ledger_writes_nothing_and_is_full_only_when_full() -> None:
    import gevent

    from service.http_worker import BalancedPool

    ledger = Ledger(4)
    a, b = ledger.claim(), ledger.claim()
    pool = BalancedPool(10, ledger, a)
    ledger.write(b, 0)
    first = pool.spawn(gevent.sleep, 0.05)
    second = pool.spawn(gevent.sleep, 0.05)
    assert ledger.counts[a] == 2 and pool.full()  # 2 above b, which holds none
    pool.slot = -1  # what a stopping worker does before it releases its slot
    ledger.release(a)
    third = pool.spawn(gevent.sleep, 0.05)
    assert ledger.counts[a] == 0 and not pool.full() and ledger.excess(b) == 0  # a no longer counts
    gevent.joinall([first, second, third])
    assert ledger.counts[a] == 0 and ledger.stamps[a] == 0.0
