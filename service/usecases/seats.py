"""Who sits where: open seats and their invitations, claims, a seat handed to an AI by its holder, a seat
idle too long taken over by an AI on the others' request.

A seat record (in the match's ``seats``, never shown as is) may carry, besides ``name``, ``ai`` and
``token_hash``:

``open``
    true while nobody holds the seat: the match waits (status ``waiting``) until no seat is open, and
    refuses moves meanwhile;
``invite_hash``, ``invite_expires``
    the SHA-256 of the seat's invitation code, and when the code stops working (epoch seconds). The hash
    stays after the claim, so that the code used again answers ``seat_taken`` rather than "not found".

Every change is a version of its own (:meth:`service.seatstore.SeatStore.change_seats`): a log entry with
``"m": null`` whose events say what changed (``seat_claimed``, ``seat_resigned``, ``seat_taken_over``).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import hmac
import secrets
import time
from collections.abc import Sequence
from typing import Any

import redis

from engine.errors import GameOverError
from service import jsonio
from service.seatstore import SeatStore
from service.store import MatchNotFound, MatchStore, StaleVersion, StoredMatch, WriteUnconfirmed, new_wid
from service.usecases.ai_work import AiWork
from service.usecases.errors import (
    InvitationExpiredError,
    InvitationNotFoundError,
    MatchNotFoundError,
    MatchNotOverError,
    MatchWaitingError,
    SeatNotIdleError,
    SeatTakenError,
    ServiceError,
    StoreTimeoutError,
    UnauthorizedError,
)
from service.usecases.loading import LoadedMatch, MatchCache, load
from service.usecases.tokens import derived_token, new_match_id, new_token, token_hash

#: Invitation codes: ten letters and digits that cannot be mistaken for one another when read aloud or
#: copied by hand (Crockford's base 32: no I, L, O, U), about 50 bits.
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 10
NOT_FOUND = "no such invitation (check the code; it may have been mistyped)"



def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def derived_code(idempotency_key: str, match_id: str, seat: int) -> str:
    """The code of an open seat created with an Idempotency-Key (a retried creation gives it again)."""
    mac = hmac.new(idempotency_key.encode(), f"cardtable-invite/{match_id}/{seat}".encode(), hashlib.sha256).digest()
    return "".join(CODE_ALPHABET[b % 32] for b in mac[:CODE_LENGTH])


def normal_code(code: str) -> str:
    """A code as typed: any case, dashes and spaces ignored, the letters Crockford reads as digits read so."""
    out = code.upper().replace("-", "").replace(" ", "")
    return out.translate(str.maketrans("OIL", "011"))


def code_hash(code: str) -> str:
    return hashlib.sha256(f"cardtable-invite:{normal_code(code)}".encode()).hexdigest()


def open_seats(seats: Sequence[dict[str, Any]]) -> list[int]:
    return [i for i, s in enumerate(seats) if s.get("open")]


def is_waiting(match: LoadedMatch) -> bool:
    return bool(open_seats(match.stored.seats))


def refuse_while_waiting(match: LoadedMatch) -> None:
    """A match whose seats are not all taken is not played yet."""
    waiting = open_seats(match.stored.seats)
    if waiting:
        names = ", ".join(str(i) for i in waiting)
        raise MatchWaitingError(f"the match is waiting for its players (seat{'s' if len(waiting) > 1 else ''} "
                                f"{names} not yet claimed): no moves until every seat is taken",
                                open_seats=waiting)


def open_seat(name: str | None, seat: int, match_id: str, ttl: int, idempotency_key: str | None
              ) -> tuple[dict[str, Any], str]:
    """A new open seat's record and its invitation code (shown once, stored hashed)."""
    code = derived_code(idempotency_key, match_id, seat) if idempotency_key else new_code()
    record = {"name": name or f"Seat {seat}", "ai": None, "token_hash": None, "open": True,
              "invite_hash": code_hash(code), "invite_expires": time.time() + ttl}
    return record, code


