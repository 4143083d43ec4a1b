"""What clients send is checked before any work is done on it (engine/validation.py): the fields of a move,
the types of a state blob's fields, and whether a view is an observation the game could give."""

from __future__ import annotations

import copy
import json
import time

import pytest

from engine.errors import InvalidCardError, InvalidMoveError, InvalidStateError, InvalidViewError
from engine.registry import all_games, get_game

GAMES = {g.info.id: g for g in all_games()}
TT = get_game("three-thirteen")


def midgame(game, plies=7, seed=5):
    """A state a few moves in (first legal move each time), and the view of the seat to move."""
    state = game.new_match(game.info.min_players, seed=seed)
    for _ in range(plies):
        state, _ = game.apply(state, game.legal_moves(state)[0])
    return state, json.loads(json.dumps(game.observation(state, state.to_move)))


# -- moves: only the fields their type declares -------------------------------------------------------


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_move_with_a_field_its_type_does_not_declare_is_refused_and_changes_nothing(game_id):
    game = GAMES[game_id]
    state, _ = midgame(game)
    before = state.clone()
    move = {**game.legal_moves(state)[0], "note": "<script>alert(1)</script>" * 1000}
    with pytest.raises(InvalidMoveError, match="no field 'note'"):
        game.apply(state, move)
    assert state == before


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_declared_move_type_is_one_the_game_plays(game_id):
    """The declaration and the game agree: a listed move always passes it (the conformance suite checks
    every move of many games), and an undeclared type is refused by name."""
    game = GAMES[game_id]
    state, _ = midgame(game)
    for move in game.legal_moves(state):
        assert move["type"] in game.move_fields
        assert game.canonical_move(move) == move
    with pytest.raises(InvalidMoveError, match="unknown move type 'teleport'"):
        game.apply(state, {"type": "teleport"})


def test_field_values_are_checked_by_kind():
    state, _ = midgame(TT, plies=0)  # three-thirteen, draw phase
    with pytest.raises(InvalidMoveError, match='"stock", "discard"'):
        TT.apply(state, {"type": "draw", "source": {"x": 1}})
    state, _ = TT.apply(state, {"type": "draw", "source": "stock"})
    with pytest.raises(InvalidMoveError, match="cards like"):
        TT.apply(state, {"type": "discard", "card": " " * 200_000 + "7H"})
    with pytest.raises(InvalidCardError, match="'ZZ' is not a card"):
        TT.apply(state, {"type": "discard", "card": "ZZ"})
    less = get_game("less-than-three")
    lstate, _ = midgame(less, plies=0)
    with pytest.raises(InvalidMoveError, match="'knock' field of a 'play' move must be true or false"):
        less.apply(lstate, {"type": "play", "cards": ["AC"], "knock": "<b>yes</b>"})


def test_the_melds_of_a_go_down_take_only_their_own_fields():
    contract = get_game("contract-rummy")
    state, _ = midgame(contract, plies=0)
    meld = {"kind": "set", "cards": ["7S", "7H", "7D"], "colour": "red"}
    with pytest.raises(InvalidMoveError, match="item 0 has no field 'colour'"):
        contract.apply(state, {"type": "go_down", "melds": [meld]})
    with pytest.raises(InvalidMoveError, match="list of 1 to 16 objects"):
        contract.apply(state, {"type": "go_down", "melds": [{"kind": "set", "cards": []}] * 17})


def test_canonical_move_spells_cards_canonically():
    assert TT.canonical_move({"type": "discard", "card": "10h"}) == {"type": "discard", "card": "TH"}
    less = get_game("less-than-three")
    assert less.canonical_move({"type": "play", "cards": ["4c", "3C"], "knock": False}) == \
        {"type": "play", "cards": ["4C", "3C"], "knock": False}


# -- state blobs: every field typed -----------------------------------------------------------------


