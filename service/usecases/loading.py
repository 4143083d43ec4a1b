"""Stored matches as the use cases need them: parsed once per version per process."""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

from engine import errors as engine_errors
from engine.game import Game, State
from engine.registry import get_game
from service import jsonio
from service.store import MatchNotFound, MatchStore, StoredMatch
from service.usecases.errors import MatchNotFoundError, UnknownGameError


def game_by_id(game_id: str, *, field: str | None = None) -> Game:
    """The registered game ``game_id``; unknown: :class:`UnknownGameError` (naming the request ``field``
    that held it, if the id came from a body rather than from the URL)."""
    try:
        return get_game(game_id)
    except engine_errors.UnknownGameError as exc:
        raise UnknownGameError(str(exc), errors={field: [str(exc)]} if field else None) from None


def parse_state(game: Game, blob: Any) -> State:
    """A client's state blob as the engine's state (``invalid_state`` when it does not parse)."""
    try:
        return game.from_json(blob)
    except engine_errors.EngineError:
        raise
    except Exception as exc:  # a wrong shape the engine did not anticipate
        raise engine_errors.InvalidStateError(f"the state does not parse: {exc.__class__.__name__}") from None


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
    def match_id(self) -> str:
        return self.stored.match_id

    @property
    def version(self) -> int:
        return self.stored.version

    @property
    def state_id(self) -> str:
        """The write id of this version: with the version, it names this state (clients see it as ``state_id``)."""
        return self.stored.wid

    def ai_seat_to_move(self) -> int | None:
        """The AI seat whose decision it is, if it is an AI seat's."""
        state = self.state
        if state.is_over or state.to_move is None or not self.stored.seats[state.to_move].get("ai"):
            return None
        return int(state.to_move)


class MatchCache:
    """The matches this process read or wrote last, by id (a bounded LRU).

    A cached entry is one state, named by its version *and write id*: a version number alone is not enough,
    since after Redis lost writes (an older snapshot, a lagging replica) the same version can be reached again
    by other moves. Reading checks both against Redis (:func:`load`); a move may skip reading when the cached
    entry is the state the client names, and the save's check of both rejects it if Redis holds another. A
    save refused that way drops the entry (the next read answers from Redis).
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._entries: OrderedDict[str, LoadedMatch] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, match_id: str, version: int | None = None, state_id: str | None = None) -> LoadedMatch | None:
        """The cached match at ``version`` (at whatever version it was cached with ``None``), and with that write
        id if ``state_id`` is given."""
        with self._lock:
            entry = self._entries.get(match_id)
            if entry is None or (version is not None and entry.version != version) or (
                    state_id is not None and entry.state_id != state_id):
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

    def drop(self, match_id: str, state_id: str | None = None) -> None:
        """Forget the match (only if it is cached at that write id, with ``state_id``)."""
        with self._lock:
            entry = self._entries.get(match_id)
            if entry is not None and state_id in (None, entry.state_id):
                del self._entries[match_id]


def load(store: MatchStore, match_id: str, *, cache: MatchCache | None = None) -> LoadedMatch:
    """The stored match (parsed once per state per process when a ``cache`` is given: when the cached state is
    still the stored one, same version and write id, Redis sends back only the version; any other, even at the
    same version after Redis lost writes, replaces it)."""
    known = cache.get(match_id) if cache is not None else None
    try:
        stored = (store.load(match_id) if known is None
                  else store.load_unless(match_id, known.version, known.state_id))
    except MatchNotFound:
        raise MatchNotFoundError(f"no match {match_id!r} (it may have expired)") from None
    if stored is None:
        assert known is not None
        return known
    if cache is not None:
        known = cache.get(match_id, stored.version, stored.wid)
        if known is not None:
            return known
    game = get_game(stored.game)
    state = game.from_json(jsonio.loads(stored.state))
    loaded = LoadedMatch(stored, game, state)
    if cache is not None:
        cache.put(loaded)
    return loaded
