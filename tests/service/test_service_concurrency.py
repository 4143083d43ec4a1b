"""Concurrency and failure: many clients racing for one version, and a Redis outage and recovery."""

from __future__ import annotations

import http.client
import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from engine.registry import get_game
from tests.servers import RedisServer
from tests.service.helpers import bearer, create, make_app


@pytest.fixture(scope="module")
def server(app: Any) -> Iterator[tuple[str, int]]:
    """The app on a real threaded HTTP server on loopback."""
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1", srv.server_port
    srv.shutdown()
    thread.join(5)


def request(addr: tuple[str, int], method: str, path: str, body: Any = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(*addr, timeout=30)
    try:
        payload = None if body is None else json.dumps(body)
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_racing_moves_on_one_version_exactly_one_wins(server: tuple[str, int], app: Any) -> None:
    client = app.test_client()
    m = create(client, "three-thirteen", 2, seed=99)
    mid = m["match_id"]
    store = app.extensions["cardtable"].store
    game = get_game("three-thirteen")
    threads_per_race = 12
    for race in range(4):  # four successive races: draw, discard, (other seat) draw, discard
        version = store.load(mid).version
        state = game.from_json(json.loads(store.load(mid).state))
        seat = state.to_move
        token = m["seats"][seat]["token"]
        moves = game.legal_moves(state)
        barrier = threading.Barrier(threads_per_race)
        results: list[tuple[int, dict[str, Any]]] = []
        lock = threading.Lock()

        def post(i: int, moves: list[Any] = moves, version: int = version, token: str = token,
                 barrier: threading.Barrier = barrier, results: list[Any] = results,
                 lock: threading.Lock = lock) -> None:
            move = moves[i % len(moves)]
            barrier.wait()
            got = request(server, "POST", f"/v1/matches/{mid}/moves", {"move": move, "expected_version": version},
                       bearer(token))
            with lock:
                results.append(got)

        workers = [threading.Thread(target=post, args=(i,)) for i in range(threads_per_race)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        statuses = Counter(status for status, _ in results)
        assert statuses == {200: 1, 409: threads_per_race - 1}, (race, statuses)
        assert all(body["code"] == "stale_version" for status, body in results if status == 409)
        winner = next(body for status, body in results if status == 200)
        stored = store.load(mid)
        assert stored.version == version + 1 == winner["version"]
        _, log = store.log(mid)
        assert [e["v"] for e in log] == list(range(1, stored.version + 1))
        # the stored state is exactly the initial deal plus the logged moves, and consistent
        replayed = game.replay(game.new_match(2, seed=99), [e["m"] for e in log])
        assert game.to_json(replayed) == json.loads(stored.state)
        game.check_state(game.from_json(json.loads(stored.state)))


def test_redis_outage_gives_503_and_recovers_with_nothing_lost() -> None:
    redis_srv = RedisServer().start()
    try:
        app = make_app(redis_srv.url, store_retry_after=7)
        client = app.test_client()
        m = create(client, "threezies", 2, seed=5)
        mid, t0 = m["match_id"], m["seats"][0]["token"]
        move = {"move": {"type": "draw", "source": "stock"}, "expected_version": 0}
        assert client.post(f"/v1/matches/{mid}/moves", json=move, headers=bearer(t0)).status_code == 200
        before = client.get(f"/v1/matches/{mid}", headers=bearer(t0)).get_json()

        redis_srv.stop()
        discard = {"move": {"type": "discard", "card": before["view"]["hand"][0]}, "expected_version": 1}
        key = {"Idempotency-Key": "outage-retry-1", **bearer(t0)}
        for method, path, body, headers in [
            ("GET", f"/v1/matches/{mid}", None, bearer(t0)),
            ("POST", f"/v1/matches/{mid}/moves", discard, key),
            ("GET", f"/v1/matches/{mid}/legal-moves", None, bearer(t0)),
            ("GET", f"/v1/matches/{mid}/log", None, {}),
            ("POST", "/v1/matches", {"game": "threezies", "players": [{}, {}]}, {}),
            ("GET", "/readyz", None, {}),
        ]:
            r = client.open(path, method=method, json=body, headers=headers)
            assert r.status_code == 503, (path, r.get_data(as_text=True))
            assert r.headers["Retry-After"] == "7" and r.get_json()["code"] == "store_unavailable"
            assert "Traceback" not in r.get_data(as_text=True)
        assert client.get("/healthz").status_code == 200  # the process itself is fine
        assert client.get("/v1/games").status_code == 200  # and so is everything that needs no store
        metrics = client.get("/metrics").get_data(as_text=True)
        assert 'cardtable_store_errors_total{operation="matches.post_move"} 1.0' in metrics

        redis_srv.start()  # same port, same data directory (append-only file)
        assert client.get("/readyz").status_code == 200
        after = client.get(f"/v1/matches/{mid}", headers=bearer(t0)).get_json()
        assert after == before  # nothing lost, nothing half-written
        r = client.post(f"/v1/matches/{mid}/moves", json=discard, headers=key)  # the client's retry
        assert r.status_code == 200 and r.get_json()["version"] == 2
        again = client.post(f"/v1/matches/{mid}/moves", json=discard, headers=key)
        assert again.get_json() == r.get_json()
        log = client.get(f"/v1/matches/{mid}/log").get_json()
        assert [e["version"] for e in log["entries"]] == [1, 2]
    finally:
        redis_srv.cleanup()


def test_two_copies_of_the_service_share_matches_through_redis(redis_server: RedisServer) -> None:
    """The service keeps no state of its own (its caches only remember what Redis holds at a version):
    copies behind a load balancer see one match, and a stale copy's cache never wins a race."""
    a = make_app(redis_server.url).test_client()
    b = make_app(redis_server.url).test_client()
    m = create(a, "three-thirteen", 2, seed=23)
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    version = 0
    for i in range(12):  # alternate copies move after move
        here = (a, b)[i % 2]
        view = here.get(f"/v1/matches/{mid}").get_json()
        assert view["version"] == version
        token = tokens[view["view"]["to_move"]]
        move = here.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["moves"][0]
        r = here.post(f"/v1/matches/{mid}/moves", headers=bearer(token), json={"move": move,
                                                                                "expected_version": version})
        assert r.status_code == 200, r.get_json()
        version = r.get_json()["version"]
    # both copies have this version cached after reading it; one move from each on the same version
    for here in (a, b):
        here.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[0]))
    seat = a.get(f"/v1/matches/{mid}").get_json()["view"]["to_move"]
    moves = a.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[seat])).get_json()["moves"]
    first = a.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[seat]),
                   json={"move": moves[0], "expected_version": version})
    second = b.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[seat]),
                    json={"move": moves[-1], "expected_version": version})
    assert first.status_code == 200 and second.status_code == 409
    assert second.get_json()["code"] == "stale_version" and second.get_json()["version"] == version + 1
    assert b.get(f"/v1/matches/{mid}").get_json()["version"] == version + 1


