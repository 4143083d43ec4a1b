"""New matches, and the first answer to a creation retried with the same Idempotency-Key."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any

from service import jsonio
from service.seatstore import SeatStore
from service.store import IdempotentAnswer, MatchStore, StoredMatch, idem_key
from service.usecases.ai_work import AiWork, seat_buckets
from service.usecases.errors import IdempotencyKeyReusedError
from service.usecases.loading import LoadedMatch, game_by_id
from service.usecases.moves import fingerprint, key_digest
from service.usecases.seats import code_hash, derived_code, invitation_json, open_seat
from service.usecases.tokens import derived_token, new_match_id, new_token, token_hash

MAX_SEED = 2**62



def create_match(store: MatchStore, ai: AiWork, body: Mapping[str, Any], idempotency_key: str | None,
                 client: str | None, *, seat_store: SeatStore | None = None, invitation_ttl: int = 86400,
                 base_url: str = "") -> dict[str, Any]:
    """Create and store a match; the answer carries each human seat's token (shown once), and each open seat's
    invitation (its code shown once, stored hashed in ``seat_store``). If an AI seat moves first, its turn is
    queued before the match is stored (charged to the first human seat and the ``client``), and the answer
    says ``ai_pending``; with open seats the match waits for its players instead (status ``waiting``) and
    the AI's first turn is queued by the claim that takes the last seat."""
    game = game_by_id(body["game"], field="game")
    players = body["players"]
    seed = body.get("seed")
    if seed is None:
        seed = secrets.randbelow(MAX_SEED)
    options = body.get("options") or {}
    if body.get("setup") is not None:
        state = game.from_setup(len(players), body["setup"], options, seed=seed)
    else:
        state = game.new_match(len(players), options, seed=seed)
    match_id = new_match_id()
    tokens: list[str | None] = []
    codes: dict[int, str] = {}
    seats = []
    for i, p in enumerate(players):
        ai_spec = p.get("ai")
        if p.get("open"):
            record, codes[i] = open_seat(p.get("name"), i, match_id, invitation_ttl, idempotency_key)
            tokens.append(None)
            seats.append(record)
            continue
        if ai_spec is not None:
            tokens.append(None)
            seats.append({"name": p.get("name") or f"AI {i}", "ai": {"level": ai_spec.get("level", 3)},
                          "token_hash": None})
            continue
        token = derived_token(idempotency_key, match_id, i) if idempotency_key else new_token()
        tokens.append(token)
        seats.append({"name": p.get("name") or f"Seat {i}", "ai": None, "token_hash": token_hash(token)})
    start = {"num_players": len(players), "options": dict(state.options), "seed": seed,
             "setup": body.get("setup")}
    stored = StoredMatch(match_id, game.info.id, 0, jsonio.dumps(game.to_json(state)), seats, start, time.time())
    ai_seat = None if codes else LoadedMatch(stored, game, state).ai_seat_to_move()
    if ai_seat is not None:
        ai.queue_turn(stored, len(players), ai_seat, 0, seat_buckets(stored, client))
    human = next((i for i, t in enumerate(tokens) if t is not None), None)
    answer = {
        "match_id": match_id,
        "game": game.info.id,
        "version": 0,
        "state_id": stored.wid,
        "status": "waiting" if codes else "active",
        "seats": [{"seat": i, "name": s["name"], "ai": s["ai"], "open": bool(s.get("open")), "token": None,
                   "invitation": ({"seat": i, "match_id": match_id, "expires_at": int(s["invite_expires"]),
                                   "claim": None} if s.get("open") else None)}
                  for i, s in enumerate(seats)],
        "view": game.observation(state, human),
        "view_seat": human,
        "ai_pending": ai_seat is not None,
    }
    if codes and seat_store is None:
        raise ValueError("open seats need a seat store for their invitations")
    store.create(stored)
    for i, code in codes.items():
        assert seat_store is not None
        seat_store.put_invitation(code_hash(code), match_id, i)
    if idempotency_key:
        first = IdempotentAnswer(fingerprint(body), 201, answer)
        if not store.remember(idem_key(None, key_digest(idempotency_key)), first):
            # a concurrent retry with the same key won: answer as it did (this match just expires)
            replayed = replay_created(store, body, idempotency_key)
            if replayed is not None:
                return replayed
    full = jsonio.loads(jsonio.dumpb(answer))
    for seat_json, seat_token in zip(full["seats"], tokens, strict=True):
        seat_json["token"] = seat_token
    for i, code in codes.items():
        full["seats"][i]["invitation"] = invitation_json(code, match_id, i, seats[i]["invite_expires"], base_url)
    return full


def replay_created(store: MatchStore, body: Mapping[str, Any], idempotency_key: str,
                   base_url: str = "") -> dict[str, Any] | None:
    """The first answer to a creation retried with the same Idempotency-Key (tokens and invitation codes
    re-derived: neither is ever stored), if any."""
    remembered = store.idempotent(idem_key(None, key_digest(idempotency_key)))
    if remembered is None:
        return None
    if remembered.fingerprint != fingerprint(body):
        raise IdempotencyKeyReusedError("this Idempotency-Key was used for a different request")
    answer = jsonio.loads(jsonio.dumpb(remembered.body))
    for seat in answer["seats"]:
        if seat.get("open"):
            code = derived_code(idempotency_key, answer["match_id"], seat["seat"])
            seat["invitation"] = invitation_json(code, answer["match_id"], seat["seat"],
                                                 seat["invitation"]["expires_at"], base_url)
        elif seat["ai"] is None:
            seat["token"] = derived_token(idempotency_key, answer["match_id"], seat["seat"])
    return answer