WRONG_TYPES = [("ply", "3"), ("turns_in_round", 1.5), ("known", "zz"), ("round", None), ("dealer", True),
               ("totals", {"a": 1}), ("round_scores", [[[0]]]), ("seed", 2**64), ("hands", [["7H", 5]])]


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_a_state_field_of_the_wrong_type_is_an_invalid_state_naming_it(game_id):
    """The blobs of the report (a wrongly typed ply, turns_in_round or known gave 500s in the engine)."""
    game = GAMES[game_id]
    state, _ = midgame(game)
    tried = 0
    for field, value in WRONG_TYPES:
        blob = game.to_json(state)
        if field in blob:  # not every game has 'known'
            blob[field] = value
            with pytest.raises(InvalidStateError, match=repr(field)):
                game.from_json(blob)
            tried += 1
    assert tried >= len(WRONG_TYPES) - 1


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_seats_and_counters_of_a_state_are_checked(game_id):
    game = GAMES[game_id]
    state, _ = midgame(game)
    for field, value, message in (("dealer", 99, "dealer 99 is not a seat"), ("ply", -1, "ply -1 is negative"),
                                  ("chance", -5, "chance -5 is negative")):
        blob = game.to_json(state)
        blob[field] = value
        with pytest.raises(InvalidStateError, match=message):
            game.from_json(blob)


# -- views ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_real_views_pass(game_id):
    game = GAMES[game_id]
    for plies in (0, 5, 11):
        _, view = midgame(game, plies)
        game.check_view(view)


def check_view_fast(game, view, match):
    started = time.perf_counter()
    with pytest.raises(InvalidViewError, match=match):
        game.check_view(view)
    assert time.perf_counter() - started < 0.5


def test_the_reported_amplifications_are_refused_before_any_work():
    """num_players 100000 took 4 s and jokers_per_deck 5000000 8 s and 200 MB in best-move: both bound
    the deck the view is re-dealt from."""
    _, view = midgame(TT)
    check_view_fast(TT, {**view, "num_players": 100_000}, "is for 2-8 players, not 100000")
    big = copy.deepcopy(view)
    big["options"]["jokers_per_deck"] = 5_000_000
    check_view_fast(TT, big, "option 'jokers_per_deck': must be at most 2")
    check_view_fast(TT, {**view, "round": "1"}, "view field 'round' must be an integer")


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_tampered_views_are_refused_naming_what_is_wrong(game_id):
    game = GAMES[game_id]
    _, view = midgame(game)
    zones = copy.deepcopy(view["hidden"])
    zones[-1]["size"] = 10_000
    cases = [
        ({**view, "game": "chess"}, "not a " + game_id),
        ({**view, "seat": 40}, "'seat' is 40, not a seat"),
        ({**view, "ply": -3}, "'ply' is -3"),
        ({**view, "hand": "7H"}, "'hand' must be a list"),
        ({**view, "hidden": zones}, "size must be an integer from 0 to"),
        ({**view, "hidden": [{"zone": "x", "size": 1, "evil": 1}]}, "hidden zone 0 must be"),
        ({**view, "totals": [0]}, "one entry per seat"),
        ({**view, "options": {}}, "must list every option"),
        ({**view, "unexpected": 1}, "'unexpected' differ"),
    ]
    for tampered, message in cases:
        check_view_fast(game, tampered, message)
    missing = {k: v for k, v in view.items() if k != "phase"}
    check_view_fast(game, missing, "no 'phase' field")


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_every_game_specific_field_of_a_view_is_checked(game_id):
    """Each field that only this game's views have, set to a string, an object, a huge number or a list of
    lists: never accepted, always an InvalidViewError (never another exception) and quick."""
    game = GAMES[game_id]
    _, view = midgame(game)
    common = {"game", "seat", "num_players", "options", "round", "dealer", "phase", "to_move", "ply",
              "turns_in_round", "totals", "round_scores", "winners", "hand", "hidden"}
    for field in sorted(set(view) - common):
        for value in ("x", {"a": [1]}, 10**30, [["7H"] * 5] * 3):
            check_view_fast(game, {**view, field: value}, None)
