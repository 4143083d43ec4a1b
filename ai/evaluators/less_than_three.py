"""Less Than Three (RULES.md §1): a race to empty the hand, read as "plays needed".

The leaf compares how many plays each hand needs to empty itself (the fewest
melds its cards split into, :func:`plays_needed`, exact), with a tempo bonus
for the seat that leads next and for a sweep still in hand this round. That
difference makes a chance of winning the race; the winner usually sheds out
(5 + the other hand), so the expected margin weighs those points. Knocks end
the round inside the search and are scored exactly.

At levels 4 and 5 a sampled world whose two hands hold 10 cards or fewer is
**solved** to the round's end instead (:func:`solve_round`: both hands are
known in a sampled world, so the rest of the round is a two-player game of
perfect information, searched exactly by alpha-beta over plays, passes,
sweeps and knocks), so those levels play every endgame of a world exactly
where level 3 follows the model policy.
"""

from __future__ import annotations

import copy
import math
import random
from typing import ClassVar

from ai.evaluate import Evaluator, Leaf, plural, register_evaluator
from engine import climbing
from engine.cards import parse_cards
from engine.climbing import MELD_BY_MASK, ClimbMeld
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
    ranks = (mask | mask >> 13 | mask >> 26 | mask >> 39) & 0x1FFF
    rank0 = (ranks & -ranks).bit_length() - 1
    suit = next(s for s in range(4) if mask >> (s * 13 + rank0) & 1)
    low = suit * 13 + rank0
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


_MELDS: dict[int, list[ClimbMeld]] = {}
_SOLVED: dict[int, tuple[float, float]] = {}  # packed position -> (lower, upper) bound of its value
_INF = math.inf
_UNBOUNDED = (-_INF, _INF)
CACHE_LIMIT = 100_000  # entries of each solver table before it is cleared


def _melds_longest_first(mask: int) -> list[ClimbMeld]:
    """The melds of the hand ``mask``, longest first (the order that cuts the solver's search most)."""
    got = _MELDS.get(mask)
    if got is None:
        if len(_MELDS) >= CACHE_LIMIT:
            _MELDS.clear()
        got = _MELDS[mask] = sorted(climbing.melds_in([c for c in range(52) if mask >> c & 1]),
                                    key=lambda m: -len(m.cards))
    return got


def sweep_future(round_no: int) -> float:
    """What one sweep card still held is worth over the rest of the game, from round ``round_no`` on."""
    return SWEEP_CARD_VALUE * min(1.0, (lt3.ROUNDS - round_no) / 2)


def solve_round(mover: int, other: int, table: int, sweeps: tuple[int, int], sweep_used: bool,
                round_no: int) -> float:
    """The exact value of the rest of a round with both hands known, for the seat to move.

    ``mover`` and ``other`` are the two hands as card bitmasks, ``table`` the meld to answer (0 when the
    mover leads), ``sweeps`` the sweep cards left (mover's, other's). The value is the mover's round points
    minus the other's (R11, R12: 5 + the other's cards for shedding out, the difference in hand sizes to
    the smaller hand on a knock) plus :func:`sweep_future` of round ``round_no`` for each sweep card the
    mover holds more than the other at the round's end. Both play to that value (negamax with alpha-beta):
    a pass hands the lead over (R8), a sweep keeps it (R9), a play leaving 1 or 2 cards may knock (R10).
    Results are kept as bounds in one table shared by every call (cleared when full).
    """
    return _solve(mover, other, table, sweeps[0], sweeps[1], sweep_used, round_no, sweep_future(round_no),
                  -_INF, _INF)


def _solve(mover: int, other: int, table: int, sm: int, so: int, used: bool, round_no: int, future: float,
           alpha: float, beta: float) -> float:
    key = mover | other << 52 | table << 104 | sm << 156 | so << 158 | used << 160 | round_no << 161
    lo, hi = _SOLVED.get(key, _UNBOUNDED)
    if lo >= beta or lo == hi:
        return lo
    if hi <= alpha:
        return hi
    if lo > alpha:
        alpha = lo
    if hi < beta:
        beta = hi
    a0, b0 = alpha, beta
    n_me, n_other = mover.bit_count(), other.bit_count()
    kept = future * (sm - so)
    plays = _melds_longest_first(mover)
    if table:
        on_table = MELD_BY_MASK[table]
        plays = [m for m in plays if m.beats(on_table)]  # R7
    best = -_INF
    for m in plays:  # the plays that end the round first: shedding out, or a knock
        left = n_me - len(m.cards)
        if left <= 2:
            v = (lt3.SHED_BONUS + n_other if left == 0 else n_other - left) + kept
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
    if alpha < beta:
        for m in plays:
            rest = mover & ~m.mask
            if rest:
                v = -_solve(other, rest, m.mask, so, sm, used, round_no, future, -beta, -alpha)
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
                        if alpha >= beta:
                            break
    if alpha < beta and table:
        v = -_solve(other, mover, 0, so, sm, used, round_no, future, -beta, -alpha)  # pass: the other leads
        if v > best:
            best = v
            if v > alpha:
                alpha = v
        if alpha < beta and sm and not used:
            v = _solve(mover, other, 0, sm - 1, so, True, round_no, future, alpha, beta)  # sweep: it leads
            if v > best:
                best = v
    if len(_SOLVED) >= CACHE_LIMIT:
        _SOLVED.clear()
    if best <= a0:
        _SOLVED[key] = (lo, best)
    elif best >= b0:
        _SOLVED[key] = (best, hi)
    else:
        _SOLVED[key] = (best, best)
    return best


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
    #: a world whose two hands hold this many cards or fewer is solved to the round's end (0: never)
    solve_cards: int = 0
    #: the levels that solve their worlds' endgames, and from how many cards in both hands
    level_solve_cards: ClassVar[dict[int, int]] = {4: 10, 5: 10}

    def for_level(self, level: int) -> Evaluator:
        cards = self.level_solve_cards.get(level, 0)
        if cards == self.solve_cards:
            return self
        solving = copy.copy(self)
        solving.solve_cards = cards
        return solving

    @property
    def solves(self) -> bool:
        return self.solve_cards > 0

    def cache_entries(self) -> int:
        return len(_PLAYS) + len(_MELDS) + len(_SOLVED)

    def solve(self, game: Game, state: State, seat: int) -> Leaf | None:
        s = state
        assert isinstance(s, lt3.LessThanThreeState)
        mover = s.to_move
        cards = len(s.hands[0]) + len(s.hands[1])
        # every turn but one sweep follows or is a play, which sheds a card: the turn limit (C7) can't be met
        if mover is None or cards > self.solve_cards or \
                s.options["max_turns_per_round"] - s.turns_in_round <= 2 * cards + 1:
            return None
        other = 1 - mover
        value = solve_round(_mask(s.hands[mover]), _mask(s.hands[other]), _mask(s.table),
                            (s.sweeps[mover], s.sweeps[other]), s.sweep_used, s.round)
        if mover != seat:
            value = -value
        return Leaf(value, 1.0 if value > 0 else 0.5 if value == 0 else 0.0)

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
        future = sweep_future(s.round) * (s.sweeps[seat] - s.sweeps[other])
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
