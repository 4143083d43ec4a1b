"""Applying a move to a stored match, and the one save path every writer uses (:func:`commit`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from engine.cards import CARD_NAMES, parse_card
from engine.errors import GameOverError, NotYourTurnError
from engine.game import Game, State
from service.live import Notifier
from service.store import IdempotentAnswer, MatchNotFound, MatchStore, StaleVersion, idem_key
from service.usecases.ai_work import AiWork, wait_for_turn
from service.usecases.errors import (
    AiUnavailableError,
    IdempotencyKeyReusedError,
    MatchNotFoundError,
    StaleVersionError,
)
from service.usecases.loading import LoadedMatch, MatchCache
from service.usecases.views import entries_between, flat_events


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def fingerprint(*parts: Any) -> str:
    return hashlib.sha256(dumps(parts).encode()).hexdigest()


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:40]


def views_of(game: Game, state: State) -> list[dict[str, Any]]:
    return [game.observation(state, s) for s in range(state.num_players)]


def hands_in(views: list[dict[str, Any]]) -> list[Counter[int]]:
    return [Counter(parse_card(c) for c in view.get("hand", ())) for view in views]


def _received(before: list[Counter[int]], after: list[Counter[int]]) -> dict[str, list[str]]:
    out = {}
    for seat, (b, a) in enumerate(zip(before, after, strict=True)):
        new = a - b
        if new:
            out[str(seat)] = [CARD_NAMES[c] for c in sorted(new.elements())]
    return out


@dataclasses.dataclass
class Applied:
    """One move applied: the new state, its log entry, and each seat's hand and view after it."""

    state: State
    entry: dict[str, Any]
    hands: list[Counter[int]]
    views: list[dict[str, Any]]


def play_move(game: Game, state: State, move: Mapping[str, Any], seat: int, version: int, *, ai: bool = False,
              hands: list[Counter[int]] | None = None) -> Applied:
    """Apply one move for ``seat`` to ``state`` at ``version`` (engine errors propagate; ``state`` is untouched
    on error). ``hands``: each seat's hand before the move, when known."""
    before = hands if hands is not None else hands_in(views_of(game, state))
    new_state, events = game.apply(state, move, seat=seat)
    views = views_of(game, new_state)
    after = hands_in(views)
    entry: dict[str, Any] = {"v": version + 1, "s": seat, "m": game.canonical_move(move), "e": events}
    private = _received(before, after)
    if private:
        entry["p"] = private
    if ai:
        entry["ai"] = 1
    return Applied(new_state, entry, after, views)


def check_turn(match: LoadedMatch, seat: int, expected_version: int) -> None:
    """Refuse a move on a version the client was not shown, after the end, or out of turn."""
    if expected_version != match.version:
        raise StaleVersionError(f"expected_version is {expected_version} but the match is at version "
                                f"{match.version}: reload the view and decide again", match.version)
    if match.state.is_over:
        raise GameOverError("the game is over: no more moves")
    if match.state.to_move != seat:
        raise NotYourTurnError(f"it is seat {match.state.to_move}'s decision, not seat {seat}'s")


def commit(store: MatchStore, match: LoadedMatch, state: State, entries: list[dict[str, Any]], *,
           idem: tuple[str, IdempotentAnswer] | None = None, hands: list[Counter[int]] | None = None,
           cache: MatchCache | None = None) -> LoadedMatch:
    """Save ``state`` and its log ``entries`` over ``match`` if Redis still holds ``match.version`` (else
    :class:`StaleVersionError`, nothing written): the one save path of every writer (moves, AI seats).
    Returns the saved match (also put in ``cache``)."""
    new_version = match.version + len(entries)
    blob = dumps(match.game.to_json(state))
    try:
        store.save(match.match_id, match.version, new_version, blob, entries, idem)
    except StaleVersion as exc:
        raise StaleVersionError(f"the match moved on to version {exc.current} meanwhile: reload and decide again",
                                exc.current) from None
    except MatchNotFound:
        raise MatchNotFoundError(f"no match {match.match_id!r} (it expired)") from None
    saved = LoadedMatch(dataclasses.replace(match.stored, version=new_version, state=blob), match.game, state, hands)
    if cache is not None:
        cache.put(saved)
    return saved


