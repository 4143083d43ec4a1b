"""The AI in contract rummy (RULES.md §4): wilds count toward the contract, it buys only when it pays, and it
goes down when it can. Positions from the issue's logs (issue 15) and from random play with fixed seeds."""

from __future__ import annotations

import random

import pytest

from ai import choose_move
from ai.evaluate import evaluator_for
from ai.evaluators.contract_rummy import effective_missing, expected_points, missing_cards
from engine.cards import CARD_NAMES, parse_cards
from engine.registry import get_game

GAME = get_game("contract-rummy")
OTHERS = [["AC", "AD", "KC", "KD", "QH", "QS", "JC", "JD", "TH"],
          ["3C", "4C", "9D", "9H", "9S", "TS", "TC", "4D", "4H"],
          ["5C", "5D", "8H", "8S", "8D", "3H", "3D", "JH", "JS"]]


def test_wilds_count_toward_the_contract():
    # hand 3 (two runs of 4): 6C 7C 8C + 2D is a run; 5H 6H 7H misses one card
    hand = parse_cards(["6C", "7C", "8C", "2D", "5H", "6H", "7H", "3S", "5S", "6S"])
    assert missing_cards(hand, 3) == 1
    without = [c for c in hand if c != parse_cards(["2D"])[0]]
    assert missing_cards(without, 3) == 2
    assert expected_points(without, False, 3, set()) > expected_points(hand, False, 3, set())


@pytest.mark.parametrize("level", [2, 3, 4])
def test_keeps_the_wild_of_the_issues_hand(level):
    # the issue's log: holding 6C 7C 8C 2D 5H 6H 7H 3S 5S 6S in hand 3 it threw 2D
    state = GAME.from_setup(4, {"round": 3, "dealer": 3,
                                "hands": [["6C", "7C", "8C", "2D", "5H", "6H", "7H", "3S", "5S"], *OTHERS],
                                "discard": ["6S"]}, seed=1)
    state, _ = GAME.apply(state, {"type": "take_discard"})
    d = choose_move(GAME, GAME.observation(state, 0), level=level, seed=1)
    assert d.move["type"] == "discard"
    assert d.move["card"] != "2D", d.alternatives[:3]


def _buy_window(round_no: int, mine: list[str], top: str, melds: list[dict] | None = None,
                buys: list[int] | None = None):
    """Seat 3 draws from the stock instead of taking ``top``: seat 0 is first to decide whether to buy it."""
    deal = GAME.deal_size(round_no)
    rng = random.Random(round_no)
    pool = GAME.deck(4, GAME.check_options({}, 4))
    for c in parse_cards([*mine, top, *(c for m in melds or [] for c in m["cards"])]):
        pool.remove(c)
    rng.shuffle(pool)
    hands = [mine]
    for seat in (1, 2, 3):
        size = 2 if melds and any(m["owner"] == seat for m in melds) else deal
        hands.append([CARD_NAMES[c] for c in pool[:size]])
        pool = pool[size:]
    setup = {"round": round_no, "dealer": 2, "hands": hands, "discard": [top], "buys": buys or [0, 0, 0, 0]}
    if melds:
        setup["melds"] = melds
    state = GAME.from_setup(4, setup, seed=round_no)
    state, _ = GAME.apply(state, {"type": "draw"})
    assert state.phase == "buy" and state.to_move == 0
    return state


@pytest.mark.parametrize("level", [2, 3])
def test_does_not_buy_in_hand_7_holding_14_cards(level):
    # hand 7 goes down whole (R8): a bought card and its penalty card must fit the melds too
    mine = ["3C", "4C", "5C", "8D", "9D", "TD", "KH", "KS", "2H", "7S", "QD", "AH", "JC", "4S"]
    state = _buy_window(7, mine, "6C", buys=[1, 0, 0, 0])
    assert effective_missing(parse_cards([*mine, "6C", "9H"]), 7) > effective_missing(parse_cards(mine), 7)
    d = choose_move(GAME, GAME.observation(state, 0), level=level, seed=0)
    assert d.move == {"type": "pass"}, d.alternatives


