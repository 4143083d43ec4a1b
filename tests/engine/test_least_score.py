"""Least Score (RULES.md §5): the examples LS1-LS9 by number, every option, and the flow of a match."""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cards import CARD_NAMES, cards_str, parse_cards
from engine.errors import (
    IllegalMoveError,
    InvalidCardError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidSetupError,
    InvalidStateError,
)
from engine.games.least_score import (
    GAME,
    LeastScoreState,
    declare_scores,
    hand_total,
    is_legal_group,
    legal_groups,
    standing_scores,
    winners_after_deal,
)
from engine.registry import get_game

DECLARE = {"type": "declare"}
DECK = {"type": "pick", "source": "deck"}


def discard(cards: str) -> dict:
    return {"type": "discard", "cards": cards.split()}


def floor(card: str) -> dict:
    return {"type": "pick", "source": "floor", "card": card}


def position(hands, options=None, **setup) -> LeastScoreState:
    """A position from a setup (C8); seat 0 is to move unless ``to_move`` says otherwise."""
    setup.setdefault("to_move", 0)
    state = GAME.from_setup(len(hands), {"hands": hands, **setup}, options=options, seed=5)
    assert isinstance(state, LeastScoreState)
    return state


def new_match(n: int, options=None, seed: int = 0) -> LeastScoreState:
    state = GAME.new_match(n, options, seed=seed)
    assert isinstance(state, LeastScoreState)
    return state


def step(state: LeastScoreState, move: dict) -> LeastScoreState:
    new, _ = GAME.apply(state, move)
    assert isinstance(new, LeastScoreState)
    return new


def groups(hand: str, same_suit: bool = False) -> set[str]:
    return {cards_str(sorted(g)) for g in legal_groups(parse_cards(hand), same_suit)}


def group(cards: str) -> str:
    return cards_str(sorted(parse_cards(cards)))


def legal(state) -> list[dict]:
    return GAME.legal_moves(state)


def play(state: LeastScoreState, *moves: dict) -> tuple[LeastScoreState, list[dict]]:
    events = []
    for move in moves:
        new, ev = GAME.apply(state, move)
        assert isinstance(new, LeastScoreState)
        state = new
        events += ev
    return state, events


def deal_end(events) -> dict:
    return next(e for e in events if e["type"] == "deal_end")


# ---------------------------------------------------------------------------
# The examples of RULES.md §5


def declared_deal(totals_hands, declarer=0, options=None):
    """Seat ``declarer`` declares at the start of its second turn; the deal's event."""
    n = len(totals_hands)
    state = position(totals_hands, options, played=[True] * n, to_move=declarer)
    assert DECLARE in legal(state)
    _, events = play(state, DECLARE)
    return deal_end(events)


def test_LS1_right_declare_others_score_the_difference():
    assert declare_scores([10, 16, 17], 0) == [0, 6, 7]
    end = declared_deal(["TC", "TD 6H", "TH 7S"])  # 10 / 16 / 17
    assert end["hand_totals"] == [10, 16, 17]
    assert end["scores"] == [0, 6, 7]
    assert end["declarer"] == 0 and end["reason"] == "declare"


def test_LS2_false_declare_costs_20_plus_the_difference():
    assert declare_scores([10, 8, 15], 0) == [22, 0, 0]
    assert declared_deal(["TC", "8D", "TH 5S"])["scores"] == [22, 0, 0]


def test_LS3_false_declare_measured_against_the_lowest_total():
    assert declare_scores([12, 8, 5], 0) == [27, 0, 0]
    assert declared_deal(["TC 2C", "8D", "5S"])["scores"] == [27, 0, 0]


