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


@lru_cache(maxsize=256)
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
                     limit: str, cap: int, longer: bool = True) -> list[GoDown]:
    """Distinct ways to meet a contract of ``sets`` sets of ``set_size`` and ``runs`` runs of ``run_size``
    with melds of exactly those sizes, and (``longer``, under a strict wild ``limit``) with runs longer
    than ``run_size`` where no shorter run would meet the limit; at most ``cap`` of them.

    *Distinct* means: as a multiset of melds, each meld the multiset of its cards; where the wilds of a
    run sit (which gap, which end) is one canonical placement, and which wild cards are used is
    canonical too (jokers first, then 2s by suit). Only ways where no wild stands in a place that a
    natural card left in the hand could take are listed.

    A *longer* run (``longer`` and ``limit`` not_more_than_naturals or fewer_than_naturals) is one of
    more than ``run_size`` places that is *minimal*: no run of at least ``run_size`` places inside it meets
    the limit with its natural cards (5H-W-7H-W-9H under fewer_than_naturals: every 4 places hold two
    wilds to two naturals). Such a run has natural cards at both ends. Ways with longer runs always leave
    a card in hand to discard.

    Order: the ways with runs of ``run_size`` first (in search order: fewest wilds first, roughly), then
    the ways with a longer run; when there are more than ``cap``, the longer ones keep ``cap // 4`` places
    (or more, as far as the others leave room), so that they are never all cut off.

    The search: candidate runs (one window per distinct set of naturals, fewest wilds first) and sets
    (by rank) are combined depth first, runs first, each run taking every natural it covers and each set
    every natural of its rank — except that a set may leave naturals to a later set of its rank or to a
    run, and (when nothing else works) a run may leave single naturals to the next run; the leaf rejects
    a way where a wild stands for a natural still in hand. If runs-first finds nothing because a set
    lacked naturals, sets go first. The ways with a longer run come from a second search over both kinds
    of candidate runs that keeps only ways holding a longer run, and tries every one of those passes.
    At most ``cap`` results and :data:`NODE_BUDGET` search nodes per search. A client may still send
    any other legal arrangement (longer melds, other wilds).
    """
    counts = [0] * 53
    masks = [0, 0, 0, 0]
    by_rank = [0] * 14
    for c in hand:
        counts[c] += 1
        if c != JOKER:
            by_rank[_RANK_OF[c]] += 1
            masks[c // 13] |= _BIT_OF[c]
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
    run_cands: list[tuple[int, int, int, int]] = []  # (wilds needed, suit, low, size)
    long_cands: list[tuple[int, int, int, int]] = []
    run_min = _min_naturals(run_size, limit)
    if runs:
        for suit in range(4):
            if masks[suit]:
                for need, low in _run_windows(masks[suit], run_size, run_min):
                    if need > wild_total:
                        break
                    run_cands.append((need, suit, low, run_size))
                if longer and limit != "at_least_one_natural":
                    for need, low, size in _long_windows(masks[suit], run_size, limit):
                        if need > wild_total:
                            break
                        long_cands.append((need, suit, low, size))
        if not run_cands and not long_cands:
            return []
        run_cands.sort()
    found: dict[GoDown, None] = {}
    if run_cands or not runs:
        _search_minimal(counts, masks, by_rank, set_cands, run_cands, sets, runs, set_size, run_size, set_min,
                        run_min, limit, cap, found, False)
    if not long_cands:
        return list(found)
    # ways with a longer run (a strict wild limit): at least cap // 4 of the listed places are theirs
    longer_found: dict[GoDown, None] = {}
    _search_minimal(counts, masks, by_rank, set_cands, sorted(run_cands + long_cands), sets, runs, set_size,
                    run_size, set_min, run_min, limit, max(cap // 4, cap - len(found)), longer_found, True)
    return list(found)[:cap - len(longer_found)] + list(longer_found)


def _search_minimal(counts: list[int], masks: list[int], by_rank: list[int], set_cands: list[tuple[int, int]],
                    run_cands: list[tuple[int, int, int, int]], sets: int, runs: int, set_size: int, run_size: int,
                    set_min: int, run_min: int, limit: str, cap: int, found: dict[GoDown, None],
                    need_long: bool) -> None:
    """The passes of :func:`minimal_go_downs` over one list of candidate runs."""
    # a lower bound on the wilds needed: the cheapest candidates, repeats allowed
    least = (set_cands[0][0] * sets if sets else 0) + (run_cands[0][0] * runs if runs else 0)
    if least > counts[JOKER] + by_rank[2]:
        return
    flags = [NODE_BUDGET, 0, 0]  # node budget left; a set, a run lacked natural cards others took
    search = _MinimalSearch(counts, masks, by_rank, set_cands, run_cands, set_size, run_size, set_min, run_min,
                            cap, found, flags, limit, need_long)
    # the longer runs' search tries every pass (its runs-first pass may stop before any set lacks naturals)
    search.run(["run"] * runs + ["set"] * sets)
    if not found and sets and runs and (flags[1] or need_long):
        search.run(["set"] * sets + ["run"] * runs)
    if not found and runs > 1 and (flags[2] or need_long):
        search.yielding = search.by_multiset = True
        search.run(["run"] * runs + ["set"] * sets)
        if not found and sets and (flags[1] or need_long):
            search.run(["set"] * sets + ["run"] * runs)


@_cached
def _long_windows(mask: int, run_size: int, limit: str) -> tuple[tuple[int, int, int], ...]:
    """``(wilds needed, low, size)`` of the runs longer than ``run_size`` over a suit whose natural cards
    are the bits of ``mask`` that have a natural card at both ends and meet ``limit``, fewest wilds first.
    (Whether a shorter run inside one would do is checked when the search places it.)"""
    out = []
    for lo in range(1, 15):
        if not mask >> lo & 1:
            continue
        for hi in range(lo + run_size, min(lo + MAX_RUN - 1, 14) + 1):
            if mask >> hi & 1:
                size = hi - lo + 1
                k = (mask >> lo & ((1 << size) - 1)).bit_count()
                if limit_ok(k, size - k, limit):
                    out.append((size - k, lo, size))
    out.sort()
    return tuple(out)


@_cached
def _minimal_run(bits: int, size: int, run_size: int, limit: str) -> bool:
    """Whether a run of ``size`` places whose natural cards are the bits of ``bits`` (bit i: place i)
    meets ``limit`` while no shorter run of at least ``run_size`` places inside it does."""
    n = bits.bit_count()
    if not limit_ok(n, size - n, limit):
        return False
    for a in range(size - run_size + 1):
        for b in range(a + run_size, size + 1):
            if b - a < size:
                k = (bits >> a & ((1 << (b - a)) - 1)).bit_count()
                if limit_ok(k, b - a - k, limit):
                    return False
    return True


class _MinimalSearch:
    """The depth-first search of :func:`minimal_go_downs` over its candidate melds, keeping the card
    counts, the per-suit masks of present cards and the per-rank counts up to date as melds take cards."""

    yielding = False  # a run may leave single naturals to the next run
    longs = 0  # longer runs chosen so far
    last_run = -1  # the depth of the last run in the order (for need_long)

    def __init__(self, counts: list[int], masks: list[int], by_rank: list[int],
                 set_cands: list[tuple[int, int]], run_cands: list[tuple[int, int, int, int]], set_size: int,
                 run_size: int, set_min: int, run_min: int, cap: int, found: dict[GoDown, None],
                 flags: list[int], limit: str, need_long: bool) -> None:
        self.counts, self.masks, self.by_rank = counts, masks, by_rank
        self.set_cands, self.run_cands = set_cands, run_cands
        self.set_size, self.run_size, self.set_min, self.run_min = set_size, run_size, set_min, run_min
        self.cap, self.found, self.flags = cap, found, flags
        self.window = (1 << run_size) - 1
        self.order: list[str] = []
        self.reserve: list[int] = []
        self.chosen: list[tuple[int, int, list[Card], int, bool]] = []
        self.limit = limit
        self.need_long = need_long  # every way has a run longer than run_size (the search for those)
        self.by_multiset = need_long  # check every way found against ``seen``
        self.seen: set[Any] = set()  # the ways found as multisets, where placements may differ
        self.initial_masks = masks[:]
        # the suits whose 2 the hand holds (a run holding its own 2 may hold the same cards as another)
        self.twos = (counts[1] > 0) | (counts[14] > 0) << 1 | (counts[27] > 0) << 2 | (counts[40] > 0) << 3

    def run(self, order: list[str]) -> None:
        self.order = order
        # the fewest wilds the melds after each depth need at least (to stop early)
        cheapest = {"run": self.run_cands[0][0] if self.run_cands else 0,
                    "set": self.set_cands[0][0] if self.set_cands else 0}
        self.reserve = [sum(cheapest[k] for k in order[d + 1:]) for d in range(len(order))]
        if self.need_long:
            self.last_run = max(d for d, k in enumerate(order) if k == "run")
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
            only_long = self.need_long and depth == self.last_run and not self.longs
            tried: set[int] | None = None
            initial = self.initial_masks
            for idx in range(first, len(cands)):
                need, suit, low, size = cands[idx]
                if wilds_used + need > pool:
                    break  # candidates are sorted by the wilds they need at least
                if size == run_size:
                    if only_long:
                        continue
                    bits = masks[suit] & (window << low)
                    nat = bits.bit_count()
                    if nat < run_min or wilds_used + run_size - nat > pool:
                        if run_size - need > nat:
                            flags[2] = 1  # an earlier meld took naturals this run needed
                        continue  # (an ace counts once: it cannot be at both ends of one window)
                    if masks[suit] != initial[suit]:
                        # once earlier melds took cards of the suit, two windows may hold the same natural
                        # cards (4-7D and 3-6D once 7D is gone) and give the same meld: the first one only
                        key = bits & 0x3FFF | (2 if bits >> 14 else 0) | suit << 15
                        if tried is None:
                            tried = {key}
                        elif key in tried:
                            continue
                        else:
                            tried.add(key)
                else:
                    # a longer run: only where no shorter run inside it meets the wild limit
                    bits = masks[suit] >> low & ((1 << size) - 1)
                    nat = bits.bit_count()
                    if wilds_used + size - nat > pool or \
                            not (self.yielding or _minimal_run(bits, size, run_size, self.limit)):
                        if size - need > nat:
                            flags[2] = 1
                        continue
                row = POS_CARD[suit]
                slots = [row[p] if counts[row[p]] else -1 for p in range(low, low + size)]
                for c in slots:
                    if c >= 0:
                        counts[c] -= 1
                        by_rank[_RANK_OF[c]] -= 1
                        if not counts[c]:
                            masks[suit] &= ~_BIT_OF[c]
                variants: list[tuple[int, ...]] = [()]
                if size != run_size and self.yielding and not _minimal_run(bits, size, run_size, self.limit):
                    variants = []
                if self.yielding and not last and order[depth + 1] == "run":
                    # leave some single naturals to the next run (two runs of 5-9S from one 9S: 5-8 and
                    # W-9-T-J would miss; the leaf checks each is used by a later run)
                    single = [i for i, c in enumerate(slots) if c >= 0 and not counts[c]]
                    for mask in range(1, 1 << len(single)):
                        yielded = tuple(i for b, i in enumerate(single) if mask >> b & 1)
                        if size == run_size:
                            if nat - mask.bit_count() >= run_min:
                                variants.append(yielded)
                        elif _minimal_run(bits & ~sum(1 << i for i in yielded), size, run_size, self.limit):
                            variants.append(yielded)
                if size != run_size:
                    self.longs += 1
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
                    w = size - nat + len(yielded)
                    # natural 2s taken by the run leave the wild pool
                    if wilds_used + w <= counts[JOKER] + by_rank[2] - self.reserve[depth]:
                        chosen.append((suit, low, run_slots, w, False))
                        if last:
                            _finish_minimal(counts, chosen, found, self)
                        else:
                            self._step(depth + 1, idx, wilds_used + w, joker_slots)
                        chosen.pop()
                    for i in yielded:
                        c = slots[i]
                        counts[c] -= 1
                        by_rank[_RANK_OF[c]] -= 1
                        if not counts[c]:
                            masks[suit] &= ~_BIT_OF[c]
                if size != run_size:
                    self.longs -= 1
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
                        _finish_minimal(counts, chosen, found, self)
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
                    found: dict[GoDown, None], search: _MinimalSearch) -> None:
    """Add the way ``chosen`` (its wilds still to deal) unless a wild stands where a natural card left in
    hand could, or (the longer runs' search) no card is left to discard, or (where placements may differ:
    the longer runs' or the yielding search, a run holding its own suit's 2) a way of the same cards was
    found before."""
    wilds_needed = 0
    jokers_only = False
    by_multiset = search.by_multiset
    if search.need_long and sum(counts) <= sum(w for _, _, _, w, _ in chosen):
        return  # no card left to discard (R4)
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
            p = low
            for c in cards:
                if c < 0 and counts[row[p]]:
                    return
                p += 1
    twos = search.twos
    if not wilds_needed:
        natural = sorted((suit, low, tuple(cards)) for suit, low, cards, _, _ in chosen)
        if by_multiset or (twos and any(low <= 2 and suit >= 0 and twos >> suit & 1 for suit, low, _ in natural)):
            key = _multiset_key(natural)
            if key in search.seen:
                return
            search.seen.add(key)
        found.setdefault(tuple(natural), None)
        return
    pool = [counts[c] for c in _WILD_ORDER]
    melds: list[TableMeld] = []
    # sets of 2s need jokers for their wild places (a 2 there would be natural): serve them first
    for suit, low, cards, w, only in sorted(chosen, key=_jokers_first) if jokers_only else chosen:
        if w == 0:
            melds.append((suit, low, tuple(cards)))
            if twos and low <= 2 and suit >= 0 and twos >> suit & 1:
                by_multiset = True
            continue
        wilds = _take_wilds(pool, w, only)
        if wilds is None:
            return
        if suit < 0:
            melds.append((suit, low, (*cards, *wilds)))
        else:
            if twos >> suit & 1 and not by_multiset and (
                    suit * 13 + 1 in cards if low <= 2 else
                    (low <= len(cards) + 1 or low + len(cards) == 15) and suit * 13 + 1 in wilds
                    and _may_hold_twice(low, cards)):
                by_multiset = True
            it = iter(wilds)
            run = tuple(c if c >= 0 else next(it) for c in cards)
            if low == 2 and len(run) == MAX_RUN:  # 2-A holds the cards of A-K: read as A-K, as read_run does
                melds.append((suit, 1, (run[-1], *run[:-1])))
            else:
                melds.append((suit, low, run))
    melds.sort()
    if by_multiset:
        # a run holding its own suit's 2 (natural in place 2, or wild) may hold the same cards as a run
        # placed otherwise (3C 4C 2C 2C as 3-6, 2C 3C 4C 2C as 2-5): one entry per multiset of melds
        key = _multiset_key(melds)
        if key in search.seen:
            return
        search.seen.add(key)
    found.setdefault(tuple(melds), None)


def _may_hold_twice(low: int, slots: list[Card]) -> bool:
    """Whether a run from place ``low`` (3 or more) with these natural ``slots`` (-1: a wild's place),
    holding its suit's 2 as a wild, could be placed over place 2 instead (its natural cards all within
    3..size+1, or an ace high), where the same cards hold that 2 as a natural card."""
    size = len(slots)
    if low + size - 1 == 14:
        return True
    last = size - 1
    while slots[last] < 0:
        last -= 1
    return low + last <= size + 1


def _multiset_key(melds: Iterable[TableMeld]) -> tuple[tuple[bool, tuple[Card, ...]], ...]:
    """A way as a multiset of melds, each the multiset of its cards (what *distinct* means)."""
    return tuple(sorted((m[0] < 0, tuple(sorted(m[2]))) for m in melds))


def _jokers_first(m: tuple[int, int, list[Card], int, bool]) -> bool:
    return not m[4]


def exact_go_downs(hand: Sequence[Card], limit: str, cap: int, keep_out: Card | None = None) -> list[GoDown]:
    """Distinct ways to lay down all of ``hand`` but one card as one set (3+) and two runs (4+): hand 7
    (R2, R8). ``keep_out``: a card that may not be the one left (it could not be discarded, C3).

    Every card left, split and share of the wilds is tried, so whenever some legal arrangement exists one
    is listed (tests check this against a brute force). A way is the card left, the natural cards of each
    meld (the *split*) and how many wilds each meld takes. Distinct as in
    :func:`minimal_go_downs`, and canonical: a run's wilds beyond its gaps extend it upwards first (then
    downwards), except that a run takes its own suit's 2 as a natural card in place 2 whenever it holds
    that 2 and can reach place 2 (extending downwards to it); wilds are taken jokers first, then 2s by
    suit (a set of 2s takes jokers as its wilds). Two runs of one suit take one each of a card held twice
    and may split the single cards in any way (interleaved too), with wilds in the places each lacks.

    Order, and the cap: the ways are found by set rank, then card left, then split; the first way found
    for each split comes first (in that order), then the other ways (other wild counts per meld) in the
    order found, at most ``cap`` in all.
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
    ways = _Ways(cap)
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
            if left == keep_out or ways.full():
                continue
            counts[left] -= 1
            if counts[rank_cards[0]] or counts[rank_cards[1]] or counts[rank_cards[2]] or counts[rank_cards[3]]:
                _exact_for_rank(counts, rank, limit, ways)
            counts[left] += 1
    return ways.listing()


class _Ways:
    """The ways found for hand 7: the first of each split, then the others (see :func:`exact_go_downs`)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.firsts: dict[GoDown, None] = {}
        self.others: dict[GoDown, None] = {}
        self.seen: set[tuple[tuple[bool, tuple[Card, ...]], ...]] = set()

    def full(self) -> bool:
        return len(self.firsts) >= self.cap

    def add(self, way: GoDown, first: bool) -> None:
        if way in self.firsts or way in self.others:
            return
        if not first and len(self.others) >= self.cap:
            return
        key = _multiset_key(way)  # (an ace low or high, a 2 natural or wild: the same cards placed otherwise)
        if key in self.seen:
            return
        self.seen.add(key)
        (self.firsts if first else self.others)[way] = None

    def listing(self) -> list[GoDown]:
        out = list(self.firsts)[:self.cap]
        return out + list(self.others)[:self.cap - len(out)]


def _exact_for_rank(counts: list[int], rank: int, limit: str, ways: _Ways) -> None:
    # how many copies of each card of the rank the set takes; the rest go to the runs (at most one copy
    # per run), or for 2s to the wild pool
    choices: list[list[tuple[Card, int]]] = [[]]
    for c in _RANK_CARDS[rank]:
        n = counts[c]
        if n:
            least = 0 if rank == 2 else max(0, n - 2)
            choices = [[*ch, (c, k)] for ch in choices for k in range(least, n + 1)]
    jokers = counts[JOKER]
    # the natural cards of other ranks (not 2s) go to the runs, by suit
    others: list[list[Card]] = []
    for s in range(4):
        cs: list[Card] = []
        for c in range(s * 13, s * 13 + 13):
            if counts[c] and c % 13 != 1 and c % 13 + 1 != rank:
                cs.extend([c] * counts[c])
        others.append(cs)
    if (others[0] != []) + (others[1] != []) + (others[2] != []) + (others[3] != []) > 2:
        return
    for split in choices:
        set_nat = sorted(c for c, k in split for _ in range(k))
        if not set_nat:
            continue
        in_set = dict(split)
        suit_cards: dict[int, tuple[Card, ...]] = {}
        for s in range(4):
            cs = others[s]
            if rank != 2:
                c = rank - 1 + 13 * s
                k = counts[c] - in_set.get(c, 0)
                if k:
                    cs = sorted([*cs, *[c] * k])
            if cs:
                suit_cards[s] = tuple(cs)
        if len(suit_cards) > 2:
            continue
        twos = [counts[t] - in_set.get(t, 0) for t in _TWOS]
        wild_n = jokers + sum(twos)
        suits = sorted(suit_cards)
        pairs: list[tuple[tuple[int, tuple[int, ...]], tuple[int, tuple[int, ...]], tuple[int, ...]]] = []
        if len(suits) == 2:
            s1, s2 = suits
            for p1 in _one_run_positions(suit_cards[s1]):
                for p2 in _one_run_positions(suit_cards[s2]):
                    pairs.append(((s1, p1), (s2, p2), ()))
        elif len(suits) == 1:
            s = suits[0]
            for pa, pb in _two_run_splits(suit_cards[s], wild_n):
                pairs.append(((s, pa), (s, pb), ()))
            # or one run of the suit and one whose only natural card is a 2 in its own place
            for p in _one_run_positions(suit_cards[s]):
                for t in range(4):
                    if twos[t]:
                        pairs.append(((s, p), (t, (2,)), (t,)))
        else:
            for t1 in range(4):
                for t2 in range(t1, 4):
                    if twos[t1] and twos[t2] and (t1 != t2 or twos[t1] >= 2):
                        pairs.append(((t1, (2,)), (t2, (2,)), (t1, t2)))
        for r1, r2, own_only in pairs:
            tw = twos
            if own_only:
                tw = twos[:]
                for t in own_only:
                    tw[t] -= 1
            _place_exact(r1, r2, tw, jokers, rank, set_nat, limit, ways)
            if ways.full():
                return


_TWOS = (1, 14, 27, 40)


@_cached
def _one_run_positions(cards: tuple[Card, ...]) -> tuple[tuple[int, ...], ...]:
    """Sorted run positions of the natural ``cards`` of one suit (an ace low, or high) as one run."""
    if len(set(cards)) != len(cards):
        return ()
    base = [c % 13 + 1 for c in cards if c % 13 != 0]
    options = [base] if len(base) == len(cards) else [[1, *base], [*base, 14]]
    return tuple(tuple(sorted(pos)) for pos in options if max(pos) - min(pos) < MAX_RUN)


@_cached
def _two_run_splits(cards: tuple[Card, ...], wilds: int) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """The ways to split the natural ``cards`` of one suit (no 2s, sorted) between two runs, as sorted
    position tuples (the smaller pair first): a card held twice goes to both runs, a single card to
    either (an ace low or high), as long as the places the two runs lack need at most ``wilds`` wilds."""
    if any(cards.count(c) > 2 for c in cards):
        return ()
    out: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    ace_held = sum(1 for c in cards if c % 13 == 0)
    # events in place order: (position, who) with who 0 = either run, 1 = the first, 2 = the second, 3 = both
    base = [(c % 13 + 1, 3 if cards.count(c) == 2 else 0) for c in sorted(set(cards)) if c % 13 != 0]
    if ace_held == 0:
        ace_options: list[list[tuple[int, int]]] = [[]]
    elif ace_held == 1:
        ace_options = [[(1, 0)], [(14, 0)]]
    else:
        ace_options = [[(1, 3)], [(14, 3)], [(1, 1), (14, 2)], [(1, 2), (14, 1)]]
    for aces in ace_options:
        events = sorted(base + aces)
        _split_events(events, 0, [], [], wilds, out)
    return tuple(sorted(out))


def _split_events(events: list[tuple[int, int]], i: int, a: list[int], b: list[int], wilds: int,
                  out: set[tuple[tuple[int, ...], tuple[int, ...]]]) -> None:
    if i == len(events):
        if a and b and (max(4, a[-1] - a[0] + 1) - len(a)) + (max(4, b[-1] - b[0] + 1) - len(b)) <= wilds:
            ta, tb = tuple(a), tuple(b)
            out.add((ta, tb) if ta <= tb else (tb, ta))
        return
    pos, who = events[i]
    for into_a, into_b in ((True, True),) if who == 3 else ((True, False),) if who == 1 else \
            ((False, True),) if who == 2 else ((True, False), (False, True)):
        na = [*a, pos] if into_a else a
        nb = [*b, pos] if into_b else b
        gaps = 0
        if na:
            if na[-1] - na[0] >= MAX_RUN:
                continue
            gaps += na[-1] - na[0] + 1 - len(na)
        if nb:
            if nb[-1] - nb[0] >= MAX_RUN:
                continue
            gaps += nb[-1] - nb[0] + 1 - len(nb)
        if gaps <= wilds:
            _split_events(events, i + 1, na, nb, wilds, out)


def _reaches_two(pos: tuple[int, ...], size: int) -> bool:
    """Whether a run of ``size`` places over natural places ``pos`` can hold place 2 (where its suit's 2
    is natural); never when place 2 already holds a natural card."""
    return pos[0] != 2 and (pos[0] == 1 or size >= pos[-1] - 1)


def _place_exact(r1: tuple[int, tuple[int, ...]], r2: tuple[int, tuple[int, ...]], twos: list[int], jokers: int,
                 rank: int, set_nat: list[Card], limit: str, ways: _Ways) -> None:
    """Every way to add the wild pool (``jokers`` and ``twos`` by suit) to the two runs and the set."""
    (s1, p1), (s2, p2) = r1, r2
    n_set = len(set_nat)
    n1, n2 = len(p1), len(p2)
    wild_n = jokers + sum(twos)
    split_seen: set[tuple[int, int]] = set()
    for size1 in range(max(4, p1[-1] - p1[0] + 1), MAX_RUN + 1):
        w1 = size1 - n1
        if w1 > wild_n:
            break
        for size2 in range(max(4, p2[-1] - p2[0] + 1), MAX_RUN + 1):
            w2 = size2 - n2
            ws = wild_n - w1 - w2
            if ws < 0:
                break
            if n_set + ws < 3 or not limit_ok(n_set, ws, limit) or (rank == 2 and ws > jokers):
                continue
            # a run that can reach place 2 takes its suit's 2 as a natural card
            can1 = twos[s1] > 0 and _reaches_two(p1, size1)
            can2 = twos[s2] > 0 and _reaches_two(p2, size2)
            # (one 2 that either run of its suit could take: each in turn)
            owns: tuple[tuple[int, int], ...] = ((1, 0), (0, 1)) if s1 == s2 and can1 and can2 and twos[s1] == 1 \
                else ((int(can1), int(can2)),)
            for own1, own2 in owns:
                if not (limit_ok(n1 + own1, w1 - own1, limit) and limit_ok(n2 + own2, w2 - own2, limit)):
                    continue
                first = (own1, own2) not in split_seen  # (a 2 natural in a run is another split)
                split_seen.add((own1, own2))
                pool = [jokers, *twos]
                set_wilds: list[Card] | None = []
                if rank == 2:
                    set_wilds = _take_wilds(pool, ws, True)
                if own1:
                    pool[1 + s1] -= 1
                if own2:
                    pool[1 + s2] -= 1
                wilds1 = _take_wilds(pool, w1 - own1)
                wilds2 = _take_wilds(pool, w2 - own2)
                if rank != 2:
                    set_wilds = _take_wilds(pool, ws)
                assert wilds1 is not None and wilds2 is not None and set_wilds is not None
                melds = sorted((_place_run(s1, p1, size1, own1, wilds1), _place_run(s2, p2, size2, own2, wilds2),
                                (-1, rank, (*set_nat, *set_wilds))))
                ways.add(tuple(melds), first)


def _place_run(suit: int, pos: tuple[int, ...], size: int, own_two: int, wilds: list[Card]) -> TableMeld:
    """The canonical run of ``suit`` over natural places ``pos``: ``size`` places, its 2 in place 2 if
    ``own_two``, otherwise extended upwards first; the ``wilds`` fill the other places low to high."""
    lo, hi = pos[0], pos[-1]
    if own_two:
        low = min(2, lo)
    else:
        extra = size - (hi - lo + 1)
        low = lo - (extra - min(extra, 14 - hi))
    have = set(pos)
    it = iter(wilds)
    cards = []
    for p in range(low, low + size):
        if p in have:
            cards.append(position_card(suit, p))
        elif own_two and p == 2:
            cards.append(suit * 13 + 1)
        else:
            cards.append(next(it))
    if size == MAX_RUN and low == 2:  # 2-A holds the cards of A-K: read as A-K, as read_run does
        return suit, 1, (cards[-1], *cards[:-1])
    return suit, low, tuple(cards)
