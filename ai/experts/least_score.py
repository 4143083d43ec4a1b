"""The expert for Least Score: shed the most points a turn allows, keep what sheds well next turn, and declare
on the odds given what was seen.

* **Unseen cards**: the deck(s) minus the own hand, the floor, the dead discards and the cards the others are
  known to hold (picked up from a floor). An unknown card in another hand is any of them.
* **Measure** of a hand after the turn: its total, less what its best legal discard would shed next turn
  (weighted :data:`NEXT_SHED`): a pair or a sequence kept together is worth keeping.
* **Discard** the legal group (single, pair, four of a kind, sequence of 3 or 5, flush) that leaves the best
  measure once the pick-up that follows is made (the cheapest floor card, or the deck at its mean, whichever
  measures better); ties shed more cards.
* **Pick up** the floor card or the deck by the same measure (the deck averaged over the unseen cards).
* **Declare** (when allowed) after estimating, by dealing the unseen cards into the other hands
  :data:`DEALS` times, the chance that the own total is the lowest (a tie counts as the option says) and what
  declaring gains or costs (R5): it declares when the expected points are in its favour by a clear margin.
  The others keep their low cards, so an unknown card of theirs is dealt as the lowest of one unseen card per
  turn they have played (up to :data:`KEPT_LOW_OF`).
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Sequence

from engine.cards import parse_cards
from engine.game import Game, Move, Observation
from engine.games.least_score.rules import legal_groups

VALUE = tuple(min(c % 13 + 1, 10) for c in range(52))
NEXT_SHED = 0.5
DEALS = 300
#: an unknown card in another hand is modelled as the lowest of up to this many unseen cards (one per turn played)
KEPT_LOW_OF = 3
#: declare when the expected gain of declaring is at least this many points
DECLARE_MARGIN = 2.0


def total(cards: Sequence[int]) -> int:
    return sum(VALUE[c] for c in cards)


def best_shed(hand: Sequence[int], same_suit: bool) -> int:
    """The most points one legal discard of ``hand`` sheds."""
    return max((total(g) for g in legal_groups(hand, same_suit)), default=0) if len(hand) > 1 else 0


def measure(hand: Sequence[int], same_suit: bool) -> float:
    return total(hand) - NEXT_SHED * best_shed(hand, same_suit)


class LeastScoreExpert:
    """One seat's expert for one game (stateless: everything it needs is in the view)."""

    def __init__(self, game: Game) -> None:
        self.game = game

    def _unseen(self, view: Observation) -> Counter[int]:
        """The cards this seat cannot locate (the engine's ``unseen_cards`` of the view), as a multiset."""
        return Counter(self.game.unseen_cards(view))

    def __call__(self, game: Game, view: Observation, rng: random.Random) -> Move:
        moves = game.legal_moves(game.determinize(view, rng))
        hand = parse_cards(view["hand"])
        same_suit = bool(view["options"].get("sequence_same_suit"))
        unseen = self._unseen(view)
        pool = list(unseen.elements())
        deck_mean = statistics.fmean(VALUE[c] for c in pool) if pool else 6.5
        if view["phase"] == "pick":
            return self._pick(view, hand, moves, same_suit, pool)
        if any(m["type"] == "declare" for m in moves) and self._declare_gain(view, hand, pool, rng) >= \
                DECLARE_MARGIN:
            return {"type": "declare"}
        floor = parse_cards(view["floor"])
        best: tuple[float, int, list[str]] | None = None
        for m in moves:
            if m["type"] != "discard":
                continue
            rest = list(hand)
            for c in parse_cards(m["cards"]):
                rest.remove(c)
            after = min([measure([*rest, c], same_suit) for c in floor]
                        + [measure(rest, same_suit) + deck_mean])
            key = (after, -len(m["cards"]), m["cards"])
            if best is None or key < best:
                best = key
        assert best is not None
        return {"type": "discard", "cards": best[2]}

    def _pick(self, view: Observation, hand: list[int], moves: list[Move], same_suit: bool,
              pool: list[int]) -> Move:
        sample = pool if len(pool) <= 60 else random.Random(len(pool)).sample(pool, 60)
        deck = statistics.fmean(measure([*hand, c], same_suit) for c in sample) if sample else 99.0
        best: tuple[float, str, Move] = (deck, "", {"type": "pick", "source": "deck"})
        for m in moves:
            if m.get("source") == "floor":
                card = parse_cards([m["card"]])[0]
                key = (measure([*hand, card], same_suit), m["card"], m)
                if key[:2] < best[:2]:
                    best = key
        return best[2]

    def _declare_gain(self, view: Observation, hand: list[int], pool: list[int], rng: random.Random) -> float:
        """Expected points declaring gains against playing on (0), from the seat's point of view: the points
        pushed onto the others (their mean) when it holds, less the penalty when it fails (R5)."""
        mine = total(hand)
        others = [s for s in range(view["num_players"]) if s != view["seat"] and not view["out"][s]]
        if not others:
            return 0.0
        known = {s: parse_cards(view["known"][s]) for s in others}
        tie_fails = bool(view["options"].get("tie_is_false_declare"))
        deal_rng = random.Random(rng.getrandbits(32))
        # the others have been shedding their high cards: an unknown card of theirs is the lowest of `keep` draws
        keep = 1 + min(KEPT_LOW_OF - 1, view["turns_in_round"] // view["num_players"])
        values = [VALUE[c] for c in pool]
        gain = 0.0
        for _ in range(DEALS):
            totals = []
            for s in others:
                unknown = max(0, view["hand_sizes"][s] - len(known[s]))
                totals.append(total(known[s]) + sum(min(deal_rng.choices(values, k=keep)) for _ in range(unknown)))
            lowest = min(totals)
            holds = mine < lowest or (mine == lowest and not tie_fails)
            if holds:
                gain += statistics.fmean(t - mine for t in totals)
            else:
                gain -= 20 + mine - lowest
        return gain / DEALS

