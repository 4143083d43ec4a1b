"""Open seats and invitations, claims, a seat handed to an AI by its holder, an idle seat taken over: against a
real Redis (the session's server, with an AI worker serving its queue)."""

from __future__ import annotations

import hashlib
import json
import random
import time
from typing import Any

import pytest

from engine.registry import all_games
from service.seatstore import invitation_key
from service.store import match_key
from service.usecases.seats import code_hash
from tests.servers import RedisServer
from tests.service.helpers import bearer, cards_in, create, make_app
from tests.service.test_service_leaks import (
    CHECK_EVERY,
    MOVES_PER_MATCH,
    _check_every_response,
    stored_state_and_seen,
)

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def seats_app(redis_server: RedisServer) -> Any:
    return make_app(redis_server.url, seat_idle_seconds=1.0)


@pytest.fixture()
def c(seats_app: Any) -> Any:
    return seats_app.test_client()


def invite(c: Any, game: str = "least-score", players: list[dict[str, Any]] | None = None, **body: Any
           ) -> dict[str, Any]:
    players = players or [{"name": "Ann"}, {"open": True, "name": "guest"}, {"ai": {"level": 1}}]
    return create(c, game, players=players, seed=5, **body)


def problem(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.get_data(as_text=True)
    assert r.mimetype == PROBLEM
    body = r.get_json()
    assert body["code"] == code and body["status"] == status and body["detail"]
    return dict(body)


def redis_of(c: Any) -> Any:
    return c.application.extensions["cardtable"].store.client


def test_a_match_with_an_open_seat_waits_for_its_player(c: Any) -> None:
    m = invite(c)
    ann, guest, ai = m["seats"]
    assert m["status"] == "waiting" and m["ai_pending"] is False
    assert ann["token"] and ann["invitation"] is None and ann["open"] is False
    assert guest["token"] is None and guest["open"] is True and ai["invitation"] is None
    inv = guest["invitation"]
    assert len(inv["code"]) == 10 and inv["url"].endswith("/play/join#" + inv["code"])
    assert inv["url"].startswith("http://localhost/") and inv["seat"] == 1 and inv["match_id"] == m["match_id"]
    assert inv["expires_at"] > time.time() + 3600
    # the code is stored hashed only: neither the match nor the invitation key holds it
    r = redis_of(c)
    stored = r.hgetall(match_key(m["match_id"]))
    assert inv["code"].encode() not in b"".join(stored.values())
    assert r.get(invitation_key(code_hash(inv["code"]))) is not None
    assert not [k for k in r.scan_iter(match=f"*{inv['code']}*")]
    mid = m["match_id"]
    view = c.get(f"/v1/matches/{mid}", headers=bearer(ann["token"])).get_json()
    assert view["status"] == "waiting" and view["open_seats"] == [1]
    assert [s["open"] for s in view["seats"]] == [False, True, False]
    # nothing can be played while waiting, and nothing changed
    legal = c.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(ann["token"])).get_json()
    assert legal["moves"] == []
    body = problem(c.post(f"/v1/matches/{mid}/moves", headers=bearer(ann["token"]),
                          json={"move": {"type": "declare"}, "expected_version": 0}), 409, "match_waiting")
    assert body["open_seats"] == [1] and "seat 1" in body["detail"]
    problem(c.post(f"/v1/matches/{mid}/advance", json={}), 409, "match_waiting")
    assert c.get(f"/v1/matches/{mid}").get_json()["version"] == 0


