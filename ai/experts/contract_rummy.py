"""The expert for contract rummy: count the cards the contract still needs (wilds included), go down as soon as
it can, lay off everything, buy only what brings the contract closer, early and with a small hand.

* **Missing cards** (:func:`missing`): for the best choice of set ranks and run windows (each run window
  ``run_size`` places of one suit, the ace low or high), how many places no natural card of the hand fills,
  less the hand's wilds (2s and jokers, which fill any place; every meld keeps one natural card).
* **Draw**: take the top discard when it is a wild, or, before going down, when it lowers the missing count;
  once down, when it can be laid off on a meld of the table. Otherwise draw from the stock.
* **Buy** (R5) a discard that is a wild or lowers the missing count, only before anyone is down (a buy later
  rarely pays for the penalty card), not in hand 7, and only while the hand is small (at most
  :data:`BUY_MAX_EXTRA` cards above the deal).
* **Play**: go down whenever a way to meet the contract is listed (the way that keeps the fewest points in
  hand); once down, lay off every card that fits; then discard.
* **Discard** before going down the card whose loss leaves the fewest missing places, among those the card with
  the fewest partners (same rank, or same suit within three ranks), then the most points; never a wild while
  another card will do. Once down, the most points among the cards that fit no meld.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

from engine.cards import parse_card, parse_cards
from engine.contracts.table import is_wild
from engine.game import Game, Move, Observation
from engine.games.contract_rummy.rules import CARD_POINTS, CONTRACTS, SET_SIZE

BUY_MAX_EXTRA = 2
TOP_WINDOWS = 8



def _positions(card: int) -> tuple[int, ...]:
    """A natural card's places in a run of its suit: rank 1..13, and 14 for an ace high."""
    rank = card % 13 + 1
    return (1, 14) if rank == 1 else (rank,)


def missing(hand: list[int], sets: int, runs: int, run_size: int) -> int:
    """How many places of the contract the hand's natural cards leave empty, less its wilds (see the module)."""
    naturals = [c for c in hand if not is_wild(c)]
    wilds = len(hand) - len(naturals)
    by_suit: list[set[int]] = [set(), set(), set(), set()]
    for c in naturals:
        by_suit[c // 13].update(_positions(c))
    windows: list[tuple[int, int, int]] = []  # (naturals in it, suit, lowest place)
    if runs:
        for suit in range(4):
            held = by_suit[suit]
            for low in range(1, 16 - run_size):
                n = sum(1 for p in range(low, low + run_size) if p in held)
                windows.append((n, suit, low))
        windows.sort(reverse=True)
        windows = windows[:TOP_WINDOWS]
    best = 10**9
    combos = itertools.combinations(windows, runs) if runs else [()]
    for combo in combos:
        if any(a[1] == b[1] and abs(a[2] - b[2]) < run_size for a, b in itertools.combinations(combo, 2)):
            continue  # two runs of one suit must not overlap
        empty = 0
        used: Counter[int] = Counter()
        bare = 0
        for n, suit, low in combo:
            empty += run_size - n
            bare += n == 0
            for c in naturals:
                if c // 13 == suit and any(low <= p < low + run_size for p in _positions(c)):
                    used[c] += 1
        left = Counter(naturals) - used
        ranks = Counter(c % 13 for c in left.elements())
        counts = sorted(ranks.values(), reverse=True)[:sets] + [0] * sets
        for n in counts[:sets]:
            empty += SET_SIZE - min(n, SET_SIZE)
            bare += n == 0
        best = min(best, max(bare, empty - wilds))
    return max(0, best)


def _partners(card: int, hand: list[int]) -> int:
    return sum(1 for c in hand if c != card and not is_wild(c) and (
        c % 13 == card % 13 or (c // 13 == card // 13 and abs(c % 13 - card % 13) <= 3)))


def fits_table(card: int, melds: list[dict[str, Any]]) -> bool:
    """Whether ``card`` could be laid off on a meld of the table (a wild always fits somewhere)."""
    if not melds:
        return False
    if is_wild(card):
        return True
    rank, suit = card % 13 + 1, card // 13
    for m in melds:
        if m["kind"] == "set":
            if "A23456789TJQK".index(m["rank"]) + 1 == rank:
                return True
        elif "CDHS".index(m["suit"]) == suit:
            run = parse_cards(m["stands_for"])  # low to high: an ace first is low, last is high
            low = run[0] % 13 + 1
            high = 14 if run[-1] % 13 == 0 else run[-1] % 13 + 1
            if any(p in (low - 1, high + 1) for p in _positions(card)):
                return True
    return False


class ContractRummyExpert:
    """One seat's expert for one game (stateless: the view holds all it uses)."""

    def __init__(self, game: Game) -> None:
        self.game = game

    def __call__(self, game: Game, view: Observation, rng: random.Random) -> Move:
        hand = parse_cards(view["hand"])
        sets, runs, run_size, deal = CONTRACTS[view["round"]]
        down = bool(view["down"][view["seat"]])
        phase = view["phase"]
        top = parse_card(view["discard"][-1]) if view["discard"] else None
        if phase == "buy":
            return {"type": "buy" if self._buys(view, hand, top, sets, runs, run_size, deal) else "pass"}
        if phase == "draw":
            if top is not None and (is_wild(top) or (fits_table(top, view["melds"]) if down else
                                    missing([*hand, top], sets, runs, run_size)
                                    < missing(hand, sets, runs, run_size))):
                return {"type": "take_discard"}
            return {"type": "draw"}
        moves = game.legal_moves(game.determinize(view, rng))
        go_downs = [m for m in moves if m["type"] == "go_down"]
        if go_downs:
            return min(go_downs, key=lambda m: self._points_left(hand, m))
        lay_offs = [m for m in moves if m["type"] == "lay_off"]
        if lay_offs:
            return max(lay_offs, key=lambda m: (CARD_POINTS[parse_card(m["card"])], m["card"]))
        discards = [m for m in moves if m["type"] == "discard"]
        if down:
            def key(m: Move) -> tuple[bool, bool, int, str]:
                c = parse_card(m["card"])
                return (not is_wild(c), not fits_table(c, view["melds"]), CARD_POINTS[c], m["card"])
            return max(discards, key=key)
        before = {m["card"]: parse_card(m["card"]) for m in discards}

        def loss(m: Move) -> tuple[bool, int, int, int, str]:
            c = before[m["card"]]
            rest = list(hand)
            rest.remove(c)
            return (is_wild(c), missing(rest, sets, runs, run_size), _partners(c, hand), -CARD_POINTS[c], m["card"])
        return min(discards, key=loss)

    @staticmethod
    def _points_left(hand: list[int], go_down: Move) -> int:
        rest = list(hand)
        for meld in go_down["melds"]:
            for c in parse_cards(meld["cards"]):
                rest.remove(c)
        return sum(CARD_POINTS[c] for c in rest)

    @staticmethod
    def _buys(view: Observation, hand: list[int], top: int | None, sets: int, runs: int, run_size: int,
              deal: int) -> bool:
        if top is None or view["down"][view["seat"]] or any(view["down"]) or view["round"] == 7:
            return False
        if len(hand) + 2 > deal + BUY_MAX_EXTRA:  # a buy adds two cards: the discard and a penalty card
            return False
        return is_wild(top) or missing([*hand, top], sets, runs, run_size) < missing(hand, sets, runs, run_size)

