"""The store when Redis misbehaves: a Redis restarted from an older snapshot (a rewound match), a save Redis
does not confirm (DEBUG SLEEP, CLIENT PAUSE), and a save sent twice by redis-py after a lost reply. Real
``redis-server``s of the test's own (RDB snapshots, the debug command on)."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from engine.registry import get_game
from service.store import StoredMatch, match_key, new_wid
from tests.servers import RedisServer
from tests.service.helpers import bearer, create, make_app

# snapshots only (no append-only file: a restart comes back exactly to the last SAVE), DEBUG allowed
RDB_ARGS = ["--appendonly", "no", "--dbfilename", "dump.rdb", "--enable-debug-command", "yes"]


@pytest.fixture()
def rdb_redis() -> Iterator[RedisServer]:
    server = RedisServer(args=RDB_ARGS).start()
    yield server
    server.cleanup()


def raw(server: RedisServer) -> redis.Redis:
    return redis.Redis(port=server.port, socket_timeout=10)


def stored_state(app: Any, mid: str) -> tuple[int, str, dict[str, Any]]:
    stored = app.extensions["cardtable"].store.load(mid)
    return stored.version, stored.wid, json.loads(stored.state)


def assert_replays(app: Any, mid: str, game_id: str, seed: int) -> None:
    """The stored state is exactly the initial deal plus the moves of the stored log."""
    store = app.extensions["cardtable"].store
    game = get_game(game_id)
    version, log = store.log(mid)
    assert [e["v"] for e in log] == list(range(1, version + 1))
    replayed = game.replay(game.new_match(2, seed=seed), [e["m"] for e in log])
    assert game.to_json(replayed) == json.loads(store.load(mid).state)


def test_a_rewound_match_is_detected_and_never_built_upon(rdb_redis: RedisServer) -> None:
    """Issue 17 row 4: two instances, a move through A, Redis restarted from the snapshot before it, another
    move through B at the same version, then a move through A (which cached the lost state)."""
    a_app, b_app = make_app(rdb_redis.url), make_app(rdb_redis.url)
    a, b = a_app.test_client(), b_app.test_client()
    m = create(a, "threezies", 2, seed=41)
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    first = m["view"]["to_move"]  # the seat to move first draws and discards; then the other one
    t0, t1 = bearer(tokens[first]), bearer(tokens[1 - first])
    r = a.post(f"/v1/matches/{mid}/moves", headers=t0, json={"move": {"type": "draw", "source": "stock"},
                                                             "expected_version": 0})
    assert r.status_code == 200
    shown1 = a.get(f"/v1/matches/{mid}", headers=t0).get_json()
    assert b.get(f"/v1/matches/{mid}", headers=t0).get_json() == shown1
    raw(rdb_redis).save()
    snapshot = Path(rdb_redis.dir) / "snapshot.rdb"
    shutil.copy(Path(rdb_redis.dir) / "dump.rdb", snapshot)

    # the move that will be lost, through A: seat 0 discards its first card (A caches that state)
    lost_card, kept_card = shown1["view"]["hand"][0], shown1["view"]["hand"][-1]
    assert lost_card != kept_card
    lost = a.post(f"/v1/matches/{mid}/moves", headers=t0, json={"move": {"type": "discard", "card": lost_card},
                                                                "expected_version": 1})
    assert lost.status_code == 200 and lost.get_json()["version"] == 2
    lost_view = a.get(f"/v1/matches/{mid}", headers=t1)
    lost_etag = lost_view.headers["ETag"]
    assert lost_view.get_json()["state_id"] == lost.get_json()["state_id"]
    assert lost_view.get_json()["view"]["discard"][-1] == lost_card

    rdb_redis.stop()
    shutil.copy(snapshot, Path(rdb_redis.dir) / "dump.rdb")
    rdb_redis.start()  # same port and directory: the match is back at version 1

    # B (which never saw the lost move) takes the match on: seat 0 discards another card; version 2 again
    assert b.get(f"/v1/matches/{mid}", headers=t0).get_json()["version"] == 1
    other = b.post(f"/v1/matches/{mid}/moves", headers=t0, json={"move": {"type": "discard", "card": kept_card},
                                                                 "expected_version": 1})
    assert other.status_code == 200 and other.get_json()["version"] == 2
    assert other.get_json()["state_id"] != lost.get_json()["state_id"]

    # seat 1, shown the lost state by A, takes the discard through A at "version 2": refused (A's cached
    # version 2 is not the stored version 2), nothing changed
    take = {"move": {"type": "draw", "source": "discard"}, "expected_version": 2}
    refused = a.post(f"/v1/matches/{mid}/moves", headers=t1, json=take)
    assert refused.status_code == 409, refused.get_json()
    problem = refused.get_json()
    assert problem["code"] == "stale_version" and problem["version"] == 2
    assert problem["state_id"] == other.get_json()["state_id"]
    assert "not the state this move was decided on" in problem["detail"]
    assert stored_state(a_app, mid)[:2] == (2, other.get_json()["state_id"])
    # the same with the state it was shown named: refused too, through either instance
    named = {**take, "expected_state_id": lost.get_json()["state_id"]}
    for client in (a, b):
        r = client.post(f"/v1/matches/{mid}/moves", headers=t1, json=named)
        assert r.status_code == 409 and r.get_json()["state_id"] == other.get_json()["state_id"], r.get_json()

    # A dropped the lost state: its views are Redis' again (no 304 for the lost state's ETag)
    again = a.get(f"/v1/matches/{mid}", headers={**t1, "If-None-Match": lost_etag})
    assert again.status_code == 200 and again.headers["ETag"] != lost_etag
    view = again.get_json()
    assert (view["version"], view["state_id"]) == (2, other.get_json()["state_id"])
    assert view["view"]["discard"][-1] == kept_card
    moves = a.get(f"/v1/matches/{mid}/legal-moves", headers=t1).get_json()
    assert moves["state_id"] == view["state_id"]

    # decided on what it is shown now, the move applies (the card taken is the one really discarded)
    ok = a.post(f"/v1/matches/{mid}/moves", headers=t1, json={**take, "expected_state_id": view["state_id"]})
    assert ok.status_code == 200, ok.get_json()
    assert ok.get_json()["events"][0]["card"] == kept_card and kept_card in ok.get_json()["view"]["hand"]
    assert_replays(a_app, mid, "threezies", 41)


def test_a_process_that_cached_a_lost_version_answers_from_redis(rdb_redis: RedisServer) -> None:
    """After a rewind to an earlier version, the instance that made the lost move shows what Redis holds, and a
    move decided on the lost state is refused with the version Redis is at."""
    app = make_app(rdb_redis.url)
    client = app.test_client()
    m = create(client, "threezies", 2, seed=8)
    mid, t0 = m["match_id"], bearer(m["seats"][m["view"]["to_move"]]["token"])
    before = client.get(f"/v1/matches/{mid}", headers=t0).get_json()
    raw(rdb_redis).save()
    snapshot = Path(rdb_redis.dir) / "snapshot.rdb"
    shutil.copy(Path(rdb_redis.dir) / "dump.rdb", snapshot)
    r = client.post(f"/v1/matches/{mid}/moves", headers=t0, json={"move": {"type": "draw", "source": "stock"},
                                                                  "expected_version": 0})
    assert r.status_code == 200
    drawn = r.get_json()["view"]["hand"]
    rdb_redis.stop()
    shutil.copy(snapshot, Path(rdb_redis.dir) / "dump.rdb")
    rdb_redis.start()

    view = client.get(f"/v1/matches/{mid}", headers=t0).get_json()
    assert view == before and view["view"]["hand"] != drawn  # no hand of the lost move
    started = time.monotonic()  # a long poll for what follows version 1 answers at once: the match is before it
    polled = client.get(f"/v1/matches/{mid}", headers=t0, query_string={"since": 1, "wait": 5})
    assert polled.status_code == 200 and polled.get_json()["version"] == 0 and time.monotonic() - started < 2
    discard = {"move": {"type": "discard", "card": drawn[0]}, "expected_version": 1}
    refused = client.post(f"/v1/matches/{mid}/moves", headers=t0, json=discard)
    assert refused.status_code == 409
    assert refused.get_json()["version"] == 0 and "an earlier one" in refused.get_json()["detail"]
    assert stored_state(app, mid)[0] == 0
    assert_replays(app, mid, "threezies", 8)


def paused_save(server: RedisServer, timeout: float = 5.0) -> bool:
    """Whether a client's EVALSHA is held by CLIENT PAUSE (polled until ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(c.get("cmd") == "evalsha" and "b" in c.get("flags", "") for c in raw(server).client_list()):
            return True
        time.sleep(0.01)
    return False


