"""Climbing-game meld math: singles, sets and runs of one deck, and which meld beats which.

A vocabulary of small pure functions over cards (ints of ``engine.cards``),
kept apart from any game's flow, for climbing/shedding games such as Less Than
Three (RULES.md §1 R5, R7):

* a **single** is any one card;
* a **set** is 2–4 cards of one rank;
* a **run** is 2 or more cards of one suit in sequence, aces low only, never
  wrapping (A-2 is a run with top rank 2; 9-T-A is no run);
* singles and sets rank by their rank, runs by their top card;
* a meld **beats** another of the same kind and the same number of cards with
  a strictly higher rank (a pair and a 2-card run never beat each other; a run
  may beat a run of any suit).

>>> from engine.cards import parse_cards
>>> classify(parse_cards("4C 5C 6C")).beats(classify(parse_cards("3H 4H 5H")))
True

One deck only: a hand holds each card at most once (a hand is a bitmask here).
Every meld of the 52-card deck is built once at import as an interned
:class:`ClimbMeld`; listing the melds of a hand walks small per-rank and
per-suit tables (the run table is filled lazily, one entry per suit and
pattern of ranks held), so listing a 15-card hand's melds costs a few
microseconds and never builds a meld twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from engine.cards import CARD_NAMES, Card, make_card

SINGLE, SET, RUN = "single", "set", "run"
KINDS = (SINGLE, SET, RUN)
MIN_RUN = 2
MIN_SET = 2


@dataclass(frozen=True, slots=True)
class ClimbMeld:
    """One meld: its kind, its cards (sorted), its rank (a run's top rank) and the bitmask of its cards."""

    kind: str
    cards: tuple[Card, ...]
    rank: int
    mask: int
    names: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.cards)

    def beats(self, other: ClimbMeld) -> bool:
        """Whether this meld answers ``other``: same kind, same size, strictly higher rank (R7).

        >>> from engine.cards import parse_cards
        >>> classify(parse_cards("6D 6C")).beats(classify(parse_cards("5S 5H")))
        True
        >>> classify(parse_cards("6D 7D")).beats(classify(parse_cards("5S 5H")))
        False
        """
        return self.kind is other.kind and len(self.cards) == len(other.cards) and self.rank > other.rank

    def describe(self) -> str:
        """``"pair of 5s"``, ``"run of 3 to 7"``, ``"single 9"``: for messages."""
        n = len(self.cards)
        rank = "A" if self.rank == 1 else str(self.rank)
        if self.kind is SINGLE:
            return f"single {rank}"
        if self.kind is SET:
            return f"{_SET_NAMES.get(n, f'set of {n}')} of {rank}s"
        return f"run of {n} to {rank}"

    def __repr__(self) -> str:
        return f"ClimbMeld({self.kind!r}, {' '.join(self.names)!r})"


_SET_NAMES = {2: "pair", 3: "three", 4: "four"}


def _make(kind: str, cards: Iterable[Card], rank: int) -> ClimbMeld:
    ordered = tuple(sorted(cards))
    mask = 0
    for c in ordered:
        mask |= 1 << c
    return ClimbMeld(kind, ordered, rank, mask, tuple(CARD_NAMES[c] for c in ordered))


# Every meld of one 52-card deck, interned.
SINGLES: tuple[ClimbMeld, ...] = tuple(_make(SINGLE, (c,), c % 13 + 1) for c in range(52))

# _SETS[rank - 1][suits_pattern]: the sets made of the suits in the 4-bit pattern (bit s = suit s held).
_SETS: list[list[tuple[ClimbMeld, ...]]] = []
for _r in range(1, 14):
    _all = {
        tuple(combo): _make(SET, (make_card(_r, s) for s in combo), _r)
        for size in range(MIN_SET, 5)
        for combo in combinations(range(4), size)
    }
    _SETS.append([
        tuple(m for combo, m in _all.items() if all(pattern >> s & 1 for s in combo))
        for pattern in range(16)
    ])

# Every run, by (suit, low rank, length).
_RUN_OF: dict[tuple[int, int, int], ClimbMeld] = {
    (s, low, n): _make(RUN, (make_card(r, s) for r in range(low, low + n)), low + n - 1)
    for s in range(4)
    for n in range(MIN_RUN, 14)
    for low in range(1, 15 - n)
}

MELD_BY_MASK: dict[int, ClimbMeld] = {m.mask: m for m in SINGLES}
MELD_BY_MASK.update((m.mask, m) for row in _SETS for m in row[15])
MELD_BY_MASK.update((m.mask, m) for m in _RUN_OF.values())

MELD_BY_NAMES: dict[tuple[str, ...], ClimbMeld] = {m.names: m for m in MELD_BY_MASK.values()}

# _RUNS[suit][ranks_pattern] (bit r-1 = rank r held), filled on first use.
_RUNS: list[dict[int, tuple[ClimbMeld, ...]]] = [{}, {}, {}, {}]

