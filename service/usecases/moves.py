"""Applying a move to a stored match, and the one save path every writer uses (:func:`commit`)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import redis

from engine.cards import CARD_NAMES, parse_card
from engine.errors import GameOverError, NotYourTurnError
from engine.game import Game, State
from service import jsonio
from service.live import Notifier
from service.store import IdempotentAnswer, MatchNotFound, MatchStore, StaleVersion, WriteUnconfirmed, idem_key, new_wid
from service.usecases.ai_work import AiWork, wait_for_turn
from service.usecases.errors import (
    AiBusyError,
    AiUnavailableError,
    IdempotencyKeyReusedError,
    MatchNotFoundError,
    RateLimitedError,
    StaleVersionError,
    StoreTimeoutError,
)
from service.usecases.loading import LoadedMatch, MatchCache
from service.usecases.views import entries_between, flat_events


def fingerprint(*parts: Any) -> str:
    """The request an Idempotency-Key was first used for, as a digest (the standard library's encoding: digests
    stored before an upgrade stay comparable)."""
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()


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


def stale(expected_version: int, current: int, state_id: str) -> StaleVersionError:
    """The 409 of a move decided on version ``expected_version`` when the match is at ``current``/``state_id``."""
    if current > expected_version:
        detail = (f"expected_version is {expected_version} but the match is at version {current}: reload the view "
                  f"and decide again")
    elif current < expected_version:
        detail = (f"expected_version is {expected_version} but the match is at version {current}, an earlier one: "
                  f"the store lost the moves after it (restored from an older copy); reload the view and decide "
                  f"again")
    else:
        detail = (f"the match at version {current} is not the state this move was decided on (state_id "
                  f"{state_id}): the store lost moves and the match went on differently; reload the view and "
                  f"decide again")
    return StaleVersionError(detail, current, state_id)


def check_turn(match: LoadedMatch, seat: int, expected_version: int, expected_state_id: str | None = None) -> None:
    """Refuse a move on a state the client was not shown (another version, or with ``expected_state_id``
    another state at that version), after the end, or out of turn."""
    if expected_version != match.version or expected_state_id not in (None, match.state_id):
        raise stale(expected_version, match.version, match.state_id)
    if match.state.is_over:
        raise GameOverError("the game is over: no more moves")
    if match.state.to_move != seat:
        raise NotYourTurnError(f"it is seat {match.state.to_move}'s decision, not seat {seat}'s")


def commit(store: MatchStore, match: LoadedMatch, state: State, entries: list[dict[str, Any]], *,
           idem: tuple[str, IdempotentAnswer] | None = None, hands: list[Counter[int]] | None = None,
           cache: MatchCache | None = None, wid: str | None = None) -> LoadedMatch:
    """Save ``state`` and its log ``entries`` over ``match`` if Redis still holds that state (its version and
    write id; else :class:`StaleVersionError`, nothing written, and ``match`` leaves the ``cache``): the one
    save path of every writer (moves, AI seats). ``wid``: the new state's write id (default a fresh one).
    No answer from Redis: :class:`~service.store.WriteUnconfirmed` (the save may have been applied).
    Returns the saved match (also put in ``cache``)."""
    new_version = match.version + len(entries)
    wid = wid or new_wid()
    blob = jsonio.dumps(match.game.to_json(state))
    try:
        store.save(match.match_id, (match.version, match.state_id), (new_version, wid), blob, entries, idem)
    except StaleVersion as exc:
        if cache is not None:
            cache.drop(match.match_id, match.state_id)
        raise stale(match.version, exc.current, exc.wid) from None
    except MatchNotFound:
        raise MatchNotFoundError(f"no match {match.match_id!r} (it expired)") from None
    saved = LoadedMatch(dataclasses.replace(match.stored, version=new_version, state=blob, wid=wid), match.game,
                        state, hands)
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
    and the answer says ``ai_pending``. ``body["expected_state_id"]``, when given, must be the stored state's
    write id too.

    With an Idempotency-Key, a retry gets the first answer: remembered with the save itself (one script), so
    a copy of the request that loses the race to the store (409, or an AI refusal meanwhile) reads the answer
    of the copy that won. If Redis does not confirm the save: :class:`StoreTimeoutError` (it may have been
    applied; a retry with the key is safe)."""
    fp = fingerprint(seat, body) if idempotency_key else ""  # only a key's retries compare it
    if idempotency_key:
        first = remembered_answer(store, match.match_id, idempotency_key, fp)
        if first is not None:
            return first
    wid = new_wid()
    try:
        check_turn(match, seat, expected_version, body.get("expected_state_id"))
        applied = play_move(match.game, match.state, move, seat, match.version, hands=match.hands)
        ai_seat = LoadedMatch(match.stored, match.game, applied.state).ai_seat_to_move()
        if ai_seat is not None:
            ai.queue_turn(match.stored, applied.state.num_players, ai_seat, match.version + 1, buckets)
        answer = {"version": match.version + 1, "state_id": wid, "events": flat_events([applied.entry]),
                  "view": applied.views[seat], "ai_pending": ai_seat is not None}
        idem = (key_digest(idempotency_key), IdempotentAnswer(fp, 200, answer)) if idempotency_key else None
        commit(store, match, applied.state, [applied.entry], idem=idem, hands=applied.hands, cache=cache, wid=wid)
    except (StaleVersionError, AiBusyError, RateLimitedError):
        if idempotency_key:  # a copy of this request (same key) may have won meanwhile: its answer is ours
            first = remembered_answer(store, match.match_id, idempotency_key, fp)
            if first is not None:
                return first
        raise
    except WriteUnconfirmed:
        if cache is not None:
            cache.drop(match.match_id, match.state_id)
        raise StoreTimeoutError(
            "the match store did not confirm the move in time: it may have been applied or not. "
            + ("A retry with the same Idempotency-Key is safe: it gets the first answer if the move was applied, "
               "else applies it once" if idempotency_key else
               "Reload the match to see whether it was (send moves with an Idempotency-Key: then a retry is safe)")
        ) from None
    return answer


