"""Live matches over real HTTP: Server-Sent Events across two service instances (resumed with Last-Event-ID),
long polls woken by a move made through the other instance, ETag / If-None-Match, Cache-Control, and an event
stream open while Redis stops."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from tests.servers import RedisServer
from tests.service.helpers import bearer, create, make_app

TT = "three-thirteen"


class Server:
    """An app on a real threaded HTTP server on loopback."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.srv = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self.srv.server_port
        self.thread = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.thread.start()

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body),
                         headers={"Content-Type": "application/json", **(headers or {})})
            r = conn.getresponse()
            raw = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, json.loads(raw) if raw else None
        finally:
            conn.close()

    def close(self) -> None:
        self.srv.shutdown()
        self.thread.join(10)


class EventStream:
    """A Server-Sent Events client: :meth:`next` parses the next event (comments are kept as ``comment``)."""

    def __init__(self, port: int, path: str, headers: dict[str, str] | None = None) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.conn.request("GET", path, headers=headers or {})
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.read()
        assert self.response.getheader("Content-Type", "").startswith("text/event-stream")
        self.cache_control = self.response.getheader("Cache-Control")

    def next(self) -> dict[str, Any]:
        """The next event's fields (``data`` parsed as JSON), or ``{"comment": ...}``; ``{}`` at the end."""
        event: dict[str, Any] = {}
        while True:
            line = self.response.readline()
            if not line:
                return event
            text = line.decode().rstrip("\n")
            if not text:
                if event:
                    return event
                continue
            if text.startswith(":"):
                return {"comment": text[1:].strip()}
            name, _, value = text.partition(":")
            value = value[1:] if value.startswith(" ") else value
            event[name] = json.loads(value) if name == "data" else value

    def next_of(self, kind: str) -> dict[str, Any]:
        while True:
            event = self.next()
            if not event or event.get("event") == kind or kind in event:
                return event

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(scope="module")
def two(redis_server: RedisServer) -> Iterator[tuple[Server, Server]]:
    """Two instances of the service on one Redis (behind a load balancer, a client reaches either)."""
    a = Server(make_app(redis_server.url, events_keepalive_seconds=0.5))
    b = Server(make_app(redis_server.url, events_keepalive_seconds=0.5))
    yield a, b
    a.close()
    b.close()


