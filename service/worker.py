"""A gunicorn worker that serves each connection on a thread of its own, and balances connections across workers.

``service/gunicorn.conf.py`` uses it (``worker_class = "service.worker.ConnectionThreads"``).

Why not gunicorn's ``gthread``: it parks every kept-alive connection in its main thread's poller and hands each
request to a pool thread and back — an ``epoll`` registration, a queue, a pipe wake-up and two GIL handovers per
request, about as much CPU as Flask itself for a short request, and with 4 pool threads four slow (AI) requests
stall every other request of the worker. Here a connection's thread reads a request, runs the app, writes the
answer and reads the next one: nothing else per request. An AI request ties up only its own connection; the
others keep being served (the GIL passes between threads every ``sys.getswitchinterval()`` at worst).

Balance: workers share one listening socket, and whichever worker wakes first takes a new connection — on a
busy machine often one worker takes nearly all of them (30 of 32 kept-alive connections were seen) while the
other idles, which halves the throughput and doubles the latency of the connections it holds. So each worker
publishes its number of open connections in memory the master shares with its workers (:class:`Ledger`), and a
worker that holds more than another leaves a new connection to it for up to :data:`DEFER_SECONDS` before
taking it itself (the other worker may be busy or gone: a connection never waits longer than that).
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import multiprocessing
import os
import selectors
import socket
import ssl
import struct
import threading
import time
from datetime import datetime
from typing import Any

from gunicorn import http, util
from gunicorn import sock as gsock
from gunicorn.http import wsgi
from gunicorn.workers import base

#: How long a worker that holds more connections than another waits for that one to accept a new connection.
DEFER_SECONDS = 0.004
#: Workers the ledger can hold (more workers than this are not balanced against each other).
SLOTS = 64
_SLOT = struct.Struct("=qq")  # pid, open connections


class Ledger:
    """Open connections per worker process, in anonymous shared memory made before the workers fork.

    Each worker claims a slot for its pid (under a lock: workers boot concurrently) and keeps its count there;
    a slot whose process is gone is free again. Reads take no lock: a count read while it changes is at worst
    one connection off, and only steers which worker accepts next."""

    def __init__(self, slots: int = SLOTS) -> None:
        self.slots = slots
        self.memory = mmap.mmap(-1, slots * _SLOT.size)  # MAP_SHARED | MAP_ANONYMOUS: the children see one page
        self.lock = multiprocessing.Lock()

    def claim(self, pid: int) -> int | None:
        with self.lock:
            for slot in range(self.slots):
                owner, _ = _SLOT.unpack_from(self.memory, slot * _SLOT.size)
                if owner == 0 or owner == pid or not _alive(owner):
                    _SLOT.pack_into(self.memory, slot * _SLOT.size, pid, 0)
                    return slot
        return None

    def release(self, slot: int) -> None:
        _SLOT.pack_into(self.memory, slot * _SLOT.size, 0, 0)

    def set(self, slot: int, pid: int, connections: int) -> None:
        _SLOT.pack_into(self.memory, slot * _SLOT.size, pid, connections)

    def fewest_elsewhere(self, slot: int) -> int | None:
        """The fewest open connections of another live worker (``None``: no other worker)."""
        fewest = None
        for other in range(self.slots):
            if other == slot:
                continue
            pid, connections = _SLOT.unpack_from(self.memory, other * _SLOT.size)
            if pid and (fewest is None or connections < fewest) and _alive(pid):
                fewest = connections
        return fewest


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _OneSend:
    """The socket as a response writes to it: the head (status line and headers) is held back and leaves with
    the first body bytes in one send — one system call, one TCP segment and one wake-up of the client for a
    small answer instead of two. Anything else asked of the socket (``sendfile``...) sends the head first."""

    __slots__ = ("head", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.head: bytes | None = b""  # None once the head is out

    def sendall(self, data: bytes) -> None:
        if self.head is None:
            self.sock.sendall(data)
        elif not self.head:
            self.head = bytes(data)  # gunicorn writes the head first, on its own
        else:
            head, self.head = self.head, None
            self.sock.sendall(b"".join((head, data)))

    def flush(self) -> None:
        if self.head:
            self.sock.sendall(self.head)
        self.head = None

    def __getattr__(self, name: str) -> Any:
        self.flush()
        return getattr(self.sock, name)


#: Made when gunicorn's master loads this module (before it forks the workers), so every worker shares it.
LEDGER = Ledger()


class ConnectionThreads(base.Worker):
    """HTTP/1.1 with keep-alive, one thread per open connection (at most ``worker_connections`` of them)."""

    alive: bool

    def init_process(self) -> None:
        self.connections = 0
        self.counter_lock = threading.Lock()
        self.slot: int | None = None  # in the ledger once this worker accepts (not while it loads the app)
        super().init_process()

    # -- the main thread: accept --------------------------------------------------------------------------------

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.PIPE[0], selectors.EVENT_READ)  # signals (gunicorn writes to it) wake us
        for listener in self.sockets:
            listener.setblocking(False)
        self.slot = LEDGER.claim(os.getpid())
        self.log.info("Worker %s accepting connections", os.getpid())
        listening = False
        deferred_since: float | None = None  # when this worker last left a new connection to another
        try:
            while self.alive:
                self.notify()
                now = time.monotonic()
                insist = deferred_since is not None and now - deferred_since >= DEFER_SECONDS
                if insist:
                    deferred_since = None  # still there after the wait: take it whatever the counts
                listen = self.connections < self.cfg.worker_connections and deferred_since is None
                if listen != listening:
                    for listener in self.sockets:
                        if listen:
                            selector.register(listener, selectors.EVENT_READ)
                        else:
                            selector.unregister(listener)
                    listening = listen
                timeout = 1.0 if deferred_since is None else deferred_since + DEFER_SECONDS - now
                for key, _ in selector.select(timeout):
                    if key.fileobj == self.PIPE[0]:
                        with contextlib.suppress(OSError):
                            os.read(self.PIPE[0], 4096)
                    elif not insist and self._another_has_fewer():
                        deferred_since = time.monotonic()  # leave it to that worker for a moment
                        break
                    else:
                        self.accept(key.fileobj)  # type: ignore[arg-type]
                if self.ppid != os.getppid():
                    self.log.info("Parent changed, shutting down: %s", self)
                    break
        finally:
            selector.close()
            self.drain()

    def _another_has_fewer(self) -> bool:
        if self.slot is None:
            return False
        fewest = LEDGER.fewest_elsewhere(self.slot)
        return fewest is not None and fewest < self.connections

    def accept(self, listener: socket.socket) -> None:
        try:
            client, addr = listener.accept()
        except OSError as exc:  # another worker took it, or the client gave up
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.ECONNABORTED):
                return
            raise
        client.setblocking(True)
        util.close_on_exec(client)
        self._count(+1)
        thread = threading.Thread(target=self.serve, args=(listener.getsockname(), client, addr),
                                  name=f"conn-{self.connections}", daemon=True)
        thread.start()

    def _count(self, delta: int) -> None:
        with self.counter_lock:
            self.connections += delta
            if self.slot is not None:
                LEDGER.set(self.slot, os.getpid(), self.connections)

    def drain(self) -> None:
        """Stop: no more connections; the open ones finish their request (a kept-alive one is closed when
        its client sends nothing within ``keepalive`` seconds), within ``graceful_timeout``."""
        for listener in self.sockets:
            with contextlib.suppress(OSError):
                listener.close()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while self.connections > 0 and time.monotonic() < deadline:
            self.notify()
            time.sleep(0.05)
        if self.slot is not None:
            LEDGER.release(self.slot)

    # -- a connection's thread ----------------------------------------------------------------------------------

    def serve(self, server: Any, client: socket.socket, addr: Any) -> None:
        req = None
        try:
            if self.cfg.is_ssl:
                client = gsock.ssl_wrap_socket(client, self.cfg)
            # an idle kept-alive connection (or a client that stalls) is closed after this many seconds
            client.settimeout(self.cfg.keepalive or 5)
            parser = http.RequestParser(self.cfg, client, addr)
            while True:
                req = next(parser)
                if not self.handle_request(server, req, client, addr):
                    break
                req = None
        except (StopIteration, http.errors.NoMoreData, TimeoutError):
            pass  # the client closed the connection, or left it idle
        except ssl.SSLError as exc:
            if exc.args[0] != ssl.SSL_ERROR_EOF:
                self.handle_error(req, client, addr, exc)
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN):
                self.log.exception("Socket error processing request.")
        except BaseException as exc:
            self.handle_error(req, client, addr, exc)
        finally:
            getattr(util, "close_graceful", util.close)(client)
            self._count(-1)

    def handle_request(self, server: Any, req: Any, client: socket.socket, addr: Any) -> bool:
        """Answer one request; whether the connection stays open for another."""
        environ: dict[str, Any] = {}
        resp = None
        try:
            self.cfg.pre_request(self, req)
            request_start = datetime.now()
            resp, environ = wsgi.create(req, client, addr, server, self.cfg)
            out = resp.sock = _OneSend(client)
            environ["wsgi.multithread"] = True
            self.nr += 1
            if self.nr >= self.max_requests and self.alive:
                self.log.info("Autorestarting worker after current request.")
                self.alive = False
            if not self.alive or not self.cfg.keepalive:
                resp.force_close()
            respiter = self.wsgi(environ, resp.start_response)
            try:
                if isinstance(respiter, environ["wsgi.file_wrapper"]):
                    resp.write_file(respiter)
                else:
                    for item in respiter:
                        resp.write(item)
                resp.close()
                out.flush()  # a response without a body (HEAD, 204, 304) has only its head
            finally:
                self.log.access(resp, req, environ, datetime.now() - request_start)
                if hasattr(respiter, "close"):
                    respiter.close()
            return not resp.should_close()
        except OSError:
            raise
        except Exception:
            if resp is not None and resp.headers_sent:
                # the answer has begun: a 500 cannot follow it on this connection
                self.log.exception("Error handling request")
                raise StopIteration() from None
            raise
        finally:
            try:
                self.cfg.post_request(self, req, environ, resp)
            except Exception:
                self.log.exception("Exception in post_request hook")
