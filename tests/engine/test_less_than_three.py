"""Less Than Three (RULES.md §1): the examples LT1-LT9 by number, then the rules they rest on.

Seat 0 is "A" and seat 1 is "B" in the examples.
"""

from __future__ import annotations

import json
import random
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import climbing
from engine.cards import CARD_NAMES, parse_cards
from engine.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidSetupError,
    InvalidStateError,
)
from engine.game import Event, Move
from engine.games.less_than_three import DECK, LessThanThreeState, next_dealer, parse_play, round_points
from engine.registry import get_game

LT = get_game("less-than-three")
A, B = 0, 1
PASS = {"type": "pass"}
SWEEP = {"type": "sweep"}


def play(text, knock=False):
    return parse_play(text, knock)


def lt(state: object) -> LessThanThreeState:
    assert isinstance(state, LessThanThreeState)
    return state


def new(options=None, seed=0) -> LessThanThreeState:
    return lt(LT.new_match(2, options, seed=seed))


def setup(hand_a, hand_b, seed=0, options=None, **fields) -> LessThanThreeState:
    return lt(LT.from_setup(2, {"hands": [hand_a.split(), hand_b.split()], **fields}, options, seed=seed))


def run(state: LessThanThreeState, *moves: Move) -> tuple[LessThanThreeState, list[Event]]:
    events: list[Event] = []
    for move in moves:
        after, ev = LT.apply(state, move)
        state = lt(after)
        events += ev
    return state, events


def plays_listed(state, knock=None):
    """The card sets of the listed plays (with the given knock flag, or any)."""
    return {" ".join(m["cards"]) for m in LT.legal_moves(state)
            if m["type"] == "play" and (knock is None or m["knock"] is knock)}


def round_end(events):
    [event] = [e for e in events if e["type"] == "round_end"]
    return event


# -- the examples ---------------------------------------------------------------------------------


def test_LT1_knock_with_2_against_5_scores_3():
    state = setup("3C 7D 9H", "2C 4D 5H 6S 8C", dealer=A)
    state, events = run(state, play("3C", knock=True))
    end = round_end(events)
    assert (end["reason"], end["seat"], end["hand_sizes"]) == ("knock", A, [2, 5])
    assert state.round_scores == [[3, 0]]
    assert state.totals == [3, 0]


def test_LT2_the_fewer_cards_score_not_the_knocker():
    state = setup("4S", "2C 2D 6H 9S", dealer=B)
    state, events = run(state, play("2C 2D", knock=True))
    assert round_end(events)["hand_sizes"] == [1, 2]
    assert state.round_scores == [[1, 0]]


def test_LT3_knock_with_equal_hands_scores_nothing():
    state = setup("2C 3D 9H", "4C 5D", dealer=A)
    state, events = run(state, play("2C", knock=True))
    assert round_end(events)["hand_sizes"] == [2, 2]
    assert state.round_scores == [[0, 0]]


def test_LT4_shed_out_against_7_scores_12():
    state = setup("TS", "2C 3C 4C 5C 6C 7C 8C", dealer=A)
    state, events = run(state, play("TS"))
    end = round_end(events)
    assert (end["reason"], end["seat"], end["hand_sizes"]) == ("shed_out", A, [0, 7])
    assert state.round_scores == [[12, 0]]


def test_LT5_answers_to_a_pair():
    state = setup("9C 9D", "6D 6C 7D 5D 5C 7S 7H AC", dealer=A, table=["5S", "5H"])
    assert state.to_move == B
    listed = plays_listed(state)
    assert "6C 6D" in listed
    for text in ("6D 7D", "5C 5D", "7D 7H 7S"):
        assert " ".join(play(text)["cards"]) not in listed
        with pytest.raises(IllegalMoveError, match="R7"):
            LT.apply(state, play(text))
    after, _ = run(state, play("6D 6C"))
    assert after.table == parse_cards("6C 6D")


