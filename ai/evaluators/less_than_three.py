"""Less Than Three (RULES.md §1): a race to empty the hand, read as "plays needed".

The leaf compares how many plays each hand needs to empty itself (the fewest
melds its cards split into, :func:`plays_needed`, exact), with a tempo bonus
for the seat that leads next and for a sweep still in hand this round. That
difference makes a chance of winning the race; the winner usually sheds out
(5 + the other hand), so the expected margin weighs those points. Knocks end
the round inside the search and are scored exactly.
"""

from __future__ import annotations

import math
import random

from ai.evaluate import Evaluator, Leaf, plural, register_evaluator
from engine import climbing
from engine.cards import parse_cards
from engine.climbing import ClimbMeld
from engine.game import Game, Move, Observation, State
from engine.games import less_than_three as lt3

LEAD_TEMPO = 0.7  # plays a lead is worth in the race
SWEEP_TEMPO = 0.6  # plays an unused sweep (usable this round) is worth
RACE_SCALE = 1.2  # plays of advantage that make the race about 70:30
SWEEP_CARD_VALUE = 1.0  # points a sweep card still held is worth over the rest of the game
LEFT_AT_END = 0.6  # share of its cards the race's loser still holds at the end, on average

_PLAYS: dict[int, int] = {0: 0}


def plays_needed(mask: int) -> int:
    """The fewest melds (singles, sets, runs) that the hand ``mask`` (bit = card) splits into."""
    got = _PLAYS.get(mask)
    if got is not None:
        return got
    if len(_PLAYS) > 400_000:
        _PLAYS.clear()
        _PLAYS[0] = 0
    # the card of lowest rank: any meld holding it is a single, a set of its rank, or a run starting at it
    low = min((c for c in range(52) if mask >> c & 1), key=lambda c: (c % 13, c))
    rank0, suit = low % 13, low // 13
    rest = mask & ~(1 << low)
    best = plays_needed(rest)
    same = [s * 13 + rank0 for s in range(4) if s != suit and rest >> (s * 13 + rank0) & 1]
    for sub in range(1, 1 << len(same)):
        m = rest
        for j, c in enumerate(same):
            if sub >> j & 1:
                m &= ~(1 << c)
        best = min(best, plays_needed(m))
    m = rest
    r = rank0 + 1
    while r < 13 and m >> (suit * 13 + r) & 1:
        m &= ~(1 << (suit * 13 + r))
        best = min(best, plays_needed(m))
        r += 1
    _PLAYS[mask] = best + 1
    return best + 1


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _play(meld: ClimbMeld, knock: bool = False) -> Move:
    return {"type": "play", "cards": list(meld.names), "knock": knock}


class LessThanThreeEvaluator(Evaluator):
    margin_scale = 5.0
    orbit_shift = 7  # a round is short: play the worlds out to (nearly) its end

    def cache_entries(self) -> int:
        return len(_PLAYS)

    def ends_round(self, game: Game, state: State, move: Move) -> bool:
        """A knock, or a play of the whole hand (shedding out, R11)."""
        s = state
        assert isinstance(s, lt3.LessThanThreeState)
        return bool(move.get("knock")) or (move.get("type") == "play"
                                           and len(move["cards"]) == len(s.hands[s.to_move or 0]))

    def leaf(self, game: Game, state: State, seat: int) -> Leaf:
        s = state
        assert isinstance(s, lt3.LessThanThreeState)
        other = 1 - seat
        plays = [plays_needed(_mask(h)) for h in s.hands]
        sizes = [len(h) for h in s.hands]
        edge = float(plays[other] - plays[seat])
        if s.to_move is not None:
            leader = s.to_move if s.phase == lt3.LEAD else 1 - s.to_move
            edge += LEAD_TEMPO if leader == seat else -LEAD_TEMPO
        if not s.sweep_used:
            edge += SWEEP_TEMPO * ((s.sweeps[seat] > 0) - (s.sweeps[other] > 0))
        p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, edge / RACE_SCALE))))
        gain = lt3.SHED_BONUS + LEFT_AT_END * sizes[other]
        loss = lt3.SHED_BONUS + LEFT_AT_END * sizes[seat]
        future = SWEEP_CARD_VALUE * (s.sweeps[seat] - s.sweeps[other]) * min(1.0, (lt3.ROUNDS - s.round) / 2)
        return Leaf(p * gain - (1 - p) * loss + future, p)

    def policy(self, game: Game, state: State, rng: random.Random) -> Move:
        s = state
        assert isinstance(s, lt3.LessThanThreeState)
        seat = s.to_move
        assert seat is not None
        hand = s.hands[seat]
        mask = _mask(hand)
        n_other = len(s.hands[1 - seat])
        if s.phase == lt3.LEAD:
            options = climbing.melds_in(hand)
        else:
            table = climbing.classify(s.table)
            assert table is not None  # (a table to answer is a meld: the engine checked it when it was played)
            options = climbing.answers_in(hand, table)
        now = plays_needed(mask)
        best: ClimbMeld | None = None
        best_key: tuple[int, int, int] | None = None
        for m in options:
            after = plays_needed(mask & ~m.mask)
            key = (after, m.rank, -len(m.cards))
            if best_key is None or key < best_key:
                best, best_key = m, key
        if s.phase == lt3.RESPOND:
            urgent = n_other <= 3
            if best is None or (best_key is not None and best_key[0] >= now and not urgent):
                if urgent and s.sweeps[seat] and not s.sweep_used:
                    return {"type": "sweep"}
                return {"type": "pass"}
        assert best is not None
        left = len(hand) - len(best.cards)
        return _play(best, knock=0 < left <= 2 and left < n_other)

    def explain(self, game: Game, view: Observation, move: Move, ranked: list[tuple[Move, float]]) -> str:
        cards = parse_cards(view["hand"])
        mask = _mask(cards)
        now = plays_needed(mask)
        opp = view["hand_sizes"][1 - view["seat"]]
        if move["type"] == "pass":
            return (f"passes: every answer would break up the {plural(now, 'play')} "
                    f"its {plural(len(cards), 'card')} need{'s' if len(cards) == 1 else ''}")
        if move["type"] == "sweep":
            return f"sweeps the table to take the lead while the opponent holds only {plural(opp, 'card')}"
        played = parse_cards(move["cards"])
        after = plays_needed(mask & ~_mask(played))
        left = len(cards) - len(played)
        text = (f"plays {' '.join(move['cards'])}, leaving {plural(left, 'card')} that "
                f"need{'s' if left == 1 else ''} {after} more play{'' if after == 1 else 's'}")
        if move.get("knock"):
            text += f" and knocks, holding {left} against {opp}"
        elif left == 0:
            text = f"plays {' '.join(move['cards'])}, its last cards, and sheds out against {opp}"
        return text


EVALUATOR = register_evaluator("less-than-three", LessThanThreeEvaluator())
