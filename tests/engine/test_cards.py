"""Card notation (RULES.md §0) and the engine core's registry, options and serialization."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cards import (
    JOKER,
    cards_str,
    format_card,
    make_card,
    parse_card,
    parse_cards,
    rank_of,
    standard_deck,
    suit_of,
)
from engine.errors import InvalidCardError, UnknownGameError
from engine.game import OptionSpec, state_from_json, state_to_json
from engine.registry import all_games, get_game


def test_canonical_notation_round_trips_every_card():
    for card in range(53):
        assert parse_card(format_card(card)) == card


@pytest.mark.parametrize(("text", "canonical"), [("10h", "TH"), ("10H", "TH"), ("th", "TH"), ("as", "AS"),
                                                 ("jk", "JK"), (" 7d ", "7D"), ("Qc", "QC")])
def test_input_accepts_10_and_lower_case(text, canonical):
    assert format_card(parse_card(text)) == canonical


@pytest.mark.parametrize("bad", ["1H", "11S", "7X", "", "JKR", "H7", "10"])
def test_a_bad_token_is_named_in_the_error(bad):
    with pytest.raises(InvalidCardError) as err:
        parse_card(bad)
    assert repr(bad) in str(err.value)
    assert "RULES.md" in str(err.value)


def test_parse_cards_takes_spaces_commas_or_lists():
    assert parse_cards("7H, 8H 9h") == parse_cards(["7H", "8H", "9H"])
    assert cards_str(parse_cards("10s js")) == "TS JS"


def test_ranks_and_suits():
    assert rank_of(parse_card("AD")) == 1 and suit_of(parse_card("AD")) == 1
    assert rank_of(parse_card("KS")) == 13 and suit_of(parse_card("KS")) == 3
    assert rank_of(JOKER) == 0 and make_card(10, 2) == parse_card("TH")


def test_decks():
    assert len(standard_deck()) == 52
    assert len(set(standard_deck(2, jokers=4))) == 53
    assert len(standard_deck(1, ranks=range(1, 11))) == 40


@given(st.lists(st.integers(0, 52), max_size=30))
def test_card_lists_round_trip(cards):
    assert parse_cards(cards_str(cards)) == cards


def test_registry_finds_games_and_names_the_known_ones():
    ids = [g.info.id for g in all_games()]
    assert "three-thirteen" in ids and "threezies" in ids
    assert get_game("threezies").info.name == "Threezies"
    with pytest.raises(UnknownGameError, match="three-thirteen"):
        get_game("poker")


def test_every_game_publishes_its_options_as_json():
    for game in all_games():
        info = json.loads(json.dumps(game.info.to_json()))
        assert info["id"] == game.info.id
        names = [o["name"] for o in info["options"]]
        assert "max_turns_per_round" in names
        for option in info["options"]:
            assert option["description"] and "default" in option
        defaults = game.check_options({})
        assert defaults == {o.name: o.default for o in game.info.options}


def test_option_specs_check_types_and_ranges():
    spec = OptionSpec("threshold", "int", 100, "knock-out threshold", choices=(25, 50, 100))
    assert spec.check(50) == 50
    for bad in (30, "50", True):
        with pytest.raises(ValueError, match="threshold"):
            spec.check(bad)


def test_state_json_is_versioned_and_exact():
    game = get_game("three-thirteen")
    state = game.new_match(3, seed=4)
    blob = state_to_json(game.info.id, state)
    assert blob["format"] == 1 and blob["game"] == "three-thirteen"
    assert state_from_json(game.state_class, json.loads(json.dumps(blob))) == state
    assert all(isinstance(c, str) for c in blob["stock"])
