"""The expert for Three Thirteen and Threezies: exact deadwood, the odds of the next draw, and a memory.

Every decision is made from the seat's view, with the exact minimum-deadwood solver of :mod:`engine.melds`:

* **Go out whenever a discard allows it** (going out scores 0 and ends the round for the others in one turn).
* **Unseen cards**: the game's deck minus the own hand, the discard pile and the cards the others are known to
  hold (taken from the discard pile); a stock draw is any of them, in proportion to its copies.
* **The measure** of a hand of ``n`` cards is its *expected deadwood after the next draw*: the mean, over the
  unseen cards, of the deadwood left by the best discard after drawing that card.
* **Discard** the card whose loss leaves the best measure (the exact deadwood breaks ties), plus a penalty for a
  card that would feed the next player (below). On the last turn of a round (someone went out) only the exact
  deadwood counts: that hand is the one scored.
* **Take or pass** by the same measure: take the top discard when the deadwood after taking it (and the best
  discard) is below the expected deadwood after a stock draw, i.e. below the measure of the hand as it is.
* **Memory** of the next player (the one who can take this seat's discards): the cards it took and still holds
  (``known`` in the view), the discards of this seat it let pass, and the cards it threw away. A discard of the
  same rank as a card it holds, or of its suit within two ranks, is dangerous; one of a rank it passed or threw is
  safe. The danger is weighed in points against the measure, and only while the round goes on.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import lru_cache

from engine import melds
from engine.cards import CARD_NAMES, JOKER, parse_card, parse_cards
from engine.game import Game, Move, Observation
from engine.rummy import rummy_rounds

#: points of measure a unit of danger costs (a card of a rank the next player holds counts 2 units)
DANGER_POINTS = 1.5
#: the discards whose measure is computed: the best ones by exact deadwood, within this many points of the best
CANDIDATE_SPREAD = 12
MAX_CANDIDATES = 6


@lru_cache(maxsize=400_000)
def _deadwood(hand: tuple[int, ...], rules: melds.MeldRules) -> int:
    return int(melds.min_deadwood(hand, rules))


@lru_cache(maxsize=400_000)
def _after_best_discard(hand: tuple[int, ...], rules: melds.MeldRules) -> int:
    """The deadwood left by the best discard from ``hand`` (n+1 cards)."""
    return int(melds.best_discard(hand, rules).score)


def _without(hand: tuple[int, ...], card: int) -> tuple[int, ...]:
    i = hand.index(card)
    return hand[:i] + hand[i + 1:]


def _with(hand: tuple[int, ...], card: int) -> tuple[int, ...]:
    return tuple(sorted((*hand, card)))


def expected_after_draw(hand: tuple[int, ...], unseen: Counter[int], rules: melds.MeldRules) -> float:
    """The measure: mean deadwood after drawing one unseen card and making the best discard."""
    total = sum(unseen.values())
    if total == 0:
        return float(_deadwood(hand, rules))
    return sum(n * _after_best_discard(_with(hand, c), rules) for c, n in unseen.items()) / total


class RummyExpert:
    """One seat's expert for one game (it keeps a memory of the round)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.round = -1
        self.my_discard: int | None = None
        self.pile_before: list[int] = []
        self.passed: set[int] = set()  # this seat's discards the next player let pass
        self.thrown: set[int] = set()  # cards the previous player discarded (in 2 players, the next one too)

    # -- memory -----------------------------------------------------------------------------------------

    def _remember(self, view: Observation) -> None:
        if view["round"] != self.round:
            self.round, self.my_discard, self.pile_before = view["round"], None, []
            self.passed, self.thrown = set(), set()
            return
        pile = parse_cards(view["discard"])
        if view["phase"] == "draw" and pile:
            if view["num_players"] == 2:
                self.thrown.add(pile[-1])
            d = self.my_discard
            if d is not None and Counter(pile)[d] >= Counter(self.pile_before)[d]:
                self.passed.add(d)

    def _danger(self, card: int, view: Observation, rules: melds.MeldRules) -> float:
        """Units of danger in giving ``card`` to the next player (see the module docstring)."""
        if self._is_wild(card, rules):
            return 4.0
        nxt = (view["seat"] + 1) % view["num_players"]
        held = parse_cards(view["known"][nxt])
        rank, suit = card % 13, card // 13
        units = 0.0
        for k in held:
            if k == JOKER:
                continue
            if k % 13 == rank:
                units += 2
            elif k // 13 == suit and abs(k % 13 - rank) <= 2:
                units += 1
        safe = self.passed | (self.thrown if view["num_players"] == 2 else set())
        if any(c != JOKER and c % 13 == rank for c in safe):
            units -= 1
        return max(0.0, units)

    @staticmethod
    def _is_wild(card: int, rules: melds.MeldRules) -> bool:
        return card == JOKER or (card % 13 + 1) in rules.wild_ranks

    # -- what is unseen ---------------------------------------------------------------------------------

    def _unseen(self, view: Observation) -> Counter[int]:
        """The cards this seat cannot locate (the engine's ``unseen_cards`` of the view), as a multiset."""
        return Counter(self.game.unseen_cards(view))

    # -- decisions --------------------------------------------------------------------------------------

    def __call__(self, game: Game, view: Observation, rng: random.Random) -> Move:
        self._remember(view)
        rules = rummy_rounds(game).meld_rules(view["options"], view["round"])
        hand = tuple(sorted(parse_cards(view["hand"])))
        unseen = self._unseen(view)
        if view["phase"] == "draw":
            return self._draw(view, hand, rules, unseen)
        return self._discard(view, hand, rules, unseen)

    def _draw(self, view: Observation, hand: tuple[int, ...], rules: melds.MeldRules,
              unseen: Counter[int]) -> Move:
        self.pile_before = parse_cards(view["discard"])
        if not view["discard"]:
            return {"type": "draw", "source": "stock"}
        top = parse_card(view["discard"][-1])
        taken = _with(hand, top)
        forbidden = None if view["options"].get("allow_rediscard") else top
        after_take = min(_deadwood(_without(taken, c), rules) for c in set(taken) if c != forbidden)
        if after_take == 0:
            return {"type": "draw", "source": "discard"}
        after_stock = expected_after_draw(hand, unseen, rules)
        return {"type": "draw", "source": "discard" if after_take < after_stock else "stock"}

    def _discard(self, view: Observation, hand: tuple[int, ...], rules: melds.MeldRules,
                 unseen: Counter[int]) -> Move:
        taken = parse_card(view["taken"]) if view.get("taken") and not view["options"].get("allow_rediscard") \
            else None
        last_turn = view.get("went_out") is not None  # someone went out: a plain discard, and this hand is scored
        outs = [] if last_turn else [c for c in melds.go_out_discards(list(hand), rules) if c != taken]
        if outs:  # always go out: the highest card goes, though any would do
            card = max(outs, key=lambda c: (rules.values[c], c))
            return {"type": "go_out", "card": CARD_NAMES[card]}
        options = [c for c in sorted(set(hand)) if c != taken]
        exact = {c: _deadwood(_without(hand, c), rules) for c in options}
        if last_turn:
            card = min(options, key=lambda c: (exact[c], -rules.values[c], -c))
            return {"type": "discard", "card": CARD_NAMES[card]}
        best = min(exact.values())
        ranked = sorted((c for c in options if exact[c] <= best + CANDIDATE_SPREAD),
                        key=lambda c: (exact[c], -rules.values[c], -c))[:MAX_CANDIDATES]
        scored: list[tuple[float, int, int, int]] = []
        for c in ranked:
            measure = expected_after_draw(_without(hand, c), unseen, rules)
            penalty = DANGER_POINTS * self._danger(c, view, rules)
            scored.append((measure + penalty, exact[c], -rules.values[c], c))
        card = min(scored)[3]
        self.my_discard = card
        self.pile_before = [*parse_cards(view["discard"]), card]
        return {"type": "discard", "card": CARD_NAMES[card]}

