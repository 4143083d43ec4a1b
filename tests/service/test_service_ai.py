"""The AI through the API: AI seats that play by themselves, /advance, hints, stateless best-move, rate limits."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.game import move_key
from engine.registry import get_game
from tests.servers import RedisServer
from tests.service.helpers import bearer, create, make_app

TT = "three-thirteen"


@pytest.fixture(scope="module")
def ai_client(redis_server: RedisServer) -> Any:
    return make_app(redis_server.url, ai_move_time_ms=20, ai_request_budget_ms=5000).test_client()


def keys(moves: list[dict[str, Any]]) -> set[Any]:
    return {move_key(m) for m in moves}


def test_ai_seats_play_their_turns_after_a_human_move(ai_client: Any) -> None:
    m = create(ai_client, TT, players=[{"name": "me"}, {"ai": {"level": 1}}], seed=8,
               setup={"hands": [["2C", "7D", "KS"], ["4H", "9H", "QS"]], "dealer": 1})
    mid, token = m["match_id"], m["seats"][0]["token"]
    assert m["seats"][1]["token"] is None and m["seats"][1]["ai"] == {"level": 1}
    assert m["version"] == 0 and m["view"]["to_move"] == 0
    r = ai_client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                       json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    r = ai_client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                       json={"move": {"type": "discard", "card": "KS"}, "expected_version": 1})
    out = r.get_json()
    assert r.status_code == 200, out
    # the AI seat drew and discarded before the answer: the human is to move again
    assert out["view"]["to_move"] == 0 and out["version"] >= 4
    assert {e["seat"] for e in out["events"] if "seat" in e} == {0, 1}
    log = ai_client.get(f"/v1/matches/{mid}/log", headers=bearer(token)).get_json()
    assert [e["ai"] for e in log["entries"]][:4] == [False, False, True, True]
    assert all("1" not in e.get("private", {}) for e in log["entries"])  # the AI seat's cards stay hidden


def test_all_ai_match_stops_at_the_budget_and_advance_continues(redis_server: RedisServer) -> None:
    client = make_app(redis_server.url, ai_move_time_ms=5, ai_request_budget_ms=50).test_client()
    m = create(client, TT, players=[{"ai": {"level": 1}}, {"ai": {"level": 1}}], seed=4)
    assert m["view_seat"] is None and m["view"]["seat"] is None and m["view"]["hand"] == []
    version = m["version"]
    for _ in range(3):
        r = client.post(f"/v1/matches/{m['match_id']}/advance", json={"expected_version": version})
        assert r.status_code == 200, r.get_json()
        assert r.get_json()["version"] > version
        version = r.get_json()["version"]
    stale = client.post(f"/v1/matches/{m['match_id']}/advance", json={"expected_version": 0})
    assert stale.status_code == 409 and stale.get_json()["code"] == "stale_version"


def test_hint_gives_a_legal_move_with_value_alternatives_and_explanation(ai_client: Any) -> None:
    m = create(ai_client, TT, 2, seed=12)
    mid, (t0, t1) = m["match_id"], [s["token"] for s in m["seats"]]
    seat = m["view"]["to_move"]
    token = (t0, t1)[seat]
    r = ai_client.get(f"/v1/matches/{mid}/hint", query_string={"level": 1, "time_ms": 30}, headers=bearer(token))
    hint = r.get_json()
    assert r.status_code == 200, hint
    legal = ai_client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["moves"]
    assert move_key(hint["move"]) in keys(legal)
    assert hint["alternatives"] and all(move_key(a["move"]) in keys(legal) for a in hint["alternatives"])
    assert isinstance(hint["value"], float) and hint["explanation"] and hint["version"] == 0
    metrics = ai_client.get("/metrics").get_data(as_text=True)
    assert 'cardtable_ai_search_seconds_count{game="three-thirteen",kind="hint"}' in metrics
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


def test_ai_endpoints_are_rate_limited_per_ip_and_per_token(redis_server: RedisServer) -> None:
    client = make_app(redis_server.url, rate_limit_enabled=True, ai_rate_limit="2 per minute",
                      ai_ip_rate_limit="4 per minute", ai_move_time_ms=10).test_client()
    game = get_game(TT)
    state = game.new_match(2, seed=3)
    body = {"view": game.observation(state, state.to_move), "level": 1, "time_ms": 10}
    ip = {"REMOTE_ADDR": f"10.9.{id(client) % 250}.1"}
    m = create(client, TT, 2, seed=3)
    token = m["seats"][m["view"]["to_move"]]["token"]

    def hint(token: str) -> Any:
        return client.get(f"/v1/matches/{m['match_id']}/hint", query_string={"level": 1, "time_ms": 10},
                          headers=bearer(token), environ_base=ip)

    first = hint(token)
    # the limited endpoints tell their limit; the others carry no rate-limit headers
    assert first.status_code == 200 and first.headers["X-RateLimit-Limit"] == "2"
    assert first.headers["X-RateLimit-Remaining"] == "1"
    assert "X-RateLimit-Limit" not in client.get(f"/v1/matches/{m['match_id']}", environ_base=ip).headers
    assert hint(token).status_code == 200
    r = hint(token)  # the seat's token is out of hints
    assert r.status_code == 429 and r.get_json()["code"] == "rate_limited"
    assert int(r.headers["Retry-After"]) >= 1 and r.mimetype == "application/problem+json"
    # made-up tokens get token buckets of their own, but the IP's limit (4 AI requests) still holds
    statuses = [client.post(f"/v1/games/{TT}/best-move", json=body, headers=bearer(f"made-up-{i}"),
                            environ_base=ip).status_code for i in range(3)]
    assert statuses.count(200) <= 2 and statuses[-1] == 429
    # another client is not affected, and the endpoints that need no AI are not limited
    other = {"REMOTE_ADDR": "10.200.0.2"}
    assert client.post(f"/v1/games/{TT}/best-move", json=body, environ_base=other).status_code == 200
    for _ in range(6):
        assert client.get(f"/v1/matches/{m['match_id']}", environ_base=ip).status_code == 200


def test_a_failing_ai_keeps_the_human_move_and_advance_retries(ai_client: Any, monkeypatch: Any) -> None:
    import ai

    m = create(ai_client, TT, players=[{"name": "me"}, {"ai": {"level": 1}}], seed=8,
               setup={"hands": [["2C", "7D", "KS"], ["4H", "9H", "QS"]], "dealer": 1})
    mid, token = m["match_id"], m["seats"][0]["token"]
    ai_client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                   json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    real = ai.choose_move

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("AI bug")

    monkeypatch.setattr(ai, "choose_move", broken)
    r = ai_client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                       json={"move": {"type": "discard", "card": "KS"}, "expected_version": 1})
    assert r.status_code == 200 and r.get_json()["version"] == 2 and r.get_json()["view"]["to_move"] == 1
    r = ai_client.post(f"/v1/matches/{mid}/advance", json={"expected_version": 2})
    assert r.status_code == 503 and r.get_json()["code"] == "ai_unavailable" and "Traceback" not in r.text
    monkeypatch.setattr(ai, "choose_move", real)
    r = ai_client.post(f"/v1/matches/{mid}/advance", json={"expected_version": 2})
    assert r.status_code == 200 and r.get_json()["version"] >= 4 and r.get_json()["view"]["to_move"] == 0