def test_LS4_a_tie_is_a_right_declare_unless_the_option_says_false():
    assert declare_scores([9, 9, 14], 0) == [0, 0, 5]
    assert declare_scores([9, 9, 14], 0, tie_is_false_declare=True) == [20, 0, 0]
    hands = ["9C", "9D", "TH 4S"]
    assert declared_deal(hands)["scores"] == [0, 0, 5]
    assert declared_deal(hands, options={"tie_is_false_declare": True})["scores"] == [20, 0, 0]


def test_LS5_legal_groups():
    found = groups("7S 7H 7D 2C KS")
    assert {group("7S 7H"), group("7S 7D"), group("7H 7D")} <= found
    assert group("7S 7H 7D") not in found
    assert not is_legal_group(parse_cards("7S 7H 7D"))
    assert is_legal_group(parse_cards("KS KH KD KC"))
    assert group("KS KH KD KC") in groups("KS KH KD KC")
    assert len(groups("KS KH KD KC")) == 4 + 6 + 1  # singles, pairs, the four
    found = groups("5C 6D 7H 8S KD")
    assert group("5C 6D 7H") in found and group("6D 7H 8S") in found
    assert group("5C 6D 7H 8S") not in found
    assert not is_legal_group(parse_cards("5C 6D 7H 8S"))
    found = groups("QS KH AD 2C 3S")
    assert group("QS KH AD") in found and group("AD 2C 3S") in found
    assert group("KH AD 2C") not in found
    assert not is_legal_group(parse_cards("KH AD 2C"))
    assert group("2H 5H 9H JH KH") in groups("2H 5H 9H JH KH")
    assert is_legal_group(parse_cards("2H 5H 9H JH KH"))


def test_LS5_an_illegal_group_is_rejected_and_names_the_rule():
    state = position(["7S 7H 7D 2C KS", "AC"])
    with pytest.raises(IllegalMoveError, match="R3"):
        GAME.apply(state, discard("7S 7H 7D"))
    assert discard("7S 7H 7D") not in legal(state)


def test_LS6_discarding_a_group_shrinks_the_hand():
    state = position(["7S 7H 2C 3D KS", "AC"])
    state, _ = play(state, discard("7S 7H"), DECK)
    assert len(state.hands[0]) == 4
    state = position(["2H 5H 9H JH KH", "AC"])
    state, _ = play(state, discard("2H 5H 9H JH KH"), DECK)
    assert len(state.hands[0]) == 1


def test_LS7_hand_total():
    assert hand_total(parse_cards("KS QH 2D AC")) == 23
    state = position(["KS QH 2D AC", "AH"])
    assert GAME.observation(state, 0)["hand_total"] == 23


def test_LS8_knocked_out_over_the_threshold_not_at_it():
    options = {"threshold": 50}
    # A declares 4; B holds 10 (+6 -> 53) and is out; C holds 5 (+1)
    state = position(["4C", "TC", "5D"], options, totals=[0, 47, 0], played=[True] * 3, to_move=0)
    state, events = play(state, DECLARE)
    assert state.totals == [0, 53, 1]
    assert state.out == [False, True, False]
    assert deal_end(events)["knocked_out"] == [1]
    assert not state.is_over and state.hands[1] == []
    # B holds 7 (+3 -> exactly 50): still in
    state = position(["4C", "7C", "5D"], options, totals=[0, 47, 0], played=[True] * 3, to_move=0)
    state, _ = play(state, DECLARE)
    assert state.totals == [0, 50, 1]
    assert state.out == [False, False, False]


def test_LS9_nobody_declares_in_the_first_orbit():
    state = new_match(3, seed=3)
    first = state.to_move
    assert first == (state.dealer + 1) % 3
    for _ in range(3):
        assert DECLARE not in legal(state)
        with pytest.raises(IllegalMoveError, match="first turn"):
            GAME.apply(state, DECLARE)
        state, _ = play(state, legal(state)[-1])  # a discard
        state, _ = play(state, DECK)
    assert state.to_move == first
    assert DECLARE in legal(state)


# ---------------------------------------------------------------------------
# Groups: the table agrees with the rule, for one and two decks


