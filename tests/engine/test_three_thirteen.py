"""Three Thirteen and Threezies: the flow of RULES.md §2-3 (the hand examples are in test_melds.py)."""

from __future__ import annotations

import json

import pytest

from engine.cards import parse_cards
from engine.errors import (
    IllegalMoveError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidSetupError,
    NotYourTurnError,
)
from engine.registry import get_game

TT = get_game("three-thirteen")
TZ = get_game("threezies")


def cards(text):
    return parse_cards(text)


def play(game, state, *moves):
    events = []
    for move in moves:
        state, ev = game.apply(state, move)
        events += ev
    return state, events


DRAW_STOCK = {"type": "draw", "source": "stock"}
DRAW_DISCARD = {"type": "draw", "source": "discard"}


def discard(card):
    return {"type": "discard", "card": card}


def go_out(card):
    return {"type": "go_out", "card": card}


# -- R1/R2: decks, deal sizes, wild ranks ------------------------------------------


@pytest.mark.parametrize(("players", "decks"), [(2, 1), (3, 2), (4, 2), (5, 3), (8, 4)])
def test_R1_decks_by_player_count(players, decks):
    state = TT.new_match(players, seed=1)
    assert len(TT.cards_in_play(state)) == 52 * decks


def test_R1_jokers_option_adds_jokers_per_deck():
    state = TT.new_match(4, {"jokers_per_deck": 2}, seed=1)
    assert TT.cards_in_play(state).count(52) == 4


@pytest.mark.parametrize("round_no", range(1, 12))
def test_R2_round_deals_k_plus_2_and_wild_rank_k_plus_2(round_no):
    state = TT.from_setup(2, {"round": round_no}, seed=round_no)
    assert [len(h) for h in state.hands] == [round_no + 2] * 2
    assert TT.observation(state, 0)["wild_rank"] == round_no + 2


def test_new_match_deals_an_up_card_and_the_left_of_the_dealer_starts():
    state = TT.new_match(3, seed=5)
    assert len(state.discard) == 1  # C1
    assert state.to_move == (state.dealer + 1) % 3
    assert [len(h) for h in state.hands] == [3, 3, 3]
    assert len(state.stock) == 104 - 9 - 1


def test_first_dealer_comes_from_the_seed():
    dealers = {TT.new_match(4, seed=s).dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}
    assert TT.new_match(4, seed=11) == TT.new_match(4, seed=11)


def test_options_are_validated_with_errors_naming_the_option():
    with pytest.raises(InvalidOptionError, match="aces"):
        TT.new_match(2, {"aces": "high"})
    with pytest.raises(InvalidOptionError, match="colour"):
        TT.new_match(2, {"colour": "red"})
    with pytest.raises(InvalidOptionError, match="decks"):
        TT.new_match(5, {"decks": 1})  # round 11 deals 65 cards
    with pytest.raises(InvalidOptionError, match="players"):
        TT.new_match(9)
    with pytest.raises(InvalidOptionError, match="players"):
        TZ.new_match(4)


# -- R3, R6, R7: turns, going out, the last turns ----------------------------------------------------


def test_R3_a_turn_is_a_draw_then_a_discard():
    state = TT.from_setup(2, {"round": 1, "dealer": 0, "hands": ["KS QH 5D", "2C 9D JH"],
                              "stock": ["4H", "8C"], "discard": ["6S"]}, options={"decks": 2})
    assert state.to_move == 1
    assert TT.legal_moves(state) == [DRAW_STOCK, DRAW_DISCARD]
    with pytest.raises(IllegalMoveError, match="draw first"):
        TT.apply(state, discard("2C"))
    state, events = TT.apply(state, DRAW_STOCK)
    assert events == [{"type": "draw", "seat": 1, "source": "stock"}]
    assert sorted(state.hands[1]) == sorted(cards("2C 9D JH 4H"))
    assert {m["type"] for m in TT.legal_moves(state)} == {"discard"}
    state, events = TT.apply(state, discard("JH"))
    assert state.to_move == 0 and state.phase == "draw"
    assert state.discard[-1] == cards("JH")[0]


