"""Melds and the exact minimum-deadwood solver of the rummy games (RULES.md C5).

Vocabulary (RULES.md §0): a *set* is cards of one rank, a *run* is consecutive
ranks of one suit (never wrapping K-A-2), no card is in two melds, and
*deadwood* is what is in no meld. A hand scores the **minimum** deadwood over
every way to split it into melds; a greedy grouping is wrong (RULES.md TT3,
TT4, TT5, TZ5). Every rummy game describes its melds with one
:class:`MeldRules` and asks this module.

>>> from engine.cards import parse_cards
>>> tt_round_4 = MeldRules(wild_ranks=frozenset({6}))
>>> min_deadwood(parse_cards("7H 8H 9H 9S 9D 9C"), tt_round_4)   # TT3
0

How the solver works (all of it pure Python, exact, and cross-checked against
a brute force in ``tests/engine/test_melds.py``):

* Wild cards are a *count*. While at least one meld holds a natural card, any
  further wild can join a meld (a set takes any number; a run grows, and a
  full run splits in two when ``min_run <= 7``), so with wild limit ``none``
  or ``at_least_one_natural`` every wild is melded as soon as one natural is.
  What remains is: which naturals can be melded with at most ``W`` wilds.
  A run then never skips a natural of its span (swap it in for the wild), so
  runs take consecutive available ranks.
* One deck, no duplicate naturals (the common case): a hand is four 13-bit
  suit masks. Per-suit tables (built once per value table, ``min_run`` and ace
  rule; :func:`prepare` builds them eagerly) give the best run weight of a
  suit for 0..4 wilds; sets are chosen rank by rank, but only ranks whose
  cards could also sit in a run are branched on, and dominated choices are
  dropped. With no wilds and no rank that is both a set and part of a run,
  the answer is a few table look-ups. :func:`best_discard` runs the same
  enumeration once with per-suit "one card less" tables.
* Anything else (duplicates from several decks, more than four wilds, the
  wild limits that cap wilds per meld) goes to an explicit memoised search on
  the lowest remaining card, which is also what builds :class:`Arrangement`\\ s.

Weights: internally a card weighs ``value * 256 + 1``, so maximising the
melded weight maximises the melded value first and, among equal values, the
number of melded cards (which is what "fully melded" needs when a card is
worth 0 points).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

from engine.cards import CARD_NAMES, JOKER, Card, make_card
from engine.errors import InvalidCardError, InvalidOptionError

ACES = ("low", "high_or_low")
WILD_LIMITS = ("none", "at_least_one_natural", "not_more_than_naturals", "fewer_than_naturals")
MAX_RUN = 13  # a run never holds an ace at both ends, so it spans at most 13 positions

_SCALE_BITS = 8
_SCALE = 1 << _SCALE_BITS  # weight = value * _SCALE + 1; hands must hold fewer than _SCALE cards
_FAST_WILDS = 4  # the one-deck path handles up to this many wilds
_INF = 1 << 30


def rummy_values(
    ace: int = 1, joker: int = 20, two: int | None = None, low: int | None = None, ten_to_king: int = 10
) -> tuple[int, ...]:
    """The deadwood value of every card code 0..52 (``values[JOKER]`` is the joker's).

    Ranks 2-9 count their face value unless ``low`` is given (then 3-9, and 2
    unless ``two`` is given, count ``low``); T, J, Q, K count ``ten_to_king``.

    * Three Thirteen (§2 R4): ``rummy_values()``; with aces high_or_low ``rummy_values(ace=15)``.
    * Threezies (§3 R5): ``rummy_values()``.
    * Contract rummy (§4 R9): ``rummy_values(ace=15, joker=25, two=20, low=5)``.

    >>> v = rummy_values(ace=15, joker=25, two=20, low=5)
    >>> v[0], v[1], v[6], v[12], v[JOKER]          # AC 2C 7C KC JK
    (15, 20, 5, 10, 25)
    """
    by_rank = [0, ace]
    for rank in range(2, 10):
        by_rank.append(rank if low is None else low)
    if two is not None:
        by_rank[2] = two
    by_rank += [ten_to_king] * 4
    return (*(by_rank[c % 13 + 1] for c in range(52)), joker)


_DEFAULT_VALUES = rummy_values()


@dataclass(frozen=True)
class MeldRules:
    """What counts as a meld in one game (and round), and what deadwood costs.

    * ``min_set``: a set is ``min_set``+ cards of one rank; identical cards from
      several decks are allowed (``7H 7H 7S``).
    * ``min_run``: a run is ``min_run``+ consecutive ranks of one suit, no two of
      the same rank, never wrapping (K-A-2).
    * ``aces``: ``"low"`` (A-2-3 only) or ``"high_or_low"`` (A-2-3 or Q-K-A,
      never both ends of one run). An ace's value never changes.
    * ``wild_ranks``: ranks whose cards are wild (Three Thirteen round k: {k+2};
      contract rummy: {2}). ``jokers_wild``: whether a joker is wild (a joker
      that is not wild fits no meld).
    * ``wild_limit``: ``"none"`` (any number of wilds, even an all-wild meld),
      ``"at_least_one_natural"``, ``"not_more_than_naturals"`` or
      ``"fewer_than_naturals"`` (per meld). A wild used as itself — a 2 in a
      set of 2s, or 2H at the 2H place of a hearts run — counts as natural.
    * ``values``: deadwood value of each card code 0..52 (see :func:`rummy_values`);
      an unmatched wild scores its own value.
    """

    min_set: int = 3
    min_run: int = 3
    aces: str = "low"
    wild_ranks: frozenset[int] = frozenset()
    jokers_wild: bool = True
    wild_limit: str = "none"
    values: tuple[int, ...] = _DEFAULT_VALUES

    def __post_init__(self) -> None:
        for name in ("min_set", "min_run"):
            size = getattr(self, name)
            if isinstance(size, bool) or not isinstance(size, int) or not 2 <= size <= MAX_RUN:
                raise InvalidOptionError(name, f"must be an integer from 2 to {MAX_RUN}, not {size!r}")
        if self.aces not in ACES:
            raise InvalidOptionError("aces", f"must be one of {', '.join(ACES)}, not {self.aces!r}")
        if self.wild_limit not in WILD_LIMITS:
            raise InvalidOptionError(
                "wild_limit", f"must be one of {', '.join(WILD_LIMITS)}, not {self.wild_limit!r}"
            )
        ranks = frozenset(self.wild_ranks)
        if not all(isinstance(r, int) and 1 <= r <= 13 for r in ranks):
            raise InvalidOptionError("wild_ranks", f"ranks are 1 (ace) to 13 (king), not {sorted(ranks)!r}")
        object.__setattr__(self, "wild_ranks", ranks)
        values = tuple(self.values)
        if len(values) != 53 or not all(isinstance(v, int) and 0 <= v <= 1_000_000 for v in values):
            raise InvalidOptionError("values", "must give a value 0..1000000 for each of the 53 card codes")
        object.__setattr__(self, "values", values)

    def is_wild(self, card: Card) -> bool:
        """Whether ``card`` is wild under these rules."""
        if card == JOKER:
            return self.jokers_wild
        return card % 13 + 1 in self.wild_ranks


@dataclass(frozen=True)
class Meld:
    """One meld: ``cards`` in meld order (runs low to high) and, position by
    position, the natural card each one ``stands_for`` (a natural card stands
    for itself; a wild in a set stands for a card of the set's rank).

    >>> from engine.cards import parse_cards
    >>> m = as_meld(parse_cards("QS KS AS 2S"), MeldRules(min_run=4, aces="high_or_low",
    ...             wild_ranks=frozenset({2})))
    >>> str(m)
    'run 2S=JS QS KS AS'
    """

    kind: str
    cards: tuple[Card, ...]
    stands_for: tuple[Card, ...]

    def __str__(self) -> str:
        return self.kind + " " + " ".join(
            CARD_NAMES[c] if c == f else f"{CARD_NAMES[c]}={CARD_NAMES[f]}"
            for c, f in zip(self.cards, self.stands_for, strict=True)
        )


@dataclass(frozen=True)
class Arrangement:
    """A best split of a hand: its ``score`` (deadwood value), the melds and the deadwood cards."""

    score: int
    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]


@dataclass(frozen=True)
class DiscardChoice:
    """The discard of :func:`best_discard`: ``score`` is the minimum deadwood of
    the hand left after discarding ``card``; ``can_go_out`` says that hand is fully melded."""

    card: Card
    score: int
    can_go_out: bool


# --------------------------------------------------------------------------- public functions


def min_deadwood(hand: Sequence[Card], rules: MeldRules) -> int:
    """The minimum deadwood value of ``hand`` over all ways to meld it (RULES.md C5).

    >>> from engine.cards import parse_cards
    >>> min_deadwood(parse_cards("JS KS TS QH QD 6C"), MeldRules(wild_ranks=frozenset({6})))  # TT5
    20
    """
    total, melded = _solver_for(rules).solve(hand)
    return (total - melded) // _SCALE


def is_fully_melded(hand: Sequence[Card], rules: MeldRules) -> bool:
    """Whether every card of ``hand`` can be put in a meld at once (going out, TT R6).

    >>> from engine.cards import parse_cards
    >>> is_fully_melded(parse_cards("4C 9S 9H 9D"), MeldRules(wild_ranks=frozenset({4})))
    True
    """
    total, melded = _solver_for(rules).solve(hand)
    return total == melded


def best_arrangement(hand: Sequence[Card], rules: MeldRules) -> Arrangement:
    """A split of ``hand`` into melds with the minimum deadwood (C5), melds and deadwood listed.

    Among equally good splits it melds as many cards as possible, and leaves
    the cheapest wilds unmatched.

    >>> from engine.cards import parse_cards, cards_str
    >>> a = best_arrangement(parse_cards("7H 8H 9H 9S 9D 9C"), MeldRules(wild_ranks=frozenset({6})))
    >>> a.score, [str(m) for m in a.melds], a.deadwood
    (0, ['set 9C 9D 9S', 'run 7H 8H 9H'], ())
    """
    return _solver_for(rules).arrangement(hand)


def best_discard(hand: Sequence[Card], rules: MeldRules) -> DiscardChoice:
    """For a hand of n+1 cards: the discard that leaves the least deadwood.

    Ties go to the discard of higher value, then to a natural over a wild,
    then to a card that the solver's own best arrangement leaves unmatched,
    then to the higher card code (``KS`` before ``KH``); the choice depends
    on the hand (as a multiset) and the rules only.

    >>> from engine.cards import parse_cards, format_card
    >>> d = best_discard(parse_cards("4C 9S 9H 9D KS"), MeldRules(wild_ranks=frozenset({4})))  # TT10
    >>> format_card(d.card), d.score, d.can_go_out
    ('KS', 0, True)
    """
    if not hand:
        raise ValueError("best_discard needs at least one card")
    return _solver_for(rules).best_discard(hand)


def discard_scores(hand: Sequence[Card], rules: MeldRules) -> dict[Card, int]:
    """The minimum deadwood left after each distinct discard from ``hand``.

    >>> from engine.cards import parse_cards, format_cards
    >>> s = discard_scores(parse_cards("7H 8H 9H KS"), MeldRules())
    >>> {format_cards([c])[0]: v for c, v in sorted(s.items())}
    {'7H': 27, '8H': 26, '9H': 25, 'KS': 0}
    """
    return _solver_for(rules).discard_scores(hand)


def may_go_out(hand: Sequence[Card], rules: MeldRules) -> bool:
    """A cheap necessary test for going out (TT R6): ``False`` only if no discard from ``hand``
    can leave the rest fully melded, because two or more natural cards could be in no meld at all.

    A natural card could be in a meld if, counting the hand's wilds, its rank has enough cards
    for a set or some run window through it has enough of its suit. Wilds are not shared out
    between melds here, so ``True`` says nothing; ask :func:`best_discard` then.

    >>> from engine.cards import parse_cards
    >>> may_go_out(parse_cards("7H 8H 9H KS 2C"), MeldRules())  # KS and 2C are both in no meld
    False
    >>> may_go_out(parse_cards("7H 8H 9H KS KC KD 2C"), MeldRules())  # only 2C is in no meld
    True
    """
    wild_ranks, jokers_wild = rules.wild_ranks, rules.jokers_wild
    wilds = 0
    naturals: list[Card] = []
    for c in hand:
        if (jokers_wild if c == JOKER else c % 13 + 1 in wild_ranks):
            wilds += 1
        else:
            naturals.append(c)
    if wilds >= rules.min_set - 1 and wilds >= rules.min_run - 1:
        return True  # every natural card can make a meld with two wilds
    if rules.min_set == 3 and rules.min_run == 3:
        fast = _lone_naturals_3(naturals, wilds, rules.aces != "low")
        if fast is not None:
            return fast <= 1
    rank_count = [0] * 14
    suit_mask = [0, 0, 0, 0]
    for c in naturals:
        if c == JOKER:
            continue
        rank_count[c % 13 + 1] += 1
        suit_mask[c // 13] |= 1 << (c % 13)
    ace_high = rules.aces != "low"
    covered = [_run_cover(m | ((m & 1) << 13 if ace_high else 0), wilds, rules.min_run) for m in suit_mask]
    uncovered = 0
    for c in naturals:
        if c == JOKER:
            uncovered += 1
            continue
        rank = c % 13 + 1
        if rank_count[rank] + wilds >= rules.min_set:
            continue
        cover = covered[c // 13]
        if cover >> (rank - 1) & 1 or (rank == 1 and cover >> 13 & 1):
            continue
        uncovered += 1
        if uncovered > 1:
            return False
    return True


def _lone_naturals_3(naturals: list[Card], wilds: int, ace_high: bool) -> int | None:
    """How many of ``naturals`` (no two alike) could be in no meld of 3+ with ``wilds`` (0 or 1)
    wilds, by bit arithmetic on the four suit masks; None when two cards are alike."""
    m = [0, 0, 0, 0]
    lone = 0
    for c in naturals:
        if c == JOKER:
            lone += 1
            continue
        bit = 1 << (c % 13)
        suit = c // 13
        if m[suit] & bit:
            return None
        m[suit] |= bit
    m0, m1, m2, m3 = m
    if wilds:  # a set needs two natural cards of the rank, a run window two of its three places
        ranks = (m0 & m1) | (m0 & m2) | (m0 & m3) | (m1 & m2) | (m1 & m3) | (m2 & m3)
    else:
        ranks = (m0 & m1 & m2) | (m0 & m1 & m3) | (m0 & m2 & m3) | (m1 & m2 & m3)
    for mask in m:
        if not mask:
            continue
        a = mask | ((mask & 1) << 13) if ace_high else mask
        b, c = a >> 1, a >> 2
        starts = (a & b) | (a & c) | (b & c) if wilds else a & b & c
        runs = (starts | starts << 1 | starts << 2) & a
        covered = (runs | runs >> 13) | ranks
        lone += (mask & ~covered).bit_count()
    return lone


def _run_cover(mask: int, wilds: int, min_run: int) -> int:
    """The bits of ``mask`` (positions 0..13 of one suit) in some window of ``min_run`` positions
    holding at least ``min_run - wilds`` of them."""
    need = min_run - wilds
    window = (1 << min_run) - 1
    cover = 0
    for start in range(14 - min_run + 1):
        bits = mask & (window << start)
        if bits and bits.bit_count() >= need:
            cover |= bits
    return cover


# --------------------------------------------------------------------------- going out


def can_go_out(hand: Sequence[Card], rules: MeldRules) -> bool:
    """Whether some discard from ``hand`` leaves the rest fully melded (going out, TT R6):
    the same answer as ``best_discard(hand, rules).can_go_out``, by a narrower search.

    With one deck, no wild limit and ``min_set >= min_run`` it asks only how few wilds
    cover every natural card but one (see :class:`_Cover`); other rules go to the solver.

    >>> from engine.cards import parse_cards
    >>> can_go_out(parse_cards("4C 9S 9H 9D KS"), MeldRules(wild_ranks=frozenset({4})))  # TT10
    True
    >>> can_go_out(parse_cards("7H 8H 9H KS KC 2C"), MeldRules())  # KC and 2C would both be left
    False
    """
    fast = _cover_setup(hand, rules)
    if fast is None:
        return bool(hand) and may_go_out(hand, rules) and best_discard(hand, rules).can_go_out
    cover, naturals, wilds = fast
    return cover.goes_out(naturals, wilds)


def go_out_discards(hand: Sequence[Card], rules: MeldRules) -> list[Card]:
    """The distinct cards of ``hand``, ascending, whose discard leaves the rest fully melded
    (the discards that go out, TT R6): ``c`` is listed exactly when
    ``is_fully_melded(hand minus one c, rules)``.

    >>> from engine.cards import parse_cards, format_cards
    >>> format_cards(go_out_discards(parse_cards("4C 9S 9H 9D KS"), MeldRules(wild_ranks=frozenset({4}))))
    ['KS']
    >>> format_cards(go_out_discards(parse_cards("7H 8H 9H TH"), MeldRules()))  # either end of the run
    ['7H', 'TH']
    """
    fast = _cover_setup(hand, rules)
    if fast is None:
        if not (hand and may_go_out(hand, rules) and best_discard(hand, rules).can_go_out):
            return []
        out = []
        for card in sorted(set(hand)):
            rest = list(hand)
            rest.remove(card)
            if is_fully_melded(rest, rules):
                out.append(card)
        return out
    cover, naturals, wilds = fast
    if not cover.goes_out(naturals, wilds):
        return []
    fits = cover.fits
    # one deck: every card is there once; discarding a wild leaves every natural for wilds - 1
    return [card for card in sorted(hand)
            if (fits(naturals & ~(1 << card), wilds, False) if naturals >> card & 1
                else wilds and fits(naturals, wilds - 1, False))]


class _Cover:
    """The least number of wilds that put every natural card of a one-deck hand in a meld.

    Why that is the whole question (wild limit ``none``, ``min_set >= min_run``, at least one
    natural left): a wild can always join a meld that holds a natural (see the module
    docstring), so a hand is fully melded when its wilds are at least that number. Per suit
    the naturals left to runs split into runs of consecutive naturals; a run spanning ``s``
    ranks with ``k`` naturals needs ``max(min_run, s) - k`` wilds, and :attr:`suit` holds the
    best split of each 13-bit suit mask (an ace at the low or the high end). Each rank holding
    two or more naturals may give any two or more of them to a set needing
    ``max(0, min_set - size)`` wilds (a lone card never gains from a set when
    ``min_set >= min_run``); those choices are enumerated. Going out leaves one card:
    :attr:`drop` holds, per suit mask, the most wilds that discarding one of its cards saves
    (discarding a wild instead never does better: the natural it would free takes its place).
    """

    def __init__(self, rules: MeldRules) -> None:
        self.suit, self.drop, self.after, self.options = _cover_tables(
            rules.min_run, rules.min_set, rules.aces != "low")
        self.most_saved = rules.min_run - 1  # a lone card costs min_run - 1 wilds; no discard saves more
        self.pairs_free = rules.min_set <= 2  # a set of two naturals needs no wild
        wild52 = 0
        for rank in rules.wild_ranks:
            wild52 |= (1 | 1 << 13 | 1 << 26 | 1 << 39) << (rank - 1)
        if rules.jokers_wild:
            wild52 |= 1 << JOKER
        self.wild52 = wild52
        self.joker_ok = rules.jokers_wild

    def fits(self, naturals: int, wilds: int, discard: bool) -> bool:
        """Whether ``wilds`` wilds put every card of the 52-bit mask ``naturals`` in a meld
        (all of them but one, of our choice, when ``discard``)."""
        suit, drop = self.suit, self.drop
        a = naturals & 0x1FFF
        b = naturals >> 13 & 0x1FFF
        c = naturals >> 26 & 0x1FFF
        d = naturals >> 39
        ranks = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)
        if not ranks:
            need = suit[a] + suit[b] + suit[c] + suit[d]
            if discard:
                need += min(drop[a], drop[b], drop[c], drop[d])
            return need <= wilds
        # the sets to try: a choice per rank holding 2+ naturals, while their wilds may still fit
        limit = wilds + self.most_saved if discard else wilds
        choices = [(0, 0, _INF)]
        options = self.options
        while ranks:
            low = ranks & -ranks
            r = low.bit_length() - 1
            ranks ^= low
            present = (a >> r & 1) | (b >> r & 1) << 1 | (c >> r & 1) << 2 | (d >> r & 1) << 3
            choices = [(m1 | m2, w1 + w2, s1 if s1 < s2 else s2) for m1, w1, s1 in choices
                       for m2, w2, s2 in options[r][present] if w1 + w2 <= limit]
        for taken, need, set_drop in choices:
            rest = naturals & ~taken
            a = rest & 0x1FFF
            b = rest >> 13 & 0x1FFF
            c = rest >> 26 & 0x1FFF
            d = rest >> 39
            need += suit[a] + suit[b] + suit[c] + suit[d]
            if discard:
                need += min(drop[a], drop[b], drop[c], drop[d], set_drop)
            if need <= wilds:
                return True
        return False


    def goes_out(self, naturals: int, wilds: int) -> bool:
        """``fits(naturals, wilds, True)``, the hot path of :func:`go_out_discards`: most hands are
        ruled out by a bound taken suit by suit, where the cards of ranks that could make a set may
        leave their suit for free (a set needs no wild in this bound)."""
        suit, after = self.suit, self.after
        a = naturals & 0x1FFF
        b = naturals >> 13 & 0x1FFF
        c = naturals >> 26 & 0x1FFF
        d = naturals >> 39
        ranks = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)
        if not ranks:
            return suit[a] + suit[b] + suit[c] + suit[d] + min(after[a] - suit[a], after[b] - suit[b],
                                                               after[c] - suit[c], after[d] - suit[d]) <= wilds
        if wilds or self.pairs_free:
            free = ranks
        else:  # (min_set 3 or more)
            free = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d)
            if not free:  # no wild and no rank of three: no set can help, as with no rank held twice
                return suit[a] + suit[b] + suit[c] + suit[d] + min(
                    after[a] - suit[a], after[b] - suit[b], after[c] - suit[c], after[d] - suit[d]) <= 0
        need = saved = 0
        for x in (a, b, c, d):
            q = x & free
            u = x ^ q
            least = suit[u]
            least_after = after[u]
            sub = q
            while sub:  # every nonempty subset of q stays in the suit
                m = u | sub
                if suit[m] < least:
                    least = suit[m]
                if after[m] < least_after:
                    least_after = after[m]
                sub = (sub - 1) & q
            need += least
            if least_after - least < saved:
                saved = least_after - least
        return need + saved <= wilds and self.fits(naturals, wilds, True)


_BITS = [1 << c for c in range(JOKER + 1)]
_CoverTables = tuple[list[int], list[int], list[int], list[list[list[tuple[int, int, int]]]]]
_COVER_TABLES: dict[tuple[int, int, bool], _CoverTables] = {}
_LINES: dict[int, list[int]] = {}


def _cover_tables(min_run: int, min_set: int, ace_high: bool) -> _CoverTables:
    """The tables of :class:`_Cover` (they depend on the meld sizes and the ace rule only):
    per 13-bit suit mask the least cover and what one card less saves (and their sum), and the
    set choices per rank and suits present."""
    key = (min_run, min_set, ace_high)
    tables = _COVER_TABLES.get(key)
    if tables is not None:
        return tables
    line = _line_cover(min_run)
    suit = [0] * (1 << 13)
    for m in range(1 << 13):
        cost = line[m]
        if ace_high and m & 1:
            cost = min(cost, line[m ^ 1 | 1 << 13])
        suit[m] = cost
    drop = [_INF] * (1 << 13)
    for m in range(1, 1 << 13):
        best = _INF
        x = m
        while x:
            low = x & -x
            x ^= low
            best = min(best, suit[m ^ low] - suit[m])
        drop[m] = best
    after = [x + y for x, y in zip(suit, drop, strict=True)]  # the least cover once one card is gone
    # options[rank][suits present]: (the cards given to a set as a 52-bit mask, the wilds that set
    # needs, what discarding one of its cards costs). A set short of min_set takes every natural
    # of its rank (else moving one more in from a run costs no more), and a set that loses its
    # discard needs one wild more unless it has more than min_set cards.
    options: list[list[list[tuple[int, int, int]]]] = []
    for rank in range(13):
        per_present: list[list[tuple[int, int, int]]] = []
        for present in range(16):
            opts = [(0, 0, _INF)]
            for sub in range(1, 16):
                size = _POP4[sub]
                if sub & present != sub or size < 2 or (size < min_set and sub != present):
                    continue
                spread = sum(1 << (13 * s + rank) for s in range(4) if sub >> s & 1)
                opts.append((spread, max(0, min_set - size), 0 if size > min_set else 1))
            per_present.append(opts)
        options.append(per_present)
    tables = _COVER_TABLES[key] = (suit, drop, after, options)
    return tables
_COVERS: dict[MeldRules, _Cover] = {}
_LAST_COVER: tuple[MeldRules | None, _Cover | None] = (None, None)


def _line_cover(min_run: int) -> list[int]:
    """For each 14-bit mask of positions on one suit's line (ace low .. ace high): the fewest
    wilds that put every position in a run, splitting it into runs of consecutive positions."""
    line = _LINES.get(min_run)
    if line is None:
        line = [0] * (1 << 14)
        for m in range(1, 1 << 14):
            first = (m & -m).bit_length() - 1
            best = _INF
            x = m
            count = 0
            while x:  # the run holding the lowest position ends at each later position in turn
                low = x & -x
                end = low.bit_length() - 1
                if end - first >= MAX_RUN:
                    break
                x ^= low
                count += 1
                best = min(best, max(min_run, end - first + 1) - count + line[x])
            line[m] = best
        _LINES[min_run] = line
    return line


def _cover_setup(hand: Sequence[Card], rules: MeldRules) -> tuple[_Cover, int, int] | None:
    """(cover tables, natural cards as a 52-bit mask, number of wilds) when :class:`_Cover`
    answers for ``hand``; None for other rules, repeated cards, a joker that is not wild,
    or fewer than two natural cards."""
    global _LAST_COVER
    last = _LAST_COVER
    if last[0] is rules:
        cover = last[1]
        assert cover is not None
    else:
        if rules.wild_limit != "none" or rules.min_set < rules.min_run:
            return None
        cover = _COVERS.get(rules)
        if cover is None:
            if len(_COVERS) >= 64:
                _COVERS.clear()
            cover = _COVERS[rules] = _Cover(rules)
        _LAST_COVER = (rules, cover)
    mask = sum(map(_BITS.__getitem__, hand))  # with a repeated card the sum carries: fewer bits than cards
    if mask.bit_count() != len(hand) or (mask >> JOKER and not cover.joker_ok):
        return None
    wild = mask & cover.wild52
    wilds = wild.bit_count()
    if len(hand) - wilds < 2:
        return None
    return cover, mask ^ wild, wilds


def prepare(rules: MeldRules) -> None:
    """Build every table the solver uses for ``rules`` now (about 0.1-0.3 s) instead of
    lazily on first use: call it at start-up where the first answers must be fast."""
    for tables in _solver_for(rules).tabs:
        tables.fill_all()


def as_meld(cards: Sequence[Card], rules: MeldRules, stands_for: Sequence[Card] | None = None) -> Meld | None:
    """``cards`` as ONE legal meld, or ``None`` if they are not one.

    With ``stands_for`` given, that exact assignment is checked (each natural
    card must stand for itself; a wild for any card); otherwise an assignment
    is searched for, preferring natural placements. The rules enforced: set
    size ``min_set``+, one rank; run size ``min_run``+, one suit, consecutive,
    no wrap, an ace at one end only; the wild limit per meld.

    >>> from engine.cards import parse_cards
    >>> contract = MeldRules(min_run=4, aces="high_or_low", wild_ranks=frozenset({2}),
    ...                      wild_limit="at_least_one_natural")
    >>> str(as_meld(parse_cards("5H 6H 2C 8H"), contract))              # CR4
    'run 5H 6H 2C=7H 8H'
    >>> as_meld(parse_cards("KS AS 2S 3S"), MeldRules(min_run=4)) is None
    True
    """
    cards = tuple(cards)
    for c in cards:
        _check_card(c)
    if stands_for is None:
        return _find_assignment(cards, rules)
    targets = tuple(stands_for)
    for f in targets:
        _check_card(f)
    return _check_assignment(cards, targets, rules)


# --------------------------------------------------------------------------- meld validity


def _check_card(card: Any) -> None:
    if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card <= JOKER:
        raise InvalidCardError(f"{card!r} is not a card code (0..52, see engine/cards.py)")


def _limit_ok(limit: str, naturals: int, wilds: int) -> bool:
    """The per-meld wild limit (RULES.md §2 R5, §3 R4, §4 R3)."""
    if limit == "none":
        return True
    if limit == "at_least_one_natural":
        return naturals >= 1
    if limit == "not_more_than_naturals":
        return wilds <= naturals
    return wilds < naturals


def _position_card(suit: int, position: int) -> Card:
    """The card at ``position`` 1..14 of a run of ``suit`` (14 is the high ace)."""
    return make_card(1 if position == 14 else position, suit)


def _check_assignment(cards: tuple[Card, ...], targets: tuple[Card, ...], rules: MeldRules) -> Meld | None:
    n = len(cards)
    if n != len(targets) or n == 0:
        return None
    for c, f in zip(cards, targets, strict=True):
        if f == JOKER or (not rules.is_wild(c) and c != f):
            return None
    ranks = {f % 13 for f in targets}
    if len(ranks) == 1:  # a set
        if n < rules.min_set:
            return None
        rank = targets[0] % 13
        naturals = sum(1 for c in cards if c != JOKER and c % 13 == rank)
        if not _limit_ok(rules.wild_limit, naturals, n - naturals):
            return None
        pairs = sorted(zip(cards, targets, strict=True))
        return Meld("set", tuple(c for c, _ in pairs), tuple(f for _, f in pairs))
    if n < rules.min_run or n > MAX_RUN or len({f // 13 for f in targets}) != 1:
        return None
    ranks_in = [f % 13 + 1 for f in targets]
    if ranks_in.count(1) > 1:
        return None
    ace_places = [1, 14] if rules.aces == "high_or_low" else [1]
    for ace in ace_places if 1 in ranks_in else [1]:
        positions = [ace if r == 1 else r for r in ranks_in]
        order = sorted(range(n), key=positions.__getitem__)
        if all(positions[order[i + 1]] == positions[order[i]] + 1 for i in range(n - 1)):
            naturals = sum(1 for c, f in zip(cards, targets, strict=True) if c == f)
            if not _limit_ok(rules.wild_limit, naturals, n - naturals):
                return None
            return Meld("run", tuple(cards[i] for i in order), tuple(targets[i] for i in order))
    return None


def _find_assignment(cards: tuple[Card, ...], rules: MeldRules) -> Meld | None:
    n = len(cards)
    if n == 0:
        return None
    wild = [rules.is_wild(c) for c in cards]
    if any(c == JOKER and not w for c, w in zip(cards, wild, strict=True)):
        return None  # a joker that is not wild fits no meld
    naturals = [c for c, w in zip(cards, wild, strict=True) if not w]
    if n >= rules.min_set:
        ranks = {c % 13 for c in naturals}
        if len(ranks) <= 1:
            if ranks:
                rank = ranks.pop()
            else:  # all wild: the rank most of them have (they are natural there)
                counts = Counter(c % 13 for c in cards if c != JOKER)
                rank = min(counts, key=lambda r: (-counts[r], r)) if counts else 0
            targets = tuple(
                c if c != JOKER and c % 13 == rank else make_card(rank + 1, 0 if c == JOKER else c // 13)
                for c in cards
            )
            meld = _check_assignment(cards, targets, rules)
            if meld is not None:
                return meld
    if not rules.min_run <= n <= MAX_RUN:
        return None
    suits = {c // 13 for c in naturals}
    if len(suits) > 1:
        return None
    suit_options = sorted(suits) if suits else sorted({c // 13 for c in cards if c != JOKER}) or [0]
    top = 14 if rules.aces == "high_or_low" else 13
    for suit in suit_options:
        # wild cards of this suit may sit at their own place, as naturals
        optional = [i for i, c in enumerate(cards) if wild[i] and c != JOKER and c // 13 == suit]
        fixed = [i for i in range(n) if not wild[i]]
        choices = sorted(range(1 << len(optional)), key=lambda b: -b.bit_count())
        for bits in choices:
            chosen = fixed + [optional[j] for j in range(len(optional)) if bits >> j & 1]
            meld = _place_run(cards, chosen, suit, top, rules)
            if meld is not None:
                return meld
    return None


def _place_run(cards: tuple[Card, ...], chosen: list[int], suit: int, top: int, rules: MeldRules) -> Meld | None:
    """Try ``cards`` as a run of ``suit`` with the cards at indexes ``chosen`` at their own places."""
    n = len(cards)
    ranks = [cards[i] % 13 + 1 for i in chosen]
    if len(set(ranks)) != len(ranks):
        return None
    ace_options = [1, 14] if (1 in ranks and top == 14) else [1]
    for ace in ace_options:
        places = [ace if r == 1 else r for r in ranks]
        lo, hi = (min(places), max(places)) if places else (1, 1)
        if hi - lo + 1 > n:
            continue
        # prefer growing upwards to the king, then downwards, then up to the high ace
        starts = [a for a in range(lo, 0, -1) if hi <= a + n - 1 <= 13]
        if not starts and top == 14 and 15 - n >= 2 and 15 - n <= lo:
            starts = [15 - n]
        if not starts:
            continue
        start = starts[0]
        targets: list[Card] = [0] * n
        taken = set(places)
        free = iter(p for p in range(start, start + n) if p not in taken)
        for i, p in zip(chosen, places, strict=True):
            targets[i] = _position_card(suit, p)
        chosen_set = set(chosen)
        for i in range(n):
            if i not in chosen_set:
                targets[i] = _position_card(suit, next(free))
        meld = _check_assignment(cards, tuple(targets), rules)
        if meld is not None:
            return meld
    return None


# --------------------------------------------------------------------------- per-suit tables


def _segments(mask: int, min_run: int) -> int:
    """Bits of ``mask`` inside a stretch of ``min_run``+ consecutive bits."""
    starts = mask
    for i in range(1, min_run):
        starts &= mask >> i
    covered = 0
    for i in range(min_run):
        covered |= starts << i
    return covered


class _SuitTables:
    """Run tables of one suit: index = 13-bit mask of the suit's naturals (bit r-1 = rank r).

    ``value[m]`` weight of the cards; ``run0[m]``/``run0_mask[m]`` the best run
    weight and its cards with no wild (every maximal stretch of ``min_run``+);
    ``relevant[w][m]`` the cards that can be in some run using at most ``w``
    wilds; ``front_w[m]`` and ``front_how[m]`` (filled lazily) the best run
    weight for 0..4 wilds and the cards melded for each, ``front_v[m]`` the
    same in card values. For :func:`best_discard`: ``fd0``/``fd`` the best
    "one card of m discarded" (value kept in runs plus the card's value, then
    the card's value, then its rank, packed in one int) and ``fdr0``/``fdr``
    the same less the value ``m`` keeps without a discard.
    """

    def __init__(self, weights: tuple[int, ...], min_run: int, ace_high: bool) -> None:
        self.weights = weights
        self.min_run = min_run
        self.ace_high = ace_high
        size = 1 << 13
        value = [0] * size
        for m in range(1, size):
            low = m & -m
            value[m] = value[m ^ low] + weights[low.bit_length() - 1]
        self.value = value
        run0 = [0] * size
        run0_mask = [0] * size
        relevant0 = [0] * size
        for m in range(size):
            cov = _segments(m, min_run)
            if ace_high and m & 1:
                cov_high = _segments((m ^ 1) | 1 << 13, min_run)
                cov_high = (cov_high & 0x1FFF) | cov_high >> 13
                relevant0[m] = cov | cov_high
                if value[cov_high] > value[cov]:
                    cov = cov_high
            else:
                relevant0[m] = cov
            run0[m] = value[cov]
            run0_mask[m] = cov
        self.run0 = run0
        self.run0_mask = run0_mask
        self.relevant: list[list[int]] = [relevant0] + [[-1] * size for _ in range(_FAST_WILDS)]
        self.front_w: list[tuple[int, ...] | None] = [None] * size
        self.front_how: list[tuple[int, ...]] = [()] * size
        self._pos_weights = [*list(weights), weights[0]]
        self._g: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {0: ((0,) * (_FAST_WILDS + 1),) * 2}
        # Discard tables, in card values (weights >> 8): the best "value kept in runs + value of
        # the discarded card" over the cards d of the mask, packed as (total << 32) | (v(d) << 8) | rank-1,
        # so that comparing packed ints prefers the lower deadwood, then the dearer card, then the higher rank.
        self.card_values = [w >> _SCALE_BITS for w in weights]
        run0_v = [x >> _SCALE_BITS for x in run0]
        self.run0_v = run0_v
        fd0 = [-1] * size
        for m in range(1, size):
            best = -1
            x = m
            while x:
                low = x & -x
                r = low.bit_length() - 1
                x ^= low
                vd = self.card_values[r]
                e = ((vd + run0_v[m ^ low]) << 32) | (vd << 8) | r
                if e > best:
                    best = e
            fd0[m] = best
        self.fd0 = fd0
        # the same, less what the suit keeps without a discard: a leaf adds its own total once;
        # an empty suit gets a hopeless entry instead of a test
        self.fdr0 = [_HOPELESS] + [fd0[m] - (run0_v[m] << 32) for m in range(1, size)]
        self.front_v: list[tuple[int, ...] | None] = [None] * size
        self.fd: list[tuple[int, ...] | None] = [None] * size
        self.fdr: list[tuple[int, ...] | None] = [(_HOPELESS,) * (_FAST_WILDS + 1)] + [None] * (size - 1)

    def fill_all(self) -> None:
        """Fill the lazy tables completely (a fraction of a second)."""
        for m in range(1 << 13):
            if self.front_w[m] is None:
                self.fill_front(m)
            if self.fdr[m] is None:
                self.fill_fd(m)
            for w in range(1, _FAST_WILDS + 1):
                if self.relevant[w][m] < 0:
                    self.fill_relevant(w, m)

    def fill_relevant(self, wilds: int, m: int) -> int:
        pm = m | ((m & 1) << 13) if self.ace_high else m
        need = self.min_run - wilds
        out = 0
        width = (1 << self.min_run) - 1
        for start in range((14 if self.ace_high else 13) - self.min_run + 1):
            got = pm & (width << start)
            if got.bit_count() >= need:
                out |= got
        out = (out & 0x1FFF) | (out >> 13)
        self.relevant[wilds][m] = out
        return out

    def fill_front(self, m: int) -> tuple[int, ...]:
        res = self._frontier(m)
        if self.ace_high and m & 1:
            best_h, how_h = self._frontier((m ^ 1) | 1 << 13)
            best, how = list(res[0]), list(res[1])
            for w in range(_FAST_WILDS + 1):
                if best_h[w] > best[w]:
                    best[w] = best_h[w]
                    how[w] = (how_h[w] & 0x1FFF) | how_h[w] >> 13
            res = (tuple(best), tuple(how))
        self.front_w[m] = res[0]
        self.front_how[m] = res[1]
        self.front_v[m] = tuple(x >> _SCALE_BITS for x in res[0])
        return res[0]

    def fill_fv(self, m: int) -> tuple[int, ...]:
        self.fill_front(m)
        res = self.front_v[m]
        assert res is not None
        return res

    def fill_fd(self, m: int) -> tuple[int, ...]:
        """The discard table entry of ``m`` for 0..4 wilds (see ``fd0``); -1 for no card."""
        best = [-1] * (_FAST_WILDS + 1)
        x = m
        while x:
            low = x & -x
            r = low.bit_length() - 1
            x ^= low
            if self.front_v[m ^ low] is None:
                self.fill_front(m ^ low)
            sub = self.front_v[m ^ low]
            assert sub is not None
            vd = self.card_values[r]
            for w in range(_FAST_WILDS + 1):
                e = ((vd + sub[w]) << 32) | (vd << 8) | r
                if e > best[w]:
                    best[w] = e
        res = tuple(best)
        self.fd[m] = res
        if m:
            kept = self.front_v[m] or self.fill_fv(m)
            self.fdr[m] = tuple(e - (kept[0] << 32) for e in res)
        return res

    def fill_fdr(self, m: int) -> tuple[int, ...]:
        self.fill_fd(m)
        res = self.fdr[m]
        assert res is not None
        return res

    def _frontier(self, pm: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Best run weight of the position mask ``pm`` (bit i = position i+1) for 0..4 wilds.

        The lowest card is deadwood, or starts a run with the next j cards of
        the suit: runs never need to skip a natural of their span (swapping it
        in for the wild is never worse, and two overlapping runs merge into one
        needing fewer wilds), so this DP is exact.
        """
        hit = self._g.get(pm)
        if hit is not None:
            return hit
        low = pm & -pm
        p = low.bit_length() - 1
        sub_best, sub_how = self._frontier(pm ^ low)
        best = list(sub_best)
        how = list(sub_how)
        pw = self._pos_weights
        min_run = self.min_run
        run, rest, wsum, k, q = low, pm ^ low, pw[p], 1, p
        while True:
            span = q - p + 1
            cost = span - k + (min_run - span if span < min_run else 0)
            if cost <= _FAST_WILDS:
                f_best, f_how = self._frontier(pm ^ run)
                for w in range(cost, _FAST_WILDS + 1):
                    v = wsum + f_best[w - cost]
                    if v > best[w]:
                        best[w] = v
                        how[w] = f_how[w - cost] | run
            if not rest:
                break
            nxt = rest & -rest
            q = nxt.bit_length() - 1
            if q - p >= MAX_RUN:
                break
            run |= nxt
            rest ^= nxt
            wsum += pw[q]
            k += 1
        res = (tuple(best), tuple(how))
        self._g[pm] = res
        return res


_SUIT_TABLES: dict[tuple[tuple[int, ...], int, bool], _SuitTables] = {}


def _suit_tables(weights: tuple[int, ...], min_run: int, ace_high: bool) -> _SuitTables:
    key = (weights, min_run, ace_high)
    tables = _SUIT_TABLES.get(key)
    if tables is None:
        if len(_SUIT_TABLES) >= 32:
            _SUIT_TABLES.clear()
        tables = _SUIT_TABLES[key] = _SuitTables(weights, min_run, ace_high)
    return tables


_POP4 = [bin(p).count("1") for p in range(16)]
# a 13-bit suit mask spread to one bit in four (bit r -> bit 4r): four of them interleave into
# a rank-major mask whose nibble r says which suits hold rank r
_SPREAD4 = [sum(1 << 4 * r for r in range(13) if m >> r & 1) for m in range(1 << 13)]
_SHIFT = (1).__lshift__
_MASK52 = (1 << 52) - 1
_HOPELESS = -(1 << 80)  # a discard key below every real one
_NO_SETS = ((0, 0, 0),)  # the one leaf when no rank needs a choice
_ZEROS = (0,) * (_FAST_WILDS + 1)


def _set_options(lo: int, min_set: int) -> list[list[list[tuple[int, int]]]]:
    """``[present][relevant]`` -> the sets worth trying at one rank, as (suits, wilds needed).

    Cards of the rank that fit no run are always in the set when there is one
    (and there is one when they alone are enough).
    When the rank has ``min_set`` naturals, a set that uses fewer of them plus
    wilds is never better than a natural set of ``min_set``: the wilds can go
    to the runs instead, standing for the naturals the set took from them.
    """
    table: list[list[list[tuple[int, int]]]] = []
    for present in range(16):
        row = []
        for relevant in range(16):
            must = present & ~relevant
            # no set at all loses to the set of the cards that fit no run, when they are enough
            opts = [] if _POP4[must] >= min_set else [(0, 0)]
            for s in range(1, 16):
                size = _POP4[s]
                if s & present == s and s & must == must and size >= (min_set if _POP4[present] >= min_set else lo):
                    opts.append((s, max(0, min_set - size)))
            row.append(opts)
        table.append(row)
    return table


# --------------------------------------------------------------------------- the solver


class _Solver:
    """Everything precomputed for one :class:`MeldRules`."""

    def __init__(self, rules: MeldRules) -> None:
        self.rules = rules
        self.wt = [v * _SCALE + 1 for v in rules.values]
        self.min_set = rules.min_set
        self.min_run = rules.min_run
        self.limit = rules.wild_limit
        # with these limits every wild joins a meld once a natural is melded: a set takes any
        # number, a run grows to 13 cards and a full run splits in two (needs min_run <= 7)
        self.absorbing = rules.wild_limit in ("none", "at_least_one_natural") and rules.min_run <= 7
        self.all_wild_ok = rules.wild_limit == "none"
        self.all_wild_size = min(rules.min_set, rules.min_run)
        self.jokers_wild = rules.jokers_wild
        self.wild_mask = sum(1 << make_card(r, s) for r in rules.wild_ranks for s in range(4))
        ace_high = rules.aces == "high_or_low"
        self.ace_high = ace_high
        self.tabs = [_suit_tables(tuple(self.wt[13 * s : 13 * s + 13]), rules.min_run, ace_high) for s in range(4)]
        # a set of one natural plus wilds only when that is cheaper than a run of one natural plus wilds
        self.set_lo = 1 if rules.min_set < rules.min_run else 2
        self.opts_a = _set_options(rules.min_set, rules.min_set)
        self.opts_b = _set_options(self.set_lo, rules.min_set)
        self.set_weight = [[sum(self.wt[13 * s + r] for s in range(4) if sp >> s & 1) for sp in range(16)]
                           for r in range(13)]
        self.spread = [[sum(1 << (13 * s + r) for s in range(4) if sp >> s & 1) for sp in range(16)]
                       for r in range(13)]
        # discard preference: higher value, then a natural over a wild, then the higher code
        ranked = sorted(range(53), key=lambda c: (-rules.values[c], rules.is_wild(c), -c))
        self.discard_order = [0] * 53
        for i, c in enumerate(ranked):
            self.discard_order[c] = i
        self.wild_cards_set = {c for c in range(53) if rules.is_wild(c)}
        self.set_value = [[w >> _SCALE_BITS for w in row] for row in self.set_weight]
        # (wilds, rank, present suits, relevant suits) -> [(wilds needed, weight or value, cards)]
        self.opts_w: dict[int, list[tuple[int, int, int]]] = {}
        self.opts_v: dict[int, list[tuple[int, int, int]]] = {}
        # (rank, present suits) -> the item card to discard first, packed (value << 8) | code
        self.item_pick = [[max(((rules.values[13 * s + r] << 8) | (13 * s + r) for s in range(4) if sp >> s & 1),
                               default=0) for sp in range(16)] for r in range(13)]
        # the one-pass best discard needs every card to be worth something (see _discard_fast)
        self.discard_fast_ok = self.absorbing and min(rules.values) > 0

    def _options(self, cache: dict[int, list[tuple[int, int, int]]], table: list[list[int]], wilds: int,
                 r: int, present: int, relevant: int) -> list[tuple[int, int, int]]:
        """The sets to try at rank ``r`` (from ``opts_b``) within ``wilds``, with their weight or value."""
        opts = [(cost, table[r][sp], self.spread[r][sp]) for sp, cost in self.opts_b[present][relevant]
                if cost <= wilds]
        cache[wilds << 12 | r << 8 | present << 4 | relevant] = opts
        return opts

    # ------------------------------------------------------------- entry points

    def solve(self, hand: Sequence[Card]) -> tuple[int, int]:
        """(total weight, best melded weight) of ``hand``."""
        res = self._solve(hand, False)
        return res[0], res[1]

    def _solve(self, hand: Sequence[Card], want: bool) -> tuple[int, int, list[Card] | None]:
        """(total weight, best melded weight, deadwood cards if ``want``, in no order)."""
        try:
            m = sum(map(_SHIFT, hand))
        except (TypeError, ValueError):
            for c in hand:
                _check_card(c)
            raise
        if m.bit_count() == len(hand):  # all different (a sum of distinct powers of two has no carry)
            nj = m >> 52
            if nj:
                if nj > 1:
                    for c in hand:
                        _check_card(c)
                m ^= 1 << 52
        else:  # duplicates, or several jokers
            nj = m = 0
            for c in hand:
                if c == JOKER:
                    nj += 1
                else:
                    _check_card(c)
                    if m >> c & 1:
                        return self._solve_search(hand, want)
                    m |= 1 << c
        if not self.absorbing:
            return self._solve_search(hand, want)
        wm = m & self.wild_mask
        nat = m ^ wm
        wild_n = wm.bit_count()
        if self.jokers_wild:
            wild_n += nj
        if wild_n > _FAST_WILDS:
            return self._solve_search(hand, want)
        t0, t1, t2, t3 = self.tabs
        wt_joker = self.wt[JOKER]
        total = t0.value[m & 0x1FFF] + t1.value[m >> 13 & 0x1FFF] + t2.value[m >> 26 & 0x1FFF] \
            + t3.value[m >> 39] + nj * wt_joker
        if wild_n == 0:
            melded, mask = self._no_wild(nat, want)
            if not want:
                return total, melded, None
            return total, melded, _mask_cards(nat & ~mask) + [JOKER] * nj
        wild_w = t0.value[wm & 0x1FFF] + t1.value[wm >> 13 & 0x1FFF] + t2.value[wm >> 26 & 0x1FFF] \
            + t3.value[wm >> 39] + (nj * wt_joker if self.jokers_wild else 0)
        best, mask = self._with_wilds(nat, wild_n, want)
        absorbed = best > 0 or (self.all_wild_ok and wild_n >= self.all_wild_size)
        if absorbed:
            best += wild_w
        best_nat, best_absorbed = nat, absorbed
        if self.limit == "at_least_one_natural" and wm:
            # a wild card used as itself is natural (contract rummy's natural 2s)
            sub = wm
            while sub:
                n_sub = sub.bit_count()
                if n_sub == wild_n:
                    f, f_mask = self._no_wild(nat | sub, want)
                else:
                    f, f_mask = self._with_wilds(nat | sub, wild_n - n_sub, want)
                if f > 0:
                    sub_w = t0.value[sub & 0x1FFF] + t1.value[sub >> 13 & 0x1FFF] \
                        + t2.value[sub >> 26 & 0x1FFF] + t3.value[sub >> 39]
                    f += wild_w - sub_w
                    if f > best:
                        best, mask, best_nat, best_absorbed = f, f_mask, nat | sub, True
                sub = (sub - 1) & wm
        if not want:
            return total, best, None
        dead = _mask_cards(best_nat & ~mask)
        if not best_absorbed:
            dead += _mask_cards(wm) + ([JOKER] * nj if self.jokers_wild else [])
        if not self.jokers_wild:
            dead += [JOKER] * nj
        return total, best, dead

    # ------------------------------------------------------------- one deck, no wild

    def _no_wild(self, n: int, want: bool) -> tuple[int, int]:
        """Best melded weight (and cards if ``want``) of the natural cards ``n`` (one deck, no wild)."""
        a = n & 0x1FFF
        b = n >> 13 & 0x1FFF
        c = n >> 26 & 0x1FFF
        d = n >> 39
        t0, t1, t2, t3 = self.tabs
        ms = self.min_set
        if ms == 3:
            sets = (a & b & (c | d)) | (c & d & (a | b))
        elif ms == 2:
            sets = ((a | b) & (c | d)) | (a & b) | (c & d)
        elif ms == 4:
            sets = a & b & c & d
        else:
            sets = 0
        if not sets:
            melded = t0.run0[a] + t1.run0[b] + t2.run0[c] + t3.run0[d]
            if not want:
                return melded, 0
            return melded, (t0.run0_mask[a] | t1.run0_mask[b] << 13 | t2.run0_mask[c] << 26
                            | t3.run0_mask[d] << 39)
        ra = t0.relevant[0][a]
        rb = t1.relevant[0][b]
        rc = t2.relevant[0][c]
        rd = t3.relevant[0][d]
        conflict = sets & (ra | rb | rc | rd)
        fixed = sets & ~conflict
        fixed_w = t0.value[a & fixed] + t1.value[b & fixed] + t2.value[c & fixed] + t3.value[d & fixed]
        if not conflict:
            melded = t0.run0[a] + t1.run0[b] + t2.run0[c] + t3.run0[d] + fixed_w
            if not want:
                return melded, 0
            return melded, ((t0.run0_mask[a] | fixed) | (t1.run0_mask[b] | fixed) << 13
                            | (t2.run0_mask[c] | fixed) << 26 | (t3.run0_mask[d] | fixed) << 39) & n
        # ranks that are a set and part of a run: try each way to split them
        choices = []
        x = conflict
        spread, set_weight, opts_a = self.spread, self.set_weight, self.opts_a
        while x:
            low = x & -x
            r = low.bit_length() - 1
            x ^= low
            present = (a >> r & 1) | (b >> r & 1) << 1 | (c >> r & 1) << 2 | (d >> r & 1) << 3
            relevant = (ra >> r & 1) | (rb >> r & 1) << 1 | (rc >> r & 1) << 2 | (rd >> r & 1) << 3
            choices.append([(spread[r][s], set_weight[r][s]) for s, _ in opts_a[present][relevant]])
        fixed52 = (fixed | fixed << 13 | fixed << 26 | fixed << 39) & n
        rest0 = n & ~fixed52
        r0, r1, r2, r3 = t0.run0, t1.run0, t2.run0, t3.run0
        best = -1
        best_sel = 0
        for combo in product(*choices):
            sel = 0
            v = fixed_w
            for s_mask, s_w in combo:
                sel |= s_mask
                v += s_w
            rest = rest0 & ~sel
            v += r0[rest & 0x1FFF] + r1[rest >> 13 & 0x1FFF] + r2[rest >> 26 & 0x1FFF] + r3[rest >> 39]
            if v > best:
                best = v
                best_sel = sel
        if not want:
            return best, 0
        rest = rest0 & ~best_sel
        return best, (fixed52 | best_sel | t0.run0_mask[rest & 0x1FFF] | t1.run0_mask[rest >> 13 & 0x1FFF] << 13
                      | t2.run0_mask[rest >> 26 & 0x1FFF] << 26 | t3.run0_mask[rest >> 39] << 39)

    # ------------------------------------------------------------- one deck, 1..4 wilds

    def _with_wilds(self, n: int, wilds: int, want: bool) -> tuple[int, int]:
        """Best weight of naturals ``n`` that can be melded with at most ``wilds`` wilds (one deck).

        0 means no natural can be melded. Sets are chosen per rank (only ranks
        whose cards also fit a run are branched on; the others become knapsack
        items), runs come from the per-suit frontier tables, and the wilds are
        shared out by a small knapsack.
        """
        a = n & 0x1FFF
        b = n >> 13 & 0x1FFF
        c = n >> 26 & 0x1FFF
        d = n >> 39
        t0, t1, t2, t3 = self.tabs
        rel = t0.relevant[wilds]
        ra = rel[a]
        if ra < 0:
            ra = t0.fill_relevant(wilds, a)
        rel = t1.relevant[wilds]
        rb = rel[b]
        if rb < 0:
            rb = t1.fill_relevant(wilds, b)
        rel = t2.relevant[wilds]
        rc = rel[c]
        if rc < 0:
            rc = t2.fill_relevant(wilds, c)
        rel = t3.relevant[wilds]
        rd = rel[d]
        if rd < 0:
            rd = t3.fill_relevant(wilds, d)
        cand = ((a | b) & (c | d)) | (a & b) | (c & d) if self.set_lo == 2 else a | b | c | d
        ms = self.min_set
        spread, set_weight, cache = self.spread, self.set_weight, self.opts_w
        fixed_w = 0
        fixed52 = 0
        items: list[tuple[int, int, int]] = []
        leaves = None
        sp4 = _SPREAD4
        held = sp4[a] | sp4[b] << 1 | sp4[c] << 2 | sp4[d] << 3
        fits = sp4[ra] | sp4[rb] << 1 | sp4[rc] << 2 | sp4[rd] << 3
        while cand:
            low = cand & -cand
            r = low.bit_length() - 1
            cand ^= low
            present = held >> 4 * r & 15
            count = _POP4[present]
            if count + wilds < ms:
                continue
            relevant = fits >> 4 * r & 15
            if not relevant:
                if count >= ms:
                    fixed_w += set_weight[r][present]
                    fixed52 |= spread[r][present]
                else:
                    items.append((ms - count, set_weight[r][present], spread[r][present]))
                continue
            opts = cache.get(wilds << 12 | r << 8 | present << 4 | relevant) \
                or self._options(cache, set_weight, wilds, r, present, relevant)
            if leaves is None:
                leaves = opts
            else:
                leaves = [(c1 + c2, w1 + w2, m1 | m2) for c1, w1, m1 in leaves for c2, w2, m2 in opts
                          if c1 + c2 <= wilds]
        if items:
            front_items = [0] * (wilds + 1)
            for cost, w, _ in items:
                for bud in range(wilds, cost - 1, -1):
                    v = front_items[bud - cost] + w
                    if v > front_items[bud]:
                        front_items[bud] = v
            item_front: Sequence[int] = front_items
        else:
            item_front = _ZEROS
        rest0 = n & ~fixed52
        f0, f1, f2, t3f = t0.front_w, t1.front_w, t2.front_w, t3.front_w
        best = -1
        best_leaf = (0, 0)
        for spent, v, sel in leaves or _NO_SETS:
            rest = rest0 & ~sel
            x = rest & 0x1FFF
            ga = f0[x] or t0.fill_front(x)
            x = rest >> 13 & 0x1FFF
            gb = f1[x] or t1.fill_front(x)
            x = rest >> 26 & 0x1FFF
            gc = f2[x] or t2.fill_front(x)
            x = rest >> 39
            gd = t3f[x] or t3.fill_front(x)
            budget = wilds - spent
            v += ga[0] + gb[0] + gc[0] + gd[0]
            if budget == 1:
                v += max(ga[1] - ga[0], gb[1] - gb[0], gc[1] - gc[0], gd[1] - gd[0], item_front[1])
            elif budget:
                v += _share_gain(budget, ga, gb, gc, gd, item_front)
            if v > best:
                best = v
                best_leaf = (sel, spent)
        best += fixed_w
        if not want:
            return best, 0
        sel, spent = best_leaf
        rest = rest0 & ~sel
        tabs = self.tabs
        budget = wilds - spent
        masks = (rest & 0x1FFF, rest >> 13 & 0x1FFF, rest >> 26 & 0x1FFF, rest >> 39)
        split: Sequence[int] = (0, 0, 0, 0, 0)
        if budget:
            fronts = [tabs[s].front_w[masks[s]] or tabs[s].fill_front(masks[s]) for s in range(4)]
            if budget == 1:
                gains = [f[1] - f[0] for f in fronts] + [item_front[1]]
                one = [0] * 5
                one[gains.index(max(gains))] = 1
                split = one
            else:
                split = _share_split(budget, fronts, item_front)
        mask = fixed52 | sel
        for s in range(4):
            mask |= tabs[s].front_how[masks[s]][split[s]] << 13 * s
        if split[4]:
            for i in _pick_items(items, split[4]):
                mask |= items[i][2]
        return best, mask

    # ------------------------------------------------------------- general search

    def _solve_search(self, hand: Sequence[Card], want: bool) -> tuple[int, int, list[Card] | None]:
        total, melded, plan = self._search(hand, want)
        if not want:
            return total, melded, None
        assert plan is not None
        return total, melded, sorted(plan[1])

    def _search(self, hand: Sequence[Card], want: bool, exact_rooms: bool = False) -> tuple[int, int, Any]:
        """Exact memoised search; with ``want`` also the plan ``(melds, deadwood, wilds used)``.

        Each meld records the naturals it takes and the least and most wilds it
        can hold (``lo``..``hi``: the least fills gaps and reaches the minimum
        size, the most obeys the wild limit and the 13-card run length). Wilds
        are then shared out; the costliest wilds are the ones melded. With the
        limits ``none`` and ``at_least_one_natural`` every wild joins once a
        natural is melded (see the module notes), so only the least counts
        (:meth:`_search_absorbing`) unless ``exact_rooms`` asks for the plan
        that also tracks the most.
        """
        for c in hand:
            _check_card(c)
        if len(hand) >= _SCALE:
            raise ValueError(f"hands of {_SCALE} or more cards are not supported")
        rules = self.rules
        wt = self.wt
        total = sum(wt[c] for c in hand)
        wild_rank_cards = sorted(c for c in hand if c != JOKER and rules.is_wild(c))
        jokers = [c for c in hand if c == JOKER]
        plain = sorted(c for c in hand if c != JOKER and not rules.is_wild(c))
        dead_jokers = [] if self.jokers_wild else jokers
        wild_jokers = jokers if self.jokers_wild else []
        # Which wild-rank cards act as naturals (only matters when a meld needs naturals)
        if self.all_wild_ok:
            natural_options: list[list[Card]] = [[]]
        else:
            counts = sorted(Counter(wild_rank_cards).items())
            natural_options = []
            for picks in product(*[range(k + 1) for _, k in counts]):
                natural_options.append([c for (c, _), p in zip(counts, picks, strict=True) for _ in range(p)])
        best = -1
        best_plan: Any = None
        for as_natural in natural_options:
            wild_cards = list(wild_rank_cards)
            for c in as_natural:
                wild_cards.remove(c)
            wild_cards += wild_jokers
            wild_cards.sort(key=lambda c: (-wt[c], c))
            naturals = tuple(sorted(plain + as_natural))
            if self.absorbing and not exact_rooms:
                value, plan = self._search_absorbing(naturals, [wt[c] for c in wild_cards], want)
            else:
                value, plan = self._search_one(naturals, [wt[c] for c in wild_cards], want)
            if value > best:
                best = value
                if want:
                    melds, used = plan
                    left_wilds = wild_cards[used:]
                    melded_naturals = Counter(c for m in melds for c in m[1])
                    dead = list((Counter(naturals) - melded_naturals).elements()) + left_wilds + dead_jokers
                    best_plan = (melds, dead, wild_cards[:used])
        return total, best, best_plan

    def _search_absorbing(self, naturals: tuple[Card, ...], wild_w: list[int], want: bool) -> tuple[int, Any]:
        """:meth:`_search_one` for the limits where every wild joins once a natural is melded.

        Only the least wilds of each meld count, and a run never skips a
        natural left in its span (swapping it in for the wild there is never
        worse, even with duplicates: the wild can stand for it in the other
        meld), so runs take the next available ranks in a row.
        """
        wt = self.wt
        n_wild = len(wild_w)
        min_set, min_run, ace_high = self.min_set, self.min_run, self.ace_high
        memo: dict[tuple[tuple[Card, ...], int], tuple[int, Any]] = {}

        def solve(rest: tuple[Card, ...], lo: int) -> int:
            key = (rest, lo)
            hit = memo.get(key)
            if hit is not None:
                return hit[0]
            if not rest:
                memo[key] = (0, None)
                return 0
            c = rest[0]
            tail = rest[1:]
            best = solve(tail, lo)
            choice: Any = None
            rank = c % 13
            same = [x for x in tail if x % 13 == rank]
            kinds = sorted(set(same))
            smallest = min_set if len(same) + 1 >= min_set else 1  # a short set is never needed then
            for picks in product(*[range(same.count(x) + 1) for x in kinds]):
                taken = [c] + [x for x, p in zip(kinds, picks, strict=True) for _ in range(p)]
                k = len(taken)
                if k < smallest:
                    continue
                need = min_set - k if k < min_set else 0
                if lo + need > n_wild:
                    continue
                rest2 = _remove(tail, taken[1:])
                v = sum(wt[x] for x in taken) + solve(rest2, lo + need)
                if v > best:
                    best = v
                    choice = ("set", tuple(taken), need, _INF, (rest2, lo + need))
            suit = c // 13
            p = c % 13 + 1
            higher = sorted({x for x in tail if x // 13 == suit and x != c})
            for place in [1, 14] if (p == 1 and ace_high) else [p]:
                if place == 14:
                    runs = [higher[len(higher) - j:] for j in range(1, len(higher) + 1)]
                else:
                    runs = [higher[:j] for j in range(len(higher) + 1)]
                for picked in runs:
                    k = 1 + len(picked)
                    if place == 14:
                        span = 14 - (picked[0] % 13 + 1) + 1
                    else:
                        span = (picked[-1] % 13 + 1 if picked else p) - p + 1
                    if span > MAX_RUN:
                        break
                    need = span - k + (min_run - span if span < min_run else 0)
                    if lo + need > n_wild:
                        continue
                    rest2 = _remove(tail, picked)
                    v = wt[c] + sum(wt[x] for x in picked) + solve(rest2, lo + need)
                    if v > best:
                        best = v
                        choice = ("run", (c, *picked), need, MAX_RUN - k, (rest2, lo + need), place)
            memo[key] = (best, choice)
            return best

        natural = solve(naturals, 0)
        used = n_wild if natural > 0 or (self.all_wild_ok and n_wild >= self.all_wild_size) else 0
        value = natural + sum(wild_w[:used])
        if not want:
            return value, None
        melds = []
        key = (naturals, 0)
        while key[0]:
            _, choice = memo[key]
            if choice is None:
                key = (key[0][1:], key[1])
                continue
            melds.append(choice)
            key = choice[4]
        return value, (melds, used)

    def _search_one(self, naturals: tuple[Card, ...], wild_w: list[int], want: bool) -> tuple[int, Any]:
        wt = self.wt
        n_wild = len(wild_w)
        prefix = [0]
        for w in wild_w:
            prefix.append(prefix[-1] + w)
        min_set, min_run, limit = self.min_set, self.min_run, self.limit
        all_wild_ok, all_wild_size = self.all_wild_ok, self.all_wild_size
        ace_high = self.ace_high
        if limit in ("none", "at_least_one_natural"):
            def cap(k: int) -> int:
                return _INF
        elif limit == "not_more_than_naturals":
            def cap(k: int) -> int:
                return k
        else:
            def cap(k: int) -> int:
                return k - 1
        memo: dict[tuple[tuple[Card, ...], int, int], tuple[int, Any]] = {}

        def used_wilds(lo: int, hi: int) -> int:
            if all_wild_ok and n_wild - lo >= all_wild_size:
                return n_wild
            return hi if hi < n_wild else n_wild

        def solve(rest: tuple[Card, ...], lo: int, hi: int) -> int:
            key = (rest, lo, hi)
            hit = memo.get(key)
            if hit is not None:
                return hit[0]
            if not rest:
                value = prefix[used_wilds(lo, hi)]
                memo[key] = (value, None)
                return value
            c = rest[0]
            tail = rest[1:]
            best = solve(tail, lo, hi)
            choice: Any = None
            # sets holding c: any sub-multiset of the other cards of its rank
            rank = c % 13
            same = [x for x in tail if x % 13 == rank]
            kinds = sorted(set(same))
            for picks in product(*[range(same.count(x) + 1) for x in kinds]):
                taken = [c] + [x for x, p in zip(kinds, picks, strict=True) for _ in range(p)]
                k = len(taken)
                need = min_set - k if k < min_set else 0
                room = cap(k)
                if need > room or lo + need > n_wild:
                    continue
                rest2 = _remove(tail, taken[1:])
                nhi = hi + room
                v = sum(wt[x] for x in taken) + solve(rest2, lo + need, nhi if nhi < n_wild else n_wild)
                if v > best:
                    best = v
                    choice = ("set", tuple(taken), need, room, (rest2, lo + need, min(nhi, n_wild)))
            # runs holding c as their lowest natural (or as a high ace, their highest)
            suit = c // 13
            p = c % 13 + 1
            higher = sorted({x for x in tail if x // 13 == suit and x != c})
            places = [1, 14] if (p == 1 and ace_high) else [p]
            for bits in range(1 << len(higher)):
                picked = [higher[i] for i in range(len(higher)) if bits >> i & 1]
                k = 1 + len(picked)
                for place in places:
                    if place == 14 and not picked:
                        continue  # a lone high ace is the same as a lone low ace
                    if place == 14:
                        span = 14 - (picked[0] % 13 + 1) + 1
                    else:
                        span = (picked[-1] % 13 + 1 if picked else p) - p + 1
                    if span > MAX_RUN:
                        continue
                    need = span - k + (min_run - span if span < min_run else 0)
                    room = min(cap(k), MAX_RUN - k)
                    if need > room or lo + need > n_wild:
                        continue
                    rest2 = _remove(tail, picked)
                    nhi = hi + room
                    v = wt[c] + sum(wt[x] for x in picked) + solve(rest2, lo + need, nhi if nhi < n_wild else n_wild)
                    if v > best:
                        best = v
                        choice = ("run", (c, *picked), need, room, (rest2, lo + need, min(nhi, n_wild)), place)
            memo[key] = (best, choice)
            return best

        value = solve(naturals, 0, 0)
        if not want:
            return value, None
        melds = []
        key = (naturals, 0, 0)
        lo = hi = 0
        while True:
            _, choice = memo[key]
            rest, lo_k, hi_k = key
            if not rest:
                lo, hi = lo_k, hi_k
                break
            if choice is None:
                key = (rest[1:], lo_k, hi_k)
                continue
            melds.append(choice)
            key = choice[4]
        used = used_wilds(lo, hi)
        return value, (melds, used)

    # ------------------------------------------------------------- arrangement

    def arrangement(self, hand: Sequence[Card]) -> Arrangement:
        total, melded, plan = self._search(hand, True)
        melds, dead, wilds = plan
        realized = self._realize(melds, wilds)
        if realized is None:  # every meld is a full run: ask for a split that leaves room
            total, melded, plan = self._search(hand, True, exact_rooms=True)
            melds, dead, wilds = plan
            realized = self._realize(melds, wilds)
            assert realized is not None
        score = (total - melded) // _SCALE
        return Arrangement(score, tuple(realized), tuple(sorted(dead)))

    def _realize(self, plan: list[Any], wilds: list[Card]) -> list[Meld] | None:
        """Concrete melds from the search plan: share out ``wilds`` and say what each stands for.

        None if the extra wilds fit nowhere (only when every meld is a full run)."""
        extra = len(wilds) - sum(m[2] for m in plan)
        counts = [m[2] for m in plan]
        if sum(m[3] - m[2] for m in plan) >= extra:
            # extra wilds join the melds: sets first (they take any number), then runs
            order = sorted(range(len(plan)), key=lambda i: plan[i][0] != "set")
            for i in order:
                give = min(plan[i][3] - plan[i][2], extra)
                counts[i] += give
                extra -= give
        elif not (self.all_wild_ok and extra >= self.all_wild_size):
            return None
        # else the extra wilds (a meld's worth at least) make one all-wild meld
        pool = list(wilds)
        out = []
        for m, j in zip(plan, counts, strict=True):
            mine, pool = pool[:j], pool[j:]
            if m[0] == "set":
                out.append(self._set_meld(list(m[1]), mine))
            else:
                out.append(self._run_meld(list(m[1]), m[5], mine))
        if pool:
            out.append(self._all_wild_meld(pool))
        return out

    def _set_meld(self, naturals: list[Card], wilds: list[Card]) -> Meld:
        rank = naturals[0] % 13
        targets = [make_card(rank + 1, 0 if w == JOKER else w // 13) for w in wilds]
        meld = _check_assignment(tuple(naturals + wilds), tuple(naturals + targets), self.rules)
        assert meld is not None, (naturals, wilds)
        return meld

    def _run_meld(self, naturals: list[Card], first_place: int, wilds: list[Card]) -> Meld:
        suit = naturals[0] // 13
        places = [first_place] + [c % 13 + 1 for c in naturals[1:]]
        lo, hi = min(places), max(places)
        length = len(naturals) + len(wilds)
        top = 14 if self.ace_high and lo != 1 else 13
        hi_w = min(top, lo + length - 1)
        lo_w = hi_w - length + 1
        taken = set(places)
        free = [p for p in range(lo_w, hi_w + 1) if p not in taken]
        cards = naturals + wilds
        targets = [_position_card(suit, p) for p in places] + [_position_card(suit, p) for p in free]
        meld = _check_assignment(tuple(cards), tuple(targets), self.rules)
        assert meld is not None and hi >= lo, (naturals, wilds)
        return meld

    def _all_wild_meld(self, wilds: list[Card]) -> Meld:
        meld = _find_assignment(tuple(sorted(wilds)), self.rules)
        assert meld is not None, wilds
        return meld

    # ------------------------------------------------------------- discards

    def best_discard(self, hand: Sequence[Card]) -> DiscardChoice:
        """See :func:`best_discard`."""
        if self.discard_fast_ok:
            choice = self._discard_fast(hand)
            if choice is not None:
                return choice
        return self._discard_loop(hand)

    def _discard_loop(self, hand: Sequence[Card]) -> DiscardChoice:
        """The best discard by solving ``hand`` minus each card that could beat the best so far.

        One solve gives the deadwood ``dead`` of a best arrangement: its most
        preferred card leaves exactly ``md - value``; a card can only do better
        if ``md - its value`` does not exceed the best score so far.
        """
        total, melded, dead = self._solve(hand, True)
        assert dead is not None
        md_w = total - melded
        wt, order = self.wt, self.discard_order
        best_w = -1
        best_card = -1
        if dead:
            best_card = min(dead, key=order.__getitem__)
            best_w = md_w - wt[best_card]
        # discarding a melded wild leaves at least ``md`` (the other cards cannot meld more)
        skip_wilds = self.absorbing and best_w >= 0 and best_w // _SCALE < md_w // _SCALE \
            and not (set(dead) & self.wild_cards_set)
        is_wild = self.rules.is_wild
        for card in sorted(set(hand), key=order.__getitem__):
            if card == best_card:
                break  # the cards after it are worth less, or tie and come later
            if best_w >= 0 and (md_w - wt[card]) // _SCALE > best_w // _SCALE:
                break  # md - value only grows from here
            if skip_wilds and is_wild(card):
                continue
            rest = list(hand)
            rest.remove(card)
            t, m = self.solve(rest)
            if best_w < 0 or (t - m) // _SCALE < best_w // _SCALE or (
                (t - m) // _SCALE == best_w // _SCALE and order[card] < order[best_card]
            ):
                best_w, best_card = t - m, card
        return DiscardChoice(best_card, best_w // _SCALE, best_w == 0)

    def _discard_fast(self, hand: Sequence[Card]) -> DiscardChoice | None:
        """The best discard in one pass over the set choices, or None when this cannot tell.

        When a best arrangement leaves a card worth more than 0 unmatched, a
        better-or-equal discard d scores below ``md``; then in a best
        arrangement of the hand without d, d's rank holds no set (a set there
        would also take d, giving at most ``md``), so d comes out of its suit's
        run part: the per-suit discard tables ``fd`` cover every such d. A
        melded wild is never that discard (it leaves at least ``md``).
        """
        try:
            m = sum(map(_SHIFT, hand))
        except (TypeError, ValueError):
            return None
        if m.bit_count() != len(hand) or m >> 53:
            return None  # duplicates, several jokers or a bad code: the careful way
        nj = m >> 52
        m &= _MASK52
        wm = m & self.wild_mask
        if wm and self.limit != "none":
            return None  # natural 2s need the at_least_one_natural enumeration
        nat = m ^ wm
        joker_wild = nj if self.jokers_wild else 0
        wild_n = wm.bit_count() + joker_wild
        if wild_n > _FAST_WILDS or not nat:
            return None
        t0, t1, t2, t3 = self.tabs
        values = self.rules.values
        total_v = (t0.value[m & 0x1FFF] + t1.value[m >> 13 & 0x1FFF] + t2.value[m >> 26 & 0x1FFF]
                   + t3.value[m >> 39]) >> _SCALE_BITS
        total_v += nj * values[JOKER]
        if wild_n:
            wild_v = (t0.value[wm & 0x1FFF] + t1.value[wm >> 13 & 0x1FFF] + t2.value[wm >> 26 & 0x1FFF]
                      + t3.value[wm >> 39]) >> _SCALE_BITS
            wild_v += joker_wild * values[JOKER]
            melded_v, key = self._discard_with_wilds(nat, wild_n)
            if melded_v == 0 and not (self.all_wild_ok and wild_n >= self.all_wild_size):
                return None  # nothing melds: every card is deadwood (the loop settles it quickly)
        else:
            wild_v = 0
            melded_v, key = self._discard_no_wild(nat)
        if key < 0:
            return None
        md = total_v - melded_v - wild_v
        kept = key >> 32  # value melded after the discard, plus the discard's value
        value_d = (key >> 8) & 0xFFFFFF
        card = key & 0xFF
        if wild_n and kept == value_d and not (self.all_wild_ok and wild_n >= self.all_wild_size):
            return None  # nothing natural would be melded: the wilds would not be either
        score = total_v - kept - wild_v
        if score >= md:
            return None  # the hand is (nearly) fully melded: some meld must give up a card
        if nj and not self.jokers_wild:  # a joker that is not wild is always deadwood
            joker_score = md - values[JOKER]
            if joker_score < score or (joker_score == score and self.discard_order[JOKER] < self.discard_order[card]):
                card, score = JOKER, joker_score
        return DiscardChoice(card, score, score == 0)

    def _discard_share(self, budget: int, base: int, fronts: tuple[tuple[int, ...], ...], masks: tuple[int, ...],
                       item_front: list[int], items: list[tuple[int, int, int]],
                       items_without: list[list[int]]) -> tuple[int, int]:
        """(best gain of ``budget`` wilds, best discard key) of one leaf, for 2+ wilds.

        Max-plus merges of the wild-gain curves: prefix and suffix products give,
        for each suit, the best the other suits and the items make of any budget.
        """
        if budget == 2:
            return self._discard_share2(base, fronts, masks, item_front, items, items_without)
        parts = [[f[w] - f[0] for w in range(budget + 1)] for f in fronts]
        parts.append(item_front[: budget + 1])
        prefix = [[0] * (budget + 1), parts[0]]
        for part in parts[1:]:
            prefix.append(_merge(prefix[-1], part))
        suffix = [parts[4]]
        for part in reversed(parts[:4]):
            suffix.append(_merge(suffix[-1], part))
        suffix.reverse()  # suffix[i]: parts i..4
        k = -1
        for s in range(4):
            if not masks[s]:
                continue
            table = self.tabs[s]
            e = table.fdr[masks[s]] or table.fill_fdr(masks[s])
            others = _merge(prefix[s], suffix[s + 1])
            for w in range(budget + 1):
                k = max(k, e[w] + ((base + others[budget - w]) << 32) + 13 * s)
        for i, (_, _, pick) in enumerate(items):
            other_gain = _merge(prefix[4], items_without[i][: budget + 1])[budget]
            k = max(k, ((base + other_gain + (pick >> 8)) << 32) | pick)
        return prefix[5][budget], k  # prefix[5] merges all five curves

    def _discard_share2(self, base: int, fronts: tuple[tuple[int, ...], ...], masks: tuple[int, ...],
                        item_front: list[int], items: list[tuple[int, int, int]],
                        items_without: list[list[int]]) -> tuple[int, int]:
        """:meth:`_discard_share` for exactly 2 wilds: both in one part, or one in each of two parts."""
        one = [f[1] - f[0] for f in fronts]
        two = [f[2] - f[0] for f in fronts]
        one.append(item_front[1])
        two.append(item_front[2])
        by_one = sorted(range(5), key=one.__getitem__, reverse=True)
        by_two = sorted(range(5), key=two.__getitem__, reverse=True)
        p, q, u = by_one[0], by_one[1], by_one[2]
        gain = max(two[by_two[0]], one[p] + one[q])
        k = -1
        for s in range(4):
            if not masks[s]:
                continue
            table = self.tabs[s]
            e = table.fdr[masks[s]] or table.fill_fdr(masks[s])
            i, j = (q, u) if s == p else (p, u) if s == q else (p, q)  # the two best other one-wild gains
            others2 = max(one[i] + one[j], two[by_two[1]] if by_two[0] == s else two[by_two[0]])
            k = max(k, max(e[2], e[1] + (one[i] << 32), e[0] + (others2 << 32)) + ((base << 32) + 13 * s))
        if items:
            suit_one = sorted(one[:4], reverse=True)
            suit_two = max(two[:4])
            for idx, (_, _, pick) in enumerate(items):
                without = items_without[idx]
                top = sorted([*suit_one[:2], without[1]], reverse=True)
                other_gain = max(suit_two, without[2], top[0] + top[1])
                k = max(k, ((base + other_gain + (pick >> 8)) << 32) | pick)
        return gain, k

    def _discard_no_wild(self, n: int) -> tuple[int, int]:
        """(best melded value, best discard key) of the naturals ``n`` (one deck, no wild)."""
        a = n & 0x1FFF
        b = n >> 13 & 0x1FFF
        c = n >> 26 & 0x1FFF
        d = n >> 39
        t0, t1, t2, t3 = self.tabs
        ms = self.min_set
        if ms == 3:
            sets = (a & b & (c | d)) | (c & d & (a | b))
        elif ms == 2:
            sets = ((a | b) & (c | d)) | (a & b) | (c & d)
        elif ms == 4:
            sets = a & b & c & d
        else:
            sets = 0
        leaves: list[tuple[int, int]]
        if not sets:
            leaves = [(n, 0)]
        else:
            ra, rb, rc, rd = t0.relevant[0][a], t1.relevant[0][b], t2.relevant[0][c], t3.relevant[0][d]
            conflict = sets & (ra | rb | rc | rd)
            fixed = sets & ~conflict
            fixed52 = (fixed | fixed << 13 | fixed << 26 | fixed << 39) & n
            fixed_v = (t0.value[a & fixed] + t1.value[b & fixed] + t2.value[c & fixed]
                       + t3.value[d & fixed]) >> _SCALE_BITS
            leaves = [(n & ~fixed52, fixed_v)]
            x = conflict
            spread, set_value, opts_a = self.spread, self.set_value, self.opts_a
            while x:
                low = x & -x
                r = low.bit_length() - 1
                x ^= low
                present = (a >> r & 1) | (b >> r & 1) << 1 | (c >> r & 1) << 2 | (d >> r & 1) << 3
                relevant = (ra >> r & 1) | (rb >> r & 1) << 1 | (rc >> r & 1) << 2 | (rd >> r & 1) << 3
                opts = [(spread[r][sp], set_value[r][sp]) for sp, _ in opts_a[present][relevant]]
                leaves = [(rest & ~sm, v + sv) for rest, v in leaves for sm, sv in opts]
        r0, r1, r2, r3 = t0.run0_v, t1.run0_v, t2.run0_v, t3.run0_v
        d0, d1, d2, d3 = t0.fdr0, t1.fdr0, t2.fdr0, t3.fdr0
        best = -1
        best_key = -1
        for rest, v in leaves:
            a = rest & 0x1FFF
            b = rest >> 13 & 0x1FFF
            c = rest >> 26 & 0x1FFF
            d = rest >> 39
            v += r0[a] + r1[b] + r2[c] + r3[d]
            if v > best:
                best = v
            k = max(d0[a], d1[b] + 13, d2[c] + 26, d3[d] + 39) + (v << 32)
            if k > best_key:
                best_key = k
        return best, best_key

    def _discard_with_wilds(self, n: int, wilds: int) -> tuple[int, int]:
        """(best melded natural value, best discard key) of naturals ``n`` with ``wilds`` wilds (one deck)."""
        a = n & 0x1FFF
        b = n >> 13 & 0x1FFF
        c = n >> 26 & 0x1FFF
        d = n >> 39
        tabs = self.tabs
        t0, t1, t2, t3 = tabs
        ra = t0.relevant[wilds][a]
        if ra < 0:
            ra = t0.fill_relevant(wilds, a)
        rb = t1.relevant[wilds][b]
        if rb < 0:
            rb = t1.fill_relevant(wilds, b)
        rc = t2.relevant[wilds][c]
        if rc < 0:
            rc = t2.fill_relevant(wilds, c)
        rd = t3.relevant[wilds][d]
        if rd < 0:
            rd = t3.fill_relevant(wilds, d)
        cand = ((a | b) & (c | d)) | (a & b) | (c & d) if self.set_lo == 2 else a | b | c | d
        ms = self.min_set
        spread, set_value, cache = self.spread, self.set_value, self.opts_v
        fixed_v = 0
        fixed52 = 0
        items: list[tuple[int, int, int]] = []  # (wilds needed, value, best card to discard, packed)
        items52 = 0
        leaves: list[tuple[int, int, int]] | None = None
        sp4 = _SPREAD4
        held = sp4[a] | sp4[b] << 1 | sp4[c] << 2 | sp4[d] << 3
        fits = sp4[ra] | sp4[rb] << 1 | sp4[rc] << 2 | sp4[rd] << 3
        while cand:
            low = cand & -cand
            r = low.bit_length() - 1
            cand ^= low
            present = held >> 4 * r & 15
            count = _POP4[present]
            if count + wilds < ms:
                continue
            relevant = fits >> 4 * r & 15
            if not relevant:
                if count >= ms:
                    fixed_v += set_value[r][present]
                    fixed52 |= spread[r][present]
                else:
                    # an item's cards fit no run: they leave the suit masks, and are discard candidates
                    # of their own (the item is then not melded: a set there would keep the discard)
                    items.append((ms - count, set_value[r][present], self.item_pick[r][present]))
                    items52 |= spread[r][present]
                continue
            opts = cache.get(wilds << 12 | r << 8 | present << 4 | relevant) \
                or self._options(cache, set_value, wilds, r, present, relevant)
            if leaves is None:
                leaves = opts
            else:
                leaves = [(c1 + c2, w1 + w2, m1 | m2) for c1, w1, m1 in leaves for c2, w2, m2 in opts
                          if c1 + c2 <= wilds]
        if items:
            item_front = _item_front(items, wilds)
            items_without = [_item_front(items[:i] + items[i + 1:], wilds) for i in range(len(items))]
        else:
            item_front = [0] * (wilds + 1)
            items_without = []
        rest0 = n & ~fixed52 & ~items52
        fv0, fv1, fv2, fv3 = t0.front_v, t1.front_v, t2.front_v, t3.front_v
        fd0, fd1, fd2, fd3 = t0.fdr, t1.fdr, t2.fdr, t3.fdr
        best = -1
        best_key = -1
        for spent, v, sel in leaves or _NO_SETS:
            rest = rest0 & ~sel
            x0 = rest & 0x1FFF
            x1 = rest >> 13 & 0x1FFF
            x2 = rest >> 26 & 0x1FFF
            x3 = rest >> 39
            f0 = fv0[x0] or t0.fill_fv(x0)
            f1 = fv1[x1] or t1.fill_fv(x1)
            f2 = fv2[x2] or t2.fill_fv(x2)
            f3 = fv3[x3] or t3.fill_fv(x3)
            budget = wilds - spent
            base = v + fixed_v + f0[0] + f1[0] + f2[0] + f3[0]
            if budget == 0:
                if base > best:
                    best = base
                k = max((fd0[x0] or t0.fill_fdr(x0))[0], (fd1[x1] or t1.fill_fdr(x1))[0] + 13,
                        (fd2[x2] or t2.fill_fdr(x2))[0] + 26, (fd3[x3] or t3.fill_fdr(x3))[0] + 39) + (base << 32)
                for _, _, pick in items:
                    k = max(k, ((base + (pick >> 8)) << 32) | pick)
            elif budget == 1:
                g0 = f0[1] - f0[0]
                g1 = f1[1] - f1[0]
                g2 = f2[1] - f2[0]
                g3 = f3[1] - f3[0]
                gi = item_front[1]
                top = max(g0, g1, g2, g3, gi)
                if base + top > best:
                    best = base + top
                e0 = fd0[x0] or t0.fill_fdr(x0)
                e1 = fd1[x1] or t1.fill_fdr(x1)
                e2 = fd2[x2] or t2.fill_fdr(x2)
                e3 = fd3[x3] or t3.fill_fdr(x3)
                k = max(e0[1], e0[0] + (max(g1, g2, g3, gi) << 32),
                        e1[1] + 13, e1[0] + 13 + (max(g0, g2, g3, gi) << 32),
                        e2[1] + 26, e2[0] + 26 + (max(g0, g1, g3, gi) << 32),
                        e3[1] + 39, e3[0] + 39 + (max(g0, g1, g2, gi) << 32)) + (base << 32)
                if items:
                    suit_top = max(g0, g1, g2, g3)
                    for i, (_, _, pick) in enumerate(items):
                        others = max(suit_top, items_without[i][1])
                        k = max(k, ((base + others + (pick >> 8)) << 32) | pick)
            else:
                gain, k = self._discard_share(budget, base, (f0, f1, f2, f3), (x0, x1, x2, x3), item_front,
                                              items, items_without)
                if base + gain > best:
                    best = base + gain
            if k > best_key:
                best_key = k
        return best, best_key

    def discard_scores(self, hand: Sequence[Card]) -> dict[Card, int]:
        total, melded, dead = self._solve(hand, True)
        assert dead is not None
        in_dead = set(dead)
        out = {}
        for card in sorted(set(hand)):
            if card in in_dead:
                out[card] = (total - melded - self.wt[card]) // _SCALE
            else:
                rest = list(hand)
                rest.remove(card)
                t, m = self.solve(rest)
                out[card] = (t - m) // _SCALE
        return out


def _remove(cards: tuple[Card, ...], taken: Sequence[Card]) -> tuple[Card, ...]:
    """The sorted multiset ``cards`` minus ``taken``."""
    if not taken:
        return cards
    need = Counter(taken)
    out = []
    for x in cards:
        if need[x]:
            need[x] -= 1
        else:
            out.append(x)
    return tuple(out)


def _mask_cards(mask: int) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _share_gain(budget: int, ga: tuple[int, ...], gb: tuple[int, ...], gc: tuple[int, ...],
                gd: tuple[int, ...], items: Sequence[int]) -> int:
    """The most weight ``budget`` wilds add, shared among four suit frontiers and the set items."""
    if budget == 2:  # both wilds to one part, or one each to the two best parts
        a0, b0, c0, d0 = ga[0], gb[0], gc[0], gd[0]
        one = sorted((ga[1] - a0, gb[1] - b0, gc[1] - c0, gd[1] - d0, items[1]))
        return max(ga[2] - a0, gb[2] - b0, gc[2] - c0, gd[2] - d0, items[2], one[3] + one[4])
    cur = list(items[: budget + 1])
    for g in (ga, gb, gc, gd):
        g0 = g[0]
        if g[budget] == g0:
            continue  # no wild helps this suit
        nxt = cur[:]
        for bud in range(1, budget + 1):
            top = nxt[bud]
            for give in range(1, bud + 1):
                v = cur[bud - give] + g[give] - g0
                if v > top:
                    top = v
            nxt[bud] = top
        cur = nxt
    return max(cur)


def _merge(x: Sequence[int], y: Sequence[int]) -> list[int]:
    """Max-plus product of two gain curves (best gain for 0..k wilds; both are 0 at 0 wilds)."""
    n = len(x)
    if n == 3:
        x1, y1 = x[1], y[1]
        return [0, x1 if x1 > y1 else y1, max(x[2], y[2], x1 + y1)]
    out = [0] * n
    for k in range(1, n):
        top = x[k] if x[k] > y[k] else y[k]
        for j in range(1, k):
            v = x[j] + y[k - j]
            if v > top:
                top = v
        out[k] = top
    return out


def _item_front(items: Sequence[tuple[int, int, int]], budget: int) -> list[int]:
    """Best total (second field) of the items (first field: wilds needed) within 0..budget wilds."""
    front = [0] * (budget + 1)
    for cost, w, _ in items:
        for bud in range(budget, cost - 1, -1):
            if front[bud - cost] + w > front[bud]:
                front[bud] = front[bud - cost] + w
    return front


def _share_split(budget: int, fronts: Sequence[tuple[int, ...]], items: Sequence[int]) -> list[int]:
    """How many wilds each frontier (then the items, last) gets in a best sharing of ``budget``."""
    parts: list[Sequence[int]] = [*fronts, items]
    best: dict[int, tuple[int, list[int]]] = {0: (0, [])}  # wilds spent -> (gain, split so far)
    for part in parts:
        nxt: dict[int, tuple[int, list[int]]] = {}
        for spent, (gain, split) in best.items():
            for give in range(budget - spent + 1):
                g = gain + part[give] - part[0]
                old = nxt.get(spent + give)
                if old is None or g > old[0]:
                    nxt[spent + give] = (g, [*split, give])
        best = nxt
    return max(best.values(), key=lambda t: t[0])[1]


def _pick_items(items: list[tuple[int, int, int]], budget: int) -> list[int]:
    """Which knapsack items (cost, weight, cards) reach the best weight within ``budget``."""
    best: dict[int, tuple[int, list[int]]] = {0: (0, [])}
    for i, (cost, w, _) in enumerate(items):
        for spent, (value, picked) in list(best.items()):
            s = spent + cost
            if s <= budget and (s not in best or best[s][0] < value + w):
                best[s] = (value + w, [*picked, i])
    return max(best.values(), key=lambda t: t[0])[1]


_SOLVERS: dict[MeldRules, _Solver] = {}
_LAST: tuple[MeldRules | None, _Solver | None] = (None, None)


def _solver_for(rules: MeldRules) -> _Solver:
    """The solver of ``rules``, built once per distinct rules (the last one is found by identity)."""
    global _LAST
    last = _LAST
    if last[0] is rules:
        solver = last[1]
        assert solver is not None
        return solver
    solver = _SOLVERS.get(rules)
    if solver is None:
        if len(_SOLVERS) >= 64:
            _SOLVERS.clear()
        solver = _SOLVERS[rules] = _Solver(rules)
    _LAST = (rules, solver)
    return solver


__all__ = [
    "ACES",
    "MAX_RUN",
    "WILD_LIMITS",
    "Arrangement",
    "DiscardChoice",
    "Meld",
    "MeldRules",
    "as_meld",
    "best_arrangement",
    "best_discard",
    "can_go_out",
    "discard_scores",
    "go_out_discards",
    "is_fully_melded",
    "may_go_out",
    "min_deadwood",
    "prepare",
    "rummy_values",
]
