"""Every endpoint of the REST service, success and error paths, against a real Redis (RULES.md examples
through the API where the game exists)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.cards import parse_cards
from engine.registry import all_games, get_game
from tests.service.helpers import bearer, cards_in, create

TT = "three-thirteen"


def problem(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.get_data(as_text=True)
    assert r.mimetype == "application/problem+json"
    body = r.get_json()
    assert body["code"] == code and body["status"] == status
    assert body["type"].endswith(code) and body["title"] and body["detail"]
    return dict(body)


# -- games -----------------------------------------------------------------------------------------


def test_games_lists_every_registered_game_with_its_options(client: Any) -> None:
    body = client.get("/v1/games").get_json()
    assert [g["id"] for g in body["games"]] == [g.info.id for g in all_games()]
    for game in body["games"]:
        assert game["min_players"] <= game["max_players"]
        for option in game["options"]:
            assert {"name", "type", "default", "description"} <= set(option)


def test_one_game_has_its_rules_summary(client: Any) -> None:
    body = client.get(f"/v1/games/{TT}").get_json()
    assert body["id"] == TT and "11 rounds" in body["summary"] and body["rules_section"] == "RULES.md §2"


def test_unknown_game_is_404(client: Any) -> None:
    problem(client.get("/v1/games/poker"), 404, "unknown_game")
    problem(client.post("/v1/games/poker/analyze", json={"hand": ["7H"]}), 404, "unknown_game")


def test_unknown_route_and_method_are_problems(client: Any) -> None:
    problem(client.get("/v1/nothing"), 404, "not_found")
    r = problem(client.delete("/v1/games"), 405, "method_not_allowed")
    assert r["detail"]


# -- creating matches ----------------------------------------------------------------------------


def test_create_gives_tokens_once_and_the_first_seat_view(client: Any) -> None:
    m = create(client, TT, 3, seed=7)
    assert m["version"] == 0 and len(m["seats"]) == 3
    tokens = [s["token"] for s in m["seats"]]
    assert all(tokens) and len(set(tokens)) == 3
    assert m["view"]["seat"] == 0 and len(m["view"]["hand"]) == 3
    # the token is never shown again
    view = client.get(f"/v1/matches/{m['match_id']}", headers=bearer(tokens[0])).get_json()
    assert tokens[0] not in json.dumps(view)


def test_create_rejects_unknown_game_bad_option_bad_player_count(client: Any) -> None:
    r = problem(client.post("/v1/matches", json={"game": "poker", "players": [{}, {}]}), 422, "unknown_game")
    assert "poker" in r["detail"]
    r = problem(client.post("/v1/matches", json={"game": TT, "players": [{}, {}], "options": {"decks": 9}}),
                422, "invalid_option")
    assert "decks" in r["detail"] and r["option"] == "decks"
    r = problem(client.post("/v1/matches", json={"game": TT, "players": [{}, {}], "options": {"nope": 1}}),
                422, "invalid_option")
    assert "nope" in r["detail"]
    r = problem(client.post("/v1/matches", json={"game": "threezies", "players": [{}] * 4}), 422, "invalid_option")
    assert "players" in r["detail"]


def test_create_rejects_malformed_bodies_with_field_errors(client: Any) -> None:
    r = problem(client.post("/v1/matches", json={"players": "two"}), 422, "invalid_request")
    assert set(r["errors"]) == {"game", "players"}
    r = problem(client.post("/v1/matches", data="not json", content_type="application/json"), 422,
                "invalid_request")
    r = problem(client.post("/v1/matches", json={"game": TT, "players": [{"ai": {"level": 9}}]}), 422,
                "invalid_request")
    assert "players.0.ai.level" in r["errors"]
    problem(client.post("/v1/matches", json={"game": TT, "players": [{}, {}], "seed": -1}), 422, "invalid_request")


def test_create_from_an_explicit_position(client: Any) -> None:
    setup = {"round": 2, "dealer": 1, "hands": [["4C", "9S", "9H", "9D"], ["2C", "3D", "5H", "7S"]],
             "discard": ["KS"], "totals": [10, 4]}
    m = create(client, TT, 2, setup=setup, seed=3)
    view = m["view"]
    assert view["round"] == 2 and view["hand"] == ["4C", "9D", "9H", "9S"] and view["discard"] == ["KS"]
    assert view["totals"] == [10, 4] and view["to_move"] == 0
    r = client.post("/v1/matches", json={"game": TT, "players": [{}, {}],
                                          "setup": {"hands": [["4C"], ["5C"]]}})
    assert "R2" in problem(r, 422, "invalid_setup")["detail"]
    r = client.post("/v1/matches", json={"game": TT, "players": [{}, {}],
                                          "setup": {"hands": [["XX", "9S", "9H"], ["2C", "3D", "5H"]]}})
    assert "XX" in problem(r, 422, "invalid_card")["detail"]


def test_create_is_idempotent_with_a_key_and_tokens_come_back(client: Any) -> None:
    body = {"game": TT, "players": [{"name": "ann"}, {"name": "bob"}], "seed": 5}
    key = {"Idempotency-Key": "create-0123456789abcdef"}
    first = client.post("/v1/matches", json=body, headers=key)
    again = client.post("/v1/matches", json=body, headers=key)
    assert first.status_code == again.status_code == 201
    assert first.get_json() == again.get_json()
    token = first.get_json()["seats"][0]["token"]
    assert client.get(f"/v1/matches/{first.get_json()['match_id']}/legal-moves",
                      headers=bearer(token)).status_code == 200
    problem(client.post("/v1/matches", json={**body, "seed": 6}, headers=key), 422, "idempotency_key_reused")
    problem(client.post("/v1/matches", json=body, headers={"Idempotency-Key": "short"}), 422,
            "invalid_idempotency_key")


# -- views, legal moves, moves -------------------------------------------------------------------


def test_seat_view_hides_other_hands_and_the_stock(client: Any, app: Any) -> None:
    m = create(client, TT, 2, seed=11)
    mid = m["match_id"]
    svc = app.extensions["cardtable"]
    state = json.loads(svc.store.load(mid).state)
    for seat, token in enumerate(s["token"] for s in m["seats"]):
        view = client.get(f"/v1/matches/{mid}", headers=bearer(token)).get_json()
        assert view["seat"] == seat and view["view"]["hand"] == state["hands"][seat]
        other = set(state["hands"][1 - seat]) | set(state["stock"])
        assert not cards_in(view) & (other - set(state["discard"]))
    spectator = client.get(f"/v1/matches/{mid}").get_json()
    assert spectator["seat"] is None and spectator["view"]["hand"] == []
    assert not cards_in(spectator) - set(state["discard"])


def test_bad_tokens_and_missing_matches(client: Any) -> None:
    m = create(client, TT, 2)
    mid = m["match_id"]
    problem(client.get(f"/v1/matches/{mid}", headers=bearer("nope")), 401, "unauthorized")
    problem(client.get(f"/v1/matches/{mid}", headers={"Authorization": "Basic abc"}), 401, "unauthorized")
    r = client.get(f"/v1/matches/{mid}/legal-moves")
    problem(r, 401, "unauthorized")
    assert "Bearer" in r.headers["WWW-Authenticate"]
    problem(client.post(f"/v1/matches/{mid}/moves", json={"move": {"type": "draw", "source": "stock"},
                                                          "expected_version": 0}), 401, "unauthorized")
    problem(client.get("/v1/matches/doesnotexist"), 404, "match_not_found")
    problem(client.get("/v1/matches/doesnotexist/log"), 404, "match_not_found")
    problem(client.get(f"/v1/matches/{mid}", query_string={"since": "x"}), 422, "invalid_request")


def test_a_turn_through_the_api(client: Any) -> None:
    m = create(client, TT, 2, seed=1)
    mid, (t0, t1) = m["match_id"], [s["token"] for s in m["seats"]]
    moves = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(t0)).get_json()
    assert moves["version"] == 0 and {"type": "draw", "source": "stock"} in moves["moves"]
    assert client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(t1)).get_json()["moves"] == []
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(t0),
                    json={"move": {"type": "draw", "source": "discard"}, "expected_version": 0})
    assert r.status_code == 200, r.get_json()
    out = r.get_json()
    assert out["version"] == 1 and out["events"][0]["type"] == "draw" and out["events"][0]["version"] == 1
    assert len(out["view"]["hand"]) == 4
    discard = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(t0)).get_json()["moves"][0]
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(t0), json={"move": discard, "expected_version": 1})
    assert r.status_code == 200 and r.get_json()["view"]["to_move"] == 1
    # events since a version
    since = client.get(f"/v1/matches/{mid}", query_string={"since": 1}, headers=bearer(t1)).get_json()
    assert [e["version"] for e in since["events"]] == [2] and since["events"][0]["type"] == "discard"


def test_legal_moves_follow_the_seat_and_the_version(client: Any) -> None:
    m = create(client, TT, 2, seed=5)
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    seat = m["view"]["to_move"]
    url = f"/v1/matches/{mid}/legal-moves"
    r = client.get(url, headers=bearer(tokens[seat]))
    mine = r.get_json()
    # compact JSON, as every answer (the answer is kept per version and seat, as bytes)
    assert r.get_data(as_text=True) == json.dumps(mine, separators=(",", ":")) + "\n"
    theirs = client.get(url, headers=bearer(tokens[1 - seat])).get_json()
    assert mine["version"] == theirs["version"] == 0 and mine["moves"] and theirs["moves"] == []
    assert mine["seat"] == seat and theirs["seat"] == 1 - seat and theirs["to_move"] == seat
    assert client.get(url, headers=bearer(tokens[seat])).get_json() == mine  # asked again
    draw = next(mv for mv in mine["moves"] if mv["type"] == "draw")
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[seat]),
                    json={"move": draw, "expected_version": 0})
    assert r.status_code == 200
    after = client.get(url, headers=bearer(tokens[seat])).get_json()
    assert after["version"] == 1 and after["moves"] and all(mv["type"] != "draw" for mv in after["moves"])


def test_moves_work_after_redis_forgets_its_scripts(client: Any, app: Any) -> None:
    m = create(client, TT, 2, seed=6)
    mid, seat = m["match_id"], m["view"]["to_move"]
    token = m["seats"][seat]["token"]
    app.extensions["cardtable"].store.client.script_flush()  # as after a restart of Redis
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                    json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    assert r.status_code == 200 and r.get_json()["version"] == 1
    app.extensions["cardtable"].store.client.script_flush()
    assert client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["version"] == 1


def test_rejected_moves_change_nothing(client: Any, app: Any) -> None:
    m = create(client, TT, 2, seed=2)
    mid, (t0, t1) = m["match_id"], [s["token"] for s in m["seats"]]
    store = app.extensions["cardtable"].store
    before = (store.load(mid), store.log(mid))

    def post(token: str, move: Any, version: int = 0) -> Any:
        return client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                           json={"move": move, "expected_version": version})

    r = problem(post(t0, {"type": "discard", "card": m["view"]["hand"][0]}), 422, "illegal_move")
    assert "R3" in r["detail"]
    problem(post(t0, {"type": "draw", "source": "sky"}), 422, "invalid_move")
    problem(post(t0, {"type": "fly"}), 422, "invalid_move")
    problem(post(t0, {"type": "discard", "card": "ZZ"}), 422, "invalid_card")
    problem(post(t1, {"type": "draw", "source": "stock"}), 409, "not_your_turn")
    r = problem(post(t0, {"type": "draw", "source": "stock"}, version=5), 409, "stale_version")
    assert r["version"] == 0
    problem(client.post(f"/v1/matches/{mid}/moves", headers=bearer(t0), json={"move": "draw"}), 422,
            "invalid_request")
    after = (store.load(mid), store.log(mid))
    assert (after[0].version, after[0].state, after[1]) == (before[0].version, before[0].state, before[1])


def test_moves_are_idempotent_with_a_key(client: Any) -> None:
    m = create(client, TT, 2, seed=3)
    mid, t0 = m["match_id"], m["seats"][0]["token"]
    body = {"move": {"type": "draw", "source": "stock"}, "expected_version": 0}
    key = {"Idempotency-Key": "move-1", **bearer(t0)}
    first = client.post(f"/v1/matches/{mid}/moves", json=body, headers=key)
    again = client.post(f"/v1/matches/{mid}/moves", json=body, headers=key)
    assert first.status_code == again.status_code == 200 and first.get_json() == again.get_json()
    assert client.get(f"/v1/matches/{mid}").get_json()["version"] == 1  # applied once
    problem(client.post(f"/v1/matches/{mid}/moves", headers=key,
                        json={"move": {"type": "draw", "source": "discard"}, "expected_version": 0}),
            422, "idempotency_key_reused")


def test_advance_without_ai_seats_does_nothing(client: Any) -> None:
    m = create(client, TT, 2, seed=4)
    r = client.post(f"/v1/matches/{m['match_id']}/advance", json={})
    assert r.status_code == 200 and r.get_json()["version"] == 0 and r.get_json()["events"] == []
    problem(client.post(f"/v1/matches/{m['match_id']}/advance", json={"expected_version": 3}), 409,
            "stale_version")


def _play_to_end(client: Any, m: dict[str, Any], limit: int = 5000) -> int:
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    version = m["version"]
    for _ in range(limit):
        view = client.get(f"/v1/matches/{mid}").get_json()
        if view["status"] == "over":
            return version
        seat = view["view"]["to_move"]
        moves = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[seat])).get_json()["moves"]
        # prefer going out, then the first listed move: a short, deterministic match
        move = next((mv for mv in moves if mv["type"] == "go_out"), moves[-1] if version % 3 else moves[0])
        r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[seat]),
                        json={"move": move, "expected_version": version})
        assert r.status_code == 200, r.get_json()
        version = r.get_json()["version"]
    raise AssertionError("the match did not end")


def test_a_whole_short_match_and_its_log_replays(client: Any, app: Any) -> None:
    m = create(client, "threezies", 2, seed=21, options={"max_turns_per_round": 10})
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    # mid-match: the log shows public parts plus the asking seat's own private parts
    for _ in range(4):
        view = client.get(f"/v1/matches/{mid}").get_json()
        seat = view["view"]["to_move"]
        move = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[seat])).get_json()["moves"][0]
        client.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[seat]),
                    json={"move": move, "expected_version": view["version"]})
    log0 = client.get(f"/v1/matches/{mid}/log", headers=bearer(tokens[0])).get_json()
    public = client.get(f"/v1/matches/{mid}/log").get_json()
    assert "seed" not in public["start"] and all("private" not in e for e in public["entries"])
    assert all(set(e.get("private", {})) <= {"0"} for e in log0["entries"])
    assert any("private" in e for e in log0["entries"])  # a card drawn from the stock
    final = _play_to_end(client, {**m, "version": log0["version"]})
    log = client.get(f"/v1/matches/{mid}/log").get_json()
    assert log["status"] == "over" and log["version"] == final and log["start"]["seed"] == 21
    game = get_game("threezies")
    replayed = game.replay(game.new_match(2, log["start"]["options"], seed=log["start"]["seed"]),
                           [e["move"] for e in log["entries"]])
    stored = app.extensions["cardtable"].store.load(mid)
    assert game.to_json(replayed) == json.loads(stored.state)
    end = client.get(f"/v1/matches/{mid}").get_json()
    assert end["scores"]["winners"] and end["scores"]["totals"] == replayed.totals
    problem(client.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[0]),
                        json={"move": {"type": "draw", "source": "stock"}, "expected_version": final}),
            409, "game_over")
    assert client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[0])).get_json()["moves"] == []


# -- stateless -----------------------------------------------------------------------------------


def analyze(client: Any, game: str, hand: str, round_no: int, **options: Any) -> dict[str, Any]:
    r = client.post(f"/v1/games/{game}/analyze", json={"hand": hand.split(), "round": round_no,
                                                          "options": options})
    assert r.status_code == 200, r.get_json()
    return dict(r.get_json())


@pytest.mark.parametrize(("name", "hand", "round_no", "options", "score"), [
    ("TT1", "3C 7D 7S", 1, {}, 0),
    ("TT2", "KS QH 5D", 1, {}, 25),
    ("TT3", "7H 8H 9H 9S 9D 9C", 4, {}, 0),
    ("TT4", "5H 6H 7H 8H 5S 5D 8S 8D KC", 7, {}, 20),
    ("TT5", "JS KS TS QH QD 6C", 4, {}, 20),
    ("TT6", "3S 4S 5S 6S 7H 6D 6C", 5, {}, 0),
    ("TT7", "KS 5H 5D 2C 2D", 3, {}, 4),
    ("TT8", "7H 7H 7S 5C 5D", 3, {"decks": 2}, 0),
    ("TT9a", "QS KS AS", 1, {}, 21),
    ("TT9b", "QS KS AS", 1, {"aces": "high_or_low"}, 0),
    ("TT9c", "AS KH 2D", 1, {}, 13),
    ("TT9d", "AS KH 2D", 1, {"aces": "high_or_low"}, 27),
    ("TT9e", "KH AH 3C", 1, {}, 14),
    ("TT9f", "KH AH 3C", 1, {"aces": "high_or_low"}, 0),
    ("TT11", "KS KH 2C 3C 5C 9D 9H 9S QD JD TD 4H 4S", 11, {}, 0),
])
def test_three_thirteen_examples_through_analyze(client: Any, name: str, hand: str, round_no: int,
                                                  options: dict[str, Any], score: int) -> None:
    out = analyze(client, TT, hand, round_no, **options)
    assert out["score"] == score, name
    melded = [c for m in out["melds"] for c in m["cards"]]
    assert sorted(melded + out["deadwood"]) == sorted(out["hand"])


def test_tt10_going_out_through_analyze(client: Any) -> None:
    out = analyze(client, TT, "4C 9S 9H 9D KS", 2)
    assert out["can_go_out"] and "KS" in out["go_out_discards"] and out["wild_rank"] == 4


@pytest.mark.parametrize(("name", "hand", "round_no", "score"), [
    ("TZ1", "7S 7H 7D 7C TS TH 2D 3D 4D 5D", 8, 0),
    ("TZ2", "JS JH JD 6C 4S 8H", 4, 12),
    ("TZ3", "9C 9D 9H 2S 8D KC", 4, 20),
    ("TZ4a", "QH KH AH", 1, 0),
    ("TZ4b", "KH AH 2H", 1, 13),
    ("TZ4c", "KH AH 3C", 1, 0),
    ("TZ4d", "KS 2S 3C", 1, 15),
    ("TZ5", "AH KH 5C QS QD", 3, 11),
    ("TZ6", "JS KS TS QH QD 6C", 4, 20),
])
def test_threezies_examples_through_analyze(client: Any, name: str, hand: str, round_no: int, score: int) -> None:
    assert analyze(client, "threezies", hand, round_no)["score"] == score, name


def test_analyze_rejects_bad_hands(client: Any) -> None:
    problem(client.post(f"/v1/games/{TT}/analyze", json={"hand": ["7H", "ZZ"]}), 422, "invalid_card")
    problem(client.post("/v1/games/threezies/analyze", json={"hand": ["7H", "7H"]}), 422, "invalid_hand")
    problem(client.post(f"/v1/games/{TT}/analyze", json={"hand": ["7H"], "round": 12}), 422, "invalid_request")
    problem(client.post(f"/v1/games/{TT}/analyze", json={"hand": "7H"}), 422, "invalid_request")
    problem(client.post(f"/v1/games/{TT}/analyze", json={"hand": ["7H"], "options": {"aces": "x"}}), 422,
            "invalid_option")


def _state(seed: int = 9) -> dict[str, Any]:
    game = get_game(TT)
    return game.to_json(game.new_match(2, seed=seed))


def test_stateless_legal_moves_and_validate(client: Any) -> None:
    state = _state()
    r = client.post(f"/v1/games/{TT}/legal-moves", json={"state": state})
    assert r.status_code == 200 and r.get_json()["to_move"] == state["to_move"]
    assert {"type": "draw", "source": "stock"} in r.get_json()["moves"]
    ok = client.post(f"/v1/games/{TT}/validate", json={"state": state, "move": {"type": "draw", "source": "discard"}})
    body = ok.get_json()
    assert ok.status_code == 200 and body["legal"] and body["state"]["phase"] == "discard" and body["events"]
    bad = client.post(f"/v1/games/{TT}/validate", json={"state": state, "move": {"type": "discard", "card": "7H"}})
    assert bad.status_code == 200 and bad.get_json()["legal"] is False
    assert bad.get_json()["code"] == "illegal_move" and bad.get_json()["detail"]
    malformed = client.post(f"/v1/games/{TT}/validate", json={"state": state, "move": {"type": "x"}})
    assert malformed.get_json() == {"legal": False, "code": "invalid_move", "detail": malformed.get_json()["detail"]}


def test_stateless_rejects_inconsistent_states(client: Any) -> None:
    state = _state()
    state["hands"][0] = state["hands"][0][:-1]  # a card vanished
    problem(client.post(f"/v1/games/{TT}/legal-moves", json={"state": state}), 422, "invalid_state")
    problem(client.post(f"/v1/games/{TT}/validate", json={"state": {"format": 1}, "move": {"type": "x"}}), 422,
            "invalid_state")
    problem(client.post("/v1/games/threezies/legal-moves", json={"state": _state()}), 422, "invalid_state")
    problem(client.post(f"/v1/games/{TT}/legal-moves", json={}), 422, "invalid_request")
    broken = _state()
    broken["hands"] = "oops"
    problem(client.post(f"/v1/games/{TT}/legal-moves", json={"state": broken}), 422, "invalid_state")


def test_best_move_rejects_views_that_are_not_real_observations(client: Any) -> None:
    game = get_game(TT)
    state = game.new_match(2, seed=5)
    view = game.observation(state, state.to_move)
    bad = dict(view, hand=view["hand"][:-1])
    problem(client.post(f"/v1/games/{TT}/best-move", json={"view": bad}), 422, "invalid_view")
    other = game.observation(state, 1 - (state.to_move or 0))
    problem(client.post(f"/v1/games/{TT}/best-move", json={"view": other}), 422, "invalid_view")
    problem(client.post("/v1/games/threezies/best-move", json={"view": view}), 422, "invalid_view")
    problem(client.post(f"/v1/games/{TT}/best-move", json={"view": view, "time_ms": 10**9}), 422,
            "invalid_request")
    problem(client.post(f"/v1/games/{TT}/best-move", json={"view": {"game": TT, "seat": 0, "to_move": 0}}), 422,
            "invalid_view")


# -- operations ----------------------------------------------------------------------------------


def test_health_ready_metrics_spec_and_docs(client: Any) -> None:
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json()["checks"]["store"] == "ok"
    client.get("/v1/games")
    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'cardtable_http_requests_total{endpoint="/v1/games",method="GET",status="200"}' in metrics
    assert "cardtable_http_request_seconds_bucket" in metrics and "cardtable_store_errors" in metrics
    spec = client.get("/openapi.yaml")
    assert spec.status_code == 200 and spec.get_data(as_text=True).startswith("openapi: 3.1")
    assert client.get("/openapi.json").get_json()["openapi"].startswith("3.1")
    docs = client.get("/docs").get_data(as_text=True)
    assert "/openapi.json" in docs and "http://" not in docs and "https://" not in docs.replace(
        "https://cardtable.dev", "")


# -- the store -----------------------------------------------------------------------------------


def test_matches_expire_after_the_idle_time(redis_server: Any) -> None:
    import time

    from tests.service.helpers import make_app

    short = make_app(redis_server.url, match_ttl_seconds=1).test_client()
    m = create(short, TT, 2)
    store = short.application.extensions["cardtable"].store
    assert 0 < store.client.ttl(f"ct:{{{m['match_id']}}}:m") <= 1
    time.sleep(1.6)
    problem(short.get(f"/v1/matches/{m['match_id']}"), 404, "match_not_found")


def test_tokens_are_stored_only_as_hashes(client: Any, app: Any) -> None:
    m = create(client, TT, 2)
    raw = app.extensions["cardtable"].store.client.hgetall(f"ct:{{{m['match_id']}}}:m")
    stored = b" ".join(k + b" " + v for k, v in raw.items())
    for seat in m["seats"]:
        assert seat["token"].encode() not in stored


def test_redis_urls_for_sentinel_and_single_servers() -> None:
    from redis.sentinel import SentinelConnectionPool

    from service.store import connect

    primary = connect("redis+sentinel://:secret@s1:26379,s2:26380/mymaster/2")
    pool = primary.connection_pool
    assert isinstance(pool, SentinelConnectionPool) and pool.service_name == "mymaster"
    assert [(c.connection_pool.connection_kwargs["host"], c.connection_pool.connection_kwargs["port"])
            for c in pool.sentinel_manager.sentinels] == [("s1", 26379), ("s2", 26380)]
    assert pool.connection_kwargs["db"] == 2 and pool.connection_kwargs["password"] == "secret"
    single = connect("rediss://user:pw@cache.example:6380/1", max_connections=7)
    kwargs = single.connection_pool.connection_kwargs
    assert (kwargs["host"], kwargs["port"], kwargs["db"]) == ("cache.example", 6380, 1)
    assert single.connection_pool.max_connections == 7


# -- analyze for the other games (RULES.md examples) -----------------------------------------------


def _analyze(client: Any, game: str, hand: str, **body: Any) -> dict[str, Any]:
    r = client.post(f"/v1/games/{game}/analyze", json={"hand": hand.split(), **body})
    assert r.status_code == 200, r.get_json()
    return dict(r.get_json())


def test_least_score_ls5_ls7_through_analyze(client: Any) -> None:
    assert _analyze(client, "least-score", "KS QH 2D AC")["total"] == 23  # LS7
    groups = {" ".join(g) for g in _analyze(client, "least-score", "7S 7H 7D 2C KS")["groups"]}
    assert {"7H 7S", "7D 7S", "7D 7H"} <= groups and "7D 7H 7S" not in groups  # LS5: never three of a kind
    as_sets = [set(g) for g in _analyze(client, "least-score", "QS KH AD 2C 3S")["groups"]]
    assert {"QS", "KH", "AD"} in as_sets and {"AD", "2C", "3S"} in as_sets
    assert {"KH", "AD", "2C"} not in as_sets  # K-A-2 wraps
    flush = [set(g) for g in _analyze(client, "least-score", "2H 5H 9H JH KH")["groups"]]
    assert {"2H", "5H", "9H", "JH", "KH"} in flush


def test_contract_rummy_cr2_cr3_cr7_through_analyze(client: Any) -> None:
    assert _analyze(client, "contract-rummy", "3S 9D TC KH AS 2C JK")["score"] == 90  # CR2
    assert _analyze(client, "contract-rummy", "4D 4C 8S")["score"] == 15
    cr3 = _analyze(client, "contract-rummy", "7S 7H 7D QC QD JK 4C 9H", round=1)
    assert cr3["contract"] == "2 sets of 3" and cr3["can_go_down"]
    assert [sorted(m["cards"]) for m in cr3["go_downs"][0]] == [["7D", "7H", "7S"], ["JK", "QC", "QD"]]
    cr7 = _analyze(client, "contract-rummy", "3D 4D 5D 6D 7D 9C TC JC QC KS KH KD 8H", round=7)
    assert cr7["can_go_down"]
    laid = sorted(parse_cards("3D 4D 5D 6D 7D 9C TC JC QC KS KH KD"))
    assert any(sorted(parse_cards([c for m in way for c in m["cards"]])) == laid for way in cr7["go_downs"])
    problem(client.post("/v1/games/contract-rummy/analyze", json={"hand": ["7S"], "round": 8}), 422,
            "invalid_request")


def test_less_than_three_melds_by_type_through_analyze(client: Any) -> None:
    out = _analyze(client, "less-than-three", "5S 5H 6D 6C 7D")
    assert len(out["melds"]["single"]) == 5
    assert {tuple(m["cards"]) for m in out["melds"]["set"]} == {("5H", "5S"), ("6C", "6D")}
    assert [m["cards"] for m in out["melds"]["run"]] == [["6D", "7D"]]  # LT5's 6D 7D is a run
    problem(client.post("/v1/games/less-than-three/analyze", json={"hand": ["5S", "5S"]}), 422, "invalid_hand")
    problem(client.post("/v1/games/less-than-three/analyze", json={"hand": ["JS"]}), 422, "invalid_hand")


def test_the_log_survives_chunking_and_since_reads_across_chunks(client: Any, app: Any) -> None:
    """More moves than a log chunk holds: every entry is kept once, in order, and `since` finds them."""
    from service.store import CHUNK

    m = create(client, "threezies", 2, seed=31, options={"max_turns_per_round": 200})
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    version = 0
    for _ in range(2 * CHUNK + 5):
        view = client.get(f"/v1/matches/{mid}").get_json()["view"]
        if view["to_move"] is None:
            break
        token = tokens[view["to_move"]]
        move = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["moves"][0]
        r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                        json={"move": move, "expected_version": version})
        version = r.get_json()["version"]
    assert version > 2 * CHUNK
    store = app.extensions["cardtable"].store
    assert store.client.llen(f"ct:{{{mid}}}:log") == version // CHUNK
    assert store.client.llen(f"ct:{{{mid}}}:tail") == version % CHUNK
    log = client.get(f"/v1/matches/{mid}/log").get_json()
    assert [e["version"] for e in log["entries"]] == list(range(1, version + 1))
    later = client.get(f"/v1/matches/{mid}/log", query_string={"since": CHUNK + 3}).get_json()
    assert [e["version"] for e in later["entries"]] == list(range(CHUNK + 4, version + 1))
    for since in (0, CHUNK - 1, CHUNK, CHUNK + 1, version - 1):
        _, entries = store.log(mid, since)
        assert [e["v"] for e in entries] == list(range(since + 1, version + 1))
    game = get_game("threezies")
    replayed = game.replay(game.new_match(2, {"max_turns_per_round": 200}, seed=31),
                           [e["move"] for e in log["entries"]])
    assert game.to_json(replayed) == json.loads(store.load(mid).state)


def test_cors_only_for_configured_origins(redis_server: Any) -> None:
    from tests.service.helpers import make_app

    open_app = make_app(redis_server.url, cors_origins="https://cards.example").test_client()
    r = open_app.options("/v1/matches", headers={"Origin": "https://cards.example",
                                                  "Access-Control-Request-Method": "POST"})
    assert r.status_code == 204 and r.headers["Access-Control-Allow-Origin"] == "https://cards.example"
    assert "Authorization" in r.headers["Access-Control-Allow-Headers"]
    r = open_app.get("/v1/games", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in r.headers


def test_oversized_bodies_are_refused(client: Any) -> None:
    r = client.post(f"/v1/games/{TT}/analyze", data=b"[" + b"1," * (1 << 20) + b"1]", content_type="application/json")
    problem(r, 413, "payload_too_large")