def test_R6_go_out_then_every_other_player_has_one_last_turn_R7():
    # Round 1, 3s wild. Seat 1 holds 7D 7S 3C: drawing KD and discarding it goes out.
    state = TT.from_setup(3, {"round": 1, "dealer": 0,
                              "hands": ["KS QH 5D", "7D 7S 3C", "2C 2D 9H"],
                              "stock": ["KD", "2H", "AC"], "discard": ["6S"]})
    state, _ = play(TT, state, DRAW_STOCK)
    assert go_out("KD") in TT.legal_moves(state)
    state, events = TT.apply(state, go_out("KD"))
    assert events[0]["type"] == "go_out" and events[0]["melds"]
    assert state.went_out == 1 and state.to_move == 2
    assert go_out("2C") not in TT.legal_moves(state)  # nobody goes out twice
    # seat 2 draws 2H and keeps 2C 2D 2H: a set, so it scores 0 too (R8)
    state, _ = play(TT, state, DRAW_STOCK, discard("9H"))
    assert state.to_move == 0 and state.round == 1
    state, events = play(TT, state, DRAW_STOCK, discard("AC"))
    end = next(e for e in events if e["type"] == "round_end")
    assert end["reason"] == "went_out" and end["went_out"] == 1
    assert end["scores"] == [25, 0, 0]  # KS QH 5D (TT2)
    assert state.round == 2 and state.dealer == 1 and state.to_move == 2
    assert state.totals == [25, 0, 0]


def test_going_out_with_deadwood_is_rejected_with_the_rule_and_changes_nothing():
    state = TT.from_setup(2, {"round": 1, "dealer": 1, "hands": ["7D 7S 9C", "KS QH 5D"],
                              "stock": ["KD"], "discard": ["6S"]}, options={"decks": 2})
    state, _ = play(TT, state, DRAW_STOCK)
    before = json.dumps(TT.to_json(state))
    with pytest.raises(IllegalMoveError, match=r"R6"):
        TT.apply(state, go_out("KD"))
    with pytest.raises(IllegalMoveError, match="not in your hand"):
        TT.apply(state, discard("AS"))
    with pytest.raises(InvalidMoveError):
        TT.apply(state, {"type": "discard"})
    with pytest.raises(NotYourTurnError):
        TT.apply(state, discard("KS"), seat=1)
    assert json.dumps(TT.to_json(state)) == before


def test_TT10_discarding_the_king_goes_out_in_play():
    state = TT.from_setup(2, {"round": 2, "dealer": 1, "hands": ["4C 9S 9H 9D", "2C 3C 5H 8D"],
                              "stock": ["KS", "AD"], "discard": ["6S"]})
    state, _ = play(TT, state, DRAW_STOCK)
    assert go_out("KS") in TT.legal_moves(state)
    assert [m for m in TT.legal_moves(state) if m["type"] == "go_out"] == [go_out("KS")]


# -- C3: no rediscard ----------------------------------------------------------------------------------


def test_C3_a_card_taken_from_the_discard_pile_may_not_be_discarded_this_turn():
    setup = {"round": 1, "dealer": 1, "hands": ["7D 7S 9C", "KS QH 5D"], "stock": ["KD"], "discard": ["6S"]}
    state = TT.from_setup(2, setup, options={"decks": 2})
    state, events = TT.apply(state, DRAW_DISCARD)
    assert events[0]["card"] == "6S"
    assert discard("6S") not in TT.legal_moves(state)
    with pytest.raises(IllegalMoveError, match="C3"):
        TT.apply(state, discard("6S"))
    loose = TT.from_setup(2, setup, options={"decks": 2, "allow_rediscard": True})
    loose, _ = TT.apply(loose, DRAW_DISCARD)
    assert discard("6S") in TT.legal_moves(loose)