def _brute_force_groups(hand: list[int], same_suit: bool) -> set[tuple[int, ...]]:
    out = set()
    for size in range(1, len(hand) + 1):
        for combo in combinations(hand, size):
            if is_legal_group(combo, same_suit):
                out.add(tuple(sorted(combo)))
    return out


@given(
    st.lists(st.integers(0, 51), min_size=1, max_size=5).filter(lambda h: max(Counter(h).values()) <= 2),
    st.booleans(),
)
def test_legal_groups_are_exactly_the_legal_sub_multisets(hand, same_suit):
    listed = [tuple(sorted(g)) for g in legal_groups(hand, same_suit)]
    assert len(listed) == len(set(listed)), "a group is listed twice"
    assert set(listed) == _brute_force_groups(hand, same_suit)


def test_sequences_need_exactly_3_or_5_distinct_ranks_and_never_wrap():
    assert is_legal_group(parse_cards("TS JD QH KC AS"))
    assert is_legal_group(parse_cards("AS 2D 3H 4C 5S"))
    assert not is_legal_group(parse_cards("JD QH KC AS 2D"))
    assert not is_legal_group(parse_cards("5C 5D 6H"))
    assert not is_legal_group(parse_cards("5C 6D"))  # two in a row is no group
    assert not is_legal_group(parse_cards("7S 7H 7D 7C 7S"))  # five of a kind (two decks)
    assert is_legal_group(parse_cards("7H 7H"))  # identical twins make a pair


def test_a_straight_flush_is_listed_once():
    found = legal_groups(parse_cards("5H 6H 7H 8H 9H"))
    fives = [g for g in found if len(g) == 5]
    assert len(fives) == 1
    assert legal(position(["5H 6H 7H 8H 9H", "AC"])).count(discard("5H 6H 7H 8H 9H")) == 1


def test_two_decks_list_identical_groups_once():
    state = position(["7H 7H 7S 8C 9D", "AC", "AD", "AH", "AS", "2C", "2D", "2H"])
    moves = [m for m in legal(state) if m["type"] == "discard"]
    assert len(moves) == len({json.dumps(m, sort_keys=True) for m in moves})
    cards = {tuple(sorted(m["cards"])) for m in moves}
    assert ("7H", "7H") in cards and ("7H", "7S") in cards
    assert ("7H", "8C", "9D") in cards and ("7S", "8C", "9D") in cards
    assert {len(c) for c in cards} == {1, 2, 3}


# ---------------------------------------------------------------------------
# Options


def test_option_sequence_same_suit():
    hand = "5C 6D 7H 6C 7C"
    assert group("5C 6D 7H") in groups(hand)
    assert group("5C 6D 7H") not in groups(hand, same_suit=True)
    assert group("5C 6C 7C") in groups(hand, same_suit=True)
    assert not is_legal_group(parse_cards("5C 6D 7H"), sequence_same_suit=True)
    state = position([hand, "AS"], {"sequence_same_suit": True})
    with pytest.raises(IllegalMoveError, match="of one suit"):
        GAME.apply(state, discard("5C 6D 7H"))
    state, _ = play(state, discard("5C 6C 7C"))
    assert state.discarded == parse_cards("5C 6C 7C")
    # flushes and pairs are not sequences: unaffected
    assert group("2H 5H 9H JH KH") in groups("2H 5H 9H JH KH", same_suit=True)


def test_option_threshold_choices():
    for value in (25, 50, 100):
        assert GAME.new_match(2, {"threshold": value}).options["threshold"] == value
    assert GAME.new_match(2).options["threshold"] == 100
    with pytest.raises(InvalidOptionError, match="threshold"):
        GAME.new_match(2, {"threshold": 30})


