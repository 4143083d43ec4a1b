"""The use cases behind the match endpoints: create, authenticate, move, autoplay AI seats, read views and logs.

The views in the blueprints stay thin (load → here → store → dump). Everything
here talks to the engine through the generic :class:`~engine.game.Game`
interface, so a newly registered game is served with no change.

Log entries (stored compactly, one per applied move)::

    {"v": version after the move, "s": seat, "m": move, "e": public events,
     "p": {seat: cards that entered that seat's hand}, "ai": 1 if an AI seat moved}

``p`` is computed from each seat's own ``hand`` in ``observation()`` before and
after the move, so it is exactly what that seat saw arrive (a card drawn from
the stock, a new deal); it is shown only to that seat, and to everyone once
the match is over.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.cards import parse_card
from engine.errors import EngineError, InvalidStateError, NotYourTurnError, UnknownGameError
from engine.game import Game, State
from engine.registry import get_game
from service import gate
from service.config import Config
from service.errors import ApiError
from service.store import (
    IdempotentAnswer,
    MatchNotFound,
    MatchStore,
    StaleVersion,
    StoredMatch,
    idem_key,
)

MAX_SEED = 2**62

log = logging.getLogger("cardtable.service")


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def game_or_404(game_id: str) -> Game:
    try:
        return get_game(game_id)
    except UnknownGameError as exc:
        raise ApiError("unknown_game", str(exc), status=404) from None


def new_match_id() -> str:
    return secrets.token_urlsafe(12)


def fingerprint(*parts: Any) -> str:
    return hashlib.sha256(_dumps(parts).encode()).hexdigest()


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:40]


def derived_token(idempotency_key: str, match_id: str, seat: int) -> str:
    """A seat token derived from the client's Idempotency-Key, so that a retried creation can give the
    same tokens back without the server ever storing one (only their hashes are stored)."""
    mac = hmac.new(idempotency_key.encode(), f"cardtable-seat/{match_id}/{seat}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:24]).decode().rstrip("=")


# ---------------------------------------------------------------------------
# Loading and authenticating


@dataclass
class LoadedMatch:
    stored: StoredMatch
    game: Game
    state: State
    hands: list[Counter[int]] | None = None  # each seat's hand, when known (saves recomputing it)
    #: Answers worked out from this version of the match (by the views, e.g. a seat's legal moves): a state
    #: never changes, so neither do they. Kept as long as the match is cached.
    memo: dict[Any, Any] = dataclasses.field(default_factory=dict)

    @property
    def version(self) -> int:
        return self.stored.version


class MatchCache:
    """The matches this process wrote last, by id (a bounded LRU).

    The state of a match at version ``v`` is unique (only the one save that moved it from ``v-1`` wrote
    it), so a cached entry at the version a client expects is exactly what Redis holds at that version:
    a move can skip reading it, and the save's version check still rejects it if Redis moved on.
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._entries: OrderedDict[str, LoadedMatch] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, match_id: str, version: int | None = None) -> LoadedMatch | None:
        """The cached match at ``version`` (at whatever version it was cached with ``None``)."""
        with self._lock:
            entry = self._entries.get(match_id)
            if entry is None or (version is not None and entry.version != version):
                return None
            self._entries.move_to_end(match_id)
            return entry

    def put(self, match: LoadedMatch) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[match.stored.match_id] = match
            self._entries.move_to_end(match.stored.match_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def drop(self, match_id: str) -> None:
        with self._lock:
            self._entries.pop(match_id, None)


def load(store: MatchStore, match_id: str, *, cache: MatchCache | None = None) -> LoadedMatch:
    """The stored match (parsed once per version per process when a ``cache`` is given: when the cached version
    is still the stored one, Redis sends back only the version)."""
    known = cache.get(match_id) if cache is not None else None
    try:
        stored = store.load(match_id) if known is None else store.load_unless(match_id, known.version)
    except MatchNotFound:
        raise ApiError("match_not_found", f"no match {match_id!r} (it may have expired)") from None
    if stored is None:
        assert known is not None
        return known
    if cache is not None:
        known = cache.get(match_id, stored.version)
        if known is not None:
            return known
    game = get_game(stored.game)
    state = game.from_json(json.loads(stored.state))
    loaded = LoadedMatch(stored, game, state)
    if cache is not None:
        cache.put(loaded)
    return loaded


def seat_of(match: LoadedMatch, authorization: str | None, *, required: bool) -> int | None:
    """The seat whose token is in the ``Authorization: Bearer`` header, ``None`` for no header
    (a spectator) unless ``required``. Tokens are compared by hash in constant time."""
    if not authorization:
        if required:
            raise ApiError("unauthorized", "this endpoint needs a seat token: Authorization: Bearer <token>",
                           headers={"WWW-Authenticate": 'Bearer realm="cardtable"'})
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError("unauthorized", "use Authorization: Bearer <seat token>",
                       headers={"WWW-Authenticate": 'Bearer realm="cardtable"'})
    digest = token_hash(token.strip())
    found = None
    for i, seat in enumerate(match.stored.seats):
        stored = seat.get("token_hash") or ""
        # every seat is compared, so the time taken does not tell which seat matched
        if hmac.compare_digest(stored.encode(), digest.encode()) and stored:
            found = i
    if found is None:
        raise ApiError("unauthorized", "the token is not a seat token of this match",
                       headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    return found


# ---------------------------------------------------------------------------
# Views


def public_seats(stored: StoredMatch) -> list[dict[str, Any]]:
    return [{"seat": i, "name": s.get("name"), "ai": s.get("ai")} for i, s in enumerate(stored.seats)]


def entry_for(entry: dict[str, Any], seat: int | None, reveal: bool) -> dict[str, Any]:
    """One log entry as ``seat`` may see it."""
    out: dict[str, Any] = {
        "version": entry["v"],
        "seat": entry["s"],
        "move": entry["m"],
        "events": entry["e"],
        "ai": bool(entry.get("ai")),
    }
    private = entry.get("p") or {}
    if reveal:
        out["private"] = {str(k): v for k, v in private.items()}
    elif seat is not None and str(seat) in private:
        out["private"] = {str(seat): private[str(seat)]}
    return out


def flat_events(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The public events of log entries, each tagged with the version its move produced."""
    out = []
    for entry in entries:
        for event in entry["e"]:
            out.append({**event, "version": entry["v"]})
    return out


def match_view(store: MatchStore, match: LoadedMatch, seat: int | None, since: int | None) -> dict[str, Any]:
    state, game = match.state, match.game
    body: dict[str, Any] = {
        "match_id": match.stored.match_id,
        "game": game.info.id,
        "version": match.version,
        "seat": seat,
        "status": "over" if state.is_over else "active",
        "seats": public_seats(match.stored),
        "scores": game.scores(state),
        "view": game.observation(state, seat),
    }
    if since is not None:
        _, entries = store.log(match.stored.match_id, since)
        body["events"] = flat_events([e for e in entries if e["v"] <= match.version])
    return body


# ---------------------------------------------------------------------------
# Playing moves


def _hands(game: Game, state: State) -> list[Counter[int]]:
    return _hands_in(_views(game, state))


def _views(game: Game, state: State) -> list[dict[str, Any]]:
    return [game.observation(state, s) for s in range(state.num_players)]


def _hands_in(views: list[dict[str, Any]]) -> list[Counter[int]]:
    return [Counter(parse_card(c) for c in view.get("hand", ())) for view in views]


def _received(before: list[Counter[int]], after: list[Counter[int]]) -> dict[str, list[str]]:
    from engine.cards import CARD_NAMES

    out = {}
    for seat, (b, a) in enumerate(zip(before, after, strict=True)):
        new = a - b
        if new:
            out[str(seat)] = [CARD_NAMES[c] for c in sorted(new.elements())]
    return out


@dataclass
class Played:
    state: State
    entries: list[dict[str, Any]]
    error: ApiError | None = None  # why the AI stopped early, if it failed
    hands: list[Counter[int]] | None = None
    views: list[dict[str, Any]] | None = None  # each seat's view of ``state``, when known


def play_move(game: Game, state: State, move: Mapping[str, Any], seat: int, version: int,
              ai: bool = False, hands: list[Counter[int]] | None = None
              ) -> tuple[State, dict[str, Any], list[Counter[int]], list[dict[str, Any]]]:
    """Apply one move for ``seat`` (engine errors propagate; ``state`` is untouched on error): the new state, the
    log entry, and each seat's hand and view after the move."""
    before = hands if hands is not None else _hands(game, state)
    new_state, events = game.apply(state, move, seat=seat)
    views = _views(game, new_state)
    after = _hands_in(views)
    entry: dict[str, Any] = {"v": version + 1, "s": seat, "m": game.canonical_move(move), "e": events}
    private = _received(before, after)
    if private:
        entry["p"] = private
    if ai:
        entry["ai"] = 1
    return new_state, entry, after, views


class Autoplayer:
    """Plays the turns of AI seats with the AI package, within a time budget per move and per request."""

    def __init__(self, config: Config, metrics: Any = None) -> None:
        self.config = config
        self.metrics = metrics

    def is_ai_turn(self, stored: StoredMatch, state: State) -> bool:
        return (not state.is_over and state.to_move is not None
                and bool(stored.seats[state.to_move].get("ai")))

    def decide(self, game: Game, view: dict[str, Any], level: int, time_ms: int, seed: int, kind: str) -> Any:
        try:
            from ai import choose_move
        except ImportError as exc:  # the AI package is not installed or not ready
            raise ApiError("ai_unavailable", f"the AI cannot be loaded: {exc}") from None
        started = time.perf_counter()
        try:
            with gate.outside():  # the search holds no admission slot: short requests pass it meanwhile
                decision = choose_move(game, view, level=level, time_ms=time_ms, seed=seed)
        except Exception as exc:  # an AI bug is the AI being unavailable, not a 500 with a trace
            log.exception("the AI failed (%s, %s)", game.info.id, kind)
            raise ApiError("ai_unavailable", f"the AI failed to decide ({exc.__class__.__name__})") from None
        if self.metrics is not None:
            self.metrics.ai_seconds.labels(game=game.info.id, kind=kind).observe(time.perf_counter() - started)
        return decision

    def run(self, stored: StoredMatch, game: Game, state: State, version: int,
            hands: list[Counter[int]] | None = None, views: list[dict[str, Any]] | None = None) -> Played:
        """Play AI turns until a human seat is to move, the game ends or the request budget is spent."""
        entries: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.config.ai_request_budget_ms / 1000
        seed_base = int(stored.start.get("seed", 0))
        while self.is_ai_turn(stored, state) and time.monotonic() < deadline:
            seat = state.to_move
            assert seat is not None
            level = int(stored.seats[seat]["ai"].get("level", self.config.ai_default_level))
            view = game.observation(state, seat)
            try:
                decision = self.decide(game, view, level, self.config.ai_move_time_ms,
                                       (seed_base * 1_000_003 + version) % MAX_SEED, "seat")
                state, entry, hands, views = play_move(game, state, decision.move, seat, version, ai=True,
                                                       hands=hands)
            except ApiError as exc:
                # a failing AI must not lose the human move before it: keep what was played and let
                # /advance retry the AI turn later
                return Played(state, entries, exc, hands, views)
            except Exception as exc:  # the AI's move was refused by the engine
                log.exception("the AI's move for seat %s of match %s failed", seat, stored.match_id)
                return Played(state, entries, ApiError("ai_unavailable", f"the AI failed to move "
                                                       f"({exc.__class__.__name__}); retry with /advance"), hands,
                              views)
            entries.append(entry)
            version += 1
        return Played(state, entries, None, hands, views)


# ---------------------------------------------------------------------------
# Creating matches


def create_match(store: MatchStore, autoplayer: Autoplayer, body: Mapping[str, Any],
                 idempotency_key: str | None) -> dict[str, Any]:
    """Create and store a match; the answer carries each human seat's token (shown once)."""
    try:
        game = get_game(body["game"])
    except UnknownGameError as exc:
        raise ApiError("unknown_game", str(exc), status=422, errors={"game": [str(exc)]}) from None
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
    seats = []
    for i, p in enumerate(players):
        ai = p.get("ai")
        if ai is not None:
            tokens.append(None)
            seats.append({"name": p.get("name") or f"AI {i}", "ai": {"level": ai.get("level", 3)},
                          "token_hash": None})
            continue
        token = derived_token(idempotency_key, match_id, i) if idempotency_key else secrets.token_urlsafe(24)
        tokens.append(token)
        seats.append({"name": p.get("name") or f"Seat {i}", "ai": None, "token_hash": token_hash(token)})
    start = {"num_players": len(players), "options": dict(state.options), "seed": seed,
             "setup": body.get("setup")}
    stored = StoredMatch(match_id, game.info.id, 0, "", seats, start, time.time())
    played = autoplayer.run(stored, game, state, 0)
    if played.error is not None:  # a match whose AI seats cannot play is not created
        raise played.error
    stored.version = len(played.entries)
    stored.state = _dumps(game.to_json(played.state))
    human = next((i for i, t in enumerate(tokens) if t is not None), None)
    answer = {
        "match_id": match_id,
        "game": game.info.id,
        "version": stored.version,
        "seats": [{"seat": i, "name": s["name"], "ai": s["ai"], "token": None} for i, s in enumerate(seats)],
        "view": game.observation(played.state, human),
        "view_seat": human,
    }
    store.create(stored, played.entries)
    if idempotency_key:
        first = IdempotentAnswer(fingerprint(body), 201, answer)
        if not store.remember(idem_key(None, key_digest(idempotency_key)), first):
            # a concurrent retry with the same key won: answer as it did (this match just expires)
            replayed = replay_created(store, body, idempotency_key)
            if replayed is not None:
                return replayed
    full = json.loads(_dumps(answer))
    for seat_json, seat_token in zip(full["seats"], tokens, strict=True):
        seat_json["token"] = seat_token
    return full


def replay_created(store: MatchStore, body: Mapping[str, Any], idempotency_key: str) -> dict[str, Any] | None:
    """The first answer to a creation retried with the same Idempotency-Key (tokens re-derived), if any."""
    remembered = store.idempotent(idem_key(None, key_digest(idempotency_key)))
    if remembered is None:
        return None
    if remembered.fingerprint != fingerprint(body):
        raise ApiError("idempotency_key_reused", "this Idempotency-Key was used for a different request")
    answer = json.loads(_dumps(remembered.body))
    for seat in answer["seats"]:
        if seat["ai"] is None:
            seat["token"] = derived_token(idempotency_key, answer["match_id"], seat["seat"])
    return answer


# ---------------------------------------------------------------------------
# Moves and advancing


def submit_move(store: MatchStore, autoplayer: Autoplayer, match: LoadedMatch, seat: int,
                move: Mapping[str, Any], expected_version: int, idempotency_key: str | None,
                body: Mapping[str, Any], cache: MatchCache | None = None) -> dict[str, Any]:
    mid = match.stored.match_id
    idem = None
    if idempotency_key:
        digest = key_digest(idempotency_key)
        fp = fingerprint(seat, body)
        remembered = store.idempotent(idem_key(mid, digest))
        if remembered is not None:
            if remembered.fingerprint != fp:
                raise ApiError("idempotency_key_reused", "this Idempotency-Key was used for a different request")
            return remembered.body
    if expected_version != match.version:
        raise ApiError("stale_version", f"expected_version is {expected_version} but the match is at version "
                       f"{match.version}: reload the view and decide again", extra={"version": match.version})
    if match.state.is_over:
        raise ApiError("game_over", "the game is over: no more moves")
    if match.state.to_move != seat:
        raise ApiError.from_engine(NotYourTurnError(
            f"it is seat {match.state.to_move}'s decision, not seat {seat}'s"))
    state, entry, hands, views = play_move(match.game, match.state, move, seat, match.version, hands=match.hands)
    played = autoplayer.run(match.stored, match.game, state, match.version + 1, hands=hands, views=views)
    entries = [entry, *played.entries]
    new_version = match.version + len(entries)
    answer = {
        "version": new_version,
        "events": flat_events(entries),
        "view": played.views[seat] if played.views is not None else match.game.observation(played.state, seat),
    }
    if idempotency_key:
        idem = (key_digest(idempotency_key), IdempotentAnswer(fingerprint(seat, body), 200, answer))
    saved = _save(store, match, new_version, played.state, entries, idem, played.hands)
    if cache is not None:
        cache.put(saved)
    return answer


def advance(store: MatchStore, autoplayer: Autoplayer, match: LoadedMatch, seat: int | None,
            expected_version: int | None) -> dict[str, Any]:
    if expected_version is not None and expected_version != match.version:
        raise ApiError("stale_version", f"expected_version is {expected_version} but the match is at version "
                       f"{match.version}", extra={"version": match.version})
    played = autoplayer.run(match.stored, match.game, match.state, match.version, hands=match.hands)
    if played.error is not None and not played.entries:
        raise played.error
    new_version = match.version + len(played.entries)
    if played.entries:
        _save(store, match, new_version, played.state, played.entries, None)
    return {
        "version": new_version,
        "events": flat_events(played.entries),
        "view": match.game.observation(played.state, seat),
    }


def _save(store: MatchStore, match: LoadedMatch, new_version: int, state: State,
          entries: list[dict[str, Any]], idem: tuple[str, IdempotentAnswer] | None,
          hands: list[Counter[int]] | None = None) -> LoadedMatch:
    """Save the match moved from ``match.version`` to ``new_version``; the saved match (for the cache)."""
    blob = _dumps(match.game.to_json(state))
    try:
        store.save(match.stored.match_id, match.version, new_version, blob, entries, idem)
    except StaleVersion as exc:
        raise ApiError("stale_version", f"the match moved on to version {exc.current} meanwhile: reload and "
                       "decide again", extra={"version": exc.current}) from None
    except MatchNotFound:
        raise ApiError("match_not_found", f"no match {match.stored.match_id!r} (it expired)") from None
    stored = dataclasses.replace(match.stored, version=new_version, state=blob)
    return LoadedMatch(stored, match.game, state, hands)


def legal_moves_for(match: LoadedMatch, seat: int) -> dict[str, Any]:
    state = match.state
    moves = match.game.legal_moves(state) if state.to_move == seat and not state.is_over else []
    return {"version": match.version, "seat": seat, "to_move": state.to_move, "moves": moves}


def match_log(store: MatchStore, match: LoadedMatch, seat: int | None, since: int = 0) -> dict[str, Any]:
    """The log after version ``since`` as ``seat`` may see it (all of it once the match is over), up to the
    version that was loaded (a move saved meanwhile waits for the next read)."""
    _, entries = store.log(match.stored.match_id, since)
    entries = [e for e in entries if e["v"] <= match.version]
    reveal = match.state.is_over
    out: dict[str, Any] = {
        "match_id": match.stored.match_id,
        "game": match.game.info.id,
        "version": match.version,
        "status": "over" if reveal else "active",
        "seat": seat,
        "start": {"num_players": match.stored.start["num_players"], "options": match.stored.start["options"]},
        "entries": [entry_for(e, seat, reveal) for e in entries],
    }
    if reveal:
        out["start"]["seed"] = match.stored.start["seed"]
        out["start"]["setup"] = match.stored.start.get("setup")
    return out


def parse_state(game: Game, blob: Any) -> State:
    try:
        return game.from_json(blob)
    except EngineError:
        raise
    except Exception as exc:  # a wrong shape the engine did not anticipate
        raise InvalidStateError(f"the state does not parse: {exc.__class__.__name__}") from None
