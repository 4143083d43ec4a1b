"""The conformance checks every registered game must pass after every move.

Used by ``tests/engine/test_conformance.py`` (many seeds, every game) and by the
benchmarks' smoke runs. A failure message names the game, seed and ply so that
``replay`` reproduces it.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

from engine.errors import EngineError, IllegalMoveError, InvalidCardError, InvalidMoveError, NotYourTurnError
from engine.game import Game, State


class ConformanceError(AssertionError):
    pass


def check_state(game: Game, state: State, where: str) -> None:
    """Cheap invariants: cards, seats, scores, the game's own consistency checks."""
    try:
        game.check_state(state)
    except EngineError as exc:
        raise ConformanceError(f"{where}: {exc}") from exc
    have = Counter(game.cards_in_play(state))
    want = Counter(game.deck(state.num_players, state.options))
    if have != want:
        raise ConformanceError(f"{where}: cards not conserved: extra {have - want}, missing {want - have}")


def check_round_trip(game: Game, state: State, where: str) -> None:
    blob = json.loads(json.dumps(game.to_json(state)))
    back = game.from_json(blob)
    if back != state:
        raise ConformanceError(f"{where}: JSON round trip changed the state")
    if json.loads(json.dumps(game.to_json(back))) != blob:
        raise ConformanceError(f"{where}: JSON round trip is not stable")


def check_views(game: Game, state: State, rng: random.Random, where: str) -> None:
    """Each seat's view is JSON, shows its own hand, and does not change when everything that
    seat cannot see is re-dealt: so it carries nothing of the hidden cards."""
    for seat in [*range(state.num_players), None]:
        obs = game.observation(state, seat)
        text = json.dumps(obs)
        if "seed" in obs or "stock" in obs:
            raise ConformanceError(f"{where}: view of seat {seat} exposes the seed or the stock order")
        if state.is_over:
            continue
        if seat == state.to_move:  # what a client may send to best-move
            try:
                game.check_view(json.loads(text))
            except EngineError as exc:
                raise ConformanceError(f"{where}: seat {seat}'s own view fails check_view: {exc}") from exc
        other = game.determinize(json.loads(text), rng)
        check_state(game, other, f"{where} (re-dealt for seat {seat})")
        if json.dumps(game.observation(other, seat)) != text:
            raise ConformanceError(f"{where}: seat {seat}'s view changes when its unseen cards are re-dealt")
        if sorted(game.legal_moves(other), key=json.dumps) != sorted(game.legal_moves(state), key=json.dumps) \
                and seat == state.to_move:
            raise ConformanceError(f"{where}: legal moves of seat {seat} depend on cards it cannot see")


def check_rejections(game: Game, state: State, rng: random.Random, where: str) -> None:
    """Rejected moves raise typed errors and leave the state exactly as it was."""
    before = state.clone()
    bad_moves: list[Any] = [
        {"type": "no-such-move"},
        {"type": "discard", "card": "ZZ"},
        {},
        ["not", "an", "object"],
    ]
    for move in bad_moves:
        try:
            game.apply(state, move)
        except (InvalidMoveError, IllegalMoveError, InvalidCardError):
            pass
        except EngineError as exc:
            raise ConformanceError(f"{where}: {move!r} raised {type(exc).__name__}, not a move error") from exc
        else:
            raise ConformanceError(f"{where}: malformed move {move!r} was accepted")
    legal = game.legal_moves(state)
    if legal and state.to_move is not None and state.num_players > 1:
        other_seat = (state.to_move + 1) % state.num_players
        try:
            game.apply(state, rng.choice(legal), seat=other_seat)
        except NotYourTurnError:
            pass
        else:
            raise ConformanceError(f"{where}: seat {other_seat} moved out of turn")
    if state != before:
        raise ConformanceError(f"{where}: a rejected move changed the state")


def play_random_game(
    game: Game,
    num_players: int,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    full_checks_every: int = 1,
    max_plies: int = 200_000,
) -> tuple[State, list[dict[str, Any]]]:
    """Play a complete game with uniformly random legal moves, checking invariants after every move.

    ``full_checks_every`` spaces out the costly checks (JSON, views, re-deals, rejections).
    Returns the final state and the move list.
    """
    rng = random.Random(seed)
    initial = game.new_match(num_players, options, seed=seed)
    state = initial
    moves: list[dict[str, Any]] = []
    lo, hi = game.info.min_players, game.info.max_players
    assert lo <= num_players <= hi
    check_state(game, state, f"{game.info.id} seed {seed} start")
    for ply in range(max_plies):
        if state.is_over:
            break
        where = f"{game.info.id} n={num_players} seed={seed} ply={ply}"
        legal = game.legal_moves(state)
        if not legal:
            raise ConformanceError(f"{where}: no legal move but the game is not over")
        if ply % full_checks_every == 0:
            check_round_trip(game, state, where)
            check_views(game, state, rng, where)
            check_rejections(game, state, rng, where)
        move = rng.choice(legal)
        if game.canonical_move(move) != move:
            raise ConformanceError(f"{where}: listed move {move} is not in its canonical form")
        to_move = state.to_move
        checked, _ = game.apply(state, move, seat=to_move)
        fast, _ = game.apply(state, move, check=False)
        if checked != fast:
            raise ConformanceError(f"{where}: apply with and without checks disagree on {move}")
        if checked.ply != state.ply + 1:
            raise ConformanceError(f"{where}: ply did not advance")
        state = checked
        moves.append(move)
        check_state(game, state, where)
    else:
        raise ConformanceError(f"{game.info.id} seed {seed}: no end after {max_plies} plies")
    if state.winners is None or not state.winners:
        raise ConformanceError(f"{game.info.id} seed {seed}: game over without winners")
    if game.legal_moves(state):
        raise ConformanceError(f"{game.info.id} seed {seed}: legal moves after the end")
    replayed = game.replay(initial, moves)
    if replayed != state:
        raise ConformanceError(f"{game.info.id} seed {seed}: replay from seed + moves differs")
    check_round_trip(game, state, f"{game.info.id} seed {seed} end")
    return state, moves