def test_option_threshold_25_knocks_out_sooner():
    hands = ["AC", "TC 9D 8H"]  # the declarer is right; seat 1 takes 26
    state = position(hands, {"threshold": 25}, played=[True, True], to_move=0)
    state, events = play(state, DECLARE)
    assert state.is_over and state.winners == [0]
    assert events[-1] == {"type": "game_end", "totals": [0, 26], "winners": [0]}
    state = position(hands, {"threshold": 50}, played=[True, True], to_move=0)
    state, _ = play(state, DECLARE)
    assert not state.is_over


def test_option_max_turns_scores_the_deal_as_it_stands():
    state = position(["AC 2C", "TC", "5D 2D"], {"max_turns_per_round": 10})
    for turn in range(10):
        assert state.round == 1 and state.turns_in_round == turn
        state, _ = play(state, next(m for m in legal(state) if m["type"] == "discard"))
        state, events = play(state, DECK)
    end = deal_end(events)
    assert end["reason"] == "turn_limit" and end["declarer"] is None
    assert end["scores"] == standing_scores(end["hand_totals"])
    low = min(end["hand_totals"])
    assert end["scores"] == [t - low for t in end["hand_totals"]]
    assert state.round == 2 and state.turns_in_round == 0


def test_standing_scores_leave_knocked_out_seats_at_zero():
    assert standing_scores([12, None, 7, 9]) == [5, 0, 0, 2]
    assert declare_scores([4, None, 7], 2) == [0, 0, 23]


def test_unknown_options_are_rejected():
    with pytest.raises(InvalidOptionError):
        GAME.new_match(2, {"decks": 2})


# ---------------------------------------------------------------------------
# The flow: turns, the floor, the dead pile, reshuffles


def test_a_turn_is_a_discard_then_a_pick_from_the_floor_or_the_deck():
    state = position(["3C 4D 5H 9S KS", "2C 2D 8H", "AH 6S"], floor=["QD"], to_move=0)
    assert {m["type"] for m in legal(state)} == {"discard"}
    with pytest.raises(IllegalMoveError, match="discard first"):
        GAME.apply(state, DECK)
    state, events = play(state, discard("3C 4D 5H"))
    assert events == [{"type": "discard", "seat": 0, "cards": ["3C", "4D", "5H"]}]
    assert state.phase == "pick" and state.to_move == 0
    assert sorted(legal(state), key=json.dumps) == sorted([DECK, floor("QD")], key=json.dumps)
    with pytest.raises(IllegalMoveError, match="already discarded"):
        GAME.apply(state, discard("9S"))
    with pytest.raises(IllegalMoveError, match="not on the floor"):
        GAME.apply(state, floor("3C"))  # one's own discards are not the floor
    state, _ = play(state, floor("QD"))
    assert state.to_move == 1 and state.phase == "discard"
    assert state.floor == parse_cards("3C 4D 5H")
    assert state.dead == []  # the whole old floor was taken
    # seat 1 may pick any one of seat 0's discards; the others go dead
    state, _ = play(state, discard("2C 2D"), floor("4D"))
    assert state.dead == parse_cards("3C 5H")
    assert state.floor == parse_cards("2C 2D")
    assert state.known[1] == parse_cards("4D")
    assert state.known[0] == parse_cards("QD")


def test_known_cards_are_forgotten_when_discarded():
    state = position(["3C 9S", "2C 8H"], floor=["QD"], to_move=0)
    state, _ = play(state, discard("9S"), floor("QD"))
    assert state.known[0] == parse_cards("QD")
    assert GAME.observation(state, 1)["hidden"][0]["known"] == ["QD"]
    state, _ = play(state, discard("8H"), DECK, discard("QD"), DECK)
    assert state.known[0] == []


