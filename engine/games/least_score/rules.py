"""Least Score's rules as pure functions (RULES.md §5 R1, R3, R5, R6): the cards' values, the legal
groups a player may discard, and the scores of a deal. The game's flow is in
:mod:`engine.games.least_score`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations, pairwise, product

from engine.cards import Card

HAND_SIZE = 5
FALSE_DECLARE_PENALTY = 20
THRESHOLDS = (25, 50, 100)

# Card attributes by card int (standard cards only: the game has no jokers).
RANK: tuple[int, ...] = tuple(c % 13 + 1 for c in range(52))
SUIT: tuple[int, ...] = tuple(c // 13 for c in range(52))
VALUE: tuple[int, ...] = tuple(min(c % 13 + 1, 10) for c in range(52))
# Hands are sorted by this key: rank first, then suit.
RANK_ORDER: tuple[int, ...] = tuple((c % 13) * 4 + c // 13 for c in range(52))
rank_key = RANK_ORDER.__getitem__

# The worst single-deal score: a false declare holding 50 against a lowest hand of 1.
MAX_DEAL_SCORE = FALSE_DECLARE_PENALTY + 5 * 10 - 1


# ---------------------------------------------------------------------------
# Groups (R3) and hand values


def hand_total(cards: Iterable[Card]) -> int:
    """A hand's count (R1): A=1, 2-10 face value, J/Q/K 10. ``KS QH 2D AC`` totals 23 (LS7)."""
    return sum(map(VALUE.__getitem__, cards))


def _is_sequence(ranks: Sequence[int]) -> bool:
    """Consecutive distinct ranks, the ace low (A-2-3) or high (Q-K-A), never both (K-A-2)."""
    rs = sorted(ranks)
    if all(b == a + 1 for a, b in pairwise(rs)):
        return True
    if rs[0] == 1:  # try the ace above the king
        return all(b == a + 1 for a, b in pairwise([*rs[1:], 14]))
    return False


def is_legal_group(cards: Sequence[Card], sequence_same_suit: bool = False) -> bool:
    """Whether ``cards`` may be discarded together (R3).

    One card; a pair (``7S 7H``) or four of a kind (``KS KH KD KC``), never
    three (``7S 7H 7D``); a sequence of exactly 3 or 5 consecutive ranks in any
    suits (``5C 6D 7H``; ``QS KH AD`` and ``AD 2C 3S`` but not ``KH AD 2C``;
    one suit only with ``sequence_same_suit``); a flush of 5 cards of one suit
    (``2H 5H 9H JH KH``).
    """
    n = len(cards)
    if n == 1:
        return True
    ranks = [RANK[c] for c in cards]
    if n in (2, 4) and len(set(ranks)) == 1:
        return True
    if n == 5 and len({SUIT[c] for c in cards}) == 1:
        return True
    if n in (3, 5):
        if sequence_same_suit and len({SUIT[c] for c in cards}) != 1:
            return False
        return _is_sequence(ranks)
    return False


SET, SEQ = 0, 1
# ranks of a hand (sorted) -> the position tuples of its multi-card groups that hold for any suits
SHAPES: dict[tuple[int, ...], tuple[tuple[int, tuple[int, ...]], ...]] = {}