def test_a_card_taken_from_the_discard_pile_is_known_to_every_seat_until_discarded():
    state = TT.from_setup(2, {"round": 1, "dealer": 1, "hands": ["7D 7S 9C", "KS QH 5D"],
                              "stock": ["KD", "AH"], "discard": ["6S"]}, options={"decks": 2})
    state, _ = TT.apply(state, DRAW_DISCARD)
    view = TT.observation(state, 1)
    assert view["known"][0] == ["6S"]
    assert {"zone": "hand", "seat": 0, "size": 4, "known": ["6S"]} in view["hidden"]
    assert "7D" not in json.dumps(view)
    state, _ = play(TT, state, discard("9C"), DRAW_STOCK, discard("KS"), DRAW_STOCK, discard("6S"))
    assert TT.observation(state, 1)["known"][0] == []


# -- C4: reshuffle; C7: loop guard -------------------------------------------------------------------------


def test_C4_reshuffle_keeps_the_top_discard_and_is_seeded():
    # "rest": "discard" puts every card the setup leaves out under the discard pile: the stock is empty
    state = TT.from_setup(2, {"round": 1, "dealer": 1, "hands": ["7D 7S 9C", "KS QH 5D"],
                              "stock": [], "discard": ["2C", "3C", "4C", "JD"], "rest": "discard"},
                          options={"decks": 2}, seed=3)
    assert state.stock == [] and len(state.discard) == 104 - 6
    a, events = TT.apply(state, DRAW_STOCK)
    b, _ = TT.apply(state, DRAW_STOCK)
    assert a == b
    assert events[0] == {"type": "reshuffle", "cards": 104 - 6 - 1}
    assert a.discard == cards("JD") and len(a.stock) == 104 - 6 - 2
    assert TT.apply(state.__class__(**{**state.__dict__, "seed": 4}), DRAW_STOCK)[0].stock != a.stock


def test_C8_setup_stock_lists_the_top_cards_and_the_rest_lies_under_them():
    state = TT.from_setup(2, {"round": 1, "dealer": 1, "hands": ["7D 7S 9C", "KS QH 5D"],
                              "stock": ["KD", "2H"], "discard": ["6S"]}, options={"decks": 2})
    assert state.stock[-2:] == cards("2H KD")  # KD on top
    assert len(state.stock) == 104 - 6 - 1


def test_C7_the_loop_guard_ends_the_round_as_it_stands():
    state = TT.new_match(2, {"max_turns_per_round": 10}, seed=9)
    events = []
    for _ in range(10):
        hand = state.hands[state.to_move]
        state, ev = play(TT, state, DRAW_STOCK)
        drawn = next(c for c in state.hands[state.to_move] if hand.count(c) < state.hands[state.to_move].count(c))
        state, ev = TT.apply(state, discard(cards_name(drawn)))
        events += ev
    assert events[-2]["type"] == "round_end" and events[-2]["reason"] == "turn_limit"
    assert state.round == 2


def cards_name(card):
    from engine.cards import CARD_NAMES

    return CARD_NAMES[card]


# -- game end ---------------------------------------------------------------------------------------------


def _finish_round_11(totals):
    state = TT.from_setup(2, {"round": 11, "dealer": 1, "totals": totals,
                              "hands": ["KS KH 2C 3C 5C 9D 9H 9S QD JD TD 4H 4S",
                                        "AC 2D 3D 5S 6S 7C 8C 9C TC JC QC QS AS"],
                              "stock": ["KD", "8D"], "discard": ["6D"]})
    # seat 0 to move draws KD (wild); TT11 stays melded, so discarding KD goes out
    return play(TT, state, DRAW_STOCK, go_out("KD"), DRAW_STOCK, discard("8D"))


def test_C6_equal_best_totals_share_the_win():
    _, events = _finish_round_11([0, 0])
    seat1 = next(e for e in events if e["type"] == "round_end")["scores"][1]
    assert seat1 > 0
    state, _ = _finish_round_11([seat1, 0])
    assert state.totals == [seat1, seat1]
    assert state.winners == [0, 1]