def test_a_save_redis_does_not_confirm_is_503_and_a_retry_with_the_key_gets_the_first_answer(
        rdb_redis: RedisServer) -> None:
    """A save that gets no answer within the socket timeout (1 s, and redis-py's one retry) is 503
    store_timeout, which says it may have been applied and that a retry with the same key is safe; both ways
    round, the retry gets the one answer of a move applied once (never 409).

    Not applied: writes paused (CLIENT PAUSE WRITE) past the timeout; the client gives up and closes the
    connection, and Redis drops the held save. Applied: the held save is released into a DEBUG SLEEP (one
    pipeline: CLIENT UNPAUSE, DEBUG SLEEP 3), so that Redis runs it when it wakes, after the client gave up."""
    app = make_app(rdb_redis.url, store_retry_after=3)
    client = app.test_client()
    m = create(client, "threezies", 2, seed=12)
    mid, t0 = m["match_id"], bearer(m["seats"][m["view"]["to_move"]]["token"])
    client.get(f"/v1/matches/{mid}", headers=t0)  # cached here: the move reads nothing but its key
    move = {"move": {"type": "draw", "source": "stock"}, "expected_version": 0}
    keyed = {**t0, "Idempotency-Key": "paused-write-1"}
    raw(rdb_redis).client_pause(3000, all=False)  # writes (and scripts) wait 3 s; reads go on
    started = time.monotonic()
    r = client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=move)
    assert r.status_code == 503 and time.monotonic() - started < 3, r.get_json()
    problem = r.get_json()
    assert problem["code"] == "store_timeout" and r.headers["Retry-After"] == "3"
    assert "may have been applied" in problem["detail"] and "same Idempotency-Key is safe" in problem["detail"]
    raw(rdb_redis).client_unpause()
    assert stored_state(app, mid)[0] == 0  # this time it was not
    first = client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=move)
    assert first.status_code == 200, first.get_json()
    assert first.get_json()["version"] == 1 and first.get_json()["state_id"] == stored_state(app, mid)[1]
    assert client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=move).get_json() == first.get_json()

    discard = {"move": {"type": "discard", "card": first.get_json()["view"]["hand"][0]}, "expected_version": 1}
    keyed = {**t0, "Idempotency-Key": "paused-write-2"}
    raw(rdb_redis).client_pause(10_000, all=False)
    answers: list[Any] = []
    request = threading.Thread(target=lambda: answers.append(
        client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=discard)))
    request.start()
    assert paused_save(rdb_redis)
    raw(rdb_redis).pipeline(transaction=False).execute_command("CLIENT", "UNPAUSE").execute_command(
        "DEBUG", "SLEEP", 3).execute()
    request.join(10)
    r = answers[0]
    assert r.status_code == 503 and r.get_json()["code"] == "store_timeout", r.get_json()
    assert stored_state(app, mid)[0] == 2  # this time it was
    retried = client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=discard)
    assert retried.status_code == 200, retried.get_json()
    assert (retried.get_json()["version"], retried.get_json()["state_id"]) == stored_state(app, mid)[:2]
    assert client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=discard).get_json() == retried.get_json()
    assert_replays(app, mid, "threezies", 12)


