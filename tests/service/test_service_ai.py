"""The AI through the API: AI seats that play by themselves (asynchronously, or within a bounded wait),
/advance, hints, stateless best-move, AI-time rate limits and a full queue. The AI workers are real ones
on the session's Redis (see conftest)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
import redis

from engine.game import move_key
from engine.registry import get_game
from service.aitier.budget import bucket_key
from service.aitier.queue import DECISION_SECONDS, estimate_cost
from service.usecases.tokens import token_hash
from tests.servers import RedisServer
from tests.service.helpers import bearer, create, local_ai_workers, make_app

TT = "three-thirteen"
HANDS = {"hands": [["2C", "7D", "KS"], ["4H", "9H", "QS"]], "dealer": 1}


@pytest.fixture(scope="module")
def ai_client(redis_server: RedisServer) -> Any:
    return make_app(redis_server.url).test_client()


def keys(moves: list[dict[str, Any]]) -> set[Any]:
    return {move_key(m) for m in moves}


def test_ai_seats_play_after_a_human_move_within_a_wait(ai_client: Any) -> None:
    m = create(ai_client, TT, players=[{"name": "me"}, {"ai": {"level": 1}}], seed=8, setup=HANDS)
    mid, token = m["match_id"], m["seats"][0]["token"]
    assert m["seats"][1]["token"] is None and m["seats"][1]["ai"] == {"level": 1}
    assert m["version"] == 0 and m["view"]["to_move"] == 0 and m["ai_pending"] is False
    r = ai_client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                       json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    assert r.get_json()["ai_pending"] is False
    r = ai_client.post(f"/v1/matches/{mid}/moves", query_string={"wait": 10}, headers=bearer(token),
                       json={"move": {"type": "discard", "card": "KS"}, "expected_version": 1})
    out = r.get_json()
    assert r.status_code == 200, out
    # the AI seat drew and discarded before the answer: the human is to move again
    assert out["view"]["to_move"] == 0 and out["version"] >= 4 and out["ai_pending"] is False
    assert {e["seat"] for e in out["events"] if "seat" in e} == {0, 1}
    assert {e["version"] for e in out["events"]} == set(range(2, out["version"] + 1))
    log = ai_client.get(f"/v1/matches/{mid}/log", headers=bearer(token)).get_json()
    assert [e["ai"] for e in log["entries"]][:4] == [False, False, True, True]
    assert all("1" not in e.get("private", {}) for e in log["entries"])  # the AI seat's cards stay hidden


def test_a_move_answers_once_stored_and_the_ai_follows(ai_client: Any) -> None:
    m = create(ai_client, TT, players=[{"name": "me"}, {"ai": {"level": 1}}], seed=8, setup=HANDS)
    mid, token = m["match_id"], m["seats"][0]["token"]
    ai_client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                   json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    r = ai_client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                       json={"move": {"type": "discard", "card": "KS"}, "expected_version": 1})
    out = r.get_json()
    assert r.status_code == 200 and out["version"] == 2 and out["ai_pending"] is True
    assert out["view"]["to_move"] == 1 and [e["version"] for e in out["events"]] == [2]
    # a long poll past version 2 wakes when the AI seat moves (its two decisions are two versions)
    view = ai_client.get(f"/v1/matches/{mid}", query_string={"since": 2, "wait": 10}, headers=bearer(token)).get_json()
    assert view["version"] >= 3 and view["events"][0]["version"] == 3
    # Prefer: wait=N does what ?wait=N does, and says so
    r = ai_client.post(f"/v1/matches/{mid}/advance", headers={"Prefer": "wait=10"}, json={})
    assert r.status_code == 200 and r.headers["Preference-Applied"] == "wait=10"
    assert r.get_json()["view"]["to_move"] == 0 and r.get_json()["ai_pending"] is False


def test_an_all_ai_match_plays_on_by_itself(ai_client: Any) -> None:
    m = create(ai_client, TT, players=[{"ai": {"level": 1}}, {"ai": {"level": 1}}], seed=4,
               options={"max_turns_per_round": 10})
    assert m["view_seat"] is None and m["view"]["seat"] is None and m["view"]["hand"] == []
    assert m["version"] == 0 and m["ai_pending"] is True
    mid = m["match_id"]
    version, deadline = 0, time.monotonic() + 120
    while True:  # nobody asks anything: the AI workers play the whole match, job after job
        view = ai_client.get(f"/v1/matches/{mid}", query_string={"since": version, "wait": 5}).get_json()
        assert view["version"] >= version
        version = view["version"]
        if view["status"] == "over":
            break
        assert time.monotonic() < deadline, f"the all-AI match stalled at version {version}"
    log = ai_client.get(f"/v1/matches/{mid}/log").get_json()
    assert [e["version"] for e in log["entries"]] == list(range(1, version + 1))
    assert all(e["ai"] for e in log["entries"])
    game = get_game(TT)
    replayed = game.replay(game.new_match(2, {"max_turns_per_round": 10}, seed=4), [e["move"] for e in log["entries"]])
    assert replayed.is_over
    stale = ai_client.post(f"/v1/matches/{mid}/advance", json={"expected_version": 0})
    assert stale.status_code == 409 and stale.get_json()["code"] == "stale_version"


def test_hint_gives_a_legal_move_with_value_alternatives_and_explanation(ai_client: Any) -> None:
    m = create(ai_client, TT, 2, seed=12)
    mid, (t0, t1) = m["match_id"], [s["token"] for s in m["seats"]]
    seat = m["view"]["to_move"]
    token = (t0, t1)[seat]
    r = ai_client.get(f"/v1/matches/{mid}/hint", query_string={"level": 1, "time_ms": 30}, headers=bearer(token))
    hint = r.get_json()
    assert r.status_code == 200, hint
    assert "Retry-After" not in r.headers and r.headers["Cache-Control"] == "no-store"
    legal = ai_client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["moves"]
    assert move_key(hint["move"]) in keys(legal)
    assert hint["alternatives"] and all(move_key(a["move"]) in keys(legal) for a in hint["alternatives"])
    assert isinstance(hint["value"], float) and hint["explanation"] and hint["version"] == 0
    again = ai_client.get(f"/v1/matches/{mid}/hint", query_string={"level": 1, "time_ms": 30}, headers=bearer(token))
    assert again.get_json()["move"] == hint["move"]  # seeded by the match version: the same question, one answer
    metrics = ai_client.get("/metrics").get_data(as_text=True)
    assert 'cardtable_ai_search_seconds_count{game="three-thirteen",kind="hint"}' in metrics
    assert 'cardtable_ai_queue_seconds_count{kind="hint"}' in metrics
    other = (t0, t1)[1 - seat]
    r = ai_client.get(f"/v1/matches/{mid}/hint", headers=bearer(other))
    assert r.status_code == 409 and r.get_json()["code"] == "not_your_turn"
    assert ai_client.get(f"/v1/matches/{mid}/hint").status_code == 401
    r = ai_client.get(f"/v1/matches/{mid}/hint", query_string={"time_ms": 10**7}, headers=bearer(token))
    assert r.status_code == 422 and r.get_json()["code"] == "invalid_request"
    r = ai_client.get(f"/v1/matches/{mid}/hint", query_string={"level": 0}, headers=bearer(token))
    assert r.status_code == 422


def test_best_move_from_a_view(ai_client: Any) -> None:
    game = get_game(TT)
    state = game.new_match(3, seed=17)
    state, _ = game.apply(state, {"type": "draw", "source": "discard"})
    view = json.loads(json.dumps(game.observation(state, state.to_move)))
    r = ai_client.post(f"/v1/games/{TT}/best-move", json={"view": view, "level": 1, "time_ms": 30})
    decision = r.get_json()
    assert r.status_code == 200, decision
    assert move_key(decision["move"]) in keys(game.legal_moves(state))
    # the drawn discard may not go straight back (C3)
    assert decision["move"] != {"type": "discard", "card": view["taken"]}


def test_a_failing_ai_keeps_the_human_move_and_advance_retries(ai_client: Any, monkeypatch: Any) -> None:
    import ai

    m = create(ai_client, TT, players=[{"name": "me"}, {"ai": {"level": 1}}], seed=8, setup=HANDS)
    mid, token = m["match_id"], m["seats"][0]["token"]
    ai_client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                   json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    real = ai.choose_move

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("AI bug")

    monkeypatch.setattr(ai, "choose_move", broken)
    r = ai_client.post(f"/v1/matches/{mid}/moves", query_string={"wait": 10}, headers=bearer(token),
                       json={"move": {"type": "discard", "card": "KS"}, "expected_version": 1})
    out = r.get_json()
    assert r.status_code == 200 and out["version"] == 2 and out["view"]["to_move"] == 1
    assert out["ai_pending"] is True and "RuntimeError" in out["ai_error"] and "/advance" in out["ai_error"]
    r = ai_client.post(f"/v1/matches/{mid}/advance", query_string={"wait": 10}, json={"expected_version": 2})
    assert r.status_code == 503 and r.get_json()["code"] == "ai_unavailable" and "Traceback" not in r.text
    monkeypatch.setattr(ai, "choose_move", real)
    r = ai_client.post(f"/v1/matches/{mid}/advance", query_string={"wait": 10}, json={"expected_version": 2})
    assert r.status_code == 200 and r.get_json()["version"] >= 4 and r.get_json()["view"]["to_move"] == 0


# -- AI time budgets --------------------------------------------------------------------------------------


def bucket_level(app: Any, bucket: str) -> float:
    raw = app.extensions["cardtable"].store.client.hget(bucket_key(bucket), "level")
    return float(raw or 0)


def test_a_tokens_budget_counts_the_ai_time_of_its_hints_not_requests(redis_server: RedisServer,
                                                                     monkeypatch: Any) -> None:
    per_minute = 6.0  # the bucket leaks 0.1 AI-second a second: slow beside the test, however busy the machine
    # a level-2 hint estimated at 1 AI-second (it takes milliseconds): what is charged in the end is the real time
    monkeypatch.setitem(DECISION_SECONDS, TT, {**DECISION_SECONDS[TT], 2: 1.0})
    client = make_app(redis_server.url, rate_limit_enabled=True, ai_seconds_per_token_minute=per_minute).test_client()
    m = create(client, TT, 2, seed=21)
    token = m["seats"][m["view"]["to_move"]]["token"]
    spent = 0.0
    started = time.monotonic()
    for _ in range(4):
        r = client.get(f"/v1/matches/{m['match_id']}/hint", query_string={"level": 2}, headers=bearer(token))
        assert r.status_code == 200, r.get_json()
        spent += r.get_json()["elapsed_ms"] / 1000
    estimates = 4 * estimate_cost(TT, 2, 2)
    assert spent + 0.02 < estimates  # what counting requests would charge is well above the AI time

    # charged the estimate up front, then the worker put the real search time in its place; the bucket has
    # leaked at most per_minute / 60 a second since the first charge
    def fits(level: float) -> bool:
        leaked = (time.monotonic() - started) * per_minute / 60
        return spent - leaked - 0.02 - 0.1 * spent <= level <= spent + 0.02 + 0.1 * spent

    deadline = time.monotonic() + 5
    level = bucket_level(client.application, "tok:" + token_hash(token))
    while not fits(level) and time.monotonic() < deadline:
        time.sleep(0.05)
        level = bucket_level(client.application, "tok:" + token_hash(token))
    assert fits(level), (level, spent)


def test_a_spent_token_is_refused_whatever_the_spelling_of_its_header(redis_server: RedisServer) -> None:
    client = make_app(redis_server.url, rate_limit_enabled=True, ai_seconds_per_token_minute=6.0).test_client()
    m = create(client, TT, players=[{"name": "me"}, {"ai": {"level": 1}}], seed=8, setup=HANDS)
    mid, token = m["match_id"], m["seats"][0]["token"]
    budget = client.application.extensions["cardtable"].ai.budget
    # two minutes' worth (an AI chain may overdraw a bucket so far): refused for a minute, however small the
    # estimate of the job asked for (a full bucket admits again as soon as it has leaked that estimate)
    budget.charge(["tok:" + token_hash(token)], 12.0)
    for header in (f"Bearer {token}", f"bearer {token}", f"BEARER {token}", f"Bearer  {token}"):
        r = client.get(f"/v1/matches/{mid}/hint", query_string={"level": 1}, headers={"Authorization": header})
        assert r.status_code == 429 and r.get_json()["code"] == "rate_limited", header
        retry = int(r.headers["Retry-After"])
        assert 1 <= retry <= 61 and f"retry after {retry} s" in r.get_json()["detail"]
        assert r.mimetype == "application/problem+json"
    # the AI seat's turn counts against the player whose move hands it over: that move is refused too,
    # and nothing changed
    client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                    json={"move": {"type": "discard", "card": "KS"}, "expected_version": 1})
    assert r.status_code == 429 and r.get_json()["code"] == "rate_limited"
    assert client.get(f"/v1/matches/{mid}", headers=bearer(token)).get_json()["version"] == 1
    # the endpoints that need no AI are not limited
    for _ in range(5):
        assert client.get(f"/v1/matches/{mid}", headers=bearer(token)).status_code == 200


def test_a_clients_budget_holds_whatever_tokens_it_makes_up(redis_server: RedisServer) -> None:
    client = make_app(redis_server.url, rate_limit_enabled=True, ai_seconds_per_client_minute=3.0).test_client()
    game = get_game(TT)
    state = game.new_match(2, seed=3)
    body = {"view": game.observation(state, state.to_move), "level": 1}
    ip = {"REMOTE_ADDR": "10.9.8.7"}
    assert client.post(f"/v1/games/{TT}/best-move", json=body, environ_base=ip).status_code == 200
    client.application.extensions["cardtable"].ai.budget.charge(["ip:10.9.8.7"], 6.0)  # overdrawn: see above
    statuses = [client.post(f"/v1/games/{TT}/best-move", json=body, headers=bearer(f"made-up-{i}"),
                            environ_base=ip).status_code for i in range(3)]
    assert statuses == [429, 429, 429]
    other = {"REMOTE_ADDR": "10.200.0.2"}
    assert client.post(f"/v1/games/{TT}/best-move", json=body, environ_base=other).status_code == 200


def test_a_full_queue_answers_ai_busy_and_queues_nothing_more() -> None:
    """The queue admits AI-seconds, not requests: a storm of level-4 hints on a queue of 2.5 times one hint's
    estimate gets 503 ai_busy with Retry-After, at once, for all but a few (the two admitted at first, and
    those admitted as jobs finish while the storm starts)."""
    server = RedisServer().start()
    workers = local_ai_workers(server.url)
    try:
        app = make_app(server.url, ai_queue_seconds_per_worker=2.5 * estimate_cost(TT, 4, 2))
        m = create(app.test_client(), TT, 2, seed=5)
        token = m["seats"][m["view"]["to_move"]]["token"]
        results: list[tuple[int, Any, float]] = []
        lock = threading.Lock()

        def ask() -> None:
            started = time.monotonic()
            r = app.test_client().get(f"/v1/matches/{m['match_id']}/hint", query_string={"level": 4},
                                      headers=bearer(token))
            with lock:
                results.append((r.status_code, r, time.monotonic() - started))

        threads = [threading.Thread(target=ask) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        statuses = sorted(status for status, _, _ in results)
        busy = [(r, took) for status, r, took in results if status == 503]
        assert statuses.count(200) >= 1 and len(busy) >= 6, statuses
        for r, took in busy:
            assert r.get_json()["code"] == "ai_busy" and int(r.headers["Retry-After"]) >= 1
            assert took < 5  # refused at once, not after waiting in line
        queue = app.extensions["cardtable"].ai.queue
        deadline = time.monotonic() + 30  # the admitted jobs finish, and leave nothing counted behind
        while queue.queued_seconds() > 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert queue.queued_seconds() == pytest.approx(0, abs=1e-6)
    finally:
        workers.stop()
        server.cleanup()


def test_every_game_and_level_has_a_measured_cost() -> None:
    """Each game's decisions are estimated from its own row (a game left out would cost what the dearest
    costs), higher levels cost more, Three Thirteen's two decks from 3 players cost more, time_ms bounds it."""
    from engine.registry import all_games

    assert {g.info.id for g in all_games()} == set(DECISION_SECONDS)
    for game_id in DECISION_SECONDS:
        costs = [estimate_cost(game_id, level, 2) for level in range(1, 6)]
        assert costs == sorted(costs) and costs[-1] > costs[0], game_id
    assert estimate_cost(TT, 3, 3) >= 2.4 * estimate_cost(TT, 3, 2)  # measured: 149 against 63 ms
    assert estimate_cost("least-score", 5, 6) > estimate_cost("least-score", 5, 4) == estimate_cost("least-score", 5, 2)
    assert estimate_cost("a-new-game", 3, 2) == max(row[3] for row in DECISION_SECONDS.values())
    assert estimate_cost(TT, 5, 2, time_ms=250) == 0.25  # a caller's bound, below the level's mean
    assert estimate_cost(TT, 3, 2, time_ms=10_000) == estimate_cost(TT, 3, 2)  # the level's work ends it first


def test_without_a_live_worker_a_hint_is_refused_at_once(redis_server: RedisServer) -> None:
    server = RedisServer().start()
    try:
        client = make_app(server.url).test_client()
        m = create(client, TT, 2, seed=5)
        token = m["seats"][m["view"]["to_move"]]["token"]
        r = client.get(f"/v1/matches/{m['match_id']}/hint", headers=bearer(token))
        assert r.status_code == 503 and r.get_json()["code"] == "ai_unavailable" and r.headers["Retry-After"]
        with redis.Redis.from_url(server.url) as plain:
            assert plain.xlen("ct:{ai}:jobs") == 0
    finally:
        server.cleanup()