def invitation_json(code: str, match_id: str, seat: int, expires: float, base_url: str) -> dict[str, Any]:
    return {"code": code, "url": f"{base_url}/play/join#{code}", "seat": seat, "match_id": match_id,
            "expires_at": int(expires), "claim": f"/v1/invitations/{code}/claim"}


class Seats:
    """The use cases on seats, over the match store, the seat store and the AI work."""

    def __init__(self, store: MatchStore, seats: SeatStore, ai: AiWork, cache: MatchCache | None,
                 idle_seconds: float) -> None:
        self.store = store
        self.seats = seats
        self.ai = ai
        self.cache = cache
        self.idle_seconds = idle_seconds

    # -- claims ----------------------------------------------------------------

    def find_invitation(self, code: str) -> tuple[str, int]:
        found = self.seats.invitation(code_hash(code))
        if found is None:
            raise InvitationNotFoundError(NOT_FOUND)
        return str(found["match_id"]), int(found["seat"])

    def claim(self, match_id: str, seat: int, code: str, name: str | None, client: str | None) -> dict[str, Any]:
        """Take an open seat with its invitation code: the seat's token (given this once) and the match."""
        for _ in range(5):  # a concurrent change of another seat moved the version: read again and retry
            try:
                match = load(self.store, match_id, cache=self.cache)
            except MatchNotFoundError:
                raise InvitationNotFoundError(NOT_FOUND) from None
            seats = copy.deepcopy(match.stored.seats)
            if not 0 <= seat < len(seats):
                raise InvitationNotFoundError(NOT_FOUND)
            record = seats[seat]
            stored_hash = str(record.get("invite_hash") or "")
            if not stored_hash or not hmac.compare_digest(stored_hash, code_hash(code)):
                raise InvitationNotFoundError(NOT_FOUND)
            if not record.get("open"):
                raise SeatTakenError(f"seat {seat} was claimed already: an invitation works once")
            if time.time() > float(record.get("invite_expires") or 0):
                raise InvitationExpiredError("this invitation has expired: ask for a new match or a new invitation")
            token = new_token()
            record.update(open=False, token_hash=token_hash(token))
            if name:
                record["name"] = name
            still_open = open_seats(seats)
            event: dict[str, Any] = {"type": "seat_claimed", "seat": seat, "name": record["name"],
                                     "open_seats": still_open}
            try:
                version = self._change(match, seats, seat, [event], client)
            except StaleVersion:
                continue
            return {"match_id": match_id, "game": match.game.info.id, "seat": seat, "name": record["name"],
                    "token": token, "version": version, "status": "waiting" if still_open else "active",
                    "open_seats": still_open}
        raise SeatTakenError(f"seat {seat} changed hands meanwhile: look at the match again")

    # -- leaving and replacing --------------------------------------------------

    def resign(self, match_id: str, seat: int, holder: int, level: int, client: str | None) -> dict[str, Any]:
        """The holder of ``seat`` hands it to an AI of ``level``; its token stops working."""
        if holder != seat:
            raise UnauthorizedError(f"only seat {seat}'s own token can hand it to an AI (this is seat {holder}'s)")
        return self._to_ai(match_id, seat, level, client,
                           lambda match: {"type": "seat_resigned", "seat": seat, "level": level})

    def take_over(self, match_id: str, seat: int, asker: int, level: int, client: str | None) -> dict[str, Any]:
        """Another player asks for an AI of ``level`` to play ``seat``, whose holder has let the match sit
        idle on their turn for at least :attr:`idle_seconds`."""
        if asker == seat:
            raise ServiceError("use resign to hand your own seat to an AI", errors={"seat": ["is yours"]})

        def event(match: LoadedMatch) -> dict[str, Any]:
            if match.state.to_move != seat:
                raise SeatNotIdleError(f"it is not seat {seat}'s decision: only the seat everyone is waiting for "
                                       "can be taken over")
            idle = self.seats.idle_seconds(match_id)
            if idle < self.idle_seconds:
                wait = max(1, int(self.idle_seconds - idle + 0.999))
                raise SeatNotIdleError(f"seat {seat} has been idle for {idle:.0f} s; it can be taken over after "
                                       f"{self.idle_seconds:.0f} s (retry after {wait} s)", retry_after=wait)
            return {"type": "seat_taken_over", "seat": seat, "by": asker, "level": level,
                    "idle_seconds": round(idle)}

        return self._to_ai(match_id, seat, level, client, event)

    def _to_ai(self, match_id: str, seat: int, level: int, client: str | None, make_event: Any) -> dict[str, Any]:
        for _ in range(5):
            match = load(self.store, match_id, cache=self.cache)
            if match.state.is_over:
                raise GameOverError("the game is over: its seats stay as they were")
            seats = copy.deepcopy(match.stored.seats)
            if not 0 <= seat < len(seats) or seats[seat].get("ai") or seats[seat].get("open"):
                raise ServiceError(f"seat {seat} is not a seat a person holds", errors={"seat": ["not held"]})
            event = make_event(match)
            seats[seat].update(ai={"level": level}, token_hash=None)
            try:
                version = self._change(match, seats, seat, [event], client)
            except StaleVersion:
                continue
            return {"match_id": match_id, "seat": seat, "ai": {"level": level}, "version": version}
        raise SeatTakenError(f"seat {seat} changed hands meanwhile: look at the match again")

    # -- the one write ------------------------------------------------------------

    def _change(self, match: LoadedMatch, seats: list[dict[str, Any]], seat: int, events: list[dict[str, Any]],
                client: str | None) -> int:
        """Save the new ``seats`` as the next version (:class:`StaleVersion` if the match moved on). An AI seat
        to move once the change is saved has its turn queued first (as a move does)."""
        version = match.version + 1
        after = LoadedMatch(dataclasses.replace(match.stored, seats=seats, version=version), match.game, match.state)
        if not open_seats(seats):
            ai_seat = after.ai_seat_to_move()
            if ai_seat is not None:
                buckets = ["tok:" + s["token_hash"] for s in seats if s.get("token_hash")][:1]
                if client:
                    buckets.append("ip:" + client)
                self.ai.queue_turn(after.stored, match.state.num_players, ai_seat, version, buckets)
        entry = {"v": version, "s": seat, "m": None, "e": events}
        wid = new_wid()
        try:
            self.seats.change_seats(match.match_id, (match.version, match.state_id), seats, entry, wid)
        except MatchNotFound:
            raise MatchNotFoundError(f"no match {match.match_id!r} (it expired)") from None
        except WriteUnconfirmed:
            if self.cache is not None:
                self.cache.drop(match.match_id)
            with contextlib.suppress(MatchNotFound, redis.RedisError):
                if self.store.load(match.match_id).wid == wid:  # it was applied after all
                    return version
            raise StoreTimeoutError("the match store did not confirm the change of seats in time: it may have "
                                    "been applied or not; look at the match before trying again") from None
        if self.cache is not None:
            self.cache.drop(match.match_id)
        return version