def test_debug_sleep_during_a_move_is_said_as_it_is(rdb_redis: RedisServer) -> None:
    """DEBUG SLEEP (Redis frozen longer than the timeouts). Sent while Redis sleeps, a move with a key fails on
    reading its key: nothing written, 503 store_unavailable, and the retry applies it once. A move with no key
    reaches the save: 503 store_timeout, which says it may have been applied (it is, when Redis wakes)."""
    app = make_app(rdb_redis.url)
    client = app.test_client()
    m = create(client, "threezies", 2, seed=3)
    mid, t0 = m["match_id"], bearer(m["seats"][m["view"]["to_move"]]["token"])
    view = client.get(f"/v1/matches/{mid}", headers=t0).get_json()
    move = {"move": {"type": "draw", "source": "stock"}, "expected_version": 0}
    keyed = {**t0, "Idempotency-Key": "sleepy-1"}

    def sleep_redis(seconds: float) -> threading.Thread:
        thread = threading.Thread(target=lambda: raw(rdb_redis).execute_command("DEBUG", "SLEEP", seconds))
        thread.start()
        time.sleep(0.2)
        return thread

    sleeper = sleep_redis(3)
    r = client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=move)
    assert r.status_code == 503 and r.get_json()["code"] == "store_unavailable", r.get_json()
    assert "nothing was changed" in r.get_json()["detail"]
    sleeper.join()
    assert stored_state(app, mid)[0] == 0  # true: nothing was
    first = client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=move)
    assert first.status_code == 200 and first.get_json()["version"] == 1
    assert client.post(f"/v1/matches/{mid}/moves", headers=keyed, json=move).get_json() == first.get_json()

    hand = first.get_json()["view"]["hand"]
    discard = {"move": {"type": "discard", "card": hand[0]}, "expected_version": 1}
    sleeper = sleep_redis(3)
    r = client.post(f"/v1/matches/{mid}/moves", headers=t0, json=discard)  # no key: straight to the save
    assert r.status_code == 503 and r.get_json()["code"] == "store_timeout", r.get_json()
    assert "may have been applied" in r.get_json()["detail"] and "Idempotency-Key" in r.get_json()["detail"]
    sleeper.join()
    assert stored_state(app, mid)[0] == 2  # it was
    after = client.get(f"/v1/matches/{mid}", headers=t0, query_string={"since": 1}).get_json()
    assert after["version"] == 2 and after["events"][0]["card"] == hand[0]  # reloading shows it
    assert view["state_id"] != after["state_id"]
    assert_replays(app, mid, "threezies", 3)