# per card: its rank index (rank - 1), its suit and its rank bit
_RANK0 = tuple(c % 13 for c in range(52))
_SUIT = tuple(c // 13 for c in range(52))
_RANK_BIT = tuple(1 << (c % 13) for c in range(52))


def _runs_of_pattern(suit: int, pattern: int) -> tuple[ClimbMeld, ...]:
    """All runs (length >= 2) inside one suit's 13-bit pattern of ranks held."""
    out: list[ClimbMeld] = []
    r = 0
    while r < 13:
        if pattern >> r & 1:
            start = r
            while r < 13 and pattern >> r & 1:
                r += 1
            length = r - start
            for n in range(MIN_RUN, length + 1):
                for low in range(start, r - n + 1):
                    out.append(_RUN_OF[suit, low + 1, n])
        else:
            r += 1
    return tuple(out)


def runs_in_suit(suit: int, pattern: int) -> tuple[ClimbMeld, ...]:
    """The runs of ``suit`` whose ranks are all in ``pattern`` (bit r-1 set = rank r held)."""
    table = _RUNS[suit]
    runs = table.get(pattern)
    if runs is None:
        runs = table[pattern] = _runs_of_pattern(suit, pattern)
    return runs


def classify(cards: Iterable[Card]) -> ClimbMeld | None:
    """The meld these cards make, or None if they make none (or a card is repeated or not of the deck).

    >>> from engine.cards import parse_cards
    >>> classify(parse_cards("AS 2S")).kind, classify(parse_cards("9S TS AS"))
    ('run', None)
    """
    mask = 0
    n = 0
    for c in cards:
        if not 0 <= c < 52 or mask >> c & 1:
            return None
        mask |= 1 << c
        n += 1
    return MELD_BY_MASK.get(mask) if n else None


def _suit_patterns(hand: Iterable[Card]) -> list[int]:
    """Per suit, the 13-bit pattern of the ranks held (bit r-1 = rank r)."""
    by_suit = [0, 0, 0, 0]
    suit, rank_bit = _SUIT, _RANK_BIT
    for c in hand:
        by_suit[suit[c]] |= rank_bit[c]
    return by_suit


def _sets(by_suit: list[int], above: int = 0) -> list[ClimbMeld]:
    """The sets of the hand with these suit patterns, of rank above ``above``, by rank."""
    a, b, c, d = by_suit
    multi = ((a & (b | c | d)) | (b & (c | d)) | (c & d)) >> above  # ranks held in two suits or more
    out: list[ClimbMeld] = []
    r = above
    while multi:
        if multi & 1:
            out += _SETS[r][(a >> r & 1) | (b >> r & 1) << 1 | (c >> r & 1) << 2 | (d >> r & 1) << 3]
        multi >>= 1
        r += 1
    return out


def melds_in(hand: Sequence[Card]) -> list[ClimbMeld]:
    """Every distinct meld made of cards of ``hand`` (one deck: no card twice): its singles (in the
    order of ``hand``), then its sets (every choice of suits, 2–4 cards) by rank, then its runs
    (every length from 2) by suit.

    >>> from engine.cards import parse_cards
    >>> [" ".join(m.names) for m in melds_in(parse_cards("5C 5D 6D 7D"))]
    ['5C', '5D', '6D', '7D', '5C 5D', '5D 6D', '6D 7D', '5D 6D 7D']
    """
    by_suit = _suit_patterns(hand)
    singles = SINGLES
    out = [singles[c] for c in hand]
    out += _sets(by_suit)
    for s in range(4):
        p = by_suit[s]
        if p & (p >> 1):  # two consecutive ranks or more
            out += runs_in_suit(s, p)
    return out


def answers_in(hand: Sequence[Card], table: ClimbMeld) -> list[ClimbMeld]:
    """The melds of ``hand`` that beat ``table`` (same kind and size, strictly higher rank), in the
    order of :func:`melds_in`.

    >>> from engine.cards import parse_cards
    >>> [" ".join(m.names) for m in answers_in(parse_cards("4C 5C 6C 3S 4S 5S"), classify(parse_cards("3H 4H 5H")))]
    ['4C 5C 6C']
    """
    kind, rank = table.kind, table.rank
    if kind is SINGLE:
        return [SINGLES[c] for c in hand if _RANK0[c] >= rank]
    size = len(table.cards)
    by_suit = _suit_patterns(hand)
    if kind is SET:
        return [m for m in _sets(by_suit, above=rank) if len(m.cards) == size]  # bit `rank` is rank + 1
    out: list[ClimbMeld] = []
    for s in range(4):
        p = by_suit[s]
        if p & (p >> 1):
            out += [m for m in runs_in_suit(s, p) if len(m.cards) == size and m.rank > rank]
    return out
