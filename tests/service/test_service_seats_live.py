"""Seats changing hands over real HTTP, seen on the event stream of another instance: a claim, a seat handed to
an AI by its holder (and the AI then plays it), an idle seat taken over on another player's request."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from engine.registry import get_game
from tests.servers import RedisServer
from tests.service.helpers import bearer, make_app
from tests.service.test_service_live import EventStream, Server

IDLE = 1.0


@pytest.fixture(scope="module")
def two(redis_server: RedisServer) -> Iterator[tuple[Server, Server]]:
    a = Server(make_app(redis_server.url, events_keepalive_seconds=0.5, seat_idle_seconds=IDLE))
    b = Server(make_app(redis_server.url, events_keepalive_seconds=0.5, seat_idle_seconds=IDLE))
    yield a, b
    a.close()
    b.close()


def table_of_two(a: Server, seed: int) -> tuple[str, list[str]]:
    """A Least Score match of two people: the host, and a guest who claimed the open seat."""
    status, _, m = a.request("POST", "/v1/matches", {"game": "least-score", "seed": seed,
                                                    "players": [{"name": "Host"}, {"open": True}]})
    assert status == 201, m
    code = m["seats"][1]["invitation"]["code"]
    status, _, claimed = a.request("POST", f"/v1/invitations/{code}/claim", {"name": "Guest"})
    assert status == 200, claimed
    return m["match_id"], [m["seats"][0]["token"], claimed["token"]]


def seat_events(stream: EventStream, kind: str) -> dict[str, Any]:
    """The next log entry on the stream that changes seats with an event of ``kind``."""
    while True:
        event = stream.next_of("move")
        assert event, f"the stream ended before a {kind} event"
        if event["data"]["move"] is None and event["data"]["events"][0]["type"] == kind:
            return dict(event)


def test_a_claim_is_an_event_on_the_hosts_stream(two: tuple[Server, Server]) -> None:
    a, b = two
    status, _, m = a.request("POST", "/v1/matches", {"game": "least-score", "seed": 1,
                                                    "players": [{"name": "Host"}, {"open": True}]})
    mid, host = m["match_id"], m["seats"][0]["token"]
    stream = EventStream(b.port, f"/v1/matches/{mid}/events?access_token={host}")
    first = stream.next_of("view")
    assert first["data"]["status"] == "waiting" and first["data"]["open_seats"] == [1]
    code = m["seats"][1]["invitation"]["code"]
    status, _, _ = a.request("POST", f"/v1/matches/{mid}/seats/1/claim", {"code": code, "name": "Bea"})
    assert status == 200
    event = seat_events(stream, "seat_claimed")
    assert event["id"] == "1" and event["data"]["events"][0] == {"type": "seat_claimed", "seat": 1, "name": "Bea",
                                                                "open_seats": []}
    stream.close()


def test_the_holder_hands_the_seat_to_an_ai_and_the_ai_plays_it(two: tuple[Server, Server]) -> None:
    a, b = two
    mid, tokens = table_of_two(a, seed=2)
    _, _, view = a.request("GET", f"/v1/matches/{mid}")
    to_move = view["view"]["to_move"]
    other = 1 - to_move
    stream = EventStream(b.port, f"/v1/matches/{mid}/events?since={view['version']}", bearer(tokens[other]))
    # only the seat's own token hands it over
    status, _, body = a.request("POST", f"/v1/matches/{mid}/seats/{to_move}/resign", {"level": 1},
                                bearer(tokens[other]))
    assert status == 401 and body["code"] == "unauthorized"
    status, _, body = a.request("POST", f"/v1/matches/{mid}/seats/{to_move}/resign", {"level": 9},
                                bearer(tokens[to_move]))
    assert status == 422 and "level" in body["errors"]
    status, _, done = a.request("POST", f"/v1/matches/{mid}/seats/{to_move}/resign", {"level": 1},
                                bearer(tokens[to_move]))
    assert status == 200, done
    assert done == {"match_id": mid, "seat": to_move, "ai": {"level": 1}, "version": view["version"] + 1}
    event = seat_events(stream, "seat_resigned")
    assert event["data"]["events"][0] == {"type": "seat_resigned", "seat": to_move, "level": 1}
    # the AI plays the seat's turn (queued by the change), seen on the other player's stream
    played = stream.next_of("move")
    assert played["data"]["ai"] is True and played["data"]["seat"] == to_move
    # the old token is no seat token any more
    status, _, body = a.request("GET", f"/v1/matches/{mid}", headers=bearer(tokens[to_move]))
    assert status == 401
    _, _, view = a.request("GET", f"/v1/matches/{mid}")
    assert view["seats"][to_move]["ai"] == {"level": 1}
    stream.close()


def test_an_idle_seat_is_taken_over_on_the_others_request(two: tuple[Server, Server]) -> None:
    a, b = two
    mid, tokens = table_of_two(a, seed=3)
    _, _, view = a.request("GET", f"/v1/matches/{mid}")
    idle = view["view"]["to_move"]
    other = 1 - idle
    path = f"/v1/matches/{mid}/seats/{idle}/takeover"
    status, headers, body = a.request("POST", path, {"level": 2}, bearer(tokens[other]))
    assert status == 409 and body["code"] == "seat_not_idle" and int(headers["retry-after"]) >= 1
    # not the seat everyone waits for; the seat's own holder; a spectator
    status, _, body = a.request("POST", f"/v1/matches/{mid}/seats/{other}/takeover", {}, bearer(tokens[idle]))
    assert status == 409 and body["code"] == "seat_not_idle"
    status, _, body = a.request("POST", path, {}, bearer(tokens[idle]))
    assert status == 422 and "resign" in body["detail"]
    status, _, body = a.request("POST", path, {})
    assert status == 401
    stream = EventStream(b.port, f"/v1/matches/{mid}/events?since={view['version']}", bearer(tokens[other]))
    time.sleep(IDLE + 0.1)
    status, _, done = a.request("POST", path, {"level": 2}, bearer(tokens[other]))
    assert status == 200, done
    event = seat_events(stream, "seat_taken_over")
    taken = event["data"]["events"][0]
    assert taken["seat"] == idle and taken["by"] == other and taken["level"] == 2 and taken["idle_seconds"] >= 1
    played = stream.next_of("move")
    assert played["data"]["ai"] is True and played["data"]["seat"] == idle
    stream.close()
    _, _, view = a.request("GET", f"/v1/matches/{mid}")
    assert view["seats"][idle]["ai"] == {"level": 2} and view["version"] >= done["version"] + 1


def play_to_the_end(a: Server, mid: str, tokens: list[str], seed: int) -> int:
    rng = random.Random(seed)
    for _ in range(2000):
        _, _, view = a.request("GET", f"/v1/matches/{mid}")
        if view["status"] == "over":
            return int(view["version"])
        seat = view["view"]["to_move"]
        _, _, legal = a.request("GET", f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[seat]))
        status, _, _ = a.request("POST", f"/v1/matches/{mid}/moves",
                                 {"move": rng.choice(legal["moves"]), "expected_version": view["version"]},
                                 bearer(tokens[seat]))
        assert status == 200
    raise AssertionError("the match did not end")


def test_a_rematch_rotates_the_seats_and_each_player_gets_the_new_token_on_their_stream(
        two: tuple[Server, Server]) -> None:
    a, b = two
    status, _, m = a.request("POST", "/v1/matches", {
        "game": "least-score", "seed": 4, "options": {"threshold": 25, "max_turns_per_round": 10},
        "players": [{"name": "Host"}, {"open": True}, {"name": "Bot", "ai": {"level": 1}}]})
    mid, host = m["match_id"], m["seats"][0]["token"]
    _, _, claimed = a.request("POST", f"/v1/invitations/{m['seats'][1]['invitation']['code']}/claim",
                              {"name": "Guest"})
    guest = claimed["token"]
    status, _, body = a.request("POST", f"/v1/matches/{mid}/rematch", {}, bearer(host))
    assert status == 409 and body["code"] == "match_not_over"
    # the AI seat plays its own turns: the people play theirs
    rng = random.Random(4)
    for _ in range(3000):
        _, _, view = a.request("GET", f"/v1/matches/{mid}?since=0&wait=5")
        if view["status"] == "over":
            break
        seat = view["view"]["to_move"]
        if seat == 2:
            a.request("GET", f"/v1/matches/{mid}?since={view['version']}&wait=5")
            continue
        token = [host, guest][seat]
        _, _, legal = a.request("GET", f"/v1/matches/{mid}/legal-moves", headers=bearer(token))
        a.request("POST", f"/v1/matches/{mid}/moves", {"move": rng.choice(legal["moves"]),
                                                       "expected_version": view["version"]}, bearer(token))
    else:
        raise AssertionError("the match did not end")
    end = view["version"]
    guest_stream = EventStream(b.port, f"/v1/matches/{mid}/events?since={end}&access_token={guest}")
    spectator = EventStream(b.port, f"/v1/matches/{mid}/events?since={end}")
    status, _, mine = a.request("POST", f"/v1/matches/{mid}/rematch", {}, bearer(host))
    assert status == 200, mine
    new_id = mine["match_id"]
    assert new_id != mid and mine["game"] == "least-score"
    # the guest's token comes on the guest's stream of the old match, and only there
    told = guest_stream.next_of("rematch")
    assert told["data"]["match_id"] == new_id and told["data"]["token"]
    event = spectator.next_of("move")
    assert event["data"]["events"][0]["type"] == "rematch"
    assert "token" not in json.dumps(event) and spectator.next()["comment"] == "keep-alive"
    guest_stream.close()
    spectator.close()
    # the same players, rotated: the player after the old first dealer deals first now
    moved = event["data"]["events"][0]["seats"]
    assert sorted(moved.values()) == [0, 1, 2]
    _, _, new = a.request("GET", f"/v1/matches/{new_id}", headers=bearer(told["data"]["token"]))
    assert new["seat"] == told["data"]["seat"] == moved["1"] and new["status"] == "active"
    assert [s["name"] for s in new["seats"]] == [["Host", "Guest", "Bot"][k] for k in
                                                 sorted(range(3), key=lambda k: moved[str(k)])]
    assert new["seats"][moved["2"]]["ai"] == {"level": 1}
    old_first_dealer = get_game("least-score").new_match(3, {"threshold": 25, "max_turns_per_round": 10},
                                                         seed=4).dealer
    assert new["view"]["dealer"] == moved[str((old_first_dealer + 1) % 3)]
    _, _, host_view = a.request("GET", f"/v1/matches/{new_id}", headers=bearer(mine["token"]))
    assert host_view["seat"] == mine["seat"] == moved["0"]
    # asked again (by the guest): the same rematch, and the same token the stream gave
    status, _, again = a.request("POST", f"/v1/matches/{mid}/rematch", {}, bearer(guest))
    assert status == 200 and again["match_id"] == new_id and again["token"] == told["data"]["token"]