def move(server: Server, mid: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    status, _, answer = server.request("POST", f"/v1/matches/{mid}/moves", body, bearer(token))
    assert status == 200, answer
    return dict(answer)


def test_events_reach_another_instance_in_order_and_resume_from_last_event_id(two: tuple[Server, Server]) -> None:
    a, b = two
    m = create(a.app.test_client(), TT, 2, seed=31)
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    seat = m["view"]["to_move"]
    stream = EventStream(b.port, f"/v1/matches/{mid}/events", bearer(tokens[seat]))
    assert stream.cache_control == "no-store"
    first = stream.next_of("view")
    assert first["id"] == "0" and first["data"]["seat"] == seat and first["data"]["view"]["hand"]
    move(a, mid, tokens[seat], {"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    drawn = stream.next_of("move")
    assert drawn["id"] == "1" and drawn["data"]["seat"] == seat
    assert list(drawn["data"]["private"]) == [str(seat)]  # the card it drew, shown to that seat only
    stream.next_of("comment")  # a keep-alive (every 0.5 s here, 15 s by default)
    stream.close()
    # two more moves while nobody listens; the stream resumes after the last event it delivered
    view = a.request("GET", f"/v1/matches/{mid}", headers=bearer(tokens[seat]))[2]
    move(a, mid, tokens[seat], {"move": {"type": "discard", "card": view["view"]["hand"][0]}, "expected_version": 1})
    other = 1 - seat
    move(a, mid, tokens[other], {"move": {"type": "draw", "source": "stock"}, "expected_version": 2})
    resumed = EventStream(b.port, f"/v1/matches/{mid}/events", {**bearer(tokens[seat]), "Last-Event-ID": "1"})
    got = [resumed.next(), resumed.next(), resumed.next()]
    assert got[0] == {"retry": "1000"}  # the stream's first lines: no view when resuming
    got = got[1:]
    assert [e["id"] for e in got] == ["2", "3"] and all(e["event"] == "move" for e in got)
    assert "private" not in got[1]["data"]  # the other seat's draw stays hidden from this seat
    resumed.close()
    spectator = EventStream(b.port, f"/v1/matches/{mid}/events?since=0")
    assert [spectator.next_of("move")["id"] for _ in range(3)] == ["1", "2", "3"]
    assert spectator.cache_control == "no-cache"
    spectator.close()


def test_a_long_poll_wakes_on_a_move_made_through_the_other_instance(two: tuple[Server, Server]) -> None:
    a, b = two
    m = create(a.app.test_client(), TT, 2, seed=32)
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    seat = m["view"]["to_move"]
    got: dict[str, Any] = {}

    def poll() -> None:
        started = time.monotonic()
        got["answer"] = b.request("GET", f"/v1/matches/{mid}?since=0&wait=20", headers=bearer(tokens[1 - seat]))
        got["took"] = time.monotonic() - started

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.5)  # the poll is waiting
    assert "answer" not in got
    moved_at = time.monotonic()
    move(a, mid, tokens[seat], {"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    poller.join(20)
    status, _, view = got["answer"]
    assert status == 200 and view["version"] == 1 and [e["version"] for e in view["events"]] == [1]
    assert time.monotonic() - moved_at < 2 and got["took"] < 10
    # nothing happens: the poll ends at its timeout with the unchanged view
    started = time.monotonic()
    status, _, view = b.request("GET", f"/v1/matches/{mid}?since=1&wait=0.5")
    assert status == 200 and view["version"] == 1 and view["events"] == []
    assert 0.4 < time.monotonic() - started < 5
    status, _, problem = b.request("GET", f"/v1/matches/{mid}?wait=1")
    assert status == 422 and problem["code"] == "invalid_request"


def test_views_and_legal_moves_answer_304_while_nothing_changed(two: tuple[Server, Server]) -> None:
    a, b = two
    m = create(a.app.test_client(), TT, 2, seed=33)
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    seat = m["view"]["to_move"]
    me = bearer(tokens[seat])
    for path in (f"/v1/matches/{mid}", f"/v1/matches/{mid}/legal-moves"):
        status, headers, _ = a.request("GET", path, headers=me)
        assert status == 200 and headers["cache-control"] == "no-store"
        etag = headers["etag"]
        # the same ETag from either instance; 304 while the version and the seat are the same
        status, again, body = b.request("GET", path, headers={**me, "If-None-Match": etag})
        assert (status, again["etag"], body) == (304, etag, None)
        status, _, _ = b.request("GET", path, headers={**bearer(tokens[1 - seat]), "If-None-Match": etag})
        assert status == 200  # another seat's view is another representation
    status, headers, _ = a.request("GET", f"/v1/matches/{mid}")
    assert status == 200 and headers["cache-control"] == "no-cache"
    public = headers["etag"]
    move(a, mid, tokens[seat], {"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    status, headers, view = b.request("GET", f"/v1/matches/{mid}", headers={"If-None-Match": public})
    assert status == 200 and headers["etag"] != public and view["version"] == 1


def test_an_open_stream_reports_a_redis_outage_and_resumes_after_it() -> None:
    server = RedisServer().start()
    srv = Server(make_app(server.url, store_retry_after=3))
    try:
        m = create(srv.app.test_client(), TT, 2, seed=34)
        mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
        seat = m["view"]["to_move"]
        move(srv, mid, tokens[seat], {"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
        stream = EventStream(srv.port, f"/v1/matches/{mid}/events?since=0")
        assert stream.next_of("move")["id"] == "1"
        server.stop()
        error = stream.next_of("error")
        assert error["data"]["code"] == "store_unavailable" and error["retry"] == "3000"
        assert stream.next() == {}  # the stream ends
        stream.close()
        server.start()  # same port, same data (append-only file)
        view = srv.request("GET", f"/v1/matches/{mid}", headers=bearer(tokens[seat]))[2]
        move(srv, mid, tokens[seat], {"move": {"type": "discard", "card": view["view"]["hand"][0]},
                                      "expected_version": 1})
        resumed = EventStream(srv.port, f"/v1/matches/{mid}/events", {"Last-Event-ID": "1"})
        event = resumed.next_of("move")
        assert (event["event"], event["id"], event["data"]["seat"]) == ("move", "2", seat)
        resumed.close()
    finally:
        srv.close()
        server.cleanup()