def test_LT6_answers_to_a_run():
    state = setup("9C 9D", "4C 5C 6C 3S 4S 5S 4D 5D 6D 7D 8S 9S TS AS", dealer=A, table=["3H", "4H", "5H"])
    # every 3-card run topped above 5, in any suit; 3S-5S is equal, 4D-7D too long
    assert plays_listed(state) == {"4C 5C 6C", "4D 5D 6D", "5D 6D 7D", "8S 9S TS"}
    with pytest.raises(IllegalMoveError, match="strictly higher"):
        LT.apply(state, play("3S 4S 5S"))
    with pytest.raises(IllegalMoveError, match="same number of cards"):
        LT.apply(state, play("4D 5D 6D 7D"))
    with pytest.raises(IllegalMoveError, match="no meld"):
        LT.apply(state, play("9S TS AS"))
    assert run(state, play("8S 9S TS"))[0].table == parse_cards("8S 9S TS")


def test_LT7_one_sweep_per_round_and_two_per_game():
    state = setup("TS 4H 5H 2D 9C 9D", "2C 3C TC 6S 7S 8D", round=3, dealer=A, sweeps=[2, 1])
    state, _ = run(state, play("TS"))
    state, events = run(state, SWEEP)
    assert events == [{"type": "sweep", "seat": B, "sweeps_left": 0}]
    assert (state.sweeps, state.sweep_used, state.to_move, state.phase) == ([2, 0], True, B, "lead")
    state, _ = run(state, play("2C 3C"), play("4H 5H"), PASS)
    assert (state.to_move, state.phase) == (A, "lead")
    # the rest of round 3: A holds both sweep cards but may not sweep
    state, _ = run(state, play("2D"), play("TC"))
    assert state.to_move == A
    assert SWEEP not in LT.legal_moves(state)
    with pytest.raises(IllegalMoveError, match="already used this round"):
        LT.apply(state, SWEEP)
    state, _ = run(state, PASS, play("6S 7S"), PASS)
    state, events = run(state, play("8D"))
    assert round_end(events)["reason"] == "shed_out"
    assert state.round_scores == [[0, 7]]
    # round 4: A (lower total) deals and leads; A may sweep again, B never again
    assert (state.round, state.dealer, state.sweeps, state.sweep_used) == (4, A, [2, 0], False)
    lowest = min(state.hands[A], key=lambda c: c % 13)
    state, _ = run(state, play(CARD_NAMES[lowest]))
    assert SWEEP not in LT.legal_moves(state)
    with pytest.raises(IllegalMoveError, match="no sweep card left"):
        LT.apply(state, SWEEP)
    answers = [m for m in LT.legal_moves(state) if m["type"] == "play"]
    assert answers, "B holds 15 cards, one of them above A's lowest"
    state, _ = run(state, answers[0])
    assert SWEEP in LT.legal_moves(state)


def test_LT8_lower_total_deals_equal_totals_the_other_dealer():
    # A dealt round 1 and scores 3: B deals and leads round 2
    state, _ = run(setup("3C 7D 9H", "2C 4D 5H 6S 8C", dealer=A), play("3C", knock=True))
    assert (state.totals, state.round, state.dealer, state.to_move) == ([3, 0], 2, B, B)
    # both 0 and A dealt round 1: B deals round 2
    state, _ = run(setup("2C 3D 9H", "4C 5D", dealer=A), play("2C", knock=True))
    assert (state.totals, state.dealer, state.to_move) == ([0, 0], B, B)
    # both 0 and B dealt: A deals
    state, _ = run(setup("4C 5D", "2C 3D 9H", dealer=B), play("2C", knock=True))
    assert (state.totals, state.dealer) == ([0, 0], A)
    # B dealt and scored: A, with the lower total, deals again
    state, _ = run(setup("4C 5D 6H 7S 8C", "2C 3D 9H", dealer=B), play("2C", knock=True))
    assert (state.totals, state.dealer) == ([0, 3], A)


def test_LT9_equal_totals_after_round_6_both_win():
    state = setup("2C 3D 9H", "4C 5D", round=6, totals=[14, 14], dealer=A)
    state, events = run(state, play("2C", knock=True))
    assert state.is_over and state.winners == [A, B]
    assert events[-1] == {"type": "game_end", "totals": [14, 14], "winners": [A, B]}
    assert LT.scores(state)["winners"] == [A, B]


# -- R1: six rounds, the higher total wins --------------------------------------------------------