def test_reshuffle_of_the_dead_pile_when_the_deck_is_empty():
    # 2 players: the deck holds one card; everything else not in a hand or on the floor is dead
    hands = ["3C 4D", "2C 8H"]
    used = parse_cards(" ".join(hands) + " QD KS")
    dead = [CARD_NAMES[c] for c in range(52) if c not in used]
    state = position(hands, floor=["QD"], deck=["KS"], dead=dead, to_move=0)
    state, _ = play(state, discard("4D"), DECK)  # takes KS; QD goes dead
    assert state.deck == [] and len(state.dead) == 47
    floor_now = list(state.floor)
    state, events = play(state, discard("8H"), DECK)
    assert {"type": "reshuffle", "cards": 47} in events
    assert state.dead == floor_now  # the old floor (4D) went dead after the reshuffle
    assert len(state.deck) == 46
    assert parse_cards("4D")[0] not in state.deck  # the floor was never reshuffled
    assert parse_cards("8H")[0] not in state.deck  # nor this turn's discard
    GAME.check_state(state)


def test_declare_is_only_at_the_start_of_a_turn():
    state = position(["3C 9S", "2C 8H"], played=[True, True], to_move=0)
    state, _ = play(state, discard("9S"))
    assert DECLARE not in legal(state)
    with pytest.raises(IllegalMoveError, match="R4"):
        GAME.apply(state, DECLARE)


def test_each_deal_starts_left_of_a_dealer_passing_left():
    state = position(["AC", "2C", "3C"], dealer=0, played=[True] * 3, to_move=1)
    state, events = play(state, DECLARE)  # seat 1 is lowest-but-one: a false declare, 20 + 1
    assert deal_end(events)["scores"] == [0, 21, 0]
    assert state.dealer == 1 and state.to_move == 2 and state.round == 2
    assert all(len(h) == 5 for h in state.hands) and len(state.floor) == 1
    assert state.played == [False] * 3 and state.known == [[], [], []]
    assert [e["type"] for e in events] == ["deal_end", "deal_start"]


# ---------------------------------------------------------------------------
# Knock-outs, continuing deals, the winner


def test_deals_continue_among_the_players_still_in_until_one_remains():
    # seat 1 goes out; the deal passes from seat 0 past seat 1 to seat 2
    state = position(["AC", "TC TD", "2C", "3C"], totals=[0, 95, 10, 10], dealer=0,
                     played=[True] * 4, to_move=0)
    state, _ = play(state, DECLARE)
    assert state.out == [False, True, False, False]
    assert state.dealer == 2 and state.to_move == 3
    assert state.hands[1] == [] and [len(h) for i, h in enumerate(state.hands) if i != 1] == [5, 5, 5]
    obs = GAME.observation(state, 0)
    assert obs["out"] == [False, True, False, False] and obs["hand_sizes"][1] == 0
    assert all(z.get("seat") != 1 for z in obs["hidden"])
    # the turn order skips seat 1: 3 -> 0 -> 2
    seen: list[int | None] = []
    for _ in range(3):
        seen.append(state.to_move)
        state, _ = play(state, legal(state)[0], DECK)
    assert seen == [3, 0, 2]
    assert 1 not in {state.to_move}
    # later seats 2 and 3 both go out at once; seat 0 is the last one in and wins
    state = position(["AC", "", "TC TD", "TH TS"], totals=[0, 101, 90, 90], out=[False, True, False, False],
                     played=[True, False, True, True], to_move=0)
    state, events = play(state, DECLARE)
    assert state.is_over and state.winners == [0] and state.to_move is None
    assert deal_end(events)["knocked_out"] == [2, 3]
    assert legal(state) == []
    assert GAME.observation(state, 2)["hands"][2] == ["TC", "TD"]  # the last deal is revealed


def test_a_false_declarer_can_knock_itself_out():
    state = position(["TC TD", "AC"], totals=[80, 0], played=[True, True], to_move=0)
    state, _ = play(state, DECLARE)
    assert state.totals == [80 + 20 + 19, 0]
    assert state.winners == [1]


