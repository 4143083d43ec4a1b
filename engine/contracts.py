"""Contract rummy meld math (RULES.md §4 R3, R6, R7): melds with wild 2s and jokers, laying off, and the
search for the ways a hand meets a contract.

A meld on the table is a :data:`TableMeld` ``(suit, low, cards)``: a **set** has ``suit == -1`` and
``low`` its rank (1..13); a **run** has its suit (0..3), ``low`` the position of its lowest card (1..11;
position 14 is an ace above the king) and ``cards`` in position order. What a wild stands for is
therefore implied by where it sits: in a run, the card at index ``i`` stands for the card at position
``low + i``; in a set, for the set's rank.

Naturalness follows from the position (R3): a card is natural in a run when it *is* the card of its
position (so ``2S`` at position 2 of a spade run is natural), and in a set when it has the set's rank
(so 2s are natural in a set of 2s). Jokers are always wild. Every other 2 is a wild.

>>> read_run(parse_cards("5H 6H 2C 8H"))   # CR4: 2C stands for 7H
(2, 5, (30, 31, 1, 33))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from engine.cards import CARD_NAMES, JOKER, Card, parse_cards
from engine.errors import IllegalMoveError

__all__ = [
    "WILD_LIMITS",
    "GoDown",
    "TableMeld",
    "card_positions",
    "exact_go_downs",
    "is_wild",
    "lay_off_options",
    "limit_ok",
    "meld_counts",
    "meld_problem",
    "minimal_go_downs",
    "parse_cards",
    "position_card",
    "read_run",
    "read_set",
    "stands_for",
]

TableMeld = tuple[int, int, tuple[Card, ...]]
GoDown = tuple[TableMeld, ...]

WILD_LIMITS = ("at_least_one_natural", "not_more_than_naturals", "fewer_than_naturals")
MAX_RUN = 13  # positions 1..14, never both aces (no wrapping, never both ends)

# Searches stop after this many distinct results or this many search nodes (see minimal_go_downs).
NODE_BUDGET = 20_000


def is_wild(card: Card) -> bool:
    """A joker or any 2: a card that *may* stand for another (a 2 in its own place is still natural)."""
    return card == JOKER or card % 13 == 1


def position_card(suit: int, pos: int) -> Card:
    """The card at run position ``pos`` (1 = ace low … 13 = king, 14 = ace high) of ``suit``.

    >>> CARD_NAMES[position_card(3, 14)], CARD_NAMES[position_card(3, 2)]
    ('AS', '2S')
    """
    return suit * 13 + (0 if pos == 14 else pos - 1)


def card_positions(card: Card) -> tuple[int, ...]:
    """The run positions a natural card can take: an ace is 1 or 14."""
    r = card % 13 + 1
    return (1, 14) if r == 1 else (r,)


def limit_ok(naturals: int, wilds: int, limit: str) -> bool:
    """R3 and the ``wild_limit`` option: every meld holds at least one natural card, and optionally
    no more wilds than naturals, or fewer wilds than naturals.

    >>> limit_ok(1, 2, "at_least_one_natural"), limit_ok(1, 2, "not_more_than_naturals")
    (True, False)
    """
    if naturals < 1:
        return False
    if limit == "not_more_than_naturals":
        return wilds <= naturals
    if limit == "fewer_than_naturals":
        return wilds < naturals
    return True


def _min_naturals(size: int, limit: str) -> int:
    for n in range(1, size + 1):
        if limit_ok(n, size - n, limit):
            return n
    return size + 1


def meld_counts(meld: TableMeld) -> tuple[int, int]:
    """``(naturals, wilds)`` of a table meld."""
    suit, low, cards = meld
    if suit < 0:
        nat = sum(1 for c in cards if c != JOKER and c % 13 + 1 == low)
    else:
        nat = sum(1 for i, c in enumerate(cards) if c == position_card(suit, low + i))
    return nat, len(cards) - nat


def stands_for(meld: TableMeld) -> tuple[Card, ...]:
    """What each card of a run stands for (a set's cards stand for its rank: use ``meld[1]``)."""
    suit, low, cards = meld
    if suit < 0:
        raise ValueError("a set's wilds stand for its rank, not for a card")
    return tuple(position_card(suit, low + i) for i in range(len(cards)))


def _names(cards: Iterable[Card]) -> str:
    return " ".join(CARD_NAMES[c] for c in cards)


# ---------------------------------------------------------------------------
# Reading melds a client sends


def read_set(cards: Sequence[Card], limit: str = "at_least_one_natural",
             stand_ins: Sequence[Card] | None = None) -> int:
    """The rank of the set ``cards`` (R3), or IllegalMoveError naming what is wrong.

    >>> read_set(parse_cards("QC QD JK"))
    12
    """
    if len(cards) < 3:
        raise IllegalMoveError(f"{_names(cards)}: too few cards for a set (3 or more of one rank, R3)")
    ranks = {c % 13 + 1 for c in cards if c != JOKER and c % 13 != 1}
    if len(ranks) > 1:
        raise IllegalMoveError(f"{_names(cards)} is not a set: a set is cards of one rank (R3)")
    if ranks:
        rank = ranks.pop()
    elif any(c != JOKER for c in cards):
        rank = 2  # only 2s and jokers: a set of 2s, where the 2s are natural
    else:
        raise IllegalMoveError(f"{_names(cards)} has no natural card: every meld needs one (R3)")
    if stand_ins is not None:
        if len(stand_ins) != len(cards):
            raise IllegalMoveError("stands_for must give one card for each card of the meld")
        for c, sf in zip(cards, stand_ins, strict=True):
            if sf % 13 + 1 != rank or sf == JOKER or (c != sf and not is_wild(c)):
                raise IllegalMoveError(
                    f"in a set of rank {CARD_NAMES[rank - 1][0]} every card stands for that rank; "
                    f"{CARD_NAMES[c]} cannot stand for {CARD_NAMES[sf]} (R3)")
    nat, wild = meld_counts((-1, rank, tuple(cards)))
    if not limit_ok(nat, wild, limit):
        raise IllegalMoveError(f"{_names(cards)}: {nat} natural and {wild} wild cards break the wild "
                               f"limit ({limit}, R3)")
    return rank


def _run_fills(cards: Sequence[Card], suit: int, low: int) -> tuple[Card, ...] | None:
    """The canonical placement of ``cards`` as the run of ``suit`` from ``low``: naturals in their places,
    a 2 of the suit in place 2 when free, the other wilds in the gaps in card order; None if impossible."""
    n = len(cards)
    slots: list[Card | None] = [None] * n
    wilds: list[Card] = []
    for c in sorted(cards):
        placed = False
        if c != JOKER and c // 13 == suit:
            for pos in card_positions(c):
                i = pos - low
                if 0 <= i < n and slots[i] is None:
                    slots[i] = c
                    placed = True
                    break
        if not placed:
            if not is_wild(c):
                return None
            wilds.append(c)
    wilds.sort(key=lambda c: (c == JOKER, c))  # 2s first, then jokers, into the gaps low to high
    it = iter(wilds)
    out = [c if c is not None else next(it) for c in slots]
    return tuple(out)


def read_run(cards: Sequence[Card], limit: str = "at_least_one_natural",
             stand_ins: Sequence[Card] | None = None) -> TableMeld:
    """The run ``(suit, low, cards in position order)`` that ``cards`` form (R3), or IllegalMoveError.

    ``stand_ins`` (parallel to ``cards``) says what each card stands for; without it the placement must
    be unambiguous (no wild that could go to either end). Thirteen cards standing for A-K or for 2-A are
    the same cards: they are read ace low.

    >>> read_run(parse_cards("QS KS AS 2S"))[:2]   # CR4: 2S wild as JS, ace high
    (3, 11)
    """
    n = len(cards)
    if n < 4:
        raise IllegalMoveError(f"{_names(cards)}: too few cards for a run (4 or more in sequence, R3)")
    if n > MAX_RUN:
        raise IllegalMoveError(f"{_names(cards)}: a run has at most 13 cards (an ace is never at both ends)")
    if stand_ins is not None:
        meld = _run_from_stand_ins(cards, stand_ins)
    else:
        suits = {c // 13 for c in cards if c != JOKER and c % 13 != 1}
        if len(suits) > 1:
            raise IllegalMoveError(f"{_names(cards)} is not a run: a run is one suit (R3)")
        if not suits:
            suits = {c // 13 for c in cards if c != JOKER}
        found: list[TableMeld] = []
        for suit in sorted(suits):
            for low in range(1, 16 - n):
                fill = _run_fills(cards, suit, low)
                if fill is not None:
                    found.append((suit, low, fill))
        # a placement where a wild 2 could sit in its own place is the same run: keep the best-natural one
        if not found:
            hint = ""
            ranks = {c % 13 + 1 for c in cards if c != JOKER}
            if 13 in ranks and 1 in ranks and ranks & {2, 3}:
                hint = " (runs never wrap: K-A-2 is not a sequence)"
            raise IllegalMoveError(f"{_names(cards)} is not a run: not consecutive cards of one suit{hint} (R3)")
        if len(found) > 1:
            options = ", ".join(f"{CARD_NAMES[position_card(s, lo)]}-{CARD_NAMES[position_card(s, lo + n - 1)]}"
                                for s, lo, _ in found)
            raise IllegalMoveError(f"{_names(cards)} could be the run {options}: give stands_for to say "
                                   "which card each wild stands for")
        meld = found[0]
    nat, wild = meld_counts(meld)
    if not limit_ok(nat, wild, limit):
        raise IllegalMoveError(f"{_names(cards)}: {nat} natural and {wild} wild cards break the wild "
                               f"limit ({limit}, R3)")
    return meld


def _run_from_stand_ins(cards: Sequence[Card], stand_ins: Sequence[Card]) -> TableMeld:
    if len(stand_ins) != len(cards):
        raise IllegalMoveError("stands_for must give one card for each card of the meld")
    if JOKER in stand_ins:
        raise IllegalMoveError("a card in a run stands for a card of the run's suit, never a joker")
    suits = {sf // 13 for sf in stand_ins}
    if len(suits) != 1:
        raise IllegalMoveError(f"stands_for {_names(stand_ins)} is not a run: a run is one suit (R3)")
    suit = suits.pop()
    for c, sf in zip(cards, stand_ins, strict=True):
        if c != sf and not is_wild(c):
            raise IllegalMoveError(f"{CARD_NAMES[c]} is not wild and cannot stand for {CARD_NAMES[sf]} "
                                   "(only 2s and jokers are wild, R1)")
    n = len(cards)
    for aces_high in (False, True):
        pos = [14 if aces_high and sf % 13 == 0 else sf % 13 + 1 for sf in stand_ins]
        lo = min(pos)
        if sorted(pos) == list(range(lo, lo + n)):
            order = sorted(range(n), key=pos.__getitem__)
            return suit, lo, tuple(cards[i] for i in order)
    hint = ""
    ranks = {sf % 13 + 1 for sf in stand_ins}
    if 13 in ranks and 1 in ranks and 2 in ranks:
        hint = " (runs never wrap: K-A-2 is not a sequence)"
    raise IllegalMoveError(f"{_names(cards)} standing for {_names(stand_ins)} is not a run: "
                           f"the cards must be consecutive{hint} (R3)")


def meld_problem(meld: TableMeld, limit: str) -> str | None:
    """What makes a stored meld illegal, or None (for state checks)."""
    suit, low, cards = meld
    if suit < 0:
        if len(cards) < 3 or not 1 <= low <= 13:
            return "a set has 3 or more cards"
        for c in cards:
            if c != JOKER and c % 13 + 1 != low and c % 13 != 1:
                return f"{CARD_NAMES[c]} is in a set of another rank"
    else:
        if not 0 <= suit <= 3 or len(cards) < 4 or low < 1 or low + len(cards) - 1 > 14 or len(cards) > MAX_RUN:
            return "a run has 4-13 cards within A..K or 2..A"
        for i, c in enumerate(cards):
            if c != position_card(suit, low + i) and not is_wild(c):
                return f"{CARD_NAMES[c]} is out of place in a run"
    nat, wild = meld_counts(meld)
    if not limit_ok(nat, wild, limit):
        return "a meld breaks the wild limit"
    return None


# ---------------------------------------------------------------------------
# Laying off (R7)


def lay_off_options(meld: TableMeld, card: Card, limit: str) -> list[tuple[str, str, TableMeld]]:
    """Every legal way to lay ``card`` off on ``meld``: ``(how, end, new_meld)`` where ``how`` is
    ``"add"`` (a set grows; ``end`` is ``""``), ``"end"`` (the card extends the run at ``end``) or
    ``"replace"`` (the card replaces the wild standing for it and the wild moves to ``end``).

    >>> run = read_run(parse_cards("5H 6H JK 8H"), stand_ins=parse_cards("5H 6H 7H 8H"))
    >>> [(how, end) for how, end, _ in lay_off_options(run, parse_cards("7H")[0], "at_least_one_natural")]
    [('replace', 'low'), ('replace', 'high')]
    """
    suit, low, cards = meld
    out: list[tuple[str, str, TableMeld]] = []
    if suit < 0:
        natural = card != JOKER and card % 13 + 1 == low
        if natural or is_wild(card):
            nat, wild = meld_counts(meld)
            if natural or limit_ok(nat, wild + 1, limit):
                out.append(("add", "", (suit, low, (*cards, card))))
        return out
    n = len(cards)
    high = low + n - 1
    can_low = low > 1 and n < MAX_RUN
    can_high = high < 14 and n < MAX_RUN
    if card != JOKER and card // 13 == suit:
        for pos in card_positions(card):
            if low <= pos <= high:
                i = pos - low
                old = cards[i]
                if old != card and old != position_card(suit, pos):  # a wild stands there
                    body = (*cards[:i], card, *cards[i + 1:])
                    if can_low:
                        out.append(("replace", "low", (suit, low - 1, (old, *body))))
                    if can_high:
                        out.append(("replace", "high", (suit, low, (*body, old))))
            elif pos == low - 1 and can_low:
                out.append(("end", "low", (suit, low - 1, (card, *cards))))
            elif pos == high + 1 and can_high:
                out.append(("end", "high", (suit, low, (*cards, card))))
    if is_wild(card):
        nat, wild = meld_counts(meld)
        if limit_ok(nat, wild + 1, limit):
            if can_low and card != position_card(suit, low - 1):
                out.append(("end", "low", (suit, low - 1, (card, *cards))))
            if can_high and card != position_card(suit, high + 1):
                out.append(("end", "high", (suit, low, (*cards, card))))
    return out


def lay_off_moves(meld: TableMeld, counts: Sequence[int], limit: str) -> list[tuple[Card, str, str]]:
    """The lay-offs of a hand (card ``counts``) on ``meld``: ``(card, how, end)`` as in
    :func:`lay_off_options`, the same options found without trying every card (for listing moves)."""
    return [w for w in meld_wants(meld, limit) if counts[w[0]]]


@lru_cache(maxsize=1 << 14)
def meld_wants(meld: TableMeld, limit: str) -> tuple[tuple[Card, str, str], ...]:
    """Every card that could be laid off on ``meld``, with how and where: ``(card, how, end)``."""
    return tuple(_meld_wants(meld, _ALL_CARDS, limit))


_ALL_CARDS = (1,) * 53


def _meld_wants(meld: TableMeld, counts: Sequence[int], limit: str) -> list[tuple[Card, str, str]]:
    suit, low, cards = meld
    out: list[tuple[Card, str, str]] = []
    if suit < 0:
        nat = wild = 0
        for c in cards:
            if c != JOKER and c % 13 + 1 == low:
                nat += 1
            else:
                wild += 1
        naturals = (1, 14, 27, 40) if low == 2 else (low - 1, low + 12, low + 25, low + 38)
        for c in naturals:
            if counts[c]:
                out.append((c, "add", ""))
        if limit_ok(nat, wild + 1, limit):
            for c in _WILD_CARDS:
                if counts[c] and (low != 2 or c == JOKER):
                    out.append((c, "add", ""))
        return out
    row = POS_CARD[suit]
    n = len(cards)
    high = low + n - 1
    can_low = low > 1 and n < MAX_RUN
    can_high = high < 14 and n < MAX_RUN
    nat = 0
    for i, c in enumerate(cards):
        pc = row[low + i]
        if c == pc:
            nat += 1
        elif counts[pc]:
            if can_low:
                out.append((pc, "replace", "low"))
            if can_high:
                out.append((pc, "replace", "high"))
    low_card = row[low - 1] if can_low else -1
    high_card = row[high + 1] if can_high else -1
    if can_low and counts[low_card]:
        out.append((low_card, "end", "low"))
    if can_high and counts[high_card]:
        out.append((high_card, "end", "high"))
    if limit_ok(nat, n - nat + 1, limit):
        for c in _WILD_CARDS:
            if counts[c]:
                if can_low and c != low_card:
                    out.append((c, "end", "low"))
                if can_high and c != high_card:
                    out.append((c, "end", "high"))
    return out


_WILD_CARDS = (1, 14, 27, 40, JOKER)


# ---------------------------------------------------------------------------
# Searching a hand for the ways to meet a contract


def _counts(hand: Iterable[Card]) -> list[int]:
    counts = [0] * 53
    for c in hand:
        counts[c] += 1
    return counts


_WILD_ORDER = (JOKER, 1, 14, 27, 40)  # the canonical order in which listed go-downs use wild cards


def _take_wilds(pool: list[int], n: int, jokers_only: bool = False) -> list[Card] | None:
    """Take ``n`` wild cards from ``pool`` (counts in :data:`_WILD_ORDER`): jokers first, then 2s by suit."""
    out: list[Card] = []
    for i, c in enumerate(_WILD_ORDER):
        if len(out) == n or (jokers_only and i):
            break
        k = min(pool[i], n - len(out))
        if k:
            pool[i] -= k
            out.extend([c] * k)
    return out if len(out) == n else None


POS_CARD: tuple[tuple[Card, ...], ...] = tuple(
    tuple(-1 if p == 0 else position_card(s, p) for p in range(15)) for s in range(4))


def _cached(fn: Any) -> Any:
    return lru_cache(maxsize=1 << 16)(fn)


@_cached
def _run_windows(mask: int, run_size: int, run_min: int) -> tuple[tuple[int, int], ...]:
    """``(wilds needed, low)`` of the windows of ``run_size`` positions over a suit whose natural cards
    are the bits of ``mask`` (bit p = position p), at least ``run_min`` natural, one per distinct set of
    natural cards, fewest wilds first."""
    window = (1 << run_size) - 1
    seen: set[int] = set()
    out = []
    for low in range(1, 16 - run_size):
        m = mask & (window << low)
        k = m.bit_count()
        if k < run_min:
            continue
        key = m & ~(1 << 14) | (2 if m >> 14 else 0)  # the ace high and low is one card
        if key in seen:
            continue
        seen.add(key)
        out.append((run_size - k, low))
    out.sort()
    return tuple(out)


def minimal_go_downs(hand: Sequence[Card], sets: int, runs: int, set_size: int, run_size: int,
                     limit: str, cap: int) -> list[GoDown]:
    """Distinct ways to meet a contract of ``sets`` sets of ``set_size`` and ``runs`` runs of ``run_size``
    with melds of exactly those sizes, at most ``cap`` of them (fewest wilds first, roughly).

    *Distinct* means: as a multiset of melds, each meld the multiset of its cards; where the wilds of a
    run sit (which gap, which end) is one canonical placement, and which wild cards are used is
    canonical too (jokers first, then 2s by suit). Only ways where no wild stands in a place that a
    natural card left in the hand could take are listed.

    The search: candidate runs (one window per distinct set of naturals, fewest wilds first) and sets
    (by rank) are combined depth first, runs first, each run taking every natural it covers and each set
    every natural of its rank — except that a set may leave naturals to a later set of its rank or to a
    run, and (when nothing else works) a run may leave single naturals to the next run; the leaf rejects
    a way where a wild stands for a natural still in hand. If runs-first finds nothing because a set
    lacked naturals, sets go first. At most ``cap`` results and :data:`NODE_BUDGET` search nodes.
    A client may still send any other legal arrangement (longer melds, other wilds).
    """
    counts = [0] * 53
    masks = [0, 0, 0, 0]
    by_rank = [0] * 14
    for c in hand:
        counts[c] += 1
        if c != JOKER:
            r = c % 13
            by_rank[r + 1] += 1
            masks[c // 13] |= (1 << 1 | 1 << 14) if r == 0 else 1 << (r + 1)
    jokers = counts[JOKER]
    wild_total = jokers + by_rank[2]
    set_cands: list[tuple[int, int]] = []  # (wilds needed, rank)
    set_min = _min_naturals(set_size, limit)
    if sets:
        for rank in range(1, 14):
            nat = by_rank[rank]
            if nat < set_min:
                continue
            k = nat if nat < set_size else set_size
            if set_size - k <= (jokers if rank == 2 else wild_total):
                set_cands.append((set_size - k, rank))
        if not set_cands:
            return []
        set_cands.sort()
    run_cands: list[tuple[int, int, int]] = []  # (wilds needed, suit, low)
    run_min = _min_naturals(run_size, limit)
    if runs:
        for suit in range(4):
            if masks[suit]:
                for need, low in _run_windows(masks[suit], run_size, run_min):
                    if need > wild_total:
                        break
                    run_cands.append((need, suit, low))
        if not run_cands:
            return []
        run_cands.sort()
    # a lower bound on the wilds needed: the cheapest candidates, repeats allowed
    least = (set_cands[0][0] * sets if sets else 0) + (run_cands[0][0] * runs if runs else 0)
    if least > wild_total:
        return []
    found: dict[GoDown, None] = {}
    flags = [NODE_BUDGET, 0, 0]  # node budget left; a set, a run lacked natural cards others took
    search = _MinimalSearch(counts, masks, by_rank, set_cands, run_cands, set_size, run_size, set_min, run_min,
                            cap, found, flags)
    search.run(["run"] * runs + ["set"] * sets)
    if not found and sets and runs and flags[1]:
        search.run(["set"] * sets + ["run"] * runs)
    if not found and runs > 1 and flags[2]:
        search.yielding = True
        search.run(["run"] * runs + ["set"] * sets)
    return list(found)


class _MinimalSearch:
    """The depth-first search of :func:`minimal_go_downs` over its candidate melds, keeping the card
    counts, the per-suit masks of present cards and the per-rank counts up to date as melds take cards."""

    def __init__(self, counts: list[int], masks: list[int], by_rank: list[int],
                 set_cands: list[tuple[int, int]], run_cands: list[tuple[int, int, int]], set_size: int,
                 run_size: int, set_min: int, run_min: int, cap: int, found: dict[GoDown, None],
                 flags: list[int]) -> None:
        self.counts, self.masks, self.by_rank = counts, masks, by_rank
        self.set_cands, self.run_cands = set_cands, run_cands
        self.set_size, self.run_size, self.set_min, self.run_min = set_size, run_size, set_min, run_min
        self.cap, self.found, self.flags = cap, found, flags
        self.window = (1 << run_size) - 1
        self.order: list[str] = []
        self.reserve: list[int] = []
        self.yielding = False
        self.chosen: list[tuple[int, int, list[Card], int, bool]] = []

    def run(self, order: list[str]) -> None:
        self.order = order
        # the fewest wilds the melds after each depth need at least (to stop early)
        cheapest = {"run": self.run_cands[0][0] if self.run_cands else 0,
                    "set": self.set_cands[0][0] if self.set_cands else 0}
        self.reserve = [sum(cheapest[k] for k in order[d + 1:]) for d in range(len(order))]
        self._step(0, 0, 0, 0)

    def _step(self, depth: int, start: int, wilds_used: int, joker_slots: int) -> None:
        order = self.order
        last = depth + 1 == len(order)
        flags = self.flags
        flags[0] -= 1
        kind = order[depth]
        first = start if depth > 0 and order[depth - 1] == kind else 0
        counts, masks, by_rank, chosen = self.counts, self.masks, self.by_rank, self.chosen
        pool = counts[JOKER] + by_rank[2] - self.reserve[depth]
        found, cap = self.found, self.cap
        if kind == "run":
            run_size, run_min, window = self.run_size, self.run_min, self.window
            cands = self.run_cands
            for idx in range(first, len(cands)):
                need, suit, low = cands[idx]
                if wilds_used + need > pool:
                    break  # candidates are sorted by the wilds they need at least
                nat = (masks[suit] & (window << low)).bit_count()
                if nat < run_min or wilds_used + run_size - nat > pool:
                    if run_size - need > nat:
                        flags[2] = 1  # an earlier meld took naturals this run needed
                    continue  # (an ace counts once: it cannot be at both ends of one window)
                row = POS_CARD[suit]
                slots = [row[p] if counts[row[p]] else -1 for p in range(low, low + run_size)]
                for c in slots:
                    if c >= 0:
                        counts[c] -= 1
                        by_rank[_RANK_OF[c]] -= 1
                        if not counts[c]:
                            masks[suit] &= ~_BIT_OF[c]
                variants: list[tuple[int, ...]] = [()]
                if self.yielding and not last and order[depth + 1] == "run":
                    # leave some single naturals to the next run (two runs of 5-9S from one 9S: 5-8 and
                    # W-9-T-J would miss; the leaf checks each is used by a later run)
                    single = [i for i, c in enumerate(slots) if c >= 0 and not counts[c]]
                    variants += [tuple(i for b, i in enumerate(single) if mask >> b & 1)
                                 for mask in range(1, 1 << len(single))
                                 if nat - (mask.bit_count()) >= run_min]
                for yielded in variants:
                    run_slots = slots
                    if yielded:
                        run_slots = slots[:]
                        for i in yielded:
                            c = slots[i]
                            run_slots[i] = -1
                            counts[c] += 1
                            by_rank[_RANK_OF[c]] += 1
                            masks[suit] |= _BIT_OF[c]
                    w = run_size - nat + len(yielded)
                    # natural 2s taken by the run leave the wild pool
                    if wilds_used + w <= counts[JOKER] + by_rank[2] - self.reserve[depth]:
                        chosen.append((suit, low, run_slots, w, False))
                        if last:
                            _finish_minimal(counts, chosen, found)
                        else:
                            self._step(depth + 1, idx, wilds_used + w, joker_slots)
                        chosen.pop()
                    for i in yielded:
                        c = slots[i]
                        counts[c] -= 1
                        by_rank[_RANK_OF[c]] -= 1
                        if not counts[c]:
                            masks[suit] &= ~_BIT_OF[c]
                for c in slots:
                    if c >= 0:
                        counts[c] += 1
                        by_rank[_RANK_OF[c]] += 1
                        masks[suit] |= _BIT_OF[c]
                if len(found) >= cap or flags[0] <= 0:
                    return
        else:
            set_size, set_min = self.set_size, self.set_min
            cands2 = self.set_cands
            for idx in range(first, len(cands2)):
                need, rank = cands2[idx]
                if wilds_used + need > pool:
                    break
                have = by_rank[rank]
                top = have if have < set_size else set_size
                if top < set_min:
                    flags[1] = 1
                    continue
                # a set takes every natural it can, unless a later meld may take the rest (two sets of 8s
                # from four 8s and two wilds: 2 + 2, not 3 + 1); the leaf checks no natural was passed over
                lowest = top
                if not last and ((have >= 2 * set_min and order[depth + 1] == "set") or "run" in order[depth + 1:]):
                    lowest = set_min
                for k in range(top, lowest - 1, -1):
                    w = set_size - k
                    if rank == 2:
                        if joker_slots + w > counts[JOKER] or wilds_used + w > pool - k:
                            continue
                    elif wilds_used + w > pool:
                        continue
                    # take naturals from the suits with the most copies first (keeps single cards for runs)
                    taken: list[Card] = []
                    for c in sorted(_RANK_CARDS[rank], key=counts.__getitem__, reverse=True):
                        while counts[c] and len(taken) < k:
                            counts[c] -= 1
                            if not counts[c]:
                                masks[c // 13] &= ~_BIT_OF[c]
                            taken.append(c)
                    by_rank[rank] -= k
                    taken.sort()
                    chosen.append((-1, rank, taken, w, rank == 2))
                    if last:
                        _finish_minimal(counts, chosen, found)
                    else:
                        self._step(depth + 1, idx, wilds_used + w, joker_slots + (w if rank == 2 else 0))
                    chosen.pop()
                    by_rank[rank] += k
                    for c in taken:
                        counts[c] += 1
                        masks[c // 13] |= _BIT_OF[c]
                    if len(found) >= cap or flags[0] <= 0:
                        return


_RANK_OF: tuple[int, ...] = tuple(c % 13 + 1 for c in range(52))
_BIT_OF: tuple[int, ...] = tuple((1 << 1 | 1 << 14) if c % 13 == 0 else 1 << (c % 13 + 1) for c in range(52))
_RANK_CARDS: tuple[tuple[Card, ...], ...] = ((), *tuple((r - 1, r + 12, r + 25, r + 38) for r in range(1, 14)))


def _finish_minimal(counts: list[int], chosen: list[tuple[int, int, list[Card], int, bool]],
                    found: dict[GoDown, None]) -> None:
    wilds_needed = 0
    jokers_only = False
    for suit, low, cards, w, only in chosen:
        if not w:
            continue
        wilds_needed += w
        jokers_only = jokers_only or only
        if suit < 0:
            if low != 2 and (counts[low - 1] or counts[low + 12] or counts[low + 25] or counts[low + 38]):
                return  # a wild where a natural card left in the hand could have gone
        else:
            row = POS_CARD[suit]
            if any(c < 0 and counts[row[low + i]] for i, c in enumerate(cards)):
                return
    if not wilds_needed:
        found.setdefault(tuple(sorted((suit, low, tuple(cards)) for suit, low, cards, _, _ in chosen)), None)
        return
    pool = [counts[c] for c in _WILD_ORDER]
    melds: list[TableMeld] = []
    # sets of 2s need jokers for their wild places (a 2 there would be natural): serve them first
    for suit, low, cards, w, only in sorted(chosen, key=_jokers_first) if jokers_only else chosen:
        if w == 0:
            melds.append((suit, low, tuple(cards)))
            continue
        wilds = _take_wilds(pool, w, only)
        if wilds is None:
            return
        if suit < 0:
            melds.append((suit, low, (*cards, *wilds)))
        else:
            it = iter(wilds)
            melds.append((suit, low, tuple(c if c >= 0 else next(it) for c in cards)))
    melds.sort()
    found.setdefault(tuple(melds), None)


def _jokers_first(m: tuple[int, int, list[Card], int, bool]) -> bool:
    return not m[4]


def exact_go_downs(hand: Sequence[Card], limit: str, cap: int, keep_out: Card | None = None) -> list[GoDown]:
    """Distinct ways to lay down all of ``hand`` but one card as one set (3+) and two runs (4+): hand 7
    (R2, R8). ``keep_out``: a card that may not be the one left (it could not be discarded, C3).

    Distinct as in :func:`minimal_go_downs`, and canonical in the same way: a run's extra wilds extend it
    upwards first, two runs of one suit split their single cards at a rank (the lower cards in one run)
    and take one of each duplicate, and 2s are wild except in a set of 2s or in their own place in a run
    that already spans it. A client may still send any other legal arrangement.
    """
    # quick reject: a suit whose natural cards are of 3+ ranks cannot be emptied by the set (one rank) and
    # the card left over (one card), so it needs a run: more than two such suits, no way
    ranks_in_suit = [0, 0, 0, 0]
    per_suit = [0, 0, 0, 0]  # non-2 natural cards per suit; a set of rank r takes the r's, runs the rest
    counts = [0] * 53
    for c in hand:
        counts[c] += 1
        if c != JOKER and c % 13 != 1:
            ranks_in_suit[c // 13] |= 1 << (c % 13)
            per_suit[c // 13] += 1
    if sum(1 for m in ranks_in_suit if m.bit_count() >= 3) > 2:
        return []
    found: dict[GoDown, None] = {}
    budget = [NODE_BUDGET]
    distinct = sorted(set(hand))
    present = ranks_in_suit[0] | ranks_in_suit[1] | ranks_in_suit[2] | ranks_in_suit[3]
    if counts[1] or counts[14] or counts[27] or counts[40]:
        present |= 2
    for rank in range(1, 14):
        if not present >> (rank - 1) & 1:
            continue
        rank_cards = _RANK_CARDS[rank]
        foreign = per_suit if rank == 2 else [per_suit[su] - counts[rank_cards[su]] for su in range(4)]
        busy = (foreign[0] > 0) + (foreign[1] > 0) + (foreign[2] > 0) + (foreign[3] > 0)
        if busy > 3:
            continue
        if busy == 3:
            # the card left over must be the only card of a third suit
            lefts = [c for c in distinct if c != JOKER and c % 13 != 1 and c % 13 + 1 != rank
                     and foreign[c // 13] == 1]
        else:
            lefts = distinct
        for left in lefts:
            if left == keep_out or len(found) >= cap or budget[0] <= 0:
                continue
            counts[left] -= 1
            if counts[rank_cards[0]] or counts[rank_cards[1]] or counts[rank_cards[2]] or counts[rank_cards[3]]:
                _exact_for_rank(counts, rank, limit, cap, found, budget)
            counts[left] += 1
    return list(found)


def _exact_for_rank(counts: list[int], rank: int, limit: str, cap: int, found: dict[GoDown, None],
                    budget: list[int]) -> None:
    budget[0] -= 1
    suit_cards = [[c for c in range(s * 13, s * 13 + 13) if c % 13 != 1 and counts[c]] for s in range(4)]
    rank_cards = [c for c in ((1, 14, 27, 40) if rank == 2 else (rank - 1, rank + 12, rank + 25, rank + 38))
                  if counts[c]]
    # how many copies of each rank card go to the runs instead of the set (0..2 each)
    choices: list[list[tuple[Card, int]]] = [[]]
    for c in rank_cards:
        top = min(counts[c], 2)
        choices = [[*ch, (c, k)] for ch in choices for k in range(top + 1)]
    for split in choices:
        to_runs = {c: k for c, k in split if k}
        set_nat = [c for c, k in split for _ in range(counts[c] - k)]
        if not set_nat:
            continue
        run_cards: dict[int, list[Card]] = {}
        for s in range(4):
            cs: list[Card] = []
            for c in suit_cards[s]:
                k = to_runs.get(c, 0) if c % 13 + 1 == rank else counts[c]
                cs.extend([c] * k)
            if rank == 2 and to_runs.get(s * 13 + 1):
                cs.append(s * 13 + 1)  # a 2 sent to the runs: natural in place 2 only
            if cs:
                run_cards[s] = cs
        if len(run_cards) > 2 or not run_cards:
            continue
        for r1, r2 in _run_pairs(run_cards):
            _place_exact(r1, r2, rank, set_nat, counts, limit, found)
            if len(found) >= cap:
                return


def _run_pairs(run_cards: dict[int, list[Card]]) -> list[tuple[tuple[int, list[int]], tuple[int, list[int]]]]:
    """Ways to split the run cards into two runs: ``(suit, sorted positions)`` each."""
    out = []
    suits = sorted(run_cards)
    if len(suits) == 2:
        a, b = run_cards[suits[0]], run_cards[suits[1]]
        for pa in _position_sets(a):
            for pb in _position_sets(b):
                out.append(((suits[0], pa), (suits[1], pb)))
        return out
    s = suits[0]
    cards = sorted(run_cards[s])
    dup = sorted({c for c in cards if cards.count(c) == 2})
    if any(cards.count(c) > 2 for c in cards):
        return []
    singles = [c for c in sorted(set(cards)) if c not in dup]
    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    has_ace = any(c % 13 == 0 for c in singles)
    for ace_high in (False, True) if has_ace else (False,):
        # the lower cards in one run, the higher in the other; an ace sorts low or high
        order = sorted(singles, key=_position_ace_high if ace_high else _position_ace_low)
        for cut in range(len(order) + 1):
            one = dup + order[:cut]
            two = dup + order[cut:]
            if not one or not two:
                continue
            for p1 in _position_sets(one):
                for p2 in _position_sets(two):
                    key = (tuple(p1), tuple(p2)) if p1 <= p2 else (tuple(p2), tuple(p1))
                    if key not in seen:
                        seen.add(key)
                        out.append(((s, list(key[0])), (s, list(key[1]))))
    return out


def _position_ace_high(c: Card) -> int:
    return 14 if c % 13 == 0 else c % 13 + 1


def _position_ace_low(c: Card) -> int:
    return c % 13 + 1


def _position_sets(cards: list[Card]) -> list[list[int]]:
    """Sorted run positions of distinct ``cards`` of one suit (an ace low, or high), if it can be one run."""
    if len(set(cards)) != len(cards):
        return []
    base = [c % 13 + 1 for c in cards if c % 13 != 0]
    aces = len(cards) - len(base)
    outs = []
    for high in ((False, True) if aces else (False,)):
        pos = sorted([*base, *([14] * aces if high else [1] * aces)])
        if pos[-1] - pos[0] + 1 <= MAX_RUN:
            outs.append(pos)
    return outs


def _place_exact(r1: tuple[int, list[int]], r2: tuple[int, list[int]], rank: int, set_nat: list[Card],
                 counts: list[int], limit: str, found: dict[GoDown, None]) -> None:
    rest = counts[:]
    for c in set_nat:
        rest[c] -= 1
    # the run naturals leave the pool too
    for suit, pos in (r1, r2):
        for p in pos:
            rest[position_card(suit, p)] -= 1
    wild_cards: list[Card] = []
    for c in (JOKER, 1, 14, 27, 40):
        if rank == 2 and c != JOKER:
            continue
        wild_cards.extend([c] * rest[c])
    leftovers = sum(rest) - len(wild_cards)
    if leftovers != 0:
        return
    w = len(wild_cards)
    gaps = []
    caps = []
    for _suit, pos in (r1, r2):
        span = pos[-1] - pos[0] + 1
        gaps.append(span - len(pos))
        caps.append(min(MAX_RUN - span, (pos[0] - 1) + (14 - pos[-1])))
    extra = w - gaps[0] - gaps[1]
    if extra < 0:
        return
    for e1 in range(0, min(extra, caps[0]) + 1):
        for e2 in range(0, min(extra - e1, caps[1]) + 1):
            ws = extra - e1 - e2
            if len(set_nat) + ws < 3 or not limit_ok(len(set_nat), ws, limit):
                continue
            n1 = len(r1[1])
            n2 = len(r2[1])
            if n1 + gaps[0] + e1 < 4 or n2 + gaps[1] + e2 < 4:
                continue
            pool = list(wild_cards)
            melds = []
            for (suit, pos), g, e in ((r1, gaps[0], e1), (r2, gaps[1], e2)):
                meld = _build_run(suit, pos, g, e, pool)
                nat, wild = meld_counts(meld)
                if not limit_ok(nat, wild, limit):
                    break
                melds.append(meld)
            else:
                melds.append((-1, rank, (*sorted(set_nat), *pool)))
                found.setdefault(tuple(sorted(melds)), None)


def _build_run(suit: int, pos: list[int], gaps: int, extra: int, pool: list[Card]) -> TableMeld:
    """The run of ``suit`` over ``pos`` with its gaps and ``extra`` wilds (upwards first) from ``pool``."""
    lo, hi = pos[0], pos[-1]
    up = min(extra, 14 - hi)
    hi += up
    lo -= extra - up
    have = set(pos)
    cards: list[Card] = []
    for p in range(lo, hi + 1):
        if p in have:
            cards.append(position_card(suit, p))
        else:
            own_two = suit * 13 + 1
            if p == 2 and own_two in pool:
                pool.remove(own_two)
                cards.append(own_two)
            else:
                cards.append(pool.pop(0))
    return suit, lo, tuple(cards)