def test_claiming_an_invitation_gives_the_token_once_and_starts_the_match(c: Any) -> None:
    m = invite(c)
    mid, code = m["match_id"], m["seats"][1]["invitation"]["code"]
    # the code as a person may type it: lower case, with a dash
    typed = code[:5].lower() + "-" + code[5:]
    r = c.post(f"/v1/invitations/{typed}/claim", json={"name": "Bea"})
    assert r.status_code == 200, r.get_data(as_text=True)
    claimed = r.get_json()
    assert claimed["match_id"] == mid and claimed["seat"] == 1 and claimed["name"] == "Bea"
    assert claimed["status"] == "active" and claimed["open_seats"] == [] and claimed["version"] == 1
    assert r.headers["Cache-Control"] == "no-store"
    token = claimed["token"]
    view = c.get(f"/v1/matches/{mid}", headers=bearer(token)).get_json()
    assert view["seat"] == 1 and view["status"] == "active" and view["open_seats"] == []
    assert view["seats"][1] == {"seat": 1, "name": "Bea", "ai": None, "open": False}
    # single use: the same code again, by either path
    problem(c.post(f"/v1/invitations/{code}/claim", json={}), 409, "seat_taken")
    problem(c.post(f"/v1/matches/{mid}/seats/1/claim", json={"code": code}), 409, "seat_taken")
    # the claim is in the log as a change of seats (no move), and the match plays
    log = c.get(f"/v1/matches/{mid}/log", headers=bearer(token)).get_json()["entries"]
    assert log[0]["move"] is None and log[0]["events"] == [{"type": "seat_claimed", "seat": 1, "name": "Bea",
                                                            "open_seats": []}]
    # the AI seat (2) may have played since the claim (version 1): the view read now says whose turn it is, and
    # at which version; while it is a person's turn nothing else moves
    view = c.get(f"/v1/matches/{mid}", headers=bearer(token)).get_json()
    assert view["version"] >= 1
    mover = {0: m["seats"][0]["token"], 1: token}.get(view["view"]["to_move"])
    if mover is not None:
        legal = c.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(mover)).get_json()
        assert legal["moves"]
        r = c.post(f"/v1/matches/{mid}/moves", headers=bearer(mover),
                   json={"move": legal["moves"][0], "expected_version": view["version"]})
        assert r.status_code == 200, r.get_data(as_text=True)
        assert r.get_json()["version"] == view["version"] + 1


def test_the_seat_path_needs_the_right_code(c: Any) -> None:
    m = invite(c, players=[{"name": "Ann"}, {"open": True}, {"open": True}])
    mid = m["match_id"]
    code1, code2 = (m["seats"][i]["invitation"]["code"] for i in (1, 2))
    # wrong code, another seat's code, a seat with no invitation, a seat that is not there, a match that is not
    # there: the same 404, saying nothing of which it was
    answers = [c.post(f"/v1/matches/{mid}/seats/1/claim", json={"code": "ZZZZZZZZZZ"}),
               c.post(f"/v1/matches/{mid}/seats/1/claim", json={"code": code2}),
               c.post(f"/v1/matches/{mid}/seats/0/claim", json={"code": code1}),
               c.post(f"/v1/matches/{mid}/seats/7/claim", json={"code": code1}),
               c.post("/v1/matches/nope/seats/1/claim", json={"code": code1}),
               c.post("/v1/invitations/ZZZZZZZZZZ/claim", json={})]
    details = {json.dumps({k: v for k, v in problem(r, 404, "invitation_not_found").items()}) for r in answers}
    assert len(details) == 1
    problem(c.post(f"/v1/matches/{mid}/seats/1/claim", json={}), 422, "invalid_request")  # no code
    problem(c.post(f"/v1/matches/{mid}/seats/1/claim", json={"code": code1, "name": ""}), 422, "invalid_request")
    assert c.get(f"/v1/matches/{mid}").get_json()["version"] == 0  # nothing changed
    r = c.post(f"/v1/matches/{mid}/seats/2/claim", json={"code": code2, "name": "Cy"})
    assert r.status_code == 200 and r.get_json()["status"] == "waiting" and r.get_json()["open_seats"] == [1]
    view = c.get(f"/v1/matches/{mid}").get_json()
    assert view["status"] == "waiting" and view["open_seats"] == [1] and view["version"] == 1
    r = c.post(f"/v1/matches/{mid}/seats/1/claim", json={"code": code1})
    assert r.status_code == 200 and r.get_json()["status"] == "active" and r.get_json()["name"] == "Seat 1"
    assert r.get_json()["token"] != m["seats"][0]["token"]