def test_winners_when_everyone_still_in_crosses_at_once():
    assert winners_after_deal([101, 0, 120], [0, 2], 100) == [0]
    assert winners_after_deal([110, 0, 110], [0, 2], 100) == [0, 2]  # ties share
    assert winners_after_deal([100, 0, 110], [0, 2], 100) == [0]  # at the threshold: still in, the last one
    assert winners_after_deal([50, 0, 60], [0, 2], 100) is None


def test_random_games_end_with_one_winner_among_the_players_still_in():
    rng = random.Random(4)
    for seed in range(6):
        state = new_match(2 + seed, {"threshold": 25}, seed=seed)
        while not state.is_over:
            state = step(state, rng.choice(legal(state)))
        assert state.winners is not None and len(state.winners) == 1
        assert sum(not o for o in state.out) == 1 and not state.out[state.winners[0]]
        assert all(state.totals[i] > 25 for i in range(state.num_players) if state.out[i])
        assert sum(map(sum, state.round_scores)) == sum(state.totals)


# ---------------------------------------------------------------------------
# Moves: every listed move applies; malformed moves are refused; apply never mutates


def test_every_listed_move_is_accepted_and_input_states_are_never_changed():
    rng = random.Random(9)
    for seed in range(4):
        state = new_match(4 + seed, seed=seed)
        for _ in range(300):
            if state.is_over:
                break
            before = state.clone()
            moves = legal(state)
            for move in moves:
                checked, _ = GAME.apply(state, move)
                fast, _ = GAME.apply(state, move, check=False)
                assert checked == fast
            assert state == before
            state = step(state, rng.choice(moves))


@pytest.mark.parametrize(
    ("move", "error"),
    [
        ({"type": "discard"}, InvalidMoveError),
        ({"type": "discard", "cards": []}, InvalidMoveError),
        ({"type": "discard", "cards": "7S"}, InvalidMoveError),
        ({"type": "discard", "cards": ["ZZ"]}, InvalidCardError),  # code invalid_card, as in every game
        ({"type": "discard", "cards": ["JK"]}, InvalidMoveError),
        ({"type": "discard", "cards": ["KD"]}, IllegalMoveError),
        ({"type": "discard", "cards": ["3C", "3C"]}, IllegalMoveError),
        ({"type": "pick"}, InvalidMoveError),
        ({"type": "draw", "source": "stock"}, InvalidMoveError),
    ],
)
def test_malformed_and_illegal_moves_are_refused(move, error):
    state = position(["3C 9S", "2C 8H"], to_move=0)
    before = state.clone()
    with pytest.raises(error):
        GAME.apply(state, move)
    assert state == before


def test_pick_moves_are_checked():
    state = position(["3C 9S", "2C 8H"], floor=["QD"], to_move=0)
    state, _ = play(state, discard("9S"))
    for move, error in [
        ({"type": "pick", "source": "floor"}, InvalidMoveError),
        ({"type": "pick", "source": "floor", "card": "ZZ"}, InvalidCardError),
        ({"type": "pick", "source": "deck", "card": "KS"}, InvalidMoveError),
        ({"type": "pick", "source": "table"}, InvalidMoveError),
    ]:
        with pytest.raises(error):
            GAME.apply(state, move)


# ---------------------------------------------------------------------------
# Views and serialization


