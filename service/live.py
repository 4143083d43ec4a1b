"""Live notifications in one process: one Redis pub/sub connection that wakes the requests waiting here.

Two kinds of waits share it:

* **a match's versions.** Every save publishes the new version on the match's channel (``ct:{id}:v``,
  :func:`service.store.version_channel`); a long poll, an event stream or a wait for the AI seats watches it
  (:meth:`Notifier.watch`). The channel is subscribed while someone here watches it (and a little longer,
  so that a client polling again does not subscribe again), and the watcher is told only once the
  subscription is confirmed, so that no save after that can pass unseen.
* **AI job answers.** Each process has a reply channel of its own; an AI worker publishes a finished job's
  answer there (:meth:`Notifier.expect`).

A notification only says "look again": the truth stays in Redis (the log, the stored version, a job's stored
answer), and a waiter re-reads it after every wake-up and after every (short) timeout. So a lost message
costs a delay, never a wrong answer; and when the connection drops, every waiter here is woken (with
:attr:`Waiter.failed` set) and the connection is made again, its channels subscribed again.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import redis

log = logging.getLogger("cardtable.service.live")

#: A channel nobody here watches any more stays subscribed this long (a client polling again keeps it).
LINGER_SECONDS = 30.0
_notifiers: weakref.WeakSet[Notifier] = weakref.WeakSet()  # every Notifier of this process (drain_all)

#: How long a watcher waits for its subscription to be confirmed before it reports the store unreachable.
SUBSCRIBE_TIMEOUT = 3.0


class Waiter:
    """One waiting request: an event to sleep on, and what woke it."""

    __slots__ = ("_event", "failed", "payload")

    def __init__(self) -> None:
        self._event = threading.Event()
        self.payload: bytes | None = None
        self.failed = False  # woken because the connection to Redis failed

    def wake(self, payload: bytes | None = None, failed: bool = False) -> None:
        if payload is not None:
            self.payload = payload
        self.failed = self.failed or failed
        self._event.set()

    def wait(self, timeout: float) -> bool:
        """Sleep until woken or ``timeout`` seconds; whether it was woken. Clears the wake-up."""
        woken = self._event.wait(max(0.0, timeout))
        self._event.clear()
        return woken


def drain_all() -> None:
    """This process is stopping (a worker's graceful stop): every open event stream here ends at once, and its
    client resumes, with ``Last-Event-ID``, on a process that goes on. Long polls and waits for the AI, bounded
    at 30 s, finish as they would."""
    for notifier in list(_notifiers):
        notifier.drain()


class Notifier:
    """The process's pub/sub connection and the waiters it wakes (thread-safe; under gevent, greenlet-safe)."""

    def __init__(self, client: Any, instance: str | None = None) -> None:
        _notifiers.add(self)
        #: the process is stopping: event streams end at their next wake-up (:func:`drain_all`)
        self.draining = False
        self.client = client
        self.instance = instance or secrets.token_hex(8)
        self.reply_channel = f"ct:reply:{self.instance}"
        self._lock = threading.Lock()
        self._watchers: dict[str, set[Waiter]] = {}
        self._confirmed: dict[str, threading.Event] = {}
        self._idle_since: dict[str, float] = {}  # channel -> when its last watcher left
        self._replies: dict[str, Waiter] = {}
        self._pubsub: Any = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    # -- waiting ---------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def watch(self, channel: str) -> Iterator[Waiter]:
        """Wake the yielded waiter whenever something is published on ``channel`` (once subscribed)."""
        waiter = Waiter()
        with self._lock:
            self._watchers.setdefault(channel, set()).add(waiter)
            self._idle_since.pop(channel, None)
            confirmed = self._confirmed.get(channel)
            if confirmed is None:
                confirmed = self._confirmed[channel] = threading.Event()
                self._send("subscribe", channel)
        try:
            self._ensure_running()
            if not confirmed.wait(SUBSCRIBE_TIMEOUT):
                raise redis.ConnectionError(f"the subscription to {channel} was not confirmed")
            yield waiter
        finally:
            with self._lock:
                watchers = self._watchers.get(channel)
                if watchers is not None:
                    watchers.discard(waiter)
                    if not watchers:
                        del self._watchers[channel]
                        self._idle_since[channel] = time.monotonic()

    @contextlib.contextmanager
    def expect(self, job_id: str) -> Iterator[Waiter]:
        """Wake the yielded waiter with the answer to job ``job_id`` when a worker publishes it here."""
        waiter = Waiter()
        with self._lock:
            self._replies[job_id] = waiter
            confirmed = self._confirmed.get(self.reply_channel)
            if confirmed is None:
                confirmed = self._confirmed[self.reply_channel] = threading.Event()
                self._send("subscribe", self.reply_channel)
        try:
            self._ensure_running()
            if not confirmed.wait(SUBSCRIBE_TIMEOUT):
                raise redis.ConnectionError("the subscription to the reply channel was not confirmed")
            yield waiter
        finally:
            with self._lock:
                self._replies.pop(job_id, None)

    def drain(self) -> None:
        """Wake every waiter now, with :attr:`draining` set: event streams end, bounded waits go on."""
        self.draining = True
        self._wake_everyone(failed=False)

    def close(self) -> None:
        self._stopped = True
        with self._lock:
            self._drop_connection()

    # -- the connection --------------------------------------------------------------------------------

    def _send(self, command: str, *channels: str) -> None:
        """Subscribe or unsubscribe (under the lock); with no connection yet, the listener does it on connect."""
        if self._pubsub is None:
            return
        try:
            getattr(self._pubsub, command)(*channels)
        except redis.RedisError:
            self._drop_connection()

    def _ensure_running(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stopped = False
                self._thread = threading.Thread(target=self._listen, name="cardtable-notifier", daemon=True)
                self._thread.start()

    def _connect(self) -> None:
        with self._lock:
            pubsub = self.client.pubsub(ignore_subscribe_messages=False)
            channels = [self.reply_channel, *self._watchers, *(c for c in self._confirmed if c not in self._watchers)]
            # confirmations come again for every channel (a waiter that waited for one meanwhile gets it)
            pubsub.subscribe(*dict.fromkeys(channels))
            self._pubsub = pubsub
            self._confirmed.setdefault(self.reply_channel, threading.Event())

    def _drop_connection(self) -> None:
        """Forget the connection (under the lock): every channel must be confirmed again."""
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                self._pubsub.close()
        self._pubsub = None
        for event in self._confirmed.values():
            event.clear()

    def _wake_everyone(self, failed: bool) -> None:
        with self._lock:
            waiters = [w for ws in self._watchers.values() for w in ws] + list(self._replies.values())
        for waiter in waiters:
            waiter.wake(failed=failed)

    def _idle(self) -> bool:
        with self._lock:
            return not self._watchers and not self._replies

    def _listen(self) -> None:
        """Read notifications until stopped; a connection that nobody here needs is closed, and the thread ends
        (the next watcher starts it again)."""
        backoff = 0.05
        idle_since: float | None = None
        healthy = True
        while not self._stopped:
            try:
                if self._pubsub is None:
                    self._connect()
                pubsub = self._pubsub
                message = pubsub.get_message(timeout=1.0) if pubsub is not None else None
                if not healthy:
                    log.info("notifications: connected again")
                    healthy, backoff = True, 0.05
                if message is not None:
                    self._dispatch(message)
                    continue
                self._unsubscribe_idle()
                if not self._idle():
                    idle_since = None
                elif idle_since is None:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since > LINGER_SECONDS and self._end_if_idle():
                    return
            except (redis.RedisError, OSError, AttributeError, TypeError, ValueError) as exc:
                # AttributeError, TypeError, ValueError ("I/O operation on closed file"): redis-py's pubsub
                # after its connection was closed under it
                if self._stopped:
                    break
                with self._lock:
                    self._drop_connection()
                self._wake_everyone(failed=True)
                if self._end_if_idle():  # nobody here waits: nothing to reconnect for
                    return
                if healthy:
                    log.warning("notifications: connection lost (%s); reconnecting", exc.__class__.__name__)
                    healthy = False
                time.sleep(backoff)
                backoff = min(2.0, backoff * 2)
        self._end_if_idle(force=True)

    def _end_if_idle(self, force: bool = False) -> bool:
        """End the listening (close the connection, forget the channels) if nobody here waits (or ``force``);
        decided under the lock, so a watcher arriving meanwhile finds either this thread or none."""
        with self._lock:
            if not force and (self._watchers or self._replies):
                return False
            self._drop_connection()
            self._confirmed.clear()
            self._idle_since.clear()
            if self._thread is threading.current_thread():
                self._thread = None
            return True

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        channel = message["channel"].decode() if isinstance(message["channel"], bytes) else message["channel"]
        if kind == "subscribe":
            with self._lock:
                event = self._confirmed.get(channel)
                watchers = list(self._watchers.get(channel, ()))
            if event is not None:
                event.set()
            for waiter in watchers:  # subscribed again after a reconnect: what was missed, they read again
                waiter.wake()
        elif kind == "message":
            data = message["data"]
            if channel == self.reply_channel:
                job_id, _, payload = bytes(data).partition(b"\n")
                with self._lock:
                    replied = self._replies.get(job_id.decode())
                if replied is not None:
                    replied.wake(payload)
                return
            with self._lock:
                watchers = list(self._watchers.get(channel, ()))
            for waiter in watchers:
                waiter.wake(data)

    def _unsubscribe_idle(self) -> None:
        now = time.monotonic()
        with self._lock:
            idle = [c for c, since in self._idle_since.items() if now - since > LINGER_SECONDS]
            for channel in idle:
                del self._idle_since[channel]
                self._confirmed.pop(channel, None)
            if idle:
                self._send("unsubscribe", *idle)
