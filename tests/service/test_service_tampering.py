"""A property test of the stateless endpoints and of match creation: tampered states, views, moves, hands
and setups are answered 2xx or 4xx with a problem+json, never 5xx, each within a time bound.

Every example starts from a real input of a random game (a state a few random moves in, the view of the
seat to move, one of its legal moves, its hand, a setup made of its hands) and changes one to three places
in it: a value replaced by one of another type, a number nudged or blown up, a card swapped, a key dropped
or added, a list cut, doubled or grown. The run is derandomized (the same examples in CI every time);
``TAMPER_EXAMPLES`` sets how many per endpoint (default 60; try 2000 for a soak).
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engine.cards import CARD_NAMES
from engine.registry import all_games

EXAMPLES = int(os.environ.get("TAMPER_EXAMPLES", "60"))
#: Seconds one request may take (the AI is asked for level 1 and 20 ms; the rest is validation).
TIME_BOUND = 2.0
GAMES = all_games()

# -- the real inputs to start from ----------------------------------------------------------------------------


def base_inputs(game: Any, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    n = rng.randint(game.info.min_players, min(game.info.max_players, game.info.min_players + 2))
    state = game.new_match(n, seed=seed)
    for _ in range(rng.randrange(0, 30)):
        if state.is_over:
            break
        state, _ = game.apply(state, rng.choice(game.legal_moves(state)))
    if state.is_over:
        state = game.new_match(n, seed=seed)
    view = game.observation(state, state.to_move)
    fresh = game.new_match(n, seed=seed)
    hands = [game.observation(fresh, s)["hand"] for s in range(n)]
    return json.loads(json.dumps({
        "n": n,
        "state": game.to_json(state),
        "view": view,
        "move": rng.choice(game.legal_moves(state)),
        "hand": view["hand"],
        "setup": {"hands": hands, "dealer": 0, "round": 1, "totals": [0] * n},
    }))


# -- tampering ----------------------------------------------------------------------------------------------------

ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12), st.sampled_from(["7H", "JK", "ZZ", "10h", "", " 7H", "x" * 5000, "draw", "stock"]),
    st.lists(st.integers(-3, 300), max_size=6), st.lists(st.sampled_from(CARD_NAMES), max_size=6),
    st.dictionaries(st.text(max_size=6), st.integers(), max_size=3),
    st.just(["7H"] * 3000), st.just(list(range(5000))), st.just([[[[[1]]]]]), st.just({"zone": "stock", "size": 9}),
)


def places(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``doc`` (keys and list indexes)."""
    out = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            out.append((*path, key))
            out += places(value, (*path, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            out.append((*path, i))
            out += places(value, (*path, i))
    return out


def tamper(data: Any, doc: Any) -> Any:
    """``doc`` (a fresh copy) changed at one place drawn by hypothesis."""
    doc = json.loads(json.dumps(doc))
    spots = places(doc)
    if not spots:
        return data.draw(ODD_VALUES)
    path = data.draw(st.sampled_from(spots))
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    old = parent[key]
    how = data.draw(st.sampled_from(["replace", "nudge", "card", "drop", "add", "list"]))
    if how == "nudge" and isinstance(old, int) and not isinstance(old, bool):
        parent[key] = old + data.draw(st.sampled_from([-2, -1, 1, 2, 13, 1000, 10**9, -old - 1]))
    elif how == "card" and isinstance(old, str):
        parent[key] = data.draw(st.sampled_from(CARD_NAMES))
    elif how == "drop":
        del parent[key]
    elif how == "add" and isinstance(old, dict):
        old[data.draw(st.sampled_from(["note", "x", "seat", "hidden", "type", "known"]))] = data.draw(ODD_VALUES)
    elif how == "list" and isinstance(old, list):
        parent[key] = data.draw(st.sampled_from([old[: len(old) // 2], old + old, old * 40, [old], []]))
    else:
        parent[key] = data.draw(ODD_VALUES)
    return doc


def tampered(data: Any, doc: Any) -> Any:
    for _ in range(data.draw(st.integers(1, 3))):
        doc = tamper(data, doc)
    return doc


# -- the property -------------------------------------------------------------------------------------------------

# no shrinking: a failure's message carries the request body, and shrinking huge bodies takes minutes
PROFILE = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                   phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


def check_answer(client: Any, path: str, body: Any) -> int:
    started = time.perf_counter()
    r = client.post(path, json=body)
    elapsed = time.perf_counter() - started
    text = r.get_data(as_text=True)
    assert r.status_code < 500, f"{path}: {r.status_code} {text[:500]}\nbody: {json.dumps(body)[:2000]}"
    assert elapsed < TIME_BOUND, f"{path}: {elapsed:.2f} s\nbody: {json.dumps(body)[:2000]}"
    if r.status_code >= 400:
        assert r.mimetype == "application/problem+json", text[:300]
        problem = r.get_json()
        assert problem["status"] == r.status_code and problem["code"] and problem["detail"], problem
        assert len(text) < 20_000, f"a {len(text)}-byte problem: {text[:300]}"
    return int(r.status_code)


def draw_base(data: Any) -> tuple[Any, dict[str, Any]]:
    game = data.draw(st.sampled_from(GAMES), label="game")
    return game, base_inputs(game, data.draw(st.integers(0, 10_000), label="seed"))


@pytest.mark.parametrize("endpoint", ["legal-moves", "validate", "best-move", "analyze", "matches"])
@PROFILE
@given(data=st.data())
def test_tampered_inputs_get_4xx_never_5xx_within_a_time_bound(client: Any, endpoint: str, data: Any) -> None:
    game, base = draw_base(data)
    gid = game.info.id
    if endpoint == "legal-moves":
        check_answer(client, f"/v1/games/{gid}/legal-moves", tampered(data, {"state": base["state"]}))
    elif endpoint == "validate":
        check_answer(client, f"/v1/games/{gid}/validate", tampered(data, {"state": base["state"],
                                                                         "move": base["move"]}))
    elif endpoint == "best-move":
        body = tampered(data, {"view": base["view"]})
        if isinstance(body, dict):
            body.update(level=1, time_ms=20)
        check_answer(client, f"/v1/games/{gid}/best-move", body)
    elif endpoint == "analyze":
        check_answer(client, f"/v1/games/{gid}/analyze", tampered(data, {"hand": base["hand"], "round": 1,
                                                                        "options": {}}))
    else:
        players = [{"name": f"p{i}"} for i in range(base["n"])]
        body = tampered(data, {"game": gid, "players": players, "seed": 1, "setup": base["setup"]})
        check_answer(client, "/v1/matches", body)


def test_the_untampered_inputs_are_accepted(client: Any) -> None:
    """The starting points are real inputs: the property above tampers with valid requests."""
    for game in GAMES:
        base = base_inputs(game, 7)
        gid = game.info.id
        players = [{"name": f"p{i}"} for i in range(base["n"])]
        assert check_answer(client, f"/v1/games/{gid}/legal-moves", {"state": base["state"]}) == 200
        assert check_answer(client, f"/v1/games/{gid}/validate", {"state": base["state"], "move": base["move"]}) == 200
        assert check_answer(client, f"/v1/games/{gid}/best-move", {"view": base["view"], "level": 1,
                                                                   "time_ms": 20}) == 200
        assert check_answer(client, f"/v1/games/{gid}/analyze", {"hand": base["hand"]}) == 200
        assert check_answer(client, "/v1/matches", {"game": gid, "players": players, "setup": base["setup"]}) == 201