def test_an_expired_invitation(redis_server: RedisServer) -> None:
    c = make_app(redis_server.url, invitation_ttl_seconds=0).test_client()
    m = invite(c)
    code = m["seats"][1]["invitation"]["code"]
    time.sleep(0.05)
    problem(c.post(f"/v1/invitations/{code}/claim", json={}), 410, "invitation_expired")
    problem(c.post(f"/v1/matches/{m['match_id']}/seats/1/claim", json={"code": code}), 410, "invitation_expired")
    assert c.get(f"/v1/matches/{m['match_id']}").get_json()["status"] == "waiting"


def test_an_ai_that_moves_first_starts_once_the_last_seat_is_taken(c: Any) -> None:
    # the seat that moves first with this seed is the AI's; its turn is queued only by the claim that fills
    # the table: before it, nothing plays
    lead = invite(c, game="three-thirteen", players=[{"name": "a"}, {"name": "b"}, {"name": "c"}])["view"]["to_move"]
    players: list[dict[str, Any]] = [{"name": "Ann"}, {"open": True}, {"name": "Cy"}]
    players[lead] = {"ai": {"level": 1}}
    guest = 1 if lead != 1 else 2
    players[guest] = {"open": True}
    m = invite(c, game="three-thirteen", players=players)
    mid = m["match_id"]
    first = c.get(f"/v1/matches/{mid}").get_json()
    assert first["view"]["to_move"] == lead and first["status"] == "waiting"
    time.sleep(0.5)
    assert c.get(f"/v1/matches/{mid}").get_json()["version"] == 0  # the AI waits too
    code = m["seats"][guest]["invitation"]["code"]
    assert c.post(f"/v1/invitations/{code}/claim", json={}).status_code == 200
    r = c.get(f"/v1/matches/{mid}", query_string={"since": 1, "wait": 10})
    assert r.get_json()["version"] >= 2
    log = c.get(f"/v1/matches/{mid}/log").get_json()["entries"]
    assert log[1]["ai"] is True and log[1]["seat"] == lead


def test_idempotent_creation_gives_the_same_invitations_again(c: Any) -> None:
    key = "seat-test-" + hashlib.sha256(str(time.time()).encode()).hexdigest()[:20]
    body = {"game": "least-score", "players": [{"name": "Ann"}, {"open": True}], "seed": 3}
    first = c.post("/v1/matches", json=body, headers={"Idempotency-Key": key}).get_json()
    again = c.post("/v1/matches", json=body, headers={"Idempotency-Key": key}).get_json()
    assert again == first and first["seats"][1]["invitation"]["code"]
    assert first["seats"][1]["token"] is None


def test_an_open_seat_cannot_be_an_ai(c: Any) -> None:
    r = c.post("/v1/matches", json={"game": "least-score", "players": [{"name": "a"}, {"open": True, "ai": {}}]})
    problem(r, 422, "invalid_request")


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.info.id)
def test_claimed_seats_leak_nothing(c: Any, game: Any) -> None:
    """The leak test of ``test_service_leaks`` on a match whose seats were claimed with invitations: each
    claimed token sees no card it may not see (view, log, legal moves, hint), nor does the creator or a
    spectator."""
    n = min(game.info.max_players, 3)
    rng = random.Random(f"leak-claimed/{game.info.id}")
    m = create(c, game.info.id, players=[{"name": "host"}] + [{"open": True} for _ in range(n - 1)],
               seed=rng.randrange(10**9))
    mid = m["match_id"]
    tokens = [m["seats"][0]["token"]]
    for seat in m["seats"][1:]:
        r = c.post(f"/v1/invitations/{seat['invitation']['code']}/claim", json={"name": f"guest {seat['seat']}"})
        assert r.status_code == 200 and not cards_in(r.get_json())
        tokens.append(r.get_json()["token"])
    store = c.application.extensions["cardtable"].store
    seen: dict[int | None, set[str]] = {s: set() for s in [*range(n), None]}
    version, checked = n - 1, 0
    for step in range(MOVES_PER_MATCH):
        state = stored_state_and_seen(store, game, mid, seen)
        if state.is_over:
            break
        if step % CHECK_EVERY == 0:
            checked += _check_every_response(c, game, state, mid, tokens, seen)
        moves = c.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[state.to_move])).get_json()["moves"]
        r = c.post(f"/v1/matches/{mid}/moves", headers=bearer(tokens[state.to_move]),
                   json={"move": rng.choice(moves), "expected_version": version})
        assert r.status_code == 200, r.get_json()
        version = r.get_json()["version"]
    assert checked > 0