def test_R1_the_higher_total_wins():
    state = setup("2C 3D 9H", "4C 5D 6H 7S 8C", round=6, totals=[10, 12], dealer=A)
    state, _ = run(state, play("2C", knock=True))
    assert (state.totals, state.winners, state.to_move, state.phase) == ([13, 12], [A], None, "over")
    assert LT.info.lower_score_wins is False
    assert LT.legal_moves(state) == []
    with pytest.raises(GameOverError):
        LT.apply(state, PASS)


def test_R1_a_game_is_six_rounds():
    state = new(seed=5)
    rng = random.Random(5)
    rounds_seen = {state.round}
    while not state.is_over:
        state, _ = run(state, rng.choice(LT.legal_moves(state)))
        rounds_seen.add(state.round)
    assert rounds_seen == {1, 2, 3, 4, 5, 6}
    assert len(state.round_scores) == 6
    assert state.totals == [sum(r[i] for r in state.round_scores) for i in (A, B)]


def test_R1_exactly_two_players():
    for n in (1, 3):
        with pytest.raises(InvalidOptionError):
            LT.new_match(n)


# -- R2-R4: the deck, the deal, the sweep cards ----------------------------------------------------


def test_R2_R4_forty_cards_fifteen_each_ten_aside():
    state = new(seed=3)
    assert sorted(DECK) == sorted(parse_cards(f"{r}{s}" for s in "CDHS" for r in "A23456789T"))
    assert [len(h) for h in state.hands] == [15, 15]
    assert len(state.aside) == 10
    assert sorted(LT.cards_in_play(state)) == sorted(DECK)
    assert (state.table, state.discarded, state.phase, state.to_move) == ([], [], "lead", state.dealer)


def test_R3_two_sweep_cards_each_for_the_game():
    state = new(seed=3)
    assert (state.sweeps, state.sweep_used) == ([2, 2], False)


# -- R6-R8: leading, answering, passing ------------------------------------------------------------


def test_R6_the_leader_may_not_pass_nor_sweep():
    state = new(seed=1)
    kinds = {m["type"] for m in LT.legal_moves(state)}
    assert kinds == {"play"}
    with pytest.raises(IllegalMoveError, match="R6"):
        LT.apply(state, PASS)
    with pytest.raises(IllegalMoveError, match="R9"):
        LT.apply(state, SWEEP)


def test_R7_the_climb_alternates_and_beaten_melds_are_discarded():
    state = setup("3C 6H 9S", "4D 7C 8C", dealer=A)
    earlier = state.discarded[:]  # the cards the setup leaves out count as played before
    state, _ = run(state, play("3C"), play("4D"))
    assert (state.table, state.discarded, state.to_move) == (parse_cards("4D"), earlier + parse_cards("3C"), A)
    assert plays_listed(state) == {"6H", "9S"}
    state, _ = run(state, play("6H"))
    assert (state.table, state.discarded, state.to_move) == (parse_cards("6H"), earlier + parse_cards("3C 4D"), B)


def test_R7_a_pair_and_a_two_card_run_never_answer_each_other():
    state = setup("9C 9D", "6D 7D 8H", dealer=A, table=["5S", "5H"])
    with pytest.raises(IllegalMoveError, match="never answer"):
        LT.apply(state, play("6D 7D"))
    state = setup("9C 9D", "7C 7D 8H", dealer=A, table=["5H", "6H"])
    assert plays_listed(state) == set()
    with pytest.raises(IllegalMoveError, match="never answer"):
        LT.apply(state, play("7C 7D"))


def test_R7_passing_is_allowed_with_an_answer_in_hand():
    state = setup("9C 9D", "6D 6C 8H", dealer=A, table=["5S", "5H"])
    assert PASS in LT.legal_moves(state)
    assert "6C 6D" in plays_listed(state)
    LT.apply(state, PASS)


def test_R8_a_pass_discards_the_table_and_the_other_player_leads():
    state = setup("9C 9D 2H", "6D 6C 8H", dealer=A, table=["5S", "5H"])
    earlier = state.discarded[:]
    state, events = run(state, PASS)
    assert events == [{"type": "pass", "seat": B}]
    assert (state.table, state.discarded) == ([], earlier + parse_cards("5H 5S"))
    assert (state.to_move, state.phase) == (A, "lead")
    assert {m["type"] for m in LT.legal_moves(state)} == {"play"}


