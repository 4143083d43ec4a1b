"""The solver's general search: an exact memoised search on the lowest remaining card (where every wild
joins a meld, run on each part of the hand that no meld crosses, the wilds shared out among the parts), for
what the one-deck fast paths of :mod:`engine.melds.solver` do not handle (duplicate cards from several decks,
more than four wilds, the wild limits that cap wilds per meld), and the builder of
:class:`~engine.melds.vocabulary.Arrangement`\\ s (which melds, and what each wild stands for)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import product
from typing import Any, NamedTuple, Protocol

from engine.cards import JOKER, Card, make_card
from engine.melds.suit_tables import INF, SCALE
from engine.melds.validity import find_meld, meld_with_targets
from engine.melds.vocabulary import MAX_RUN, Arrangement, Meld, MeldRules, check_card, position_card


class ByCode(NamedTuple):
    """Per card code (the joker's too), what the search adds up for a hand under one set of rules."""

    natural_one: list[int]  # its unit in a packed multiset if it is a natural card, else 0
    natural_bit: list[int]  # 1 << code if it is a natural card, else 0
    wild: list[int]  # 1 if it is wild, else 0
    wild_weight: list[int]  # its weight if it is wild, else 0

    @classmethod
    def make(cls, rules: MeldRules, weight: list[int]) -> ByCode:
        wild = [int(rules.is_wild(c)) if c != JOKER else int(rules.jokers_wild) for c in range(JOKER + 1)]
        natural = [c != JOKER and not w for c, w in enumerate(wild)]
        return cls([1 << _PER_CARD * c if n else 0 for c, n in enumerate(natural)],
                   [1 << c if n else 0 for c, n in enumerate(natural)], wild,
                   [weight[c] if w else 0 for c, w in enumerate(wild)])


class Precomputed(Protocol):
    """What the search reads of :class:`engine.melds.solver.Solver` (the rules, precomputed)."""

    rules: MeldRules
    weight: list[int]  # by card code: value * SCALE + 1
    min_set: int
    min_run: int
    limit: str
    ace_high: bool
    jokers_wild: bool
    absorbing: bool  # every wild joins a meld once a natural is melded
    all_wild_ok: bool  # a meld of wilds alone is legal
    all_wild_size: int
    by_code: ByCode
    memo: dict[int, int]  # :func:`_search_absorbing`'s, kept across calls


def solve_by_search(solver: Precomputed, hand: Sequence[Card], want: bool) -> tuple[int, int, list[Card] | None]:
    """:meth:`~engine.melds.solver.Solver.solve` by the general search."""
    total, melded, plan = search(solver, hand, want)
    if not want:
        return total, melded, None
    assert plan is not None
    return total, melded, sorted(plan[1])


def solve_all_wild_ok(solver: Precomputed, hand: Sequence[Card]) -> tuple[int, int, None]:
    """:func:`solve_by_search` without the plan, for rules where every wild joins once a natural is melded
    and a meld of wilds alone is legal (``solver.absorbing`` and ``solver.all_wild_ok``): no wild-rank card
    need act as a natural, so the naturals go to :func:`_best` as they are. For
    :meth:`~engine.melds.solver.Solver.solve`, which has checked that every card is an int from 0."""
    if len(hand) >= SCALE:
        raise ValueError(f"hands of {SCALE} or more cards are not supported")
    by_code = solver.by_code
    total = sum(map(solver.weight.__getitem__, hand))
    m = sum(map(by_code.natural_one.__getitem__, hand))
    present = sum(map(by_code.natural_bit.__getitem__, set(hand)))
    wilds = sum(map(by_code.wild.__getitem__, hand))
    wild_w = sum(map(by_code.wild_weight.__getitem__, hand)) if wilds else 0
    memo = solver.memo
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    key = m << _PER_CARD | wilds  # the key of _best(m, wilds), whose value this is
    natural = memo.get(key, -1)
    if natural < 0:
        natural = memo[key] = _best_of_parts(solver, memo, _parts(solver, m, present, wilds), wilds)[-1][wilds]
    if natural > 0 or wilds >= solver.all_wild_size:
        natural += wild_w
    return total, natural, None


def search(solver: Precomputed, hand: Sequence[Card], want: bool, exact_rooms: bool = False) -> tuple[int, int, Any]:
    """Exact memoised search; with ``want`` also the plan ``(melds, deadwood, wilds used)``.

    Each meld records the naturals it takes and the least and most wilds it
    can hold (``lo``..``hi``: the least fills gaps and reaches the minimum
    size, the most obeys the wild limit and the 13-card run length). Wilds
    are then shared out; the costliest wilds are the ones melded. With the
    limits ``none`` and ``at_least_one_natural`` every wild joins once a
    natural is melded (see :mod:`engine.melds.solver`), so only the least counts
    (:func:`_search_absorbing`) unless ``exact_rooms`` asks for the plan
    that also tracks the most.
    """
    for c in hand:
        check_card(c)
    if len(hand) >= SCALE:
        raise ValueError(f"hands of {SCALE} or more cards are not supported")
    rules = solver.rules
    wt = solver.weight
    total = sum(wt[c] for c in hand)
    wild_rank_cards = sorted(c for c in hand if c != JOKER and rules.is_wild(c))
    jokers = [c for c in hand if c == JOKER]
    plain = sorted(c for c in hand if c != JOKER and not rules.is_wild(c))
    dead_jokers = [] if solver.jokers_wild else jokers
    wild_jokers = jokers if solver.jokers_wild else []
    # Which wild-rank cards act as naturals (only matters when a meld needs naturals)
    if solver.all_wild_ok:
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
        if solver.absorbing and not exact_rooms:
            value, plan = _search_absorbing(solver, naturals, [wt[c] for c in wild_cards], want)
        else:
            value, plan = _search_one(solver, naturals, [wt[c] for c in wild_cards], want)
        if value > best:
            best = value
            if want:
                melds, used = plan
                left_wilds = wild_cards[used:]
                melded_naturals = Counter(c for m in melds for c in m[1])
                dead = list((Counter(naturals) - melded_naturals).elements()) + left_wilds + dead_jokers
                best_plan = (melds, dead, wild_cards[:used])
    return total, best, best_plan


def _search_absorbing(solver: Precomputed, naturals: tuple[Card, ...], wild_w: list[int],
                      want: bool) -> tuple[int, Any]:
    """:func:`_search_one` for the limits where every wild joins once a natural is melded.

    Only the least wilds of each meld count, and a run never skips a
    natural left in its span (swapping it in for the wild there is never
    worse, even with duplicates: the wild can stand for it in the other
    meld), so runs take the next available ranks in a row.

    The best melded weight of (cards left, wilds left) does not depend on
    the cards already melded, so it is memoised in ``solver.memo``, which
    outlives the call: the hands one decision asks about differ by a card
    or two and share most of their sub-problems. The cards left are a
    multiset packed in one int (:data:`_PER_CARD` bits a card code, its
    count). The hand is searched part by part (:func:`_parts`), each part
    with every number of wilds, the best share of the wilds kept
    (:func:`_best_of_parts`). The plan is rebuilt from the memo, part by
    part: at each step the first choice (in the order tried) that reaches
    the memoised best.
    """
    n_wild = len(wild_w)
    memo = solver.memo
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    m = present = 0
    for c in naturals:
        m += _ONE[c]
        present |= 1 << c
    parts = _parts(solver, m, present, n_wild)
    totals = _best_of_parts(solver, memo, parts, n_wild)
    natural = totals[-1][n_wild]
    used = n_wild if natural > 0 or (solver.all_wild_ok and n_wild >= solver.all_wild_size) else 0
    value = natural + sum(wild_w[:used])
    if not want:
        return value, None
    melds: list[tuple[Any, ...]] = []
    left = n_wild
    for i in range(len(parts) - 1, -1, -1):  # each part's wilds, read back from the running bests
        before = totals[i - 1] if i else [0] * (n_wild + 1)
        free = next(w for w in range(left, -1, -1)
                    if before[left - w] + _best(solver, memo, parts[i], w) == totals[i][left])
        left -= free
        m = parts[i]
        while m:
            target = _best(solver, memo, m, free)
            for gain, m2, need, meld in _choices(solver, m, free):
                if gain + _best(solver, memo, m2, free - need) == target:
                    if meld is not None:
                        c = ((m & -m).bit_length() - 1) // _PER_CARD
                        kind, cards, picks = meld
                        if kind == "set":
                            taken = [c] + [x for (x, _), p in zip(cards, picks, strict=True) for _ in range(p)]
                            melds.append(("set", tuple(taken), need, INF, None))
                        else:
                            melds.append(("run", (c, *cards), need, MAX_RUN - 1 - len(cards), None, kind))
                    m, free = m2, free - need
                    break
    return value, (melds, used)


def _parts(solver: Precomputed, m: int, present: int, free: int) -> list[int]:
    """The packed naturals ``m`` (``present``: bit ``c`` for each card code in it) cut into parts that no
    meld with at most ``free`` wilds crosses, in order of their lowest card: cards of one rank are in one
    part, and so are two cards of one suit when the wilds can fill the ranks between them (an ace and the
    top of its suit too, where aces are high). The best melded weight of ``m`` is the best sum over the
    parts for some share of the wilds (:func:`_best_of_parts`), and the parts are smaller sub-problems that
    other hands share. A part too small to make a meld even with every wild is left out."""
    near = _near(solver.ace_high, free)
    smallest = min(solver.min_set, solver.min_run) - free  # cards a part needs to make a meld
    out = []
    while present:
        todo = present & -present
        part = packed = cards = 0
        while todo:
            low = todo & -todo
            c = low.bit_length() - 1
            part |= low
            packed |= m & _FIELD[c]
            cards += m >> _PER_CARD * c & _COUNT
            todo = (todo | near[c] & present) & ~part
        present ^= part
        if cards >= smallest:
            out.append(packed)
    return out


def _near(ace_high: bool, free: int) -> list[int]:
    """By card code, the codes a meld with at most ``free`` wilds may hold beside it: its rank, and its suit
    within ``free + 1`` ranks (also past the king to a high ace)."""
    free = min(free, 12)
    got = _NEAR.get((ace_high, free))
    if got is None:
        got = []
        for c in range(52):
            rank, suit = c % 13, c // 13
            mask = sum(1 << x for x in range(rank, 52, 13))
            places = [rank + 1] + ([14] if ace_high and rank == 0 else [])
            for x in range(13 * suit, 13 * suit + 13):
                other = [x % 13 + 1] + ([14] if ace_high and x % 13 == 0 else [])
                if any(abs(p - q) - 1 <= free for p in places for q in other):
                    mask |= 1 << x
            got.append(mask)
        _NEAR[(ace_high, free)] = got
    return got


_NEAR: dict[tuple[bool, int], list[int]] = {}


def _best_of_parts(solver: Precomputed, memo: dict[int, int], parts: list[int], free: int) -> list[list[int]]:
    """For each part of :func:`_parts` in turn, the most weight that it and the parts before it meld with
    0, 1, ... ``free`` wilds. A lone part is searched with ``free`` wilds only (its list is -1 elsewhere):
    fewer wilds would be new sub-problems asked for nothing."""
    if len(parts) <= 1:
        return [[-1] * free + [_best(solver, memo, parts[0], free) if parts else 0]]
    out = []
    best = [0] * (free + 1)
    for part in parts:
        vals = [_best(solver, memo, part, w) for w in range(free + 1)]
        if vals[0] == vals[free]:  # wilds do not help this part
            best = [b + vals[0] for b in best]
        else:
            best = [max(best[t - w] + vals[w] for w in range(t + 1)) for t in range(free + 1)]
        out.append(best)
    return out


MEMO_LIMIT = 200_000  # entries of one solver's memo
_PER_CARD = 8  # bits a card code in a packed multiset: hands have fewer than SCALE (256) cards
_ONE = [1 << _PER_CARD * c for c in range(52)]
_COUNT = (1 << _PER_CARD) - 1
_FIELD = [_COUNT << _PER_CARD * c for c in range(52)]  # a card code's count in a packed multiset


def _best(solver: Precomputed, memo: dict[int, int], m: int, free: int) -> int:
    """The most weight of the packed naturals ``m`` that melds with ``free`` wilds, memoised.

    The choices are :func:`_choices`' (the lowest card left out, in a set, in a run), enumerated here
    without building their melds: only the best weight is asked for."""
    key = m << _PER_CARD | free  # free < 256 too
    hit = memo.get(key)
    if hit is not None:
        return hit
    if not m:
        return 0
    wt = solver.weight
    min_set, min_run = solver.min_set, solver.min_run
    c = ((m & -m).bit_length() - 1) // _PER_CARD
    tail = m - _ONE[c]
    best = _best(solver, memo, tail, free) if tail else 0
    w_c = wt[c]
    # sets: c with any sub-multiset of the cards of its rank left (its suit and the suits above)
    kinds = [(x, n) for x in range(c, 52, 13) if (n := tail >> _PER_CARD * x & _COUNT)]
    if kinds or min_set - 1 <= free:
        same = sum(n for _, n in kinds)
        smallest = min_set if same + 1 >= min_set else 1  # a short set is never needed then
        for picks in product(*[range(n + 1) for _, n in kinds]):
            k = 1 + sum(picks)
            if k < smallest:
                continue
            need = min_set - k if k < min_set else 0
            if need > free:
                continue
            m2 = tail
            gain = w_c
            for (x, _), p in zip(kinds, picks, strict=True):
                if p:
                    m2 -= p * _ONE[x]
                    gain += p * wt[x]
            v = gain + (_best(solver, memo, m2, free - need) if m2 else 0)
            if v > best:
                best = v
    # runs: c and the next distinct cards of its suit (the first j, or as a high ace the last j)
    rank = c % 13
    top = 13 * (c // 13) + 13
    higher = [x for x in range(c + 1, top) if tail >> _PER_CARD * x & _COUNT]
    p = rank + 1
    for place in (1, 14) if (p == 1 and solver.ace_high) else (p,):
        n_high = len(higher)
        for j in range(n_high + 1) if place != 14 else range(1, n_high + 1):
            picked = higher[n_high - j:] if place == 14 else higher[:j]
            k = 1 + j
            span = 14 - picked[0] % 13 if place == 14 else (picked[-1] % 13 + 2 - p if picked else 1)
            if span > MAX_RUN:
                break
            need = span - k + (min_run - span if span < min_run else 0)
            if need > free:
                continue
            m2 = tail
            gain = w_c
            for x in picked:
                m2 -= _ONE[x]
                gain += wt[x]
            v = gain + (_best(solver, memo, m2, free - need) if m2 else 0)
            if v > best:
                best = v
    memo[key] = best
    return best


def _choices(solver: Precomputed, m: int, free: int) -> Iterator[tuple[int, int, int, Any]]:
    """What may become of the lowest card of the packed naturals ``m``, in the order tried (:func:`_best`
    enumerates the same choices inline, without their melds, for speed; a test holds the two together):
    ``(weight melded, cards left, wilds needed, meld)``: left out (meld None), then each set holding it
    (meld ``("set", [(card, count left)], counts taken)``), then each run holding it as its lowest natural, or
    as a high ace its highest (meld ``(place of the card, the other cards, None)``)."""
    if not m:
        return
    wt = solver.weight
    min_set, min_run = solver.min_set, solver.min_run
    c = ((m & -m).bit_length() - 1) // _PER_CARD
    tail = m - _ONE[c]
    yield 0, tail, 0, None
    rank, suit = c % 13, c // 13
    # sets: c and any sub-multiset of the cards of its rank left (its own suit and the suits above: the
    # lower codes are gone)
    kinds = [(x, n) for x in range(c, 52, 13) if (n := tail >> _PER_CARD * x & _COUNT)]
    same = sum(n for _, n in kinds)
    smallest = min_set if same + 1 >= min_set else 1  # a short set is never needed then
    for picks in product(*[range(n + 1) for _, n in kinds]):
        k = 1 + sum(picks)
        if k < smallest:
            continue
        need = min_set - k if k < min_set else 0
        if need > free:
            continue
        m2 = tail
        gain = wt[c]
        for (x, _), p in zip(kinds, picks, strict=True):
            if p:
                m2 -= p * _ONE[x]
                gain += p * wt[x]
        yield gain, m2, need, ("set", kinds, picks)
    # runs: c and the next distinct cards of its suit (the first j, or as a high ace the last j)
    base = 13 * suit
    higher = [x for x in range(c + 1, base + 13) if tail >> _PER_CARD * x & _COUNT]
    p = rank + 1
    for place in [1, 14] if (p == 1 and solver.ace_high) else [p]:
        if place == 14:
            runs = [higher[len(higher) - j:] for j in range(1, len(higher) + 1)]
        else:
            runs = [higher[:j] for j in range(len(higher) + 1)]
        for picked in runs:
            k = 1 + len(picked)
            span = 14 - picked[0] % 13 if place == 14 else (picked[-1] % 13 + 2 - p if picked else 1)
            if span > MAX_RUN:
                break
            need = span - k + (min_run - span if span < min_run else 0)
            if need > free:
                continue
            m2 = tail
            gain = wt[c]
            for x in picked:
                m2 -= _ONE[x]
                gain += wt[x]
            yield gain, m2, need, (place, picked, None)


def _search_one(solver: Precomputed, naturals: tuple[Card, ...], wild_w: list[int], want: bool) -> tuple[int, Any]:
    wt = solver.weight
    n_wild = len(wild_w)
    prefix = [0]
    for w in wild_w:
        prefix.append(prefix[-1] + w)
    min_set, min_run, limit = solver.min_set, solver.min_run, solver.limit
    all_wild_ok, all_wild_size = solver.all_wild_ok, solver.all_wild_size
    ace_high = solver.ace_high
    if limit in ("none", "at_least_one_natural"):
        def cap(k: int) -> int:
            return INF
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
                span = 14 - picked[0] % 13 if place == 14 else (picked[-1] % 13 + 2 - p if picked else 1)
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


def arrangement(solver: Precomputed, hand: Sequence[Card]) -> Arrangement:
    total, melded, plan = search(solver, hand, True)
    melds, dead, wilds = plan
    realized = _realize(solver, melds, wilds)
    if realized is None:  # every meld is a full run: ask for a split that leaves room
        total, melded, plan = search(solver, hand, True, exact_rooms=True)
        melds, dead, wilds = plan
        realized = _realize(solver, melds, wilds)
        assert realized is not None
    score = (total - melded) // SCALE
    return Arrangement(score, tuple(realized), tuple(sorted(dead)))


def _realize(solver: Precomputed, plan: list[Any], wilds: list[Card]) -> list[Meld] | None:
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
    elif not (solver.all_wild_ok and extra >= solver.all_wild_size):
        return None
    # else the extra wilds (a meld's worth at least) make one all-wild meld
    pool = list(wilds)
    out = []
    for m, j in zip(plan, counts, strict=True):
        mine, pool = pool[:j], pool[j:]
        if m[0] == "set":
            out.append(_set_meld(solver, list(m[1]), mine))
        else:
            out.append(_run_meld(solver, list(m[1]), m[5], mine))
    if pool:
        out.append(_all_wild_meld(solver, pool))
    return out


def _set_meld(solver: Precomputed, naturals: list[Card], wilds: list[Card]) -> Meld:
    rank = naturals[0] % 13
    targets = [make_card(rank + 1, 0 if w == JOKER else w // 13) for w in wilds]
    meld = meld_with_targets(tuple(naturals + wilds), tuple(naturals + targets), solver.rules)
    assert meld is not None, (naturals, wilds)
    return meld


def _run_meld(solver: Precomputed, naturals: list[Card], first_place: int, wilds: list[Card]) -> Meld:
    suit = naturals[0] // 13
    places = [first_place] + [c % 13 + 1 for c in naturals[1:]]
    lo, hi = min(places), max(places)
    length = len(naturals) + len(wilds)
    top = 14 if solver.ace_high and lo != 1 else 13
    hi_w = min(top, lo + length - 1)
    lo_w = hi_w - length + 1
    taken = set(places)
    free = [p for p in range(lo_w, hi_w + 1) if p not in taken]
    cards = naturals + wilds
    targets = [position_card(suit, p) for p in places] + [position_card(suit, p) for p in free]
    meld = meld_with_targets(tuple(cards), tuple(targets), solver.rules)
    assert meld is not None and hi >= lo, (naturals, wilds)
    return meld


def _all_wild_meld(solver: Precomputed, wilds: list[Card]) -> Meld:
    meld = find_meld(tuple(sorted(wilds)), solver.rules)
    assert meld is not None, wilds
    return meld


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
