"""The ways a hand meets a contract of hands 1-6 (RULES.md §4 R2, R6): :func:`minimal_go_downs`, the
search that lists go-downs for ``legal_moves``, and the canonical forms shared with hand 7's search
(:mod:`engine.contracts.hand7`): which wild cards a way uses, and when two ways are the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from engine.cards import JOKER, Card
from engine.contracts.table import POS_CARD, GoDown, TableMeld
from engine.melds import MAX_RUN, limit_ok

# Searches stop after this many distinct results or this many search nodes (see minimal_go_downs).
NODE_BUDGET = 20_000

_WILD_ORDER = (JOKER, 1, 14, 27, 40)  # the canonical order in which listed go-downs use wild cards
_RANK_OF: tuple[int, ...] = tuple(c % 13 + 1 for c in range(52))
# bit p: the card takes run place p (an ace takes place 1 and place 14)
_BIT_OF: tuple[int, ...] = tuple((1 << 1 | 1 << 14) if c % 13 == 0 else 1 << (c % 13 + 1) for c in range(52))
RANK_CARDS: tuple[tuple[Card, ...], ...] = ((), *tuple((r - 1, r + 12, r + 25, r + 38) for r in range(1, 14)))
# Places as bits (bit p: run place p, 1..14). The cards a window's bits stand for: place 14 is the ace,
# the card of place 1; so two windows hold the same cards when these keys are equal.
_PLACES_BELOW_HIGH_ACE = (1 << 14) - 1
_LOW_ACE = 1 << 1
_SUIT_SHIFT = 15  # a suit above the 15 place bits, in one int key


@lru_cache(maxsize=256)
def _min_naturals(size: int, limit: str) -> int:
    """The fewest natural cards a meld of ``size`` holds under ``limit``."""
    for n in range(1, size + 1):
        if limit_ok(n, size - n, limit):
            return n
    return size + 1


def take_wilds(pool: list[int], n: int, jokers_only: bool = False) -> list[Card] | None:
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


def cached(fn: Any) -> Any:
    return lru_cache(maxsize=1 << 16)(fn)


@cached
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
        key = m & _PLACES_BELOW_HIGH_ACE | (_LOW_ACE if m >> 14 else 0)  # the ace high and low is one card
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
    search = _MinimalSearch(counts, masks, by_rank, set_cands, run_cands, set_size, run_size, set_min, run_min,
                            cap, found, limit, need_long)
    # the longer runs' search tries every pass (its runs-first pass may stop before any set lacks naturals)
    search.run(["run"] * runs + ["set"] * sets)
    if not found and sets and runs and (search.set_short or need_long):
        search.run(["set"] * sets + ["run"] * runs)
    if not found and runs > 1 and (search.run_short or need_long):
        search.yielding = search.by_multiset = True
        search.run(["run"] * runs + ["set"] * sets)
        if not found and sets and (search.set_short or need_long):
            search.run(["set"] * sets + ["run"] * runs)


@cached
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


@cached
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
                 limit: str, need_long: bool) -> None:
        self.counts, self.masks, self.by_rank = counts, masks, by_rank
        self.set_cands, self.run_cands = set_cands, run_cands
        self.set_size, self.run_size, self.set_min, self.run_min = set_size, run_size, set_min, run_min
        self.cap, self.found = cap, found
        self.nodes_left = NODE_BUDGET  # over every pass
        self.set_short = self.run_short = False  # a set, a run lacked natural cards that earlier melds took
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
        self.nodes_left -= 1
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
                            self.run_short = True  # an earlier meld took naturals this run needed
                        continue  # (an ace counts once: it cannot be at both ends of one window)
                    if masks[suit] != initial[suit]:
                        # once earlier melds took cards of the suit, two windows may hold the same natural
                        # cards (4-7D and 3-6D once 7D is gone) and give the same meld: the first one only
                        key = bits & _PLACES_BELOW_HIGH_ACE | (_LOW_ACE if bits >> 14 else 0) | suit << _SUIT_SHIFT
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
                            self.run_short = True
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
                if len(found) >= cap or self.nodes_left <= 0:
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
                    self.set_short = True
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
                    for c in sorted(RANK_CARDS[rank], key=counts.__getitem__, reverse=True):
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
                    if len(found) >= cap or self.nodes_left <= 0:
                        return


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
            key = multiset_key(natural)
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
        wilds = take_wilds(pool, w, only)
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
        key = multiset_key(melds)
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


def multiset_key(melds: Iterable[TableMeld]) -> tuple[tuple[bool, tuple[Card, ...]], ...]:
    """A way as a multiset of melds, each the multiset of its cards (what *distinct* means)."""
    return tuple(sorted((m[0] < 0, tuple(sorted(m[2]))) for m in melds))


def _jokers_first(m: tuple[int, int, list[Card], int, bool]) -> bool:
    return not m[4]