def test_a_save_sent_twice_is_applied_once_and_confirmed(rdb_redis: RedisServer) -> None:
    """redis-py sends a command again after a lost reply: the second run of the same save finds its own write
    (the version and the write id it wrote) and confirms it, instead of calling it stale."""
    app = make_app(rdb_redis.url)
    store = app.extensions["cardtable"].store
    m = create(app.test_client(), "threezies", 2, seed=4)
    mid = m["match_id"]
    stored: StoredMatch = store.load(mid)
    game = get_game("threezies")
    seat = m["view"]["to_move"]
    state, events = game.apply(game.from_json(json.loads(stored.state)), {"type": "draw", "source": "stock"},
                               seat=seat)
    entry = {"v": 1, "s": seat, "m": {"type": "draw", "source": "stock"}, "e": events}
    blob = json.dumps(game.to_json(state))
    wid = new_wid()
    for _ in range(2):
        store.save(mid, (0, stored.wid), (1, wid), blob, [entry])
    assert (store.load(mid).version, store.load(mid).wid) == (1, wid)
    assert len(store.log(mid)[1]) == 1
    from service.store import StaleVersion

    with pytest.raises(StaleVersion) as stale:  # another save on the same state: stale, with where it is
        store.save(mid, (0, stored.wid), (1, new_wid()), blob, [entry])
    assert (stale.value.current, stale.value.wid) == (1, wid)
    with pytest.raises(StaleVersion):  # the right version with another write id: stale too
        store.save(mid, (1, new_wid()), (2, new_wid()), blob, [entry])
    assert raw(rdb_redis).hget(match_key(mid), "wid") == wid.encode()


