"""Going out (TT R6): whether some discard leaves a hand fully melded, by searches narrower than the
solver's (the public face is :func:`engine.melds.may_go_out`, :func:`~engine.melds.can_go_out` and
:func:`~engine.melds.go_out_discards`).

* :func:`naturals_in_reach`: a cheap necessary test, card by card: could each natural card be in
  some meld at all, counting the hand's wilds?
* :class:`Cover`: with one deck, no wild limit and ``min_set >= min_run``, how few wilds put every
  natural card but one in a meld.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import JOKER, Card
from engine.melds.suit_tables import INF, POP4
from engine.melds.vocabulary import MAX_RUN, MeldRules


def naturals_in_reach(hand: Sequence[Card], rules: MeldRules) -> bool:
    """``False`` when two or more natural cards of ``hand`` could be in no meld at all, even with
    every wild of the hand (the body of :func:`engine.melds.may_go_out`)."""
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


class Cover:
    """The least number of wilds that put every natural card of a one-deck hand in a meld.

    Why that is the whole question (wild limit ``none``, ``min_set >= min_run``, at least one
    natural left): a wild can always join a meld that holds a natural (see
    :mod:`engine.melds.solver`), so a hand is fully melded when its wilds are at least that number. Per suit
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
        self.suit, self.drop, self.after, self.options = cover_tables(
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
        choices = [(0, 0, INF)]
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
        """``fits(naturals, wilds, True)``, the hot path of :func:`engine.melds.go_out_discards`: most hands are
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
CoverTables = tuple[list[int], list[int], list[int], list[list[list[tuple[int, int, int]]]]]
_COVER_TABLES: dict[tuple[int, int, bool], CoverTables] = {}
_LINES: dict[int, list[int]] = {}


def cover_tables(min_run: int, min_set: int, ace_high: bool) -> CoverTables:
    """The tables of :class:`Cover` (they depend on the meld sizes and the ace rule only):
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
    drop = [INF] * (1 << 13)
    for m in range(1, 1 << 13):
        best = INF
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
            opts = [(0, 0, INF)]
            for sub in range(1, 16):
                size = POP4[sub]
                if sub & present != sub or size < 2 or (size < min_set and sub != present):
                    continue
                spread = sum(1 << (13 * s + rank) for s in range(4) if sub >> s & 1)
                opts.append((spread, max(0, min_set - size), 0 if size > min_set else 1))
            per_present.append(opts)
        options.append(per_present)
    tables = _COVER_TABLES[key] = (suit, drop, after, options)
    return tables


_COVERS: dict[MeldRules, Cover] = {}
_LAST_RULES: MeldRules | None = None
_LAST_COVER: Cover  # the cover of _LAST_RULES (set with it)


def _line_cover(min_run: int) -> list[int]:
    """For each 14-bit mask of positions on one suit's line (ace low .. ace high): the fewest
    wilds that put every position in a run, splitting it into runs of consecutive positions."""
    line = _LINES.get(min_run)
    if line is None:
        line = [0] * (1 << 14)
        for m in range(1, 1 << 14):
            first = (m & -m).bit_length() - 1
            best = INF
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


def cover_setup(hand: Sequence[Card], rules: MeldRules) -> tuple[Cover, int, int] | None:
    """(cover tables, natural cards as a 52-bit mask, number of wilds) when :class:`Cover`
    answers for ``hand``; None for other rules, repeated cards, a joker that is not wild,
    or fewer than two natural cards."""
    global _LAST_RULES, _LAST_COVER
    if rules is _LAST_RULES:
        cover = _LAST_COVER
    else:
        if rules.wild_limit != "none" or rules.min_set < rules.min_run:
            return None
        known = _COVERS.get(rules)
        if known is None:
            if len(_COVERS) >= 64:
                _COVERS.clear()
            known = _COVERS[rules] = Cover(rules)
        cover = _LAST_COVER = known
        _LAST_RULES = rules
    mask = sum(map(_BITS.__getitem__, hand))  # with a repeated card the sum carries: fewer bits than cards
    if mask.bit_count() != len(hand) or (mask >> JOKER and not cover.joker_ok):
        return None
    wild = mask & cover.wild52
    wilds = wild.bit_count()
    if len(hand) - wilds < 2:
        return None
    return cover, mask ^ wild, wilds

