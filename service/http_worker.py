"""The HTTP worker: gunicorn's gevent worker that takes no more than its share of the open connections.

gunicorn's workers share one listening socket, and each accepts whatever connection it is woken for. Clients that
keep their connections alive (apps, bots, a proxy's upstream pool) open them in bursts, so one worker often ends
up with most of them: with two workers, 32 of 32, 31 of 32 and 27 of 32 were seen. The busy worker then sets the
pace of every client it holds while the other idles (``bench/api_load.py``, 2 cores: legal-moves 2,400-3,100
req/s in the phases with all 32 connections on one worker, 4,200-4,900 when they were split).

So the workers keep a **ledger** in shared memory, one slot per live worker: its open connections and when it
last wrote them. A worker stops accepting while it holds more than ``SLACK`` connections above the least loaded
live worker; it starts again when one of its connections closes, or when the others have caught up (checked
every ``CHECK_EVERY`` seconds). A worker whose slot is older than ``STALE_AFTER`` (stuck, or gone) does not
count, so no connection waits on it. Everything else is the stock ``gevent`` worker's: a greenlet per
connection, up to ``worker_connections`` of them.

Connections already open stay where they are, and a worker that starts (at boot, or in place of a recycled
one) has none: the others took them all meanwhile. So a worker that holds more than ``SHED_ABOVE`` connections
above the least loaded live worker answers its next request with ``Connection: close`` (the response is whole;
the client opens a new connection, which the others accept), until the spread is back within bounds. An open
event stream or long poll is never cut: only a request that ends is answered that way.

A worker told to stop (a restart, or recycled after ``max_requests``) leaves the ledger as it stops accepting, so
that the others do not hold back for the connections it is finishing, ends its open event streams
(:func:`service.live.drain_all`: their clients resume on another worker with ``Last-Event-ID``) and closes each
connection after its current answer. (Otherwise a stream would stay until the graceful timeout, 30 s, counted
all the while, and the other workers would stop accepting at one connection above the stopping one.)

The ledger is made in the arbiter when this module is imported (gunicorn loads the worker class there, before
it forks the workers); each worker claims a free slot when it starts. This subclass overrides the stock
worker's ``run`` (the server set-up and the graceful stop are the same as gunicorn 27's): gunicorn is pinned
to that series in ``pyproject.toml``. It also answers redis-py's zero-timeout readiness checks with the
operating system's ``poll`` (:func:`_os_poll_for_zero_timeouts`).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import time
from typing import Any

import gevent
from gevent.pool import Pool
from gevent.server import StreamServer
from gunicorn.sock import ssl_context
from gunicorn.workers.ggevent import GeventWorker

from service import live

SLOTS = 64  # workers that can hold a slot at once (more than any machine runs)
SLACK = 1  # connections a worker may hold above the least loaded live worker and still accept more
SHED_ABOVE = 4  # above the least loaded live worker by more than this, a worker closes connections (see above)
CHECK_EVERY = 0.02  # seconds between two looks at the ledger while not accepting
STALE_AFTER = 1.0  # a slot not written for this long belongs to a worker that is stuck or gone


class Ledger:
    """Open connections per worker, in memory shared by every worker of one arbiter."""

    def __init__(self, slots: int = SLOTS) -> None:
        self.counts = multiprocessing.RawArray(ctypes.c_int, slots)
        self.stamps = multiprocessing.RawArray(ctypes.c_double, slots)  # time.monotonic() of the last write
        self.lock = multiprocessing.Lock()  # only to claim a slot

    def claim(self) -> int:
        """A free slot (never written, or stale) for the calling worker."""
        with self.lock:
            now = time.monotonic()
            for slot in range(len(self.stamps)):
                if now - self.stamps[slot] > STALE_AFTER:
                    self.write(slot, 0)
                    return slot
        raise RuntimeError(f"no free slot in the connection ledger ({len(self.stamps)} workers)")

    def write(self, slot: int, count: int) -> None:
        self.counts[slot] = count
        self.stamps[slot] = time.monotonic()

    def release(self, slot: int) -> None:
        self.counts[slot] = 0
        self.stamps[slot] = 0.0

    def excess(self, slot: int) -> int:
        """How many connections ``slot`` holds above the least loaded other live worker (0 if none is live)."""
        now = time.monotonic()
        counts, stamps = self.counts[:], self.stamps[:]
        live = [n for i, (n, t) in enumerate(zip(counts, stamps, strict=True)) if i != slot and now - t <= STALE_AFTER]
        return counts[slot] - min(live) if live else 0

    def over_share(self, slot: int) -> bool:
        """Whether ``slot`` holds more than ``SLACK`` connections above the least loaded live worker."""
        return self.excess(slot) > SLACK


LEDGER = Ledger()


class BalancedPool(Pool):
    """A worker's greenlets, one per open connection: "full" while the worker holds more than its share."""

    def __init__(self, size: int, ledger: Ledger, slot: int) -> None:
        super().__init__(size)
        self.ledger, self.slot = ledger, slot  # slot -1: the worker has left the ledger (it is stopping)

    def add(self, greenlet: Any, *args: Any, **kwargs: Any) -> None:
        super().add(greenlet, *args, **kwargs)
        if self.slot >= 0:
            self.ledger.write(self.slot, len(self))

    def _discard(self, greenlet: Any) -> None:  # every greenlet that ends, and every discard(), comes here
        super()._discard(greenlet)
        if self.slot >= 0:
            self.ledger.write(self.slot, len(self))

    def full(self) -> bool:
        return bool(super().full()) or (self.slot >= 0 and self.ledger.over_share(self.slot))


