"""No response tells a seat a card it may not see.

Random matches of every registered game are played through the API. After each move the test follows,
from the engine's true state (read from the store), what each seat has ever been able to see: its
observations' visible cards, the public events, and its own private log parts. At checkpoints every
card still hidden from a seat (in another hand or the stock) and never seen by it must be absent from
that seat's view, events, legal moves, log and hint responses — and from the spectator's.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from engine.cards import CARD_NAMES
from engine.registry import all_games
from tests.servers import RedisServer
from tests.service.helpers import bearer, cards_in, create, make_app

MOVES_PER_MATCH = 40
CHECK_EVERY = 4


@pytest.fixture(scope="module")
def leak_client(redis_server: RedisServer) -> Any:
    return make_app(redis_server.url).test_client()


def _visible(game: Any, state: Any, seat: int | None) -> set[str]:
    return {CARD_NAMES[c] for c in game.visible_cards(game.observation(state, seat))}


def _never_seen_hidden(game: Any, state: Any, seat: int | None, seen: set[str]) -> set[str]:
    """Cards somewhere in the true state, not visible to ``seat`` now and never seen by it before."""
    everything = Counter(CARD_NAMES[c] for c in game.cards_in_play(state))
    return {c for c in everything if c not in seen and c not in _visible(game, state, seat)}


def _sizes(game: Any) -> list[int]:
    lo, hi = game.info.min_players, game.info.max_players
    return sorted({lo, min(hi, lo + 2)})


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.info.id)
def test_no_response_leaks_an_unseen_card(leak_client: Any, game: Any) -> None:
    client = leak_client
    for n in _sizes(game):
        rng = random.Random(f"leak/{game.info.id}/{n}")
        m = create(client, game.info.id, n, seed=rng.randrange(10**9))
        mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
        store = client.application.extensions["cardtable"].store
        seats: list[int | None] = [*range(n), None]
        seen: dict[int | None, set[str]] = {s: set() for s in seats}
        checked = 0
        version = m["version"]
        for step in range(MOVES_PER_MATCH):
            state = stored_state_and_seen(store, game, mid, seen)
            if state.is_over:
                break
            if step % CHECK_EVERY == 0:
                checked += _check_every_response(client, game, state, mid, tokens, seen)
            seat = state.to_move
            moves = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[seat])).get_json()["moves"]
            r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[seat]),
                            json={"move": rng.choice(moves), "expected_version": version})
            assert r.status_code == 200, r.get_json()
            version = r.get_json()["version"]
        assert checked > 0, "the check never had a hidden card to look for"


def stored_state_and_seen(store: Any, game: Any, mid: str, seen: dict[int | None, set[str]]) -> Any:
    """The match's true state from the store, after adding to ``seen`` (per seat, ``None`` for a spectator)
    every card each one could know of by now: what its view shows, the public events, its private cards."""
    state = game.from_json(json.loads(store.load(mid).state))
    _, entries = store.log(mid)
    for s in seen:
        seen[s] |= _visible(game, state, s)
        for e in entries:
            seen[s] |= cards_in(e["e"])
            if s is not None:
                seen[s] |= set((e.get("p") or {}).get(str(s), []))
    return state


def _check_every_response(client: Any, game: Any, state: Any, mid: str, tokens: list[str],
                          seen: dict[int | None, set[str]]) -> int:
    checked = 0
    for seat in [*range(state.num_players), None]:
        secret = _never_seen_hidden(game, state, seat, seen[seat])
        if not secret:
            continue
        checked += 1
        headers = bearer(tokens[seat]) if seat is not None else {}
        responses = {
            "view": client.get(f"/v1/matches/{mid}", query_string={"since": 0}, headers=headers).get_json(),
            "log": client.get(f"/v1/matches/{mid}/log", headers=headers).get_json(),
        }
        if seat is not None:
            responses["legal-moves"] = client.get(f"/v1/matches/{mid}/legal-moves", headers=headers).get_json()
            if state.to_move == seat:
                r = client.get(f"/v1/matches/{mid}/hint", query_string={"level": 1, "time_ms": 10}, headers=headers)
                assert r.status_code == 200, r.get_json()
                responses["hint"] = r.get_json()
        for name, body in responses.items():
            leaked = cards_in(body) & secret
            assert not leaked, f"{game.info.id}: the {name} response of seat {seat} shows {sorted(leaked)}"
    return checked


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.info.id)
def test_ai_seats_leak_nothing_to_the_human(leak_client: Any, game: Any) -> None:
    """The AI seats' automatic turns (their events and private log parts) show the human nothing unseen."""
    client = leak_client
    n = game.info.min_players
    rng = random.Random(f"leak-ai/{game.info.id}")
    players = [{"name": "human"}] + [{"ai": {"level": 1}} for _ in range(n - 1)]
    m = create(client, game.info.id, players=players, seed=rng.randrange(10**9), wait=10)
    mid, token = m["match_id"], m["seats"][0]["token"]
    store = client.application.extensions["cardtable"].store
    seen: set[str] = set()
    checked = 0
    for _ in range(12):
        state = game.from_json(json.loads(store.load(mid).state))
        _, entries = store.log(mid)
        seen |= _visible(game, state, 0)
        for e in entries:
            seen |= cards_in(e["e"]) | set((e.get("p") or {}).get("0", []))
        if state.is_over:
            break
        secret = _never_seen_hidden(game, state, 0, seen)
        assert secret, "nothing hidden from the human: the check would be empty"
        checked += 1
        for path, query in ((f"/v1/matches/{mid}", {"since": 0}), (f"/v1/matches/{mid}/log", {}),
                            (f"/v1/matches/{mid}/legal-moves", {})):
            body = client.get(path, query_string=query, headers=bearer(token)).get_json()
            assert not cards_in(body) & secret, f"{game.info.id}: {path} shows {sorted(cards_in(body) & secret)}"
        moves = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["moves"]
        assert moves, "after the AI turns it is the human's decision"
        version = store.load(mid).version
        r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token), query_string={"wait": 10},
                        json={"move": rng.choice(moves), "expected_version": version})
        assert r.status_code == 200, r.get_json()
        # the answer's events (the human move and the AI turns after it) are exactly the public ones
        public = client.get(f"/v1/matches/{mid}/log").get_json()["entries"]
        expected = [{**event, "version": e["version"]} for e in public if e["version"] > version
                    for event in e["events"]]
        assert r.get_json()["events"] == expected
    assert checked > 0