def test_a_play_must_come_from_the_hand_and_be_a_meld():
    state = setup("3C 4C 6C 6D", "4D 7C 8C", dealer=A)
    with pytest.raises(IllegalMoveError, match="not in your hand"):
        LT.apply(state, play("5C"))
    with pytest.raises(IllegalMoveError, match="no meld"):
        LT.apply(state, play("3C 4C 6C"))
    with pytest.raises(IllegalMoveError, match="twice"):
        LT.apply(state, {"type": "play", "cards": ["3C", "3c"]})
    with pytest.raises(InvalidMoveError):
        LT.apply(state, {"type": "play", "cards": []})
    with pytest.raises(InvalidMoveError):
        LT.apply(state, {"type": "play"})
    with pytest.raises(InvalidMoveError):
        LT.apply(state, {"type": "play", "cards": ["3C"], "knock": "yes"})
    # order, case and "10" don't matter; the knock flag may be left out
    after, events = run(state, {"type": "play", "cards": ["4c", "3C"]})
    assert events[0]["cards"] == ["3C", "4C"] and events[0]["knock"] is False
    assert after.hands[A] == parse_cards("6C 6D")


# -- R9: the sweep -------------------------------------------------------------------------------


def test_R9_sweep_discards_the_table_and_the_sweeper_leads_without_passing():
    state = setup("9C 9D", "6D 6C 8H", dealer=A, table=["5S", "5H"])
    state, _ = run(state, SWEEP)
    assert (state.table, state.to_move, state.phase) == ([], B, "lead")
    assert set(parse_cards("5S 5H")) <= set(state.discarded)
    assert (state.sweeps, state.sweep_used) == ([2, 1], True)
    with pytest.raises(IllegalMoveError, match="R6"):
        LT.apply(state, PASS)


def test_R9_no_sweep_without_a_sweep_card_or_after_one_this_round():
    state = setup("9C 9D", "6D 6C 8H", dealer=A, table=["5S", "5H"], sweeps=[2, 0], round=3)
    assert SWEEP not in LT.legal_moves(state)
    with pytest.raises(IllegalMoveError, match="no sweep card left"):
        LT.apply(state, SWEEP)
    state = setup("9C 9D", "6D 6C 8H", dealer=A, table=["5S", "5H"], sweeps=[1, 2], sweep_used=True, round=2)
    assert SWEEP not in LT.legal_moves(state)
    with pytest.raises(IllegalMoveError, match="already used this round"):
        LT.apply(state, SWEEP)


def test_R9_the_sweep_flag_resets_each_round_and_the_cards_never_come_back():
    state = setup("9C 9D", "6D 6C 8H", dealer=A, table=["5S", "5H"])
    state, _ = run(state, SWEEP, play("8H", knock=True))
    assert (state.round, state.sweeps, state.sweep_used) == (2, [2, 1], False)


# -- R10-R12: knocking, shedding out, scoring ----------------------------------------------------------


def test_R10_knock_offered_exactly_when_a_play_leaves_1_or_2_cards():
    state = setup("3C 4C 5C 8H", "9D TD", dealer=A)
    with_knock = plays_listed(state, knock=True)
    assert with_knock == {"3C 4C", "4C 5C", "3C 4C 5C"}  # leave 2, 2 and 1
    assert plays_listed(state, knock=False) == {"3C", "4C", "5C", "8H", "3C 4C", "4C 5C", "3C 4C 5C"}
    with pytest.raises(IllegalMoveError, match="R10"):
        LT.apply(state, play("3C", knock=True))


def test_R10_no_knock_on_the_last_card_and_none_without_a_play():
    state = setup("3C 4C", "9D TD 2H", dealer=A)
    assert plays_listed(state, knock=True) == {"3C", "4C"}
    assert "3C 4C" in plays_listed(state, knock=False)
    with pytest.raises(IllegalMoveError, match="R11"):
        LT.apply(state, play("3C 4C", knock=True))
    responding = setup("3C 4C", "9D TD 2H", dealer=A, table=["5H"])
    assert {m["type"] for m in LT.legal_moves(responding)} == {"play", "sweep", "pass"}
    assert all("knock" not in m for m in LT.legal_moves(responding) if m["type"] != "play")