def _os_poll_for_zero_timeouts() -> None:
    """redis-py asks, before every command, whether the pooled connection holds unread data: ``poll()`` with
    a zero timeout (``redis._parsers.hiredis._socket_can_read``). Under gevent that is gevent's ``poll``,
    which starts a watcher for the socket and goes round the event loop even with a zero timeout (4 % of a
    worker's samples during the moves of ``bench/api_load.py``). A zero timeout never blocks, so the operating
    system's ``poll`` answers it here; a wait (pub/sub, a timeout above zero) still goes through gevent's. If
    redis-py no longer has that function, nothing is changed."""
    import select

    from gevent import monkey
    from redis._parsers import hiredis as parser

    checked = getattr(parser, "_socket_can_read", None)
    if checked is None or getattr(checked, "zero_timeouts_on_os_poll", False):
        return
    os_poll = monkey.get_original("select", "poll")

    def can_read(sock: Any, timeout: float | None) -> bool:
        if timeout != 0 or (hasattr(sock, "pending") and sock.pending()):
            return bool(checked(sock, timeout))
        poller = os_poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))

    can_read.zero_timeouts_on_os_poll = True  # type: ignore[attr-defined]
    parser._socket_can_read = can_read


class BalancedGeventWorker(GeventWorker):
    """gunicorn's ``gevent`` worker with the shared connection ledger (see the module docstring)."""

    slot = -1  # this worker's slot in the ledger, from run()

    def run(self) -> None:
        _os_poll_for_zero_timeouts()
        slot = self.slot = LEDGER.claim()
        ssl_args = {"ssl_context": ssl_context(self.cfg)} if self.cfg.is_ssl else {}
        servers = []
        for s in self.sockets:
            s.setblocking(1)
            pool = BalancedPool(self.worker_connections, LEDGER, slot)
            server = StreamServer(s, handle=lambda client, addr, s=s: self.handle(s, client, addr),
                                  spawn=pool, **ssl_args)
            server.max_accept = 1
            server.start()
            servers.append(server)
        watcher = gevent.spawn(self._rebalance, servers, slot)
        try:
            self._serve(servers, watcher)
        finally:
            self._leave_ledger(servers, watcher)

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> Any:
        if self.slot >= 0 and LEDGER.excess(self.slot) > SHED_ABOVE:
            req.must_close = True  # answered with Connection: close (gunicorn's request flag for it)
        handled = super().handle_request(listener_name, req, sock, addr)
        if not self.alive:  # stopping: the connection closes after this answer (an event stream drained)
            raise StopIteration
        return handled

    def _rebalance(self, servers: list[Any], slot: int) -> None:
        """Keep the slot fresh; start accepting again once this worker is no longer over its share."""
        while True:
            LEDGER.write(slot, sum(len(server.pool) for server in servers))
            if not LEDGER.over_share(slot):
                for server in servers:
                    if not server.closed and not server.pool.full():
                        server.start_accepting()  # a no-op while it accepts
            gevent.sleep(CHECK_EVERY)

    def _leave_ledger(self, servers: list[Any], watcher: Any) -> None:
        """No longer counted by the others (this worker accepts nothing more): while it finishes its open
        connections, the others must not hold back for it."""
        if self.slot < 0:
            return
        watcher.kill()
        for server in servers:
            server.pool.slot = -1
        LEDGER.release(self.slot)
        self.slot = -1

    def _serve(self, servers: list[Any], watcher: Any) -> None:
        """Heartbeat until told to stop; then stop accepting, leave the ledger, end the open event streams
        (:func:`service.live.drain_all`: their clients resume elsewhere with ``Last-Event-ID``), and finish the
        open connections within the graceful timeout."""
        while self.alive:
            self.notify()
            gevent.sleep(1.0)
        for server in servers:
            server.close()  # stop accepting
        self._leave_ledger(servers, watcher)
        live.drain_all()
        started = time.time()
        while time.time() - started <= self.cfg.graceful_timeout:
            if all(server.pool.free_count() == server.pool.size for server in servers):
                return
            self.notify()
            gevent.sleep(0.2)
        self.log.warning("Worker graceful timeout (pid:%s)", self.pid)
        for server in servers:
            server.stop(timeout=1)