@pytest.fixture(scope="module")
def second_server(redis_server: RedisServer) -> Iterator[tuple[str, int]]:
    """Another copy of the service on the same Redis, on its own threaded HTTP server."""
    srv = make_server("127.0.0.1", 0, make_app(redis_server.url), threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1", srv.server_port
    srv.shutdown()
    thread.join(5)


def test_concurrent_copies_of_a_move_with_one_key_all_get_the_first_answer(
        server: tuple[str, int], second_server: tuple[str, int], app: Any) -> None:
    """Issue 17 row 6: a client retrying while its first request still runs (the same move, the same
    Idempotency-Key, through two copies of the service) gets the first answer, never 409; the move is applied
    once. Five rounds of eight copies."""
    client = app.test_client()
    m = create(client, "three-thirteen", 2, seed=31)
    mid = m["match_id"]
    store = app.extensions["cardtable"].store
    game = get_game("three-thirteen")
    copies = 8
    for rnd in range(5):
        stored = store.load(mid)
        state = game.from_json(json.loads(stored.state))
        token = m["seats"][state.to_move]["token"]
        body = {"move": game.legal_moves(state)[-1], "expected_version": stored.version}
        headers = {"Idempotency-Key": f"one-key-{mid}-{rnd}", **bearer(token)}
        barrier = threading.Barrier(copies)
        results: list[tuple[int, dict[str, Any]]] = []
        lock = threading.Lock()

        def post(i: int, body: dict[str, Any] = body, headers: dict[str, str] = headers,
                 barrier: threading.Barrier = barrier, results: list[Any] = results, lock: threading.Lock = lock
                 ) -> None:
            barrier.wait()
            got = request((server, second_server)[i % 2], "POST", f"/v1/matches/{mid}/moves", body, headers)
            with lock:
                results.append(got)

        workers = [threading.Thread(target=post, args=(i,)) for i in range(copies)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        assert [status for status, _ in results] == [200] * copies, (rnd, results)
        assert all(answer == results[0][1] for _, answer in results), rnd
        after = store.load(mid)
        assert (after.version, after.wid) == (stored.version + 1, results[0][1]["state_id"])
        _, log = store.log(mid)
        assert [e["v"] for e in log] == list(range(1, after.version + 1))
