"""Hand 7 of contract rummy (RULES.md §4 R2, R8): every way to lay down all of a hand but one card as a
set and two runs, :func:`exact_go_downs`.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import JOKER, Card
from engine.contracts.go_down import RANK_CARDS, cached, multiset_key, take_wilds
from engine.contracts.table import GoDown, TableMeld
from engine.melds import MAX_RUN, limit_ok, position_card


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
        rank_cards = RANK_CARDS[rank]
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
        key = multiset_key(way)  # (an ace low or high, a 2 natural or wild: the same cards placed otherwise)
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
    for c in RANK_CARDS[rank]:
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


@cached
def _one_run_positions(cards: tuple[Card, ...]) -> tuple[tuple[int, ...], ...]:
    """Sorted run positions of the natural ``cards`` of one suit (an ace low, or high) as one run."""
    if len(set(cards)) != len(cards):
        return ()
    base = [c % 13 + 1 for c in cards if c % 13 != 0]
    options = [base] if len(base) == len(cards) else [[1, *base], [*base, 14]]
    return tuple(tuple(sorted(pos)) for pos in options if max(pos) - min(pos) < MAX_RUN)


@cached
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
                    set_wilds = take_wilds(pool, ws, True)
                if own1:
                    pool[1 + s1] -= 1
                if own2:
                    pool[1 + s2] -= 1
                wilds1 = take_wilds(pool, w1 - own1)
                wilds2 = take_wilds(pool, w2 - own2)
                if rank != 2:
                    set_wilds = take_wilds(pool, ws)
                assert wilds1 is not None and wilds2 is not None and set_wilds is not None
                melds = sorted((_canonical_run(s1, p1, size1, own1, wilds1),
                                _canonical_run(s2, p2, size2, own2, wilds2), (-1, rank, (*set_nat, *set_wilds))))
                ways.add(tuple(melds), first)


def _canonical_run(suit: int, pos: tuple[int, ...], size: int, own_two: int, wilds: list[Card]) -> TableMeld:
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
