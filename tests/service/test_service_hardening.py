"""Bad input never costs more than it says and never answers 5xx (issue 17): the reported cases, reproduced.

Each answer is a 422 problem+json that names what is wrong, in a bounded time, and changes nothing."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import pytest

from engine.registry import all_games, get_game
from service.bodies import MAX_JSON_DEPTH
from tests.service.helpers import bearer, create

TT = "three-thirteen"
POST_ENDPOINTS = ["/v1/games/threezies/legal-moves", "/v1/games/threezies/validate",
                  "/v1/games/threezies/best-move", "/v1/games/threezies/analyze", "/v1/matches"]


def refused(r: Any, code: str, *, within: float | None = None, started: float | None = None) -> dict[str, Any]:
    assert r.status_code == 422, r.get_data(as_text=True)
    assert r.mimetype == "application/problem+json"
    body = r.get_json()
    assert body["code"] == code, body
    assert body["detail"] and body["title"] and body["status"] == 422
    if within is not None and started is not None:
        assert time.perf_counter() - started < within
    return dict(body)


def post_timed(client: Any, path: str, **kwargs: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    return client.post(path, **kwargs), started


def a_view(game_id: str = TT, seed: int = 1) -> dict[str, Any]:
    game = get_game(game_id)
    state = game.new_match(game.info.min_players, seed=seed)
    return json.loads(json.dumps(game.observation(state, state.to_move)))


# -- CPU amplification through best-move's view ------------------------------------------------------------


def test_best_move_refuses_a_view_of_100000_players_at_once(client: Any) -> None:
    r, t = post_timed(client, f"/v1/games/{TT}/best-move", json={"view": {**a_view(), "num_players": 100_000}})
    body = refused(r, "invalid_view", within=0.5, started=t)
    assert "view.num_players" in body["errors"]


def test_best_move_refuses_5000000_jokers_per_deck_naming_the_option(client: Any) -> None:
    view = a_view()
    view["options"]["jokers_per_deck"] = 5_000_000
    r, t = post_timed(client, f"/v1/games/{TT}/best-move", json={"view": view})
    body = refused(r, "invalid_view", within=0.5, started=t)
    assert "'jokers_per_deck': must be at most 2" in body["detail"]


def test_a_wrongly_typed_view_is_a_client_error_not_an_ai_outage(client: Any) -> None:
    """``round: "1"`` reached the AI and came back as 503 "AI unavailable"."""
    r = client.post(f"/v1/games/{TT}/best-move", json={"view": {**a_view(), "round": "1"}, "level": 1, "time_ms": 20})
    body = refused(r, "invalid_view")
    assert body["errors"] == {"view.round": ["Not a valid integer."]}


def test_a_view_whose_hidden_zones_do_not_fit_the_deck_is_refused(client: Any) -> None:
    view = a_view()
    view["hidden"][-1]["size"] = 200
    refused(client.post(f"/v1/games/{TT}/best-move", json={"view": view}), "invalid_view")


def test_a_real_view_still_gets_a_move(client: Any) -> None:
    r = client.post(f"/v1/games/{TT}/best-move", json={"view": a_view(), "level": 1, "time_ms": 20})
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.get_json()["move"]["type"] == "draw"


# -- bodies: depth and size --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", POST_ENDPOINTS)
def test_json_nested_1000_deep_is_a_422_on_every_post_endpoint(client: Any, path: str) -> None:
    for document in ("[" * 1000 + "]" * 1000, '{"state":' + "[" * 1000 + "]" * 1000 + "}"):
        r, t = post_timed(client, path, data=document, content_type="application/json")
        body = refused(r, "invalid_request", within=0.5, started=t)
        assert f"more than {MAX_JSON_DEPTH} levels" in body["detail"]


def test_the_depth_limit_applies_to_match_endpoints_too(client: Any) -> None:
    m = create(client, TT, 2, seed=2)
    deep = '{"move":' + "[" * 200 + "]" * 200 + ', "expected_version": 0}'
    for path in (f"/v1/matches/{m['match_id']}/moves", f"/v1/matches/{m['match_id']}/advance"):
        refused(client.post(path, data=deep, content_type="application/json",
                            headers=bearer(m["seats"][0]["token"])), "invalid_request")


def test_a_body_at_the_depth_limit_is_parsed(client: Any) -> None:
    nested: Any = 0
    for _ in range(MAX_JSON_DEPTH - 2):
        nested = [nested]
    r = client.post(f"/v1/games/{TT}/analyze", json={"hand": ["7H"], "options": {"x": nested}})
    body = refused(r, "invalid_option")  # parsed, then refused by the schema: an option is a scalar
    assert body["option"] == "x" and "options.x.value" in body["errors"]


def test_a_body_that_is_not_json_says_so(client: Any) -> None:
    body = refused(client.post(f"/v1/games/{TT}/analyze", data=b"{hand: 7H}", content_type="application/json"),
                   "invalid_request")
    assert "not valid JSON" in body["detail"]
    refused(client.post(f"/v1/games/{TT}/analyze", data=b"\xff\xfe", content_type="application/json"),
            "invalid_request")


def test_a_body_over_the_size_limit_is_413(client: Any) -> None:
    r = client.post(f"/v1/games/{TT}/analyze", data=b" " * (2 << 20), content_type="application/json")
    assert r.status_code == 413 and r.mimetype == "application/problem+json"


# -- state blobs with wrongly typed fields ---------------------------------------------------------------------


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.info.id)
def test_wrongly_typed_state_fields_are_invalid_states(client: Any, game: Any) -> None:
    state = game.new_match(game.info.min_players, seed=4)
    move = game.legal_moves(state)[0]
    blob = game.to_json(state)
    for field, value in (("ply", "x"), ("turns_in_round", "x"), ("known", "zz"), ("known", [["7H", 3]]),
                         ("totals", [0.5, 0]), ("hands", [[None]])):
        if field not in blob:
            continue
        tampered = {**blob, field: value}
        for path, body in (("legal-moves", {"state": tampered}), ("validate", {"state": tampered, "move": move})):
            r = refused(client.post(f"/v1/games/{game.info.id}/{path}", json=body), "invalid_state")
            assert field in r["detail"]


# -- moves: what is stored is what the schema knows -------------------------------------------------------------


def test_a_move_with_an_invented_field_is_refused_and_the_log_holds_nothing_of_it(client: Any, app: Any) -> None:
    m = create(client, TT, 2, seed=2)
    mid, seat = m["match_id"], m["view"]["to_move"]
    token = m["seats"][seat]["token"]
    store = app.extensions["cardtable"].store
    before = (store.load(mid), store.log(mid))
    note = "<img src=x onerror=alert(1)>" * 8000  # ~200 KB
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                    json={"move": {"type": "draw", "source": "stock", "note": note}, "expected_version": 0})
    body = refused(r, "invalid_move")
    assert "no field 'note'" in body["detail"] and len(r.get_data()) < 2000
    assert (store.load(mid), store.log(mid)) == before
    # the same move without the invention is played; the log shows it as the engine knows it
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                    json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    assert r.status_code == 200
    card = r.get_json()["view"]["hand"][0]
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                    json={"move": {"type": "discard", "card": card.lower()}, "expected_version": 1})
    assert r.status_code == 200, r.get_data(as_text=True)
    log = client.get(f"/v1/matches/{mid}/log").get_json()
    assert [e["move"] for e in log["entries"][:2]] == [{"type": "draw", "source": "stock"},
                                                       {"type": "discard", "card": card}]


def test_validate_says_which_field_a_move_may_not_have(client: Any) -> None:
    game = get_game(TT)
    state = game.to_json(game.new_match(2, seed=9))
    r = client.post(f"/v1/games/{TT}/validate",
                    json={"state": state, "move": {"type": "draw", "source": "stock", "why": "because"}})
    assert r.status_code == 200
    assert r.get_json() == {"legal": False, "code": "invalid_move",
                            "detail": "a 'draw' move has no field 'why' (it takes source)"}


def test_a_setup_is_bounded_like_any_body(client: Any) -> None:
    players = [{"name": "a"}, {"name": "b"}]
    setup = {"hands": [["7H"] * 100_000, []]}
    r, t = post_timed(client, "/v1/matches", json={"game": TT, "players": players, "setup": setup})
    refused(r, "invalid_setup", within=1.0, started=t)
    deep = copy.deepcopy(setup)
    deep["hands"] = [[[[["7H"]]]]]
    body = refused(client.post("/v1/matches", json={"game": TT, "players": players, "setup": deep}), "invalid_card")
    assert "is not a card" in body["detail"]


SLOW_HAND = "5D 5H 5S 5S 6D 6D 6H 6H 6S 6S 7C 7D 7D 7D 7H 7S 7S 8C 8H 9C 9D JD JK KS"


def test_analyze_takes_no_hand_longer_than_the_game_deals(client: Any) -> None:
    """The exact solver is exponential in the hand: a 24-card Three Thirteen hand took 6.8 s; the longest
    hand of the game is 14 cards (13 dealt in round 11, plus a draw)."""
    hand = SLOW_HAND.split()
    options = {"decks": 4, "jokers_per_deck": 2}
    r, t = post_timed(client, f"/v1/games/{TT}/analyze", json={"hand": hand, "round": 11, "options": options})
    body = refused(r, "invalid_hand", within=0.5, started=t)
    assert body["errors"] == {"hand": ["at most 14 cards"]}
    r, t = post_timed(client, f"/v1/games/{TT}/analyze", json={"hand": hand[:14], "round": 11, "options": options})
    assert r.status_code == 200 and time.perf_counter() - t < 1.0


def test_a_problem_stays_small_whatever_the_body(client: Any) -> None:
    """3,000 bad items made a 150 KB answer (one error per item); a card-like string of 5,000 characters was
    quoted whole."""
    game = get_game(TT)
    state = game.to_json(game.new_match(2, seed=3))
    r = client.post(f"/v1/games/{TT}/legal-moves", json={"state": {**state, "round_scores": ["x"] * 3000}})
    body = refused(r, "invalid_state")
    assert len(r.get_data()) < 3000
    assert body["errors"]["_more"] == ["2980 more fields have errors"]
    r = client.post(f"/v1/games/{TT}/analyze", json={"hand": ["7H"], "options": {"aces": "x" * 5000}})
    assert len(r.get_data()) < 3000


def test_an_option_of_the_wrong_shape_is_an_invalid_option_naming_it(client: Any) -> None:
    r = client.post("/v1/matches", json={"game": TT, "players": [{}, {}], "options": {"decks": [1, 2]}})
    body = refused(r, "invalid_option")
    assert body["option"] == "decks" and "options.decks.value" in body["errors"]
