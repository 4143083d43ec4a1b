"""Admission: at most N requests of a worker process run the app at once, let in first come, first served.

:class:`service.worker.ConnectionThreads` serves every connection on a thread of its own. Left alone, all of
them compete for the GIL at once, and CPython hands the GIL to whichever waiting thread the OS wakes first:
under load some requests wait for it again and again while later ones pass them. The tail grows, not the
throughput. Measured (``bench/api_load.py``, 32 connections, 2 workers, quiet machine, A/B in one session):
``POST moves`` p99 33-36 ms without a gate, 22-25 ms with 6 slots, at the same throughput (legal-moves p99
20-22 -> 17-18 ms). With 1-4 slots the legal-moves throughput fell by up to a fifth (the CPU idles while
the few admitted requests wait for Redis); with 8 the moves p99 was back at 30-32 ms.

A request is admitted after its body has been read (a client slow to send holds up only its own thread) and
leaves when its answer is written (answers are small: they fit the socket's send buffer, so a client slow to
read does not hold a slot either, unless it lets many answers pile up on a kept-alive connection). Long
computations (the AI: a hint, a best move, the AI seats' turns) step out with :func:`outside` so that they never
hold a slot: the short requests of the other connections keep flowing past them.

``CARDTABLE_ACTIVE_REQUESTS`` sets the slots per worker (default :data:`DEFAULT_SLOTS`; 0: no gate).
"""

from __future__ import annotations

import _thread
import collections
import contextlib
import os
import threading
from collections.abc import Iterator

DEFAULT_SLOTS = 6


class FifoGate:
    """At most ``slots`` holders at once; the others wait and are let in in the order they came."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError(f"a gate needs at least one slot, not {slots}")
        self._lock = threading.Lock()
        self._free = slots
        self._waiters: collections.deque[_thread.LockType] = collections.deque()
        self._holding = threading.local()

    def acquire(self) -> None:
        with self._lock:
            if self._free and not self._waiters:
                self._free -= 1
                self._holding.slot = True
                return
            waiter = _thread.allocate_lock()
            waiter.acquire()
            self._waiters.append(waiter)
        waiter.acquire()  # released by the holder that hands its slot over
        self._holding.slot = True

    def release(self) -> None:
        self._holding.slot = False
        with self._lock:
            if self._waiters:
                self._waiters.popleft().release()  # the slot passes straight to the longest waiter
            else:
                self._free += 1

    def __enter__(self) -> FifoGate:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @property
    def held(self) -> bool:
        """Whether the calling thread holds a slot."""
        return bool(getattr(self._holding, "slot", False))

    @property
    def waiting(self) -> int:
        return len(self._waiters)


def _from_environment() -> FifoGate | None:
    slots = int(os.environ.get("CARDTABLE_ACTIVE_REQUESTS", DEFAULT_SLOTS))
    return FifoGate(slots) if slots > 0 else None


#: this process's gate (each gunicorn worker has its own after the fork); None: requests are not gated
GATE: FifoGate | None = _from_environment()


@contextlib.contextmanager
def outside() -> Iterator[None]:
    """Run a long computation without holding a slot (a no-op when the calling thread holds none)."""
    gate = GATE
    if gate is None or not gate.held:
        yield
        return
    gate.release()
    try:
        yield
    finally:
        gate.acquire()