def test_R10_knock_allowed_when_the_opponent_holds_fewer_and_after_an_answer():
    state = setup("3C 5C 7C", "9D", dealer=A)
    state, _ = run(state, play("3C", knock=True))
    assert state.round_scores == [[0, 1]]
    state = setup("3C 5C 7C 8D", "4D 9D TD", dealer=A)
    state, events = run(state, play("3C"), play("4D", knock=True))
    assert round_end(events)["seat"] == B and round_end(events)["hand_sizes"] == [3, 2]
    assert state.round_scores == [[0, 1]]


def test_R11_shedding_out_ends_the_round_before_any_answer():
    state = setup("2C 3C 9S", "4C 5C TD", dealer=A)
    state, _ = run(state, play("9S"), PASS)
    state, events = run(state, play("2C 3C"))
    assert [e["type"] for e in events] == ["play", "round_end", "round_start"]
    assert state.round_scores == [[8, 0]]
    assert (state.round, state.phase) == (2, "lead")
    # shed out with an answer
    state = setup("2C 3C 9S", "TH", dealer=A)
    state, _ = run(state, play("9S"), play("TH"))
    assert state.round_scores == [[0, 7]]


def test_R12_round_points():
    assert round_points([2, 5]) == [3, 0]
    assert round_points([1, 2]) == [1, 0]
    assert round_points([2, 2]) == [0, 0]
    assert round_points([6, 1]) == [0, 5]
    assert round_points([0, 7], shed_out_by=A) == [12, 0]
    assert round_points([15, 0], shed_out_by=B) == [0, 20]


def test_R13_next_dealer():
    assert next_dealer([3, 0], dealer=A) == B
    assert next_dealer([3, 0], dealer=B) == B
    assert next_dealer([0, 0], dealer=A) == B
    assert next_dealer([7, 7], dealer=B) == A
    assert next_dealer([2, 9], dealer=A) == A


def test_a_new_round_deals_afresh_and_the_dealer_leads():
    state = setup("3C 7D 9H", "2C 4D 5H 6S 8C", dealer=A)
    state, events = run(state, play("3C", knock=True))
    assert events[-1] == {"type": "round_start", "round": 2, "dealer": B}
    assert [len(h) for h in state.hands] == [15, 15] and len(state.aside) == 10
    assert (state.table, state.discarded, state.turns_in_round, state.to_move) == ([], [], 0, B)
    assert sorted(LT.cards_in_play(state)) == sorted(DECK)


# -- C7: the loop guard ----------------------------------------------------------------------------


def test_C7_turn_limit_scores_the_round_as_it_stands():
    state = new({"max_turns_per_round": 10, "first_dealer": A}, seed=2)
    events = []
    for _ in range(5):
        state, ev = run(state, play(CARD_NAMES[state.hands[A][0]]), PASS)
        events += ev
    end = round_end(events)
    assert (end["reason"], end["seat"], end["hand_sizes"]) == ("turn_limit", None, [10, 15])
    assert state.round_scores == [[5, 0]]
    assert state.round == 2


# -- options --------------------------------------------------------------------------------------


@pytest.mark.parametrize("seat", [A, B])
def test_first_dealer_option_names_the_seat(seat):
    state = new({"first_dealer": seat}, seed=11)
    assert (state.dealer, state.to_move) == (seat, seat)


def test_first_dealer_random_comes_from_the_seed():
    dealers = [new(seed=s).dealer for s in range(30)]
    assert set(dealers) == {A, B}
    assert dealers == [new({"first_dealer": "random"}, seed=s).dealer for s in range(30)]


@pytest.mark.parametrize("value", [2, -1, True, "0", None])
def test_first_dealer_option_rejects_other_values(value):
    with pytest.raises(InvalidOptionError, match="first_dealer"):
        new({"first_dealer": value})


def test_game_info():
    info = LT.info.to_json()
    assert (info["min_players"], info["max_players"], info["lower_score_wins"]) == (2, 2, False)
    names = {o["name"]: o for o in info["options"]}
    assert names["first_dealer"]["choices"] == ["random", 0, 1]
    assert "max_turns_per_round" in names


# -- views ---------------------------------------------------------------------------------------


def _tokens(obs):
    return set(json.dumps(obs).replace('"', " ").replace(",", " ").replace("[", " ").replace("]", " ").split())