def test_views_show_only_what_a_seat_may_know():
    state = new_match(4, seed=11)
    rng = random.Random(2)
    for _ in range(120):
        if state.is_over:
            break
        for seat in [0, 1, 2, 3, None]:
            obs = GAME.observation(state, seat)
            text = json.dumps(obs)
            assert "deck" not in obs and "seed" not in obs and "hands" not in obs
            secret = {CARD_NAMES[c] for other in range(4) if other != seat
                      for c in set(state.hands[other]) - set(state.known[other])}
            secret |= {CARD_NAMES[c] for c in state.deck}
            assert not secret & set(_strings(obs)), f"seat {seat} sees hidden cards: {text}"
            if seat is not None:
                assert obs["hand"] == [CARD_NAMES[c] for c in state.hands[seat]]
            # what the seat cannot see, re-dealt, changes nothing it sees
            world = GAME.determinize(json.loads(text), rng)
            assert json.dumps(GAME.observation(world, seat)) == text
            if seat == state.to_move:
                assert sorted(legal(world), key=json.dumps) == sorted(legal(state), key=json.dumps)
        state = step(state, rng.choice(legal(state)))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_view_of_a_seat_lists_hidden_zones_with_known_cards():
    state = position(["3C 9S", "2C 8H", "AD"], floor=["QD"], to_move=0)
    state, _ = play(state, discard("9S"), floor("QD"))
    obs = GAME.observation(state, 2)
    zones = {z.get("seat", "deck"): z for z in obs["hidden"]}
    assert zones[0] == {"zone": "hand", "size": 2, "seat": 0, "known": ["QD"]}
    assert zones[1] == {"zone": "hand", "size": 2, "seat": 1}
    assert zones["deck"]["size"] == len(state.deck)
    assert obs["known"] == [["QD"], [], []]
    assert obs["played"] == [True, False, False]
    assert obs["floor"] == ["9S"] and obs["dead"] == [] and obs["dead_size"] == 0
    assert obs["deck_size"] == len(state.deck) and obs["hand_sizes"] == [2, 2, 1]


def test_json_round_trip_is_exact():
    state = new_match(5, {"threshold": 50, "sequence_same_suit": True}, seed=8)
    rng = random.Random(1)
    for _ in range(200):
        if state.is_over:
            break
        blob = json.loads(json.dumps(GAME.to_json(state)))
        assert GAME.from_json(blob) == state
        state = step(state, rng.choice(legal(state)))


def test_two_decks_for_seven_and_eight_players():
    assert len(GAME.deck(6, {})) == 52
    assert len(GAME.deck(7, {})) == 104
    assert len(GAME.deck(8, {})) == 104
    state = new_match(8, seed=1)
    assert Counter(GAME.cards_in_play(state)) == Counter(GAME.deck(8, {}))


def test_setup_is_validated():
    with pytest.raises(InvalidSetupError, match="1 to 5"):
        position(["AC 2C 3C 4C 5C 6C", "AD"])
    with pytest.raises(InvalidSetupError, match="more often"):
        position(["AC", "AC"])
    with pytest.raises(InvalidSetupError, match="over the threshold"):
        position(["AC", "AD"], totals=[101, 0])
    with pytest.raises(InvalidSetupError, match="knocked out"):
        position(["AC", "AD", "AH"], out=[False, False, True])
    with pytest.raises(InvalidSetupError, match="two players"):
        position(["AC", "", ""], out=[False, True, True])


def test_registered():
    assert get_game("least-score") is GAME
    assert GAME.info.min_players == 2 and GAME.info.max_players == 8
    assert {o.name for o in GAME.info.options} == {
        "threshold", "sequence_same_suit", "tie_is_false_declare", "max_turns_per_round"}


def test_inconsistent_blobs_are_refused():
    state = position(["3C 9S", "2C 8H", "AD"], floor=["QD"])
    good = GAME.to_json(state)
    for field, value, message in [
        ("out", [0, 0, 0], "true or false"),
        ("to_move", 1, None),  # fine: any seat still in may be to move
        ("phase", "pick", "pending"),
        ("hands", [["9S", "3C"], ["2C", "8H"], ["AD"]], "sorted by rank"),
        ("known", [["KS"], [], []], "known cards"),
    ]:
        blob = {**good, field: value}
        if message is None:
            GAME.from_json(blob)
        else:
            with pytest.raises(InvalidStateError, match=message):
                GAME.from_json(blob)
    knocked = {**good, "out": [False, True, False]}
    with pytest.raises(InvalidStateError, match="knocked out"):
        GAME.from_json(knocked)
