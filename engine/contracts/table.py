"""A meld on the table in contract rummy (RULES.md §4 R1, R3, R7): what a :data:`TableMeld` is, how a
meld a client sends is read and checked, and the ways to lay a card off on one.

A meld on the table is a :data:`TableMeld` ``(suit, low, cards)``: a **set** has ``suit == -1`` and
``low`` its rank (1..13); a **run** has its suit (0..3), ``low`` the position of its lowest card (1..11;
position 14 is an ace above the king) and ``cards`` in position order. What a wild stands for is
therefore implied by where it sits: in a run, the card at index ``i`` stands for the card at position
``low + i``; in a set, for the set's rank.

Naturalness follows from the position (R3): a card is natural in a run when it *is* the card of its
position (so ``2S`` at position 2 of a spade run is natural), and in a set when it has the set's rank
(so 2s are natural in a set of 2s). Jokers are always wild. Every other 2 is a wild.

>>> from engine.cards import parse_cards
>>> read_run(parse_cards("5H 6H 2C 8H"))   # CR4: 2C stands for 7H
(2, 5, (30, 31, 1, 33))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from engine.cards import CARD_NAMES, JOKER, Card
from engine.errors import IllegalMoveError
from engine.melds import MAX_RUN, MeldRules, card_positions, limit_ok, position_card, rummy_values
from engine.melds import WILD_LIMITS as _MELD_WILD_LIMITS

TableMeld = tuple[int, int, tuple[Card, ...]]
GoDown = tuple[TableMeld, ...]

#: Contract rummy's melds in the solver's vocabulary (R1, R3, R9): sets of 3+, runs of 4+, aces high or
#: low, 2s and jokers wild, at least one natural card per meld; cards left in hand score R9.
CONTRACT_MELDS = MeldRules(min_set=3, min_run=4, aces="high_or_low", wild_ranks=frozenset({2}), jokers_wild=True,
                           wild_limit="at_least_one_natural", values=rummy_values(ace=15, joker=25, two=20, low=5))

#: The ``wild_limit`` option's choices (R3): every meld holds a natural card, so never ``none``.
WILD_LIMITS = tuple(limit for limit in _MELD_WILD_LIMITS if limit != "none")

is_wild = CONTRACT_MELDS.is_wild  # a joker or any 2: a card that *may* stand for another (R1)

#: POS_CARD[suit][position]: the card at each run position 1..14 (-1 at 0).
POS_CARD: tuple[tuple[Card, ...], ...] = tuple(
    tuple(-1 if p == 0 else position_card(s, p) for p in range(15)) for s in range(4))


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

    >>> from engine.cards import parse_cards
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

    >>> from engine.cards import parse_cards
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

    >>> from engine.cards import parse_cards
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