def test_racing_claims_of_one_code_give_one_token(c: Any, seats_app: Any) -> None:
    """Eight clients claim the same code at once (threads, real Redis): one gets the token, the others 409."""
    import threading

    m = invite(c)
    code = m["seats"][1]["invitation"]["code"]
    answers: list[Any] = []
    start = threading.Barrier(8)

    def claim() -> None:
        client = seats_app.test_client()
        start.wait()
        r = client.post(f"/v1/invitations/{code}/claim", json={})
        answers.append((r.status_code, r.get_json()))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(status for status, _ in answers) == [200] + [409] * 7, answers
    assert {body["code"] for status, body in answers if status == 409} == {"seat_taken"}
    log = c.get(f"/v1/matches/{m['match_id']}/log").get_json()["entries"]
    assert [e["events"][0]["type"] for e in log if e["move"] is None] == ["seat_claimed"]  # one claim saved, once


def test_claims_of_two_seats_at_once_both_land(c: Any, seats_app: Any) -> None:
    """Two friends claim their seats at the same moment: the one that loses the version race retries."""
    import threading

    m = invite(c, players=[{"name": "Ann"}, {"open": True}, {"open": True}])
    codes = [m["seats"][i]["invitation"]["code"] for i in (1, 2)]
    answers: list[int] = []
    start = threading.Barrier(2)

    def claim(code: str) -> None:
        client = seats_app.test_client()
        start.wait()
        answers.append(client.post(f"/v1/invitations/{code}/claim", json={}).status_code)

    threads = [threading.Thread(target=claim, args=(code,)) for code in codes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert answers == [200, 200]
    view = c.get(f"/v1/matches/{m['match_id']}").get_json()
    assert view["status"] == "active" and view["version"] == 2


def test_a_claim_redis_does_not_confirm_is_503_store_timeout_and_can_be_tried_again(
        redis_server: RedisServer) -> None:
    """Writes paused (CLIENT PAUSE WRITE) past the app's socket timeout: the claim's script gets no answer, the
    claim is 503 store_timeout (it may have been applied), and Redis drops the held script when the client
    gives up; once writes go on, the same code claims the seat."""
    import redis as redis_py

    app = make_app(redis_server.url, store_retry_after=3)
    c = app.test_client()
    m = invite(c, players=[{"name": "Ann"}, {"open": True}])  # no AI: the claim's script is its only write
    code = m["seats"][1]["invitation"]["code"]
    raw = redis_py.Redis.from_url(redis_server.url)
    # (the match is not in this app's cache: the claim reads it with HMGET, not with a script, which would wait)
    raw.client_pause(3000, all=False)  # writes (and scripts) wait 3 s; reads go on
    try:
        started = time.monotonic()
        r = c.post(f"/v1/invitations/{code}/claim", json={"name": "Bea"})
        assert time.monotonic() - started < 3
        body = problem(r, 503, "store_timeout")
        assert "may have been applied" in body["detail"] and r.headers["Retry-After"] == "3"
    finally:
        raw.client_unpause()
    assert c.get(f"/v1/matches/{m['match_id']}").get_json()["version"] == 0  # this time it was not
    r = c.post(f"/v1/invitations/{code}/claim", json={"name": "Bea"})
    assert r.status_code == 200 and r.get_json()["version"] == 1