@pytest.mark.parametrize("level", [2, 3])
def test_does_not_buy_a_useless_card_after_someone_is_down(level):
    # hand 2 (a run of 4 + a set of 3); seat 1 is down with two cards left; KD helps nothing
    mine = ["4C", "5C", "7C", "9D", "9H", "JS", "QS", "3H"]
    melds = [{"owner": 1, "kind": "run", "cards": ["5D", "6D", "7D", "8D"]},
             {"owner": 1, "kind": "set", "cards": ["TC", "TH", "TS"]}]
    state = _buy_window(2, mine, "KD", melds=melds)
    assert missing_cards(parse_cards([*mine, "KD"]), 2) == missing_cards(parse_cards(mine), 2)
    d = choose_move(GAME, GAME.observation(state, 0), level=level, seed=0)
    assert d.move == {"type": "pass"}, d.alternatives


def test_goes_down_whenever_it_can():
    """Every position of 4-player games (the model policy playing) where going down is legal."""
    ev = evaluator_for(GAME)
    found = 0
    for seed in range(6):
        state = GAME.new_match(4, seed=seed)
        rng = random.Random(seed)
        while not state.is_over and found < 16:
            moves = GAME.legal_moves(state)
            if any(m["type"] == "go_down" for m in moves):
                d = choose_move(GAME, GAME.observation(state, state.to_move), level=3, seed=found)
                assert d.move["type"] == "go_down", (state.round, d.move, d.alternatives[:3])
                found += 1
            state, _ = GAME.apply(state, ev.policy(GAME, state, rng))
    assert found >= 10


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_goes_down_holding_bought_cards(seed):
    # issue 15's logs, hand 2 (a run of 4 + a set of 3): after four buys it held 17 cards and could go down
    # (TS JS 2H KS, AC AS AS), but kept discarding: a hand that is down was valued at all the points it still
    # held, one that could go down at a small share of them
    mine = ["AC", "AS", "AS", "5C", "5D", "TS", "JS", "KS", "2H", "8C", "JC", "9D", "7H", "4S", "9S", "3D"]
    deal = GAME.deal_size(2)
    pool = GAME.deck(4, GAME.check_options({}, 4))
    for c in parse_cards([*mine, "QC"]):
        pool.remove(c)
    random.Random(seed).shuffle(pool)
    hands = [mine] + [[CARD_NAMES[c] for c in pool[i * deal:(i + 1) * deal]] for i in range(3)]
    state = GAME.from_setup(4, {"round": 2, "dealer": 3, "hands": hands, "discard": ["QC"],
                                "buys": [4, 0, 0, 0]}, seed=seed)
    state, _ = GAME.apply(state, {"type": "draw"})
    while state.phase == "buy":  # the others pass on QC
        state, _ = GAME.apply(state, {"type": "pass"})
    assert state.to_move == 0 and any(m["type"] == "go_down" for m in GAME.legal_moves(state))
    d = choose_move(GAME, GAME.observation(state, 0), level=3, seed=seed)
    assert d.move["type"] == "go_down", d.alternatives[:3]


def test_a_stock_draw_is_searched_through_the_turn_and_the_others_turns():
    """The others' buy decisions inside the seat's turn do not end its orbit: after a root draw from the stock
    the world goes on through the seat's own discard and the next seat's turn, as after taking the discard
    (before issue 15's fix, the leaf of a draw was read right after the buy window, the drawn card still in
    hand, so taking the discard looked better than it was)."""
    from ai.search import search

    class Recording(type(evaluator_for(GAME))):  # type: ignore[misc]
        def __init__(self) -> None:
            self.leaves: list[tuple[str, int, int | None, int]] = []

        def leaf(self, game, state, seat):
            self.leaves.append((state.phase, state.turn, state.to_move, len(state.hands[seat])))
            return super().leaf(game, state, seat)

    state = GAME.from_setup(4, {"round": 3, "dealer": 3,
                                "hands": [["6C", "7C", "8C", "2D", "5H", "6H", "7H", "3S", "5S"], *OTHERS],
                                "discard": ["KD"]}, seed=1)
    ev = Recording()
    d = search(GAME, GAME.observation(state, 0), level=2, seed=3, evaluator=ev)
    assert {a["move"]["type"] for a in d.alternatives} == {"draw", "take_discard"}
    # no world is read in the seat's own turn with the drawn card still in hand
    assert not [leaf for leaf in ev.leaves if leaf[:3] == ("play", 0, 0) and leaf[3] > GAME.deal_size(3)]
    # the worlds go on past the seat's own turn, its hand then no bigger than dealt (smaller once down)
    after = [size for phase, turn, to_move, size in ev.leaves if turn != 0]
    assert len(after) >= 8 and max(after) <= GAME.deal_size(3), after
