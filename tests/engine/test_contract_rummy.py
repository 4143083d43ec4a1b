"""Contract rummy (RULES.md §4): the worked examples CR1-CR7, then every rule and option."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import contracts
from engine.cards import CARD_NAMES, JOKER, parse_card, parse_cards
from engine.errors import IllegalMoveError, InvalidOptionError, InvalidSetupError, NotYourTurnError
from engine.game import move_key
from engine.games.contract_rummy import CONTRACTS, MAX_LISTED_GO_DOWNS, card_points
from engine.registry import get_game

GAME: Any = get_game("contract-rummy")  # its states are ContractRummyState
LIMIT = "at_least_one_natural"


def cards(text: str) -> list[str]:
    return [CARD_NAMES[c] for c in parse_cards(text)]


def setup(hands, *, round=1, to_move=0, melds=None, discard=None, options=None, buys=None, totals=None, seed=1):
    """A position from explicit hands; a hand written ``"9C +6"`` (or just an int) gets that many filler
    cards (3s-9s no other hand, meld or discard uses up)."""
    n = len(hands)
    left = Counter(GAME.deck(n, GAME.check_options(options)))
    explicit, extra = [], []
    for h in hands:
        text, _, more = (h, "", "0") if not isinstance(h, int) else ("", "", str(h))
        if isinstance(h, str) and "+" in h:
            text, more = h.split("+")
        explicit.append(parse_cards(text))
        extra.append(int(more))
    used = [c for h in explicit for c in h] + parse_cards(discard or "")
    used += [c for m in melds or [] for c in parse_cards(m["cards"])]
    left.subtract(used)
    pool = [c for r in range(3, 10) for su in range(4) for c in [su * 13 + r - 1] * max(left[su * 13 + r - 1], 0)]
    full = []
    for h, k in zip(explicit, extra, strict=True):
        full.append([CARD_NAMES[c] for c in h + pool[:k]])
        pool = pool[k:]
    spec = {"hands": full, "round": round, "to_move": to_move, "dealer": (to_move - 1) % n}
    if melds is not None:
        spec["melds"] = melds
    if discard is not None:
        spec["discard"] = cards(discard)
    if buys is not None:
        spec["buys"] = buys
    if totals is not None:
        spec["totals"] = totals
    return GAME.from_setup(n, spec, options, seed=seed)


def play(state, *moves):
    for move in moves:
        state, _ = GAME.apply(state, move)
    return state


def draw_and_pass(state):
    """The player to move draws from the stock and everybody declines to buy."""
    state = play(state, {"type": "draw"})
    while state.phase == "buy":
        state = play(state, {"type": "pass"})
    return state


def norm(move):
    """A go_down as a multiset of melds, each the multiset of its cards (the list's idea of distinct)."""
    return tuple(sorted((m["kind"], tuple(sorted(parse_cards(m["cards"])))) for m in move["melds"]))


def listed_downs(state):
    return [norm(m) for m in GAME.legal_moves(state) if m["type"] == "go_down"]


def go_down(*melds):
    out = []
    for kind, text, *sf in melds:
        m = {"kind": kind, "cards": cards(text)}
        if sf:
            m["stands_for"] = cards(sf[0])
        out.append(m)
    return {"type": "go_down", "melds": out}


# ---------------------------------------------------------------------------
# The worked examples


def test_CR1_deal_sizes_for_hands_1_to_7():
    assert [CONTRACTS[k][3] for k in range(1, 8)] == [7, 8, 9, 10, 11, 12, 12]
    # and the deal really hands out that many at the start of every hand
    rng = random.Random(3)
    state = GAME.new_match(3, {"max_turns_per_round": 10}, seed=3)
    seen = {}
    while not state.is_over:
        if state.turns_in_round == 0 and state.phase == "draw" and state.round not in seen:
            seen[state.round] = {len(h) for h in state.hands}
        state, _ = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
    assert seen == {1: {7}, 2: {8}, 3: {9}, 4: {10}, 5: {11}, 6: {12}, 7: {12}}


def test_CR2_cards_left_in_hand_score():
    assert card_points(parse_cards("3S 9D TC KH AS 2C JK")) == 90
    assert card_points(parse_cards("4D 4C 8S")) == 15


def test_CR3_hand_1_going_down_then_discard_and_no_lay_off_that_turn():
    state = setup(["7S 7H 7D QC QD JK 5C", 7, 7], discard="8S")
    state = play(state, {"type": "take_discard"})
    assert len(state.hands[0]) == 8
    move = go_down(("set", "7S 7H 7D"), ("set", "QC QD JK"))
    assert norm(move) in listed_downs(state)
    state = play(state, move)
    assert state.down[0] and sorted(state.hands[0]) == sorted(parse_cards("5C 8S"))
    with pytest.raises(IllegalMoveError, match="no laying off on the turn you go down"):
        play(state, {"type": "lay_off", "card": "5C", "meld": 0})
    assert all(m["type"] == "discard" for m in GAME.legal_moves(state))
    state = play(state, {"type": "discard", "card": "5C"})
    assert state.hands[0] == parse_cards("8S") and state.turn == 1


def test_CR4_runs_with_wild_and_natural_2s():
    suit, low, run = contracts.read_run(parse_cards("5H 6H 2C 8H"))
    assert (suit, low) == (2, 5) and [CARD_NAMES[c] for c in contracts.stands_for((suit, low, run))] == cards(
        "5H 6H 7H 8H") and run[2] == parse_card("2C")
    meld = contracts.read_run(parse_cards("QS KS AS 2S"))
    assert contracts.stands_for(meld) == tuple(parse_cards("JS QS KS AS"))
    assert contracts.meld_counts(meld) == (3, 1)  # 2S is wild here
    with pytest.raises(IllegalMoveError, match="never wrap"):
        contracts.read_run(parse_cards("KS AS 2S 3S"))
    meld = contracts.read_run(parse_cards("AS 2S 3S 4S"))
    assert meld == (3, 1, tuple(parse_cards("AS 2S 3S 4S")))
    assert contracts.meld_counts(meld) == (4, 0)  # the 2 in its own place is natural
    # the natural 2 counts as natural for the strictest wild limit too
    assert contracts.read_run(parse_cards("AS 2S 3S JK"), "fewer_than_naturals")[1] == 1


def test_CR5_replacing_a_wild_moves_it_to_an_end_the_player_chooses():
    melds = [{"owner": 0, "kind": "run", "cards": cards("5H 6H JK 8H"), "stands_for": cards("5H 6H 7H 8H")},
             {"owner": 0, "kind": "set", "cards": cards("9C 9D 9S")},
             {"owner": 0, "kind": "run", "cards": cards("JH QH JK AH"), "stands_for": cards("JH QH KH AH")}]
    state = draw_and_pass(setup(["7H KH 4C", 8, 8], round=2, melds=melds))
    low_moves = [m for m in GAME.legal_moves(state) if m["type"] == "lay_off" and m["card"] == "7H"]
    assert sorted(m["wild_to"] for m in low_moves) == ["high", "low"]
    to_low = play(state, {"type": "lay_off", "card": "7H", "meld": 0, "wild_to": "low"})
    view = GAME.observation(to_low, 1)["melds"][0]
    assert view["cards"] == cards("JK 5H 6H 7H 8H") and view["stands_for"] == cards("4H 5H 6H 7H 8H")
    to_high = play(state, {"type": "lay_off", "card": "7H", "meld": 0, "wild_to": "high"})
    assert GAME.observation(to_high, 1)["melds"][0]["stands_for"] == cards("5H 6H 7H 8H 9H")
    with pytest.raises(IllegalMoveError, match="more than one way"):
        play(state, {"type": "lay_off", "card": "7H", "meld": 0})
    # J Q JK(K) A: the joker can only go down to TH
    kh_moves = [m for m in GAME.legal_moves(state) if m["type"] == "lay_off" and m["card"] == "KH"]
    assert kh_moves == [{"type": "lay_off", "card": "KH", "meld": 2, "wild_to": "low"}]
    with pytest.raises(IllegalMoveError):
        play(state, {"type": "lay_off", "card": "KH", "meld": 2, "wild_to": "high"})
    forced = play(state, {"type": "lay_off", "card": "KH", "meld": 2})  # the only choice may go unsaid
    view = GAME.observation(forced, 2)["melds"][2]
    assert view["cards"] == cards("JK JH QH KH AH") and view["stands_for"] == cards("TH JH QH KH AH")
    # the wild never returns to a hand: only the KH left it
    rest = list(state.hands[0])
    rest.remove(parse_card("KH"))
    assert forced.hands[0] == rest


def test_CR6_buying_goes_in_seat_order_and_costs_a_penalty_card():
    hands = ["9C +6", 7, 7, 7]
    state = draw_and_pass(setup(hands))  # P1 (seat 0) draws, nobody buys the up card
    state = play(state, {"type": "discard", "card": "9C"})  # P1 discards 9C
    assert state.turn == 1 and state.discarder == 0
    penalty, next_card = state.stock[-1], state.stock[-2]
    state = play(state, {"type": "draw"})  # P2 draws from the stock instead of taking 9C
    assert state.phase == "buy" and state.to_move == 2  # P3 is asked first
    with pytest.raises(NotYourTurnError):
        GAME.apply(state, {"type": "buy"}, seat=3)  # P4 must wait for P3's answer
    p3_before = list(state.hands[2])
    state = play(state, {"type": "buy"})  # P3 buys: P4 is never asked
    assert sorted(state.hands[2]) == sorted([*p3_before, parse_card("9C"), penalty])
    assert state.buys == [0, 0, 1, 0]
    assert state.phase == "play" and state.to_move == 1 and next_card in state.hands[1]
    assert len(state.hands[1]) == 8 and len(state.hands[3]) == 7
    # everybody knows the bought card is in P3's hand, nobody sees the penalty card
    view = GAME.observation(state, 3)
    assert view["known"][2] == ["9C"]
    zone = next(z for z in view["hidden"] if z.get("seat") == 2)
    assert zone["known"] == ["9C"] and zone["size"] == 9


def test_CR7_hand_7_goes_out_in_one_turn():
    hand = "3D 4D 5D 6D 7D 9C TC JC QC KS KH 8S"
    state = setup([hand, 12, 12], round=7, discard="KD", totals=[0, 0, 0])
    others = [card_points(state.hands[1]), card_points(state.hands[2])]
    state = play(state, {"type": "take_discard"})
    assert len(state.hands[0]) == 13
    move = go_down(("run", "3D 4D 5D 6D 7D"), ("run", "9C TC JC QC"), ("set", "KS KH KD"))
    assert norm(move) in listed_downs(state)
    state = play(state, move)
    assert state.hands[0] == parse_cards("8S")
    end = play(state, {"type": "discard", "card": "8S"})
    assert end.round_scores[-1] == [0, *others]
    assert end.is_over and end.winners == [0]


# ---------------------------------------------------------------------------
# Options


def test_decks_and_jokers_by_player_count():
    assert len(GAME.deck(3, GAME.check_options({}))) == 108
    assert len(GAME.deck(4, GAME.check_options({}))) == 108
    assert len(GAME.deck(5, GAME.check_options({}))) == 162
    assert GAME.deck(8, GAME.check_options({})).count(JOKER) == 6
    assert GAME.deck(3, GAME.check_options({"jokers_per_deck": 0})).count(JOKER) == 0
    assert len(GAME.deck(3, GAME.check_options({"decks": 1, "jokers_per_deck": 1}))) == 53
    with pytest.raises(InvalidOptionError, match="decks"):
        GAME.new_match(8, {"decks": 1})
    with pytest.raises(InvalidOptionError):
        GAME.new_match(2)


def test_play_hand_7_false_ends_after_six_hands():
    rng = random.Random(5)
    for opt, hands in ((False, 6), (True, 7)):
        state = GAME.new_match(3, {"play_hand_7": opt, "max_turns_per_round": 10}, seed=2)
        while not state.is_over:
            state, _ = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
        assert len(state.round_scores) == hands


def test_contract_meld_size_exact_rejects_longer_melds():
    hand = "7S 7H 7D 7C QC QD JK 5C"
    long_set = go_down(("set", "7S 7H 7D 7C"), ("set", "QC QD JK"))
    at_least = play(setup([hand[:-3], 7, 7], discard="5C"), {"type": "take_discard"})
    play(at_least, long_set)
    exact = play(setup([hand[:-3], 7, 7], discard="5C", options={"contract_meld_size": "exact"}),
                 {"type": "take_discard"})
    with pytest.raises(IllegalMoveError, match="exactly 3"):
        play(exact, long_set)
    play(exact, go_down(("set", "7S 7H 7D"), ("set", "QC QD JK")))


@pytest.mark.parametrize(("limit", "legal"), [
    ("at_least_one_natural", {"7S JK 2C", "7S 7H JK", "7S 7H JK 2C"}),
    ("not_more_than_naturals", {"7S 7H JK", "7S 7H JK 2C"}),
    ("fewer_than_naturals", {"7S 7H JK"}),
])
def test_wild_limit_options(limit, legal):
    for text in ("7S JK 2C", "7S 7H JK", "7S 7H JK 2C"):
        if text in legal:
            assert contracts.read_set(parse_cards(text), limit) == 7
        else:
            with pytest.raises(IllegalMoveError, match="wild limit"):
                contracts.read_set(parse_cards(text), limit)
    with pytest.raises(IllegalMoveError, match="no natural"):
        contracts.read_set(parse_cards("JK JK JK"), limit)


def test_wild_limit_applies_to_laying_off():
    melds = [{"owner": 0, "kind": "set", "cards": cards("7S 7H JK 2D")},
             {"owner": 0, "kind": "set", "cards": cards("9C 9D 9S")}]
    opts = {"wild_limit": "not_more_than_naturals"}
    state = draw_and_pass(setup(["2C 4C", 7, 7], melds=melds, options=opts))
    with pytest.raises(IllegalMoveError, match="would not stay legal"):
        play(state, {"type": "lay_off", "card": "2C", "meld": 0})
    play(state, {"type": "lay_off", "card": "2C", "meld": 1})
    assert {"type": "lay_off", "card": "2C", "meld": 0} not in GAME.legal_moves(state)


def test_max_buys_per_hand_caps_each_seat():
    state = setup([7, 7, 7], options={"max_buys_per_hand": 1})
    state = play(state, {"type": "draw"})
    assert state.to_move == 1
    state = play(state, {"type": "buy"})
    state = play(state, {"type": "discard", "card": CARD_NAMES[state.hands[0][0]]})
    # seat 1's turn: seat 0 discarded, so seat 2 may buy
    state = play(state, {"type": "draw"})
    assert state.to_move == 2
    state = play(state, {"type": "pass"}, {"type": "discard", "card": CARD_NAMES[state.hands[1][0]]})
    # seat 2's turn: seat 1 discarded; seat 0 may buy, and seat 1 has used its one buy (and discarded)
    state = play(state, {"type": "draw"})
    assert state.to_move == 0
    state = play(state, {"type": "pass"})
    assert state.phase == "play" and state.to_move == 2
    state = play(state, {"type": "discard", "card": CARD_NAMES[state.hands[2][0]]})
    # seat 0's turn: seat 1 is capped, seat 2 discarded: nobody may buy, the draw is immediate
    state = play(state, {"type": "draw"})
    assert state.phase == "play" and state.to_move == 0


def test_unlimited_buys_by_default():
    state = setup([7, 7 + 18, 7], buys=[0, 9, 0])
    state = play(state, {"type": "draw"})
    assert state.to_move == 1
    state = play(state, {"type": "buy"})
    assert state.buys[1] == 10


def test_allow_rediscard():
    for opt in (False, True):
        state = setup(["4C +6", 7, 7], discard="KH",
                      options={"allow_rediscard": opt})
        state = play(state, {"type": "take_discard"})
        move = {"type": "discard", "card": "KH"}
        assert (move in GAME.legal_moves(state)) is opt
        if opt:
            play(state, move)
        else:
            with pytest.raises(IllegalMoveError, match="C3"):
                play(state, move)


def test_max_turns_per_round_ends_the_round():
    state = GAME.new_match(3, {"max_turns_per_round": 10}, seed=4)
    turns = 0
    while not state.round_scores:
        if state.phase == "play":
            move = next(m for m in GAME.legal_moves(state) if m["type"] == "discard")
            turns += 1
        else:
            move = {"type": "draw"} if state.phase == "draw" else {"type": "pass"}
        state, events = GAME.apply(state, move)
    end = next(e for e in events if e["type"] == "round_end")
    assert end["reason"] == "turn_limit" and turns == 10
    assert state.round == 2 and all(len(h) == 8 for h in state.hands)


# ---------------------------------------------------------------------------
# Buying


def test_discarder_may_not_buy_and_window_stops_at_first_buyer():
    state = draw_and_pass(setup([7, 7, 7]))
    state = play(state, {"type": "discard", "card": CARD_NAMES[state.hands[0][0]]})
    state = play(state, {"type": "draw"})  # seat 1 draws; seat 0 discarded: only seat 2 is asked
    assert state.to_move == 2
    state = play(state, {"type": "pass"})
    assert state.phase == "play" and state.to_move == 1


def test_buy_and_pass_only_in_a_buy_window():
    state = setup([7, 7, 7])
    for move in ({"type": "buy"}, {"type": "pass"}):
        with pytest.raises(IllegalMoveError, match="buy window"):
            play(state, move)
    state = play(state, {"type": "draw"})
    assert GAME.legal_moves(state) == [{"type": "buy"}, {"type": "pass"}]
    with pytest.raises(IllegalMoveError, match="buy window"):
        play(state, {"type": "discard", "card": "3C"})


def test_all_pass_then_the_drawer_gets_the_top_stock_card():
    state = setup([7, 7, 7])
    top = state.stock[-1]
    state = draw_and_pass(state)
    assert top in state.hands[0] and len(state.hands[0]) == 8 and state.buys == [0, 0, 0]


def test_bought_card_is_known_until_played():
    state = setup([7, "KH +6", 7], discard="QH")
    state = play(state, {"type": "draw"})
    state = play(state, {"type": "buy"})  # seat 1 buys QH
    for seat in (0, 2, None):
        assert GAME.observation(state, seat)["known"][1] == ["QH"]
    state = play(state, {"type": "discard", "card": CARD_NAMES[state.hands[0][0]]})
    state = draw_and_pass(state)
    assert GAME.observation(state, 0)["known"][1] == ["QH"]
    state = play(state, {"type": "discard", "card": "QH"})
    assert GAME.observation(state, 0)["known"][1] == []


# ---------------------------------------------------------------------------
# Going down


def _ready(hand, round=1, **kw):
    """Seat 0 with ``hand`` (the deal size + 1 cards) in phase play, the last card taken as the discard."""
    tokens = hand.split()
    state = setup([" ".join(tokens[:-1]), CONTRACTS[round][3], CONTRACTS[round][3]],
                  round=round, discard=tokens[-1], **kw)
    return play(state, {"type": "take_discard"})


@pytest.mark.parametrize(("move", "reason"), [
    (go_down(("set", "7S 7H"), ("set", "QC QD JK")), "too few cards"),
    (go_down(("set", "7S 7H 7D"), ("set", "QC QD 5C")), "not a set"),
    (go_down(("set", "7S 7H 7D"), ("set", "QC JK 2C"), ("set", "5C 5C 5C")), "extra meld"),
    (go_down(("set", "7S 7H 7D")), "contract is 2 sets of 3"),
    (go_down(("set", "7S 7H 7D"), ("run", "QC QD JK 5C")), "extra meld"),
    (go_down(("set", "7S 7H 7D"), ("set", "KC KD KH")), "not in your hand"),
])
def test_going_down_rejections_name_the_reason(move, reason):
    state = _ready("7S 7H 7D QC QD JK 2C 5C")
    before = GAME.to_json(state)
    with pytest.raises(IllegalMoveError, match=reason):
        play(state, move)
    assert GAME.to_json(state) == before


def test_going_down_wild_limit_and_run_reasons():
    state = _ready("7S 7H 7D QC JK 2C 5H 6H 8H", round=2, options={"wild_limit": "not_more_than_naturals"})
    with pytest.raises(IllegalMoveError, match="wild limit"):
        play(state, go_down(("set", "QC JK 2C"), ("run", "5H 6H 7H 8H")))
    with pytest.raises(IllegalMoveError, match="not a run"):
        play(state, go_down(("set", "7S 7H 7D"), ("run", "5H 6H 8H QC")))
    play(state, go_down(("set", "7S 7D JK"), ("run", "5H 6H 7H 8H")))


def test_hand_5_needs_a_run_of_7():
    state = _ready("5H 6H 7H 8H 9H TH JH 3C 3D 3S 4C KC", round=5)
    with pytest.raises(IllegalMoveError, match="needs 7"):
        play(state, go_down(("set", "3C 3D 3S"), ("run", "5H 6H 7H 8H")))
    play(state, go_down(("set", "3C 3D 3S"), ("run", "5H 6H 7H 8H 9H TH JH")))


def test_going_down_keeps_a_card_to_discard_and_only_once():
    state = _ready("7S 7H 7D QC QD QH 7C 5C")
    down = play(state, go_down(("set", "7S 7H 7D 7C"), ("set", "QC QD QH")))
    assert down.hands[0] == parse_cards("5C")
    with pytest.raises(IllegalMoveError, match="already down"):
        play(down, go_down(("set", "7S 7H 7D"), ("set", "QC QD QH")))
    # with every card in two sets, nothing would be left to discard
    full = _ready("7S 7H 7D 7C QC QD QH QS")
    with pytest.raises(IllegalMoveError, match="keep a card"):
        play(full, go_down(("set", "7S 7H 7D 7C"), ("set", "QC QD QH QS")))


def test_ambiguous_run_needs_stands_for():
    state = _ready("5H 6H 7H JK 9C 9D 9S KC KD", round=2)
    with pytest.raises(IllegalMoveError, match="stands_for"):
        play(state, go_down(("set", "9C 9D 9S"), ("run", "5H 6H 7H JK")))
    low = play(state, go_down(("set", "9C 9D 9S"), ("run", "JK 5H 6H 7H", "4H 5H 6H 7H")))
    assert GAME.observation(low, 0)["melds"][1]["stands_for"] == cards("4H 5H 6H 7H")
    high = play(state, go_down(("set", "9C 9D 9S"), ("run", "5H 6H 7H JK", "5H 6H 7H 8H")))
    assert GAME.observation(high, 0)["melds"][1]["stands_for"] == cards("5H 6H 7H 8H")
    with pytest.raises(IllegalMoveError, match="not wild"):
        play(state, go_down(("set", "9C 9D 9S"), ("run", "5H 6H 7H KC", "5H 6H 7H 8H")))


def test_listed_go_downs_are_distinct_and_all_accepted():
    # two copies of 7S (two decks) and interchangeable jokers: still one entry per distinct way
    state = _ready("7S 7S 7H QC QD JK JK 5C")
    downs = [m for m in GAME.legal_moves(state) if m["type"] == "go_down"]
    keys = [move_key(m) for m in downs]
    assert len(keys) == len(set(keys)) and downs
    for move in downs:
        after, _ = GAME.apply(state, move)
        assert after.down[0]
    # the canonical uses no wild where a natural 7 or Q is left in hand
    assert norm(go_down(("set", "7S 7S 7H"), ("set", "QC QD JK"))) in listed_downs(state)


def test_listed_go_downs_for_runs_and_sets():
    state = _ready("3H 4H 5H 6H 9S 9D JK KC 2D", round=2)
    downs = [m for m in GAME.legal_moves(state) if m["type"] == "go_down"]
    assert norm(go_down(("set", "9D 9S JK"), ("run", "3H 4H 5H 6H"))) in listed_downs(state)
    assert norm(go_down(("set", "9D 9S 2D"), ("run", "3H 4H 5H 6H"))) not in listed_downs(state)  # jokers first
    for move in downs:
        GAME.apply(state, move)


def test_random_hands_every_listed_go_down_is_legal():
    rng = random.Random(11)
    deck = GAME.deck(4, GAME.check_options({}))
    for trial in range(150):
        hand_no = 1 + trial % 7
        size = CONTRACTS[hand_no][3] + 1 + rng.choice((0, 0, 2, 4, 8))
        hand = sorted(rng.sample(deck, size))
        if hand_no == 7:
            found = contracts.exact_go_downs(hand, LIMIT, MAX_LISTED_GO_DOWNS)
        else:
            sets, runs, run_size, _ = CONTRACTS[hand_no]
            found = contracts.minimal_go_downs(hand, sets, runs, 3, run_size, LIMIT, MAX_LISTED_GO_DOWNS)
        assert len(found) == len(set(found)) <= MAX_LISTED_GO_DOWNS
        for down in found:
            used = [c for m in down for c in m[2]]
            rest = list(hand)
            for c in used:
                rest.remove(c)
            assert len(rest) == 1 if hand_no == 7 else len(rest) >= 1
            for meld in down:
                assert contracts.meld_problem(meld, LIMIT) is None


def test_hand_7_must_go_down_with_all_but_one_card():
    state = _ready("3D 4D 5D 6D 7D 9C TC JC QC KS KH 8S KD", round=7)
    with pytest.raises(IllegalMoveError, match="whole hand"):
        play(state, go_down(("run", "3D 4D 5D 6D"), ("run", "9C TC JC QC"), ("set", "KS KH KD")))
    # the card taken from the discard pile (KD) may not be the one left to discard
    state = _ready("3D 4D 5D 6D 7D 9C TC JC QC KS KH KC KD", round=7)
    with pytest.raises(IllegalMoveError, match="C3"):
        play(state, go_down(("run", "3D 4D 5D 6D 7D"), ("run", "9C TC JC QC"), ("set", "KS KH KC")))
    assert norm(go_down(("run", "3D 4D 5D 6D 7D"), ("run", "9C TC JC QC"), ("set", "KS KH KC"))) \
        not in listed_downs(state)
    out = play(state, go_down(("run", "3D 4D 5D 6D 7D"), ("run", "9C TC JC QC"), ("set", "KS KH KD")))
    assert out.hands[0] == parse_cards("KC")
    assert [m for m in GAME.legal_moves(out)] == [{"type": "discard", "card": "KC"}]


# ---------------------------------------------------------------------------
# Laying off


def _down_state(hand, melds, round=1, **kw):
    other = CONTRACTS[round][3]
    return draw_and_pass(setup([hand, other, other], round=round, melds=melds, **kw))


SETS = [{"owner": 1, "kind": "set", "cards": cards("7S 7H JK")},
        {"owner": 1, "kind": "set", "cards": cards("9C 9D 9S")},
        {"owner": 0, "kind": "set", "cards": cards("QC QD QH")},
        {"owner": 0, "kind": "set", "cards": cards("5H 5S 5H")}]


def test_lay_off_on_other_players_melds():
    state = _down_state("7D 2C KC", SETS)
    state = play(state, {"type": "lay_off", "card": "7D", "meld": 0})
    assert sorted(state.meld_cards[0]) == sorted(parse_cards("7S 7H JK 7D"))
    state = play(state, {"type": "lay_off", "card": "2C", "meld": 1})  # a wild on a set
    assert GAME.observation(state, 1)["melds"][1] == {"owner": 1, "kind": "set", "rank": "9",
                                                      "cards": cards("9C 9D 9S 2C")}
    with pytest.raises(IllegalMoveError, match="would not stay legal"):
        play(state, {"type": "lay_off", "card": "KC", "meld": 1})  # a king on the 9s


def test_lay_off_needs_to_be_down():
    melds = SETS[:2]  # seat 1's
    state = draw_and_pass(setup(["7D +6", 7, 7], melds=melds))
    with pytest.raises(IllegalMoveError, match="go down first"):
        play(state, {"type": "lay_off", "card": "7D", "meld": 0})
    assert not any(m["type"] == "lay_off" for m in GAME.legal_moves(state))


def test_lay_off_run_ends_and_ace_at_either_end():
    melds = [{"owner": 0, "kind": "run", "cards": cards("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"),
              "stands_for": cards("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")},
             {"owner": 0, "kind": "run", "cards": cards("5C 6C 7C 8C"), "stands_for": cards("5C 6C 7C 8C")}]
    state = _down_state("AH 4C 9C JK", melds, round=3)
    with pytest.raises(IllegalMoveError, match="more than one way"):
        play(state, {"type": "lay_off", "card": "AH", "meld": 0})
    high = play(state, {"type": "lay_off", "card": "AH", "meld": 0, "end": "high"})
    assert contracts.stands_for((high.meld_suit[0], high.meld_low[0], tuple(high.meld_cards[0])))[-1] == parse_card(
        "AH")
    low = play(state, {"type": "lay_off", "card": "AH", "meld": 0, "end": "low"})
    assert low.meld_low[0] == 1
    # a 13-card run is full
    with pytest.raises(IllegalMoveError):
        play(low, {"type": "lay_off", "card": "JK", "meld": 0, "end": "high"})
    assert play(state, {"type": "lay_off", "card": "4C", "meld": 1}).meld_low[1] == 4
    assert play(state, {"type": "lay_off", "card": "9C", "meld": 1}).meld_cards[1][-1] == parse_card("9C")
    with pytest.raises(IllegalMoveError, match="low end"):
        play(state, {"type": "lay_off", "card": "9C", "meld": 1, "end": "low"})
    wild_moves = [m for m in GAME.legal_moves(state) if m["type"] == "lay_off" and m["card"] == "JK"]
    assert sorted((m["meld"], m["end"]) for m in wild_moves) == [(0, "high"), (0, "low"), (1, "high"), (1, "low")]


def test_listed_lay_offs_match_the_rule():
    rng = random.Random(2)
    deck = GAME.deck(4, GAME.check_options({}))
    for _ in range(300):
        hand = rng.sample(deck, 8)
        counts = [0] * 53
        for c in hand:
            counts[c] += 1
        suit = rng.randrange(4)
        low = rng.randrange(1, 10)
        n = rng.randrange(4, min(13, 15 - low) + 1)
        run = [contracts.position_card(suit, p) if rng.random() < 0.7 else rng.choice([JOKER, 1, 14])
               for p in range(low, low + n)]
        if not any(c == contracts.position_card(suit, low + i) for i, c in enumerate(run)):
            run[0] = contracts.position_card(suit, low)
        rank = rng.randrange(1, 14)
        melds = [(suit, low, tuple(run)), (-1, rank, (*contracts.POS_CARD[0][rank:rank + 1], JOKER, JOKER))]
        for meld in melds:
            fast = sorted(contracts.lay_off_moves(meld, counts, LIMIT))
            slow = sorted((c, how, end) for c in set(hand) for how, end, _ in contracts.lay_off_options(meld, c, LIMIT))
            assert fast == slow, (meld, hand)


# ---------------------------------------------------------------------------
# Going out, scoring, the game


def test_going_out_by_laying_off_the_last_card():
    state = setup(["7D", "KC KD", 7], melds=SETS, discard="9H")
    third = card_points(state.hands[2])
    state = play(state, {"type": "take_discard"}, {"type": "lay_off", "card": "7D", "meld": 0})
    assert state.round == 1
    state, events = GAME.apply(state, {"type": "lay_off", "card": "9H", "meld": 1})
    end = next(e for e in events if e["type"] == "round_end")
    assert end["went_out"] == 0 and end["reason"] == "went_out"
    assert end["scores"] == [0, 20, third]
    assert state.round == 2 and state.totals == end["scores"]


def test_going_out_by_discard():
    state = setup(["KC", "KD QD", 7], melds=SETS, discard="7D")
    state = play(state, {"type": "take_discard"}, {"type": "lay_off", "card": "7D", "meld": 0})
    state, events = GAME.apply(state, {"type": "discard", "card": "KC"})
    end = next(e for e in events if e["type"] == "round_end")
    assert end["went_out"] == 0 and end["scores"][:2] == [0, 20]
    assert state.discard == [parse_card("KC")] or state.round == 2


def test_game_winner_after_the_last_hand_and_shared_wins():
    others = "3C 3D 4C 4D 5C 5D 6C 6D 8C 8D 9H 9H"  # 60 points
    for totals, winners in (([100, 0, 20], [1]), ([50, 30, 0], [0, 1]), ([60, 40, 0], [0, 1, 2]), ([10, 29, 0], [0])):
        state = setup(["KC", "KD QD", others], round=6, melds=SETS, discard="7D", totals=totals,
                      options={"play_hand_7": False})
        state = play(state, {"type": "take_discard"}, {"type": "lay_off", "card": "7D", "meld": 0},
                     {"type": "discard", "card": "KC"})
        assert state.is_over and state.to_move is None
        assert state.totals == [totals[0], totals[1] + 20, totals[2] + 60]
        assert state.winners == winners, totals
        assert GAME.legal_moves(state) == []


def test_apply_never_changes_its_input():
    rng = random.Random(9)
    state = GAME.new_match(4, {"max_turns_per_round": 40}, seed=9)
    kinds = set()
    while not state.is_over:
        before = json.dumps(GAME.to_json(state))
        move = rng.choice(GAME.legal_moves(state))
        kinds.add(move["type"])
        new, _ = GAME.apply(state, move, check=False)
        assert json.dumps(GAME.to_json(state)) == before
        state = new
    assert kinds >= {"draw", "take_discard", "buy", "pass", "discard", "go_down", "lay_off"}


# ---------------------------------------------------------------------------
# Views


def test_views_show_the_table_and_never_other_hands():
    rng = random.Random(21)
    state = GAME.new_match(5, {"max_turns_per_round": 60}, seed=21)
    for _ in range(400):
        if state.is_over:
            break
        for seat in range(5):
            view = GAME.observation(state, seat)
            assert view["hand"] == [CARD_NAMES[c] for c in state.hands[seat]]
            assert "stock" not in view and "hands" not in view and "seed" not in view
            zones = {z.get("seat"): z for z in view["hidden"] if z["zone"] == "hand"}
            assert set(zones) == set(range(5)) - {seat}
            for other, zone in zones.items():
                assert zone["size"] == len(state.hands[other])
                assert sorted(parse_cards(zone.get("known", []))) == sorted(state.known[other])
            assert view["buys"] == state.buys and view["hand_sizes"] == [len(h) for h in state.hands]
            assert len(view["melds"]) == len(state.meld_cards)
        state, _ = GAME.apply(state, rng.choice(GAME.legal_moves(state)))


def test_state_size_for_eight_players_mid_game():
    rng = random.Random(8)
    state = GAME.new_match(8, seed=8)
    biggest = 0
    for _ in range(600):
        if state.is_over:
            break
        state, _ = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
        biggest = max(biggest, len(json.dumps(GAME.to_json(state))))
    assert biggest <= 32 * 1024


def test_setup_checks():
    with pytest.raises(InvalidSetupError, match="needs 7"):
        setup(["3C 4C", 7, 7])
    with pytest.raises(InvalidSetupError, match="setup meld"):
        setup(["3C", 7, 7], melds=[{"owner": 0, "kind": "set", "cards": cards("3D 4D 5D")}])


def _plant(rng, left, limit, sets, runs, run_size, extra_sizes=True):
    """A hand holding a random legal arrangement of ``sets`` sets and ``runs`` runs (from ``left``, a
    Counter of the cards still available), or None when the deck ran short."""
    melds = []
    for _ in range(sets):
        rank = rng.choice([r for r in range(1, 14) if r != 2])
        size = 3 + (rng.randrange(3) if extra_sizes else 0)
        nat = rng.randrange(1, size + 1)
        cards_ = [(s * 13 + rank - 1) for s in rng.choices(range(4), k=nat)]
        cards_ += rng.choices([JOKER, 1, 14, 27, 40], k=size - nat)
        if contracts.limit_ok(nat, size - nat, limit):
            melds.append(cards_)
        else:
            melds.append([(s * 13 + rank - 1) for s in rng.choices(range(4), k=size)])
    for _ in range(runs):
        size = run_size + (rng.randrange(3) if extra_sizes else 0)
        suit, low = rng.randrange(4), rng.randrange(1, 16 - size)
        cards_ = [contracts.position_card(suit, p) if rng.random() < 0.75 else rng.choice([JOKER, 1, 14, 27, 40])
                  for p in range(low, low + size)]
        nat = sum(1 for i, c in enumerate(cards_) if c == contracts.position_card(suit, low + i))
        if not contracts.limit_ok(nat, size - nat, limit):
            cards_ = [contracts.position_card(suit, p) for p in range(low, low + size)]
        melds.append(cards_)
    hand = [c for m in melds for c in m]
    need = Counter(hand)
    if any(left[c] < n for c, n in need.items()):
        return None
    left.subtract(need)
    return hand


@pytest.mark.parametrize("limit", contracts.WILD_LIMITS)
def test_hands_holding_a_contract_list_a_way_to_go_down(limit):
    rng = random.Random(limit)
    deck = GAME.deck(4, GAME.check_options({}))
    checked = 0
    for trial in range(300):
        hand_no = 1 + trial % 6
        sets, runs, run_size, _ = CONTRACTS[hand_no]
        left = Counter(deck)
        hand = _plant(rng, left, limit, sets, runs, run_size, extra_sizes=False)
        if hand is None:
            continue
        hand += rng.sample(sorted(left.elements()), rng.randrange(1, 8))
        found = contracts.minimal_go_downs(sorted(hand), sets, runs, 3, run_size, limit, MAX_LISTED_GO_DOWNS)
        assert found, (hand_no, [CARD_NAMES[c] for c in sorted(hand)])
        for down in found:
            assert all(contracts.meld_problem(m, limit) is None for m in down)
            assert not Counter(c for m in down for c in m[2]) - Counter(hand)
        checked += 1
    assert checked > 200


def test_hand_7_lists_planted_whole_hand_arrangements():
    rng = random.Random(77)
    deck = GAME.deck(4, GAME.check_options({}))
    checked = 0
    for _ in range(300):
        left = Counter(deck)
        hand = _plant(rng, left, LIMIT, 1, 2, 4)
        if hand is None:
            continue
        extra = rng.choice(sorted(left.elements()))
        found = contracts.exact_go_downs(sorted([*hand, extra]), LIMIT, MAX_LISTED_GO_DOWNS)
        assert found, [CARD_NAMES[c] for c in sorted(hand)]
        for down in found:
            assert all(contracts.meld_problem(m, LIMIT) is None for m in down)
            assert sum(len(m[2]) for m in down) == len(hand)
        checked += 1
    assert checked > 200


def test_empty_stock_reshuffles_the_discard_pile_but_its_top_card():
    state = setup([7, 7, 7], discard="KH")
    spec = GAME.to_json(state)
    pile = spec["stock"] + spec["discard"]  # move the whole stock under the top discard
    state = GAME.from_json({**spec, "stock": [], "discard": pile})
    state, events = GAME.apply(state, {"type": "draw"})
    while state.phase == "buy":
        state, events = GAME.apply(state, {"type": "pass"})
    shuffle = next(e for e in events if e["type"] == "reshuffle")
    assert shuffle["cards"] == len(pile) - 1
    assert state.discard == [parse_card("KH")] and len(state.stock) == len(pile) - 2
    assert len(state.hands[0]) == 8


def test_round_ends_when_no_card_can_be_drawn():
    options = {"decks": 1, "jokers_per_deck": 0}
    deck = sorted(GAME.deck(3, GAME.check_options(options)))
    sizes = [7 + 2 * 8, 7 + 2 * 6, 7 + 2 * 1]  # every card but one in hand, thanks to buys
    hands, at = [], 0
    for n in sizes:
        hands.append([CARD_NAMES[c] for c in deck[at:at + n]])
        at += n
    spec = {"hands": hands, "discard": [CARD_NAMES[deck[-1]]], "stock": [], "buys": [8, 6, 1], "to_move": 0}
    state = GAME.from_setup(3, spec, options)
    state, events = GAME.apply(state, {"type": "draw"})
    while state.phase == "buy":
        state, events = GAME.apply(state, {"type": "pass"})
    end = next(e for e in events if e["type"] == "round_end")
    assert end["reason"] == "stock_exhausted" and end["went_out"] is None
    assert end["scores"] == [card_points(parse_cards(h)) for h in hands]
    assert state.round == 2


def test_lay_off_listing_does_not_depend_on_its_caches():
    """The lay-off index of a table derived from the previous table's equals a fresh one, in order."""
    from engine.games.contract_rummy import listing as cr

    rng = random.Random(31)
    compared = 0
    for seed in range(4):
        state = GAME.new_match(4, {"max_turns_per_round": 80}, seed=seed)
        while not state.is_over:
            moves = GAME.legal_moves(state)
            if state.phase == "play" and state.down[state.turn]:
                cr._TABLE_INDEX.clear()
                cr._WANTS.clear()
                assert GAME.legal_moves(state) == moves
                compared += 1
            state, _ = GAME.apply(state, rng.choice(moves), check=False)
    assert compared > 100


def test_a_set_of_2s_is_natural_and_takes_jokers_as_wilds():
    state = _ready("2C 2D 2H 9S 9D JK 5C 6C")
    move = go_down(("set", "2C 2D 2H"), ("set", "9S 9D JK"))
    assert norm(move) in listed_downs(state)
    state = play(state, move)
    view = GAME.observation(state, 1)
    assert [m["rank"] for m in view["melds"]] == ["2", "9"]
    assert contracts.meld_counts((-1, 2, tuple(parse_cards("2C 2D 2H")))) == (3, 0)
    assert contracts.meld_counts((-1, 2, tuple(parse_cards("2C 2D JK")))) == (2, 1)
    # a 2 laid on a set of 2s is natural, so even the strictest wild limit takes it
    meld = (-1, 2, tuple(parse_cards("2C 2D JK")))
    assert [how for how, _, _ in contracts.lay_off_options(meld, parse_card("2S"), "fewer_than_naturals")] == ["add"]
    assert contracts.lay_off_options(meld, JOKER, "fewer_than_naturals") == []


@st.composite
def table_runs(draw):
    """A legal run: suit, low, length, and which places hold wilds (with at least one natural)."""
    suit = draw(st.integers(0, 3))
    length = draw(st.integers(4, 13))
    low = draw(st.integers(1, 15 - length))
    wild_at = draw(st.sets(st.integers(0, length - 1), max_size=length - 1))
    wilds = draw(st.lists(st.sampled_from([JOKER, 1, 14, 27, 40]), min_size=length, max_size=length))
    cards_ = tuple(wilds[i] if i in wild_at else contracts.position_card(suit, low + i) for i in range(length))
    return suit, low, cards_


@given(table_runs(), st.randoms(use_true_random=False))
def test_read_run_gives_back_any_run_from_its_stand_ins(meld, rnd):
    suit, low, cards_ = meld
    order = list(range(len(cards_)))
    rnd.shuffle(order)
    shuffled = [cards_[i] for i in order]
    stand_ins = [contracts.stands_for(meld)[i] for i in order]
    read = contracts.read_run(shuffled, LIMIT, stand_ins)
    if len(cards_) == 13:  # A-K and 2-A hold the same 13 cards: read as ace low
        assert read[:2] == (suit, 1) and sorted(contracts.stands_for(read)) == sorted(contracts.stands_for(meld))
        return
    assert read == meld
    # without stand-ins: the same run when the places are forced, else a request for stands_for
    try:
        read = contracts.read_run(shuffled, LIMIT)
    except IllegalMoveError as exc:
        assert "stands_for" in str(exc)
    else:
        assert read[:2] == (suit, low) and sorted(read[2]) == sorted(cards_)
        assert contracts.meld_counts(read) >= contracts.meld_counts(meld)


@given(table_runs(), st.sampled_from([*range(52), JOKER]))
def test_every_lay_off_keeps_the_run_legal(meld, card):
    for how, end, new in contracts.lay_off_options(meld, card, LIMIT):
        assert contracts.meld_problem(new, LIMIT) is None
        assert len(new[2]) == len(meld[2]) + 1
        assert sorted(new[2]) == sorted([*meld[2], card])
        if how == "replace":
            moved = new[2][0] if end == "low" else new[2][-1]
            assert contracts.is_wild(moved)