def remembered_answer(store: MatchStore, match_id: str, idempotency_key: str, fp: str) -> dict[str, Any] | None:
    """The first answer to a move retried with this Idempotency-Key, if there is one."""
    remembered = store.idempotent(idem_key(match_id, key_digest(idempotency_key)))
    if remembered is None:
        return None
    if remembered.fingerprint != fp:
        raise IdempotencyKeyReusedError("this Idempotency-Key was used for a different request")
    return remembered.body


def submit_move(store: MatchStore, ai: AiWork, match: LoadedMatch, seat: int, move: Mapping[str, Any],
                expected_version: int, idempotency_key: str | None, body: Mapping[str, Any],
                buckets: Sequence[str], cache: MatchCache | None = None) -> dict[str, Any]:
    """A seat's move, applied and stored, or refused with nothing changed. If an AI seat is to move after it,
    its turn is queued first (:meth:`AiWork.queue_turn`: it may refuse, for lack of AI time or queue room),
    and the answer says ``ai_pending``. A retry with the same Idempotency-Key gets the first answer."""
    fp = fingerprint(seat, body)
    if idempotency_key:
        first = remembered_answer(store, match.match_id, idempotency_key, fp)
        if first is not None:
            return first
    check_turn(match, seat, expected_version)
    applied = play_move(match.game, match.state, move, seat, match.version, hands=match.hands)
    ai_seat = LoadedMatch(match.stored, match.game, applied.state).ai_seat_to_move()
    if ai_seat is not None:
        ai.queue_turn(match.stored, applied.state.num_players, ai_seat, match.version + 1, buckets)
    answer = {"version": match.version + 1, "events": flat_events([applied.entry]), "view": applied.views[seat],
              "ai_pending": ai_seat is not None}
    idem = (key_digest(idempotency_key), IdempotentAnswer(fp, 200, answer)) if idempotency_key else None
    commit(store, match, applied.state, [applied.entry], idem=idem, hands=applied.hands, cache=cache)
    return answer


def advance(store: MatchStore, ai: AiWork, match: LoadedMatch, expected_version: int | None,
            buckets: Sequence[str]) -> bool:
    """Queue the turn of the AI seat to move, if one is and its turn is not queued already (after a failed
    turn: again); whether an AI seat is to move."""
    if expected_version is not None and expected_version != match.version:
        raise StaleVersionError(f"expected_version is {expected_version} but the match is at version "
                                f"{match.version}", match.version)
    seat = match.ai_seat_to_move()
    if seat is None:
        return False
    store.clear_ai_failure(match.match_id)
    ai.queue_turn(match.stored, match.state.num_players, seat, match.version, buckets)
    return True


def answer_after_wait(store: MatchStore, notifier: Notifier, cache: MatchCache | None, match_id: str,
                      seat: int | None, since: int, seconds: float, *, failure_is_error: bool = False
                      ) -> dict[str, Any]:
    """Wait (bounded) for the AI seats to play, then the answer of a move or ``/advance``: the version, the
    public events after ``since``, ``seat``'s view, whether an AI seat is still to move, and why it could not
    play if it could not (``ai_error``; with ``failure_is_error``, :class:`AiUnavailableError` instead)."""
    match, failure = wait_for_turn(store, notifier, cache, match_id, seconds)
    if failure is not None and failure_is_error:
        raise AiUnavailableError(failure["detail"])
    answer: dict[str, Any] = {
        "version": match.version,
        "events": flat_events(entries_between(store, match_id, since, match.version)),
        "view": match.game.observation(match.state, seat),
        "ai_pending": match.ai_seat_to_move() is not None,
    }
    if failure is not None:
        answer["ai_error"] = failure["detail"]
    return answer