def test_views_show_own_hand_and_public_table_and_nothing_hidden():
    state = new(seed=4)
    state, _ = run(state, LT.legal_moves(state)[0])
    for seat in (A, B):
        obs = LT.observation(state, seat)
        assert obs["hand"] == [CARD_NAMES[c] for c in state.hands[seat]]
        assert obs["hand_sizes"] == [len(h) for h in state.hands]
        assert obs["table"] == [CARD_NAMES[c] for c in state.table]
        assert obs["table_meld"]["size"] == len(state.table)
        assert (obs["sweeps"], obs["sweep_used"], obs["aside_size"]) == ([2, 2], False, 10)
        hidden = {CARD_NAMES[c] for c in state.hands[1 - seat] + state.aside}
        assert not hidden & _tokens(obs)
        assert obs["hidden"] == [{"zone": "hand", "size": len(state.hands[1 - seat]), "seat": 1 - seat},
                                 {"zone": "aside", "size": 10}]
    spectator = LT.observation(state, None)
    assert spectator["hand"] == []
    assert not {CARD_NAMES[c] for c in state.hands[0] + state.hands[1] + state.aside} & _tokens(spectator)
    assert [z["zone"] for z in spectator["hidden"]] == ["hand", "hand", "aside"]


def test_determinize_keeps_the_view_and_redeals_the_unseen():
    state = new(seed=9)
    rng = random.Random(0)
    state, _ = run(state, LT.legal_moves(state)[0])
    obs = LT.observation(state, B)
    worlds = [lt(LT.determinize(obs, rng)) for _ in range(20)]
    for world in worlds:
        LT.check_state(world)
        assert LT.observation(world, B) == obs
    assert len({tuple(w.hands[A]) for w in worlds}) > 1


def test_round_end_reveals_hands_but_never_the_aside():
    state = setup("3C 7D 9H", "2C 4D 5H 6S 8C", dealer=A)
    aside = {CARD_NAMES[c] for c in state.aside}
    _, events = run(state, play("3C", knock=True))
    end = round_end(events)
    assert end["hands"] == [["7D", "9H"], ["2C", "8C", "4D", "5H", "6S"]]  # canonical order: by suit
    assert not aside & _tokens(end)


# -- legal move lists ------------------------------------------------------------------------------


def _all_melds_by_definition():
    """Every meld of the 40-card deck, straight from R5: singles, 2-4 of a rank, 2+ in suit sequence."""
    out: list[tuple[int, ...]] = [(c,) for c in DECK]
    for rank in range(1, 11):
        of_rank = [c for c in DECK if c % 13 + 1 == rank]
        out += [combo for n in (2, 3, 4) for combo in combinations(of_rank, n)]
    for suit in range(4):
        out += [tuple(suit * 13 + r - 1 for r in range(low, low + n))
                for n in range(2, 11) for low in range(1, 12 - n)]
    return out


ALL_MELDS = _all_melds_by_definition()


def _kind_and_rank(cards):
    ranks = [c % 13 + 1 for c in cards]
    if len(cards) == 1:
        return "single", ranks[0]
    if len(set(ranks)) == 1:
        return "set", ranks[0]
    return "run", max(ranks)


hands = st.lists(st.sampled_from(DECK), min_size=1, max_size=15, unique=True)


def test_lead_list_of_a_dealt_hand():
    state = new(seed=21)
    moves = LT.legal_moves(state)
    keys = [json.dumps(m, sort_keys=True) for m in moves]
    assert len(keys) == len(set(keys)), "no move twice"
    hand = set(state.hands[state.dealer])
    want = {" ".join(CARD_NAMES[c] for c in m) for m in ALL_MELDS if set(m) <= hand}
    assert plays_listed(state) == want
    assert all(m["knock"] is False for m in moves)  # 15 cards: no play leaves 1 or 2


@given(hands)
def test_lead_list_is_every_meld_in_hand(hand):
    want = {tuple(m) for m in ALL_MELDS if set(m) <= set(hand)}
    got = [m.cards for m in climbing.melds_in(hand)]
    assert len(got) == len(set(got))
    assert set(got) == want