def test_game_ends_after_the_last_round_with_winners():
    state, events = _finish_round_11([40, 40])
    end = next(e for e in events if e["type"] == "round_end")
    assert end["scores"][0] == 0
    assert state.is_over and state.to_move is None
    assert state.winners == [0]
    assert events[-1] == {"type": "game_end", "totals": state.totals, "winners": [0]}
    assert TT.legal_moves(state) == []


# -- setups (C8) ---------------------------------------------------------------------------------------------


def test_C8_setup_errors_say_what_is_wrong():
    with pytest.raises(InvalidSetupError, match="deals 3 cards"):
        TT.from_setup(2, {"round": 1, "hands": ["KS QH", "2C 9D JH"]})
    with pytest.raises(InvalidSetupError, match="more often"):
        TT.from_setup(2, {"round": 1, "hands": ["KS KS QH", "2C 9D JH"]})
    with pytest.raises(InvalidSetupError, match="rest"):
        TT.from_setup(2, {"round": 1, "hands": ["KS QH 5D", "2C 9D JH"], "rest": "table"})
    with pytest.raises(InvalidSetupError, match="round"):
        TT.from_setup(2, {"round": 12})
    with pytest.raises(InvalidSetupError, match="unknown setup fields"):
        TT.from_setup(2, {"hand": []})


# -- Threezies ----------------------------------------------------------------------------------------------------


def test_threezies_has_8_rounds_one_deck_and_2_to_3_players():
    state = TZ.new_match(3, seed=2)
    assert len(TZ.cards_in_play(state)) == 52
    assert TZ.rounds == 8
    state = TZ.from_setup(2, {"round": 8}, seed=2)
    assert [len(h) for h in state.hands] == [10, 10]
    assert TZ.observation(state, 0)["wild_rank"] == 10


def test_threezies_scores_aces_high_or_low_with_an_unmatched_ace_at_1():
    # Round 1 (3s wild): seat 1 ends holding KH AH 2H = 13 (TZ4); seat 0 QH KH AH... one deck: use QS KS AS
    state = TZ.from_setup(2, {"round": 1, "dealer": 1, "hands": ["QS KS AS", "KH AH 2H"],
                              "stock": ["9C", "9D"], "discard": ["8C"]})
    state, _ = play(TZ, state, DRAW_STOCK)
    state, events = TZ.apply(state, go_out("9C"))
    state, events = play(TZ, state, DRAW_STOCK, discard("9D"))
    end = next(e for e in events if e["type"] == "round_end")
    assert end["scores"] == [0, 13]


def test_views_never_show_other_hands_or_the_stock():
    state = TT.new_match(4, seed=21)
    for seat in range(4):
        view = TT.observation(state, seat)
        text = json.dumps(view)
        assert view["hand"] == [cards_name(c) for c in state.hands[seat]]
        for other in range(4):
            if other != seat:
                for c in set(state.hands[other]) - set(state.hands[seat]) - set(state.discard):
                    assert f'"{cards_name(c)}"' not in text
        assert "stock" not in view and "seed" not in view


def test_playing_a_copy_of_a_known_card_does_not_reveal_its_twin():
    # Two decks: seat 0 takes 6S from the pile while holding another 6S, then discards a 6S.
    # Nobody can tell which copy went, so the 6S left in the hand is not "known".
    state = TT.from_setup(2, {"round": 1, "dealer": 1, "hands": ["6S 7S 9C", "KS QH 5D"],
                              "stock": ["KD"], "discard": ["6S"]}, options={"decks": 2, "allow_rediscard": True})
    state, _ = play(TT, state, DRAW_DISCARD)
    assert TT.observation(state, 1)["known"][0] == ["6S"]
    state, _ = TT.apply(state, discard("6S"))
    assert state.hands[0].count(cards("6S")[0]) == 1
    assert TT.observation(state, 1)["known"][0] == []