def answer_after_move(store: MatchStore, notifier: Notifier, cache: MatchCache | None, match_id: str, seat: int,
                      since: int, seconds: float, answer: dict[str, Any],
                      idem: tuple[str, IdempotentAnswer] | None) -> dict[str, Any]:
    """The answer of a stored move that asked to wait (``seconds``) for the AI seats: :func:`answer_after_wait`,
    remembered for the Idempotency-Key (``idem``: the key's digest and the answer's fingerprint). The move is
    stored already: if the store fails meanwhile, the answer is the move's own (``ai_pending`` true), never an
    error that would say nothing changed."""
    try:
        waited = answer_after_wait(store, notifier, cache, match_id, seat, since, seconds)
    except redis.RedisError:
        return answer
    if idem is not None:  # a retry gets this answer, the AI seats' turns included
        digest, first = idem
        with contextlib.suppress(redis.RedisError):  # else the remembered answer stays the move's own: true too
            store.update_idempotent(idem_key(match_id, digest), IdempotentAnswer(first.fingerprint, 200, waited))
    return waited


def advance(store: MatchStore, ai: AiWork, match: LoadedMatch, expected_version: int | None,
            buckets: Sequence[str]) -> bool:
    """Queue the turn of the AI seat to move, if one is and its turn is not queued already (after a failed
    turn: again); whether an AI seat is to move."""
    if expected_version is not None and expected_version != match.version:
        raise stale(expected_version, match.version, match.state_id)
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
        "state_id": match.state_id,
        "events": flat_events(entries_between(store, match_id, since, match.version)),
        "view": match.game.observation(match.state, seat),
        "ai_pending": match.ai_seat_to_move() is not None,
    }
    if failure is not None:
        answer["ai_error"] = failure["detail"]
    return answer
