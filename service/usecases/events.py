"""A match's events as a stream: every move after a version, as a seat (or a spectator) may see it, in
version order, woken by the match's notifications (:mod:`service.live`) and read from the log."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import redis

from service.live import Notifier
from service.store import MatchNotFound, MatchStore, version_channel
from service.usecases.errors import MatchNotFoundError
from service.usecases.loading import MatchCache, load
from service.usecases.views import entry_for, match_view


@dataclass
class Event:
    """One item of the stream: ``kind`` ``view`` (the reader's view, when it did not say where to resume),
    ``move`` (one version), ``keepalive``, or ``error`` (then the stream ends)."""

    kind: str
    version: int | None = None
    data: dict[str, Any] | None = None


def match_events(store: MatchStore, notifier: Notifier, cache: MatchCache | None, match_id: str, seat: int | None,
                 after: int | None, *, keepalive: float, lifetime: float) -> Iterator[Event]:
    """The events of a match after version ``after`` (``None``: the current view first, then what follows),
    until ``lifetime`` seconds have passed or this process stops (:func:`service.live.drain_all`); a keep-alive
    after ``keepalive`` seconds without one."""
    ends = time.monotonic() + lifetime
    known: str | None = None  # the state_id at version `after`, when the stream knows it
    try:
        with notifier.watch(version_channel(match_id)) as waiter:
            if after is None:  # subscribed first: nothing saved from here on can be missed
                match = load(store, match_id, cache=cache)
                after, known = match.version, match.state_id
                yield Event("view", after, match_view(store, match, seat, None))
            woken = True
            while True:
                if woken:
                    version, entries = store.log(match_id, after)
                    match = load(store, match_id, cache=cache)
                    if min(version, match.version) < after or (
                            not entries and match.version == after and known not in (None, match.state_id)):
                        # the store lost moves this stream delivered (an older snapshot, a lagging replica):
                        # the reader's view as it is now, and on from there
                        after, known = match.version, match.state_id
                        yield Event("view", after, match_view(store, match, seat, None))
                    elif entries:
                        reveal = match.state.is_over
                        for entry in entries:
                            yield Event("move", entry["v"], entry_for(entry, seat, reveal))
                        after = entries[-1]["v"]
                        known = match.state_id if match.version == after else None
                else:
                    yield Event("keepalive")
                left = ends - time.monotonic()
                if left <= 0 or notifier.draining:  # the stream's time is up, or this process is stopping
                    return
                woken = waiter.wait(min(keepalive, left))
                if notifier.draining:
                    return
    except (MatchNotFoundError, MatchNotFound):
        yield Event("error", data={"code": "match_not_found", "detail": f"no match {match_id!r} (it may have expired)"})
    except (redis.RedisError, OSError):
        yield Event("error", data={"code": "store_unavailable",
                                   "detail": "the match store is unreachable: resume with Last-Event-ID"})
