"""A gunicorn worker that serves each connection on a thread of its own, and balances connections across workers.

``service/gunicorn.conf.py`` uses it (``worker_class = "service.worker.ConnectionThreads"``).

Why not gunicorn's ``gthread``: it parks every kept-alive connection in its main thread's poller and hands each
request to a pool thread and back — an ``epoll`` registration, a queue, a pipe wake-up and two GIL handovers per
request, about as much CPU as Flask itself for a short request, and with 4 pool threads four slow (AI) requests
stall every other request of the worker. Here a connection's thread reads a request, runs the app, writes the
answer and reads the next one: nothing else per request. An AI request ties up only its own connection; the
others keep being served (the GIL passes between threads every ``sys.getswitchinterval()`` at worst).

Balance: workers share one listening socket. Waiting on it with a poller, every worker wakes for a new
connection and the first to get a core takes it — on a busy machine one worker often took nearly all of them
(30 of 32 kept-alive connections were seen) while the other idled, halving the throughput and doubling the
latency of the connections it held. Here each worker waits in a blocking ``accept()`` on a thread of its own,
where the kernel wakes one waiter at a time, in turn; and each worker publishes its number of open connections
in memory the master shares with its workers (:class:`Ledger`): one that holds more than another stays out of
the turn for up to :data:`DEFER_SECONDS`, and stops waiting for a worker that took nothing meanwhile.

Admission: once its body is read, a request runs the app only inside the worker's FIFO gate
(:mod:`service.gate`), so that the many connection threads take turns in order instead of in whatever order
the GIL happens to fall to them.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import io
import mmap
import multiprocessing
import os
import select
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

from service import gate as gate_module
from service.config import MAX_REQUEST_BYTES

#: How long a worker that holds more connections than another leaves new connections to it (on a busy machine a
#: woken process may wait several milliseconds for a core, and its acceptor longer for the GIL).
DEFER_SECONDS = 0.2
#: Workers the ledger can hold (more workers than this are not balanced against each other).
SLOTS = 64
_SLOT = struct.Struct("=qq")  # pid, open connections
#: the operators' probes answer at once, even while app requests queue at the gate (say, behind a Redis that
#: hangs until its socket timeout)
UNGATED_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def _read_body_first(environ: dict[str, Any]) -> None:
    """Read a request body of a known, acceptable length before the app runs, so that a client slow to send
    it holds up its own thread only, never a slot of the gate (a longer or chunked body is left to the app,
    which refuses one over its limit without reading it)."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return
    if 0 < length <= MAX_REQUEST_BYTES:
        environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(length))


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

    def fewest_elsewhere(self, slot: int | None) -> int | None:
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

    # -- the main thread, and the acceptors ---------------------------------------------------------------------

    def run(self) -> None:
        """The main thread tells the master it is alive and waits for signals; an acceptor thread per listening
        socket takes the connections."""
        self.slot = LEDGER.claim(os.getpid())
        for listener in self.sockets:
            threading.Thread(target=self.acceptor, args=(listener,), name="acceptor", daemon=True).start()
        self.log.info("Worker %s accepting connections", os.getpid())
        try:
            while self.alive:
                self.notify()
                with contextlib.suppress(OSError):
                    readable, _, _ = select.select([self.PIPE[0]], [], [], 1.0)  # a signal writes to the pipe
                    if readable:
                        os.read(self.PIPE[0], 4096)
                if self.ppid != os.getppid():
                    self.log.info("Parent changed, shutting down: %s", self)
                    break
        finally:
            self.alive = False
            self.drain()

    def acceptor(self, listener: socket.socket) -> None:
        """Take connections from ``listener`` while the worker is alive.

        The socket is blocking: a process waiting in ``accept()`` is woken alone and in turn with the other
        workers' acceptors (the kernel's exclusive wait), where a poller wakes them all and the first to get
        a core takes the connection. Before waiting, an acceptor holding more connections than another worker
        stays out of the turn for up to :data:`DEFER_SECONDS`."""
        listener.setblocking(True)
        server = listener.getsockname()
        stuck: int | None = None  # the other's count when it last took nothing in a whole wait
        while self.alive:
            if self.connections >= self.cfg.worker_connections:
                time.sleep(0.01)
                continue
            deadline = time.monotonic() + DEFER_SECONDS
            fewest = self._fewer_elsewhere()
            while fewest is not None and fewest != stuck and time.monotonic() < deadline:
                time.sleep(0.001)
                fewest = self._fewer_elsewhere()
            # a worker that took nothing while this one stood aside may be stuck: don't wait for it again
            # until it takes a connection
            stuck = fewest
            try:
                client, addr = listener.accept()
            except OSError as exc:
                if exc.errno in (errno.ECONNABORTED, errno.EINTR, errno.EAGAIN, errno.EWOULDBLOCK):
                    continue
                if self.alive:  # (out of file descriptors...): a fresh worker will take over
                    self.log.exception("Cannot accept connections: stopping %s", self)
                    self.alive = False
                return
            client.setblocking(True)
            util.close_on_exec(client)
            self._count(+1)
            # (a connection taken while the worker stops is served too: its answer says Connection: close).
            # _thread, not threading.Thread: start() would wait for the new thread to run, and under load the
            # GIL may take a while to come round; meanwhile the other workers would take every connection
            try:
                _thread.start_new_thread(self.serve, (server, client, addr))
            except RuntimeError:  # no more threads: this one is refused, and a fresh worker takes over
                self.log.exception("Cannot start a thread: stopping %s", self)
                util.close(client)
                self._count(-1)
                self.alive = False
                return

    def _fewer_elsewhere(self) -> int | None:
        """The connections of the worker that holds the fewest, if that is fewer than this worker's."""
        fewest = LEDGER.fewest_elsewhere(self.slot) if self.slot is not None else None
        return fewest if fewest is not None and fewest < self.connections else None

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

    @contextlib.contextmanager
    def _admitted(self, environ: dict[str, Any]) -> Any:
        """Hold a slot of the worker's admission gate (:mod:`service.gate`) while the app runs and its answer is
        written (the operators' probes pass without one)."""
        gate = gate_module.GATE
        if gate is None or environ.get("PATH_INFO") in UNGATED_PATHS:
            yield
            return
        with gate:
            yield

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
            _read_body_first(environ)
            self.nr += 1
            if self.nr >= self.max_requests and self.alive:
                self.log.info("Autorestarting worker after current request.")
                self.alive = False
            if not self.alive or not self.cfg.keepalive:
                resp.force_close()
            with self._admitted(environ):
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