def next_event(stream: Any, keepalives: int = 20) -> dict[str, Any]:
    """The stream's next event (not a keep-alive comment, nor the opening ``retry:``), after at most
    ``keepalives`` keep-alives."""
    for _ in range(keepalives + 1):
        event: dict[str, Any] = stream.next()
        if "comment" not in event and set(event) != {"retry"}:
            return event
    raise AssertionError(f"no event after {keepalives} keep-alives")


def test_an_event_stream_sends_the_view_again_when_the_store_lost_what_it_delivered(rdb_redis: RedisServer) -> None:
    """An open stream delivered version 2; Redis reloads its snapshot of version 1 under it (DEBUG RELOAD
    NOSAVE: the connections stay) and another move makes a version 2 again: the stream sends the reader's view
    as it is now (event ``view``), then goes on. A stream resumed with Last-Event-ID past the stored version
    starts with the view too."""
    from tests.service.test_service_live import EventStream, Server

    srv = Server(make_app(rdb_redis.url, events_keepalive_seconds=0.5))
    try:
        client = srv.app.test_client()
        m = create(client, "threezies", 2, seed=17)
        mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
        first = m["view"]["to_move"]
        t0 = bearer(tokens[first])
        client.post(f"/v1/matches/{mid}/moves", headers=t0, json={"move": {"type": "draw", "source": "stock"},
                                                                   "expected_version": 0})
        hand = client.get(f"/v1/matches/{mid}", headers=t0).get_json()["view"]["hand"]
        raw(rdb_redis).save()
        stream = EventStream(srv.port, f"/v1/matches/{mid}/events", t0)
        view = next_event(stream)
        assert (view["event"], view["id"], view["data"]["version"]) == ("view", "1", 1)
        lost = client.post(f"/v1/matches/{mid}/moves", headers=t0, json={"move": {"type": "discard", "card": hand[0]},
                                                                         "expected_version": 1})
        assert lost.status_code == 200
        event = next_event(stream)
        assert (event["event"], event["id"], event["data"]["move"]["card"]) == ("move", "2", hand[0])

        raw(rdb_redis).execute_command("DEBUG", "RELOAD", "NOSAVE")  # back to version 1, connections kept
        other = make_app(rdb_redis.url).test_client().post(
            f"/v1/matches/{mid}/moves", headers=t0, json={"move": {"type": "discard", "card": hand[-1]},
                                                          "expected_version": 1})
        assert other.status_code == 200 and other.get_json()["version"] == 2
        event = next_event(stream)
        assert (event["event"], event["id"]) == ("view", "2")
        assert event["data"]["state_id"] == other.get_json()["state_id"]
        assert event["data"]["view"]["discard"][-1] == hand[-1]
        stream.close()

        raw(rdb_redis).save()
        client.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[1 - first]),
                    json={"move": {"type": "draw", "source": "stock"}, "expected_version": 2})
        raw(rdb_redis).execute_command("DEBUG", "RELOAD", "NOSAVE")  # version 3 is lost
        resumed = EventStream(srv.port, f"/v1/matches/{mid}/events", {**t0, "Last-Event-ID": "3"})
        event = next_event(resumed)
        assert (event["event"], event["id"], event["data"]["version"]) == ("view", "2", 2)
        resumed.close()
    finally:
        srv.close()
