"""The expert for Less Than Three: plan the hand as few plays as possible, lead low, keep control, save the high
combinations, answer without breaking the plan, sweep and knock when the race demands it.

* **Plan**: the hand split into the fewest melds (singles, sets, runs; :func:`plan`), each a future play. The
  fewer plays, the sooner the hand sheds out.
* **Lead** the lowest meld of the plan (a longer one first among equals): high melds are the control that wins
  the lead back. With the plan down to one meld it sheds out; a lead that leaves 1 or 2 cards, 3 fewer than the
  opponent holds, comes first (then it may knock). When the opponent holds 2 cards or fewer, lead what it
  cannot answer: a meld longer than its hand, else the highest single.
* **Answer** with the lowest answer that is a meld of the plan (it costs nothing); one that breaks the plan only
  when the opponent is close to going out (:data:`DANGER` cards or fewer) or when it costs one play and leaves
  high cards; else pass (passing is allowed with an answer in hand, R7). When the opponent is close to going
  out and no answer exists, sweep (R9).
* **Knock** (R10) after a play that leaves 1 or 2 cards, when the opponent holds more: at once if the rest is
  not one meld (shedding out is then unlikely), and otherwise when the knock's sure points beat half of what
  shedding out would score (R12).
"""

from __future__ import annotations

import random
from functools import lru_cache

from engine.cards import CARD_NAMES, parse_cards
from engine.climbing import ClimbMeld, classify, melds_in
from engine.game import Game, Move, Observation

DANGER = 3


@lru_cache(maxsize=100_000)
def _plan(mask: int) -> tuple[ClimbMeld, ...]:
    """The fewest melds covering every card of ``mask`` (ties: the fewest singles)."""
    if not mask:
        return ()
    cards = [c for c in range(52) if mask >> c & 1]
    low = min(cards, key=lambda c: (c % 13, c // 13))
    best: tuple[ClimbMeld, ...] | None = None
    best_key: tuple[int, int] | None = None
    for meld in melds_in(cards):
        if not meld.mask >> low & 1:
            continue
        rest = _plan(mask & ~meld.mask)
        option = (meld, *rest)
        key = (len(option), sum(1 for m in option if len(m.cards) == 1))
        if best_key is None or key < best_key:
            best, best_key = option, key
    assert best is not None
    return best


def plan(hand: list[int]) -> tuple[ClimbMeld, ...]:
    mask = 0
    for c in hand:
        mask |= 1 << c
    return _plan(mask)


def _without(hand: list[int], meld: ClimbMeld) -> list[int]:
    return [c for c in hand if not meld.mask >> c & 1]


class LessThanThreeExpert:
    """One seat's expert for one game (stateless: the view holds all it uses)."""

    def __init__(self, game: Game) -> None:
        self.game = game

    def __call__(self, game: Game, view: Observation, rng: random.Random) -> Move:
        moves = game.legal_moves(game.determinize(view, rng))
        hand = parse_cards(view["hand"])
        seat = view["seat"]
        theirs = view["hand_sizes"][1 - seat]
        plays: dict[int, ClimbMeld] = {}
        for m in moves:
            if m["type"] == "play":
                meld = classify(parse_cards(m["cards"]))
                assert meld is not None
                plays[meld.mask] = meld
        if view["phase"] == "lead":
            meld = self._lead(hand, theirs, list(plays.values()))
            return self._play(meld, hand, theirs)
        current = plan(hand)
        in_plan = {m.mask for m in current}
        answers = sorted(plays.values(), key=lambda m: (m.rank, m.cards))
        free = [m for m in answers if m.mask in in_plan]
        if free:
            return self._play(free[0], hand, theirs)
        if theirs <= DANGER:
            if answers:
                return self._play(answers[0], hand, theirs)
            if any(m["type"] == "sweep" for m in moves):
                return {"type": "sweep"}
            return {"type": "pass"}
        for meld in answers:  # costs one play: worth it if it keeps the lead with a card that is not our control
            if len(plan(_without(hand, meld))) <= len(current) and meld.rank < 9:
                return self._play(meld, hand, theirs)
        return {"type": "pass"}

    @staticmethod
    def _lead(hand: list[int], theirs: int, plays: list[ClimbMeld]) -> ClimbMeld:
        current = plan(hand)
        if len(current) == 1:
            return current[0]
        ending = [m for m in plays if 1 <= len(hand) - len(m.cards) <= min(2, theirs - 3)]
        if ending:  # a play that lets it knock with the smaller hand: the most cards shed, then the highest
            return max(ending, key=lambda m: (len(m.cards), m.rank))
        if theirs <= 2:
            longer = [m for m in current if len(m.cards) > theirs]
            if longer:
                return max(longer, key=lambda m: (len(m.cards), m.rank))
            return max(plays, key=lambda m: (m.rank, -len(m.cards)))
        return min(current, key=lambda m: (m.rank, -len(m.cards), m.cards))

    @staticmethod
    def _play(meld: ClimbMeld, hand: list[int], theirs: int) -> Move:
        rest = _without(hand, meld)
        knock = False
        if 1 <= len(rest) <= 2 and theirs > len(rest):
            one_meld = len(plan(rest)) == 1
            knock = not one_meld or (theirs - len(rest)) * 2 >= 5 + theirs
        return {"type": "play", "cards": [CARD_NAMES[c] for c in meld.cards], "knock": knock}