@given(hands, st.sampled_from(ALL_MELDS))
def test_answer_list_is_every_higher_meld_of_the_same_kind_and_size(hand, table):
    kind, rank = _kind_and_rank(table)
    want = {m for m in ALL_MELDS if set(m) <= set(hand) and len(m) == len(table)
            and _kind_and_rank(m) == (kind, _kind_and_rank(m)[1]) and _kind_and_rank(m)[1] > rank}
    table_meld = climbing.classify(table)
    assert table_meld is not None
    got = [m.cards for m in climbing.answers_in(hand, table_meld)]
    assert len(got) == len(set(got))
    assert set(got) == want


@given(st.lists(st.sampled_from(DECK), min_size=1, max_size=6, unique=True))
def test_classify_agrees_with_the_definition(cards):
    meld = climbing.classify(cards)
    by_definition = tuple(sorted(cards)) in {tuple(sorted(m)) for m in ALL_MELDS}
    assert (meld is not None) == by_definition
    if meld is not None:
        assert (meld.kind, meld.rank) == _kind_and_rank(sorted(cards))


def test_listed_moves_are_fresh_objects():
    state = new(seed=1)
    first = LT.legal_moves(state)
    first[0]["cards"].append("KS")
    first[0]["knock"] = True
    assert LT.legal_moves(state)[0] == {"type": "play", "cards": first[0]["cards"][:-1], "knock": False}


def test_every_listed_move_is_accepted_with_and_without_checks():
    state = LT.from_setup(2, {"hands": [["3C", "4C", "5C", "8H"], ["9D", "TD", "5D"]], "table": ["2C"],
                              "dealer": B, "to_move": A})
    for move in LT.legal_moves(state):
        assert LT.apply(state, move)[0] == LT.apply(state, move, check=False)[0]


# -- setups and serialization ------------------------------------------------------------------------


def test_setup_fills_the_aside_then_the_discards():
    state = setup("3C 7D 9H", "2C 4D 5H 6S 8C", seed=3)
    assert len(state.aside) == 10 and len(state.discarded) == 22
    assert sorted(LT.cards_in_play(state)) == sorted(DECK)
    LT.check_state(state)


@pytest.mark.parametrize(("fields", "message"), [
    ({"hands": [["3C"]]}, "2 hands"),
    ({"hands": [[], ["3C"]]}, "1 to 15"),
    ({"hands": [["JH"], ["3C"]]}, "40-card deck"),
    ({"hands": [["3C"], ["3C"]]}, "twice"),
    ({"hands": [["3C"], ["4C"]], "table": ["5C", "7C"]}, "no meld"),
    ({"hands": [["3C"], ["4C"]], "sweeps": [0, 0], "round": 2}, "at most one a round"),
    ({"hands": [["3C"], ["4C"]], "sweep_used": True}, "both players hold all"),
    ({"hands": [["3C"], ["4C"]], "aside": ["5C"]}, "set aside"),
    ({"hands": [["3C"], ["4C"]], "round": 7}, "round"),
    ({"hands": [["3C"], ["4C"]], "aside": ["AC", "AD", "AH", "AS", "2C", "2D", "2H", "2S", "3D", "3H"],
      "discarded": ["5C"]}, "leaves out"),
    ({"hands": [["3C"], ["4C"]], "colour": "red"}, "unknown setup fields"),
    ({"table": ["3C"]}, "needs both hands"),
])
def test_setup_rejects_impossible_positions(fields, message):
    with pytest.raises(InvalidSetupError, match=message):
        LT.from_setup(2, fields)


def test_json_round_trip_and_bad_blobs():
    state = new(seed=8)
    state, _ = run(state, LT.legal_moves(state)[0])
    blob = json.loads(json.dumps(LT.to_json(state)))
    assert LT.from_json(blob) == state
    blob["sweeps"] = [3, 2]
    with pytest.raises(InvalidStateError, match="sweeps"):
        LT.from_json(blob)
    blob = json.loads(json.dumps(LT.to_json(state)))
    blob["table"] = []
    with pytest.raises(InvalidStateError):
        LT.from_json(blob)


def test_apply_never_changes_its_input_states_share_lists_copy_on_write():
    rng = random.Random(3)
    state = new(seed=3)
    while not state.is_over:
        before = json.dumps(LT.to_json(state))
        for move in LT.legal_moves(state):
            LT.apply(state, move)
        assert json.dumps(LT.to_json(state)) == before
        state, _ = run(state, rng.choice(LT.legal_moves(state)))