def group_shapes(ranks: tuple[int, ...]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The multi-card groups of a hand whose sorted ranks are ``ranks``, by positions in the hand.

    Kind ``SET`` (pair, four of a kind) or ``SEQ`` (sequence: needs one suit
    under ``sequence_same_suit``; positions in sequence order, so Q-K-A lists
    the ace last). Flushes depend on suits only and are found apart. Built
    once per rank pattern (at most 8,567 of them).
    """
    found = SHAPES.get(ranks)
    if found is not None:
        return found
    at: dict[int, list[int]] = {}
    for p, r in enumerate(ranks):
        at.setdefault(r, []).append(p)
    out: list[tuple[int, tuple[int, ...]]] = []
    for ps in at.values():
        for size in (2, 4):
            out += [(SET, pos) for pos in combinations(ps, size)]
    if len(at) >= 3:
        for size in (3, 5):
            for low in at:  # ranks low .. low+size-1, where 14 is the ace above the king
                if low + size > 15:
                    continue
                spots = [at.get(1 if r == 14 else r, []) for r in range(low, low + size)]
                if all(spots):
                    out += [(SEQ, pos) for pos in product(*spots)]
    result = tuple(out)
    SHAPES[ranks] = result
    return result


def legal_groups(hand: Sequence[Card], sequence_same_suit: bool = False) -> list[tuple[Card, ...]]:
    """Every distinct legal discard of ``hand`` (R3), each a tuple in rank order: singles first.

    ``hand`` need not be sorted. Identical cards (two decks) give each group once.
    """
    cards = sorted(hand, key=rank_key)
    return groups_of_sorted(cards, sequence_same_suit)


def groups_of_sorted(cards: list[Card], same_suit: bool) -> list[tuple[Card, ...]]:
    twins = len(set(cards)) != len(cards)
    if twins:
        out: list[tuple[Card, ...]] = list(dict.fromkeys((c,) for c in cards))
    else:
        out = [(c,) for c in cards]
    shapes = group_shapes(tuple([RANK[c] for c in cards]))
    for kind, pos in shapes:
        group = tuple([cards[p] for p in pos])
        if kind == SEQ and same_suit and len({SUIT[c] for c in group}) != 1:
            continue
        out.append(group)
    if twins:
        out = list(dict.fromkeys(out))
    if len(cards) == 5 and len({SUIT[c] for c in cards}) == 1:
        flush = tuple(cards)
        if flush not in out:  # a straight flush is already listed as a sequence
            out.append(flush)
    return out


# ---------------------------------------------------------------------------
# Deal scoring (R5) as pure functions


def declare_scores(hand_totals: Sequence[int | None], declarer: int, tie_is_false_declare: bool = False) -> list[int]:
    """The scores of a deal that ``declarer`` ended (R5); ``None`` marks a seat knocked out (scores 0).

    >>> declare_scores([10, 16, 17], 0)   # LS1
    [0, 6, 7]
    >>> declare_scores([10, 8, 15], 0)    # LS2
    [22, 0, 0]
    """
    mine = hand_totals[declarer]
    assert mine is not None
    others = [t for i, t in enumerate(hand_totals) if t is not None and i != declarer]
    lowest_other = min(others)
    right = mine < lowest_other if tie_is_false_declare else mine <= lowest_other
    if right:
        return [0 if t is None or i == declarer else t - mine for i, t in enumerate(hand_totals)]
    lowest = min(lowest_other, mine)
    return [FALSE_DECLARE_PENALTY + mine - lowest if i == declarer else 0 for i in range(len(hand_totals))]


def standing_scores(hand_totals: Sequence[int | None]) -> list[int]:
    """The scores of a deal stopped by the loop guard (C7), as if the lowest hand had declared:
    the lowest total scores 0, every other seat still in its total minus the lowest."""
    lowest = min(t for t in hand_totals if t is not None)
    return [0 if t is None else t - lowest for t in hand_totals]


def winners_after_deal(totals: Sequence[int], in_seats: Sequence[int], threshold: int) -> list[int] | None:
    """The winners once a deal is scored (R6), or ``None`` while two or more of ``in_seats`` stay in.

    A player is out when its total is **over** the threshold (at 50 of 50 it
    stays in, LS8). The last player in wins; if every player who was in crosses
    at once, the lowest total wins and equal totals share. (With R5's scoring
    that cannot happen in play — a right declarer, or the lowest hand at the
    loop guard, scores 0, and a false declare scores only the declarer — but
    the rule is kept as written.)
    """
    remaining = [i for i in in_seats if totals[i] <= threshold]
    if len(remaining) >= 2:
        return None
    if remaining:
        return remaining
    best = min(totals[i] for i in in_seats)
    return [i for i in in_seats if totals[i] == best]