# -- rematches ---------------------------------------------------------------------------------------------


def rematch_token(old_token: str, match_id: str, seat: int) -> str:
    """A player's token in the rematch ``match_id``, derived from their token in the old match: only its holder
    can have it, and it comes out the same however often it is asked for (the server stores only its hash)."""
    return derived_token(old_token, match_id, seat, purpose="rematch")


def first_dealer(match: LoadedMatch) -> int:
    """The dealer the match started with (its start replayed: seed, options, setup)."""
    start, game = match.stored.start, match.game
    if start.get("setup") is not None:
        state = game.from_setup(start["num_players"], start["setup"], start["options"], seed=start["seed"])
    else:
        state = game.new_match(start["num_players"], start["options"], seed=start["seed"])
    return int(state.dealer)


class Rematches:
    """``POST /v1/matches/{id}/rematch``: the same players and options, seats rotated so that the deal passes
    to the next player (as it does between rounds), every person's seat waiting for its holder."""

    def __init__(self, seats: Seats) -> None:
        self.use = seats

    def rematch(self, match_id: str, holder: int, holder_token: str, client: str | None) -> dict[str, Any]:
        use = self.use
        match = load(use.store, match_id, cache=use.cache)
        if not match.state.is_over:
            raise MatchNotOverError("a rematch begins once this match is over")
        mine = new_match_id()
        new_id = use.seats.rematch_of(match_id, mine)
        if new_id == mine:
            new = self._create(match, new_id, holder)
        else:  # another player asked first: theirs (being made, perhaps, this very moment)
            for _ in range(50):
                try:
                    new = load(use.store, new_id, cache=use.cache)
                    break
                except MatchNotFoundError:
                    time.sleep(0.05)
            else:
                raise MatchNotFoundError(f"the rematch {new_id!r} is gone (it may have expired)")
        placed = next(i for i, s in enumerate(new.stored.seats) if s.get("rematch_of") == holder)
        token = self.pick_up(new_id, placed, holder_token, client)
        return {"match_id": new_id, "game": new.game.info.id, "seat": placed, "token": token,
                "seats": [{"seat": i, "name": s["name"], "ai": s.get("ai"), "from_seat": s.get("rematch_of")}
                          for i, s in enumerate(new.stored.seats)]}

    def _create(self, old: LoadedMatch, new_id: str, holder: int) -> LoadedMatch:
        use, game = self.use, old.game
        n = old.state.num_players
        seed = secrets.randbelow(2**62)
        state = game.new_match(n, old.stored.start["options"], seed=seed)
        # the player after the old first dealer deals first now
        shift = int(state.dealer) - (first_dealer(old) + 1)
        seats: list[dict[str, Any]] = [{}] * n
        for k, s in enumerate(old.stored.seats):
            person = not s.get("ai")
            seats[(k + shift) % n] = {"name": s.get("name"), "ai": None if person else s["ai"], "token_hash": None,
                                      "open": person, "rematch_of": k}
        start = {"num_players": n, "options": dict(state.options), "seed": seed, "setup": None,
                 "rematch_of": old.match_id}
        stored = StoredMatch(new_id, game.info.id, 0, jsonio.dumps(game.to_json(state)), seats, start, time.time())
        use.store.create(stored)
        # the old match says so: a version of its own, whose event each player's stream turns into their token
        moved = {str(k): (k + shift) % n for k in range(n)}
        entry: dict[str, Any] = {"v": old.version + 1, "s": holder, "m": None,
                 "e": [{"type": "rematch", "match_id": new_id, "seats": moved}]}
        for _ in range(5):
            try:
                use.seats.change_seats(old.match_id, (old.version, old.state_id), old.stored.seats, entry)
                break
            except StaleVersion:
                old = load(use.store, old.match_id, cache=use.cache)
                entry["v"] = old.version + 1
        return LoadedMatch(stored, game, state)

    def pick_up(self, new_id: str, seat: int, old_token: str, client: str | None) -> str:
        """The rematch token of the holder of ``old_token``, its seat taken on first pick-up."""
        use = self.use
        token = rematch_token(old_token, new_id, seat)
        for _ in range(5):
            match = load(use.store, new_id, cache=use.cache)
            seats = copy.deepcopy(match.stored.seats)
            record = seats[seat]
            if record.get("token_hash") == token_hash(token):
                return token
            if not record.get("open"):
                raise SeatTakenError(f"seat {seat} of the rematch is not waiting for you")
            record.update(open=False, token_hash=token_hash(token))
            still_open = open_seats(seats)
            event = {"type": "seat_claimed", "seat": seat, "name": record["name"], "open_seats": still_open}
            try:
                use._change(match, seats, seat, [event], client)
            except StaleVersion:
                continue
            return token
        raise SeatTakenError(f"seat {seat} of the rematch changed hands meanwhile: try again")
