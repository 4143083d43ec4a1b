"""The exact minimum-deadwood solver (RULES.md C5): everything precomputed for one :class:`MeldRules`,
and the fast paths for one-deck hands.

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
  suit masks. Per-suit tables (:mod:`engine.melds.suit_tables`, built once per
  value table, ``min_run`` and ace rule; :func:`engine.melds.prepare` builds them
  eagerly) give the best run weight of a suit for 0..4 wilds; sets are chosen
  rank by rank, but only ranks whose cards could also sit in a run are branched
  on, and dominated choices are dropped. With no wilds and no rank that is both
  a set and part of a run, the answer is a few table look-ups. The best discard
  (:mod:`engine.melds.discard`) runs the same enumeration of set choices
  (:meth:`Solver.best_split`) with another :class:`Objective` and per-suit
  "one card less" tables.
* Anything else (duplicates from several decks, more than four wilds, the
  wild limits that cap wilds per meld) goes to an explicit memoised search on
  the lowest remaining card (:mod:`engine.melds.search`), which is also what
  builds :class:`~engine.melds.vocabulary.Arrangement`\\ s.

Weights: internally a card weighs ``value * 256 + 1``, so maximising the
melded weight maximises the melded value first and, among equal values, the
number of melded cards (which is what "fully melded" needs when a card is
worth 0 points).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.cards import JOKER, Card, make_card
from engine.melds.search import ByCode, solve_all_wild_ok, solve_by_search
from engine.melds.sharing import item_front, pick_items, share_gain, share_split
from engine.melds.suit_tables import (
    FAST_WILDS,
    NO_SETS,
    POP4,
    SCALE,
    SCALE_BITS,
    SPREAD4,
    ZEROS,
    set_options,
    suit_tables,
)
from engine.melds.vocabulary import MeldRules, check_card

_SHIFT = (1).__lshift__
_INTS = {int}

Item = tuple[int, int, int]  # a set of a rank whose cards fit no run: (wilds it needs, its worth, payload)
Leaf = tuple[int, int, int]  # one choice of sets at the branched ranks: (wilds spent, worth, cards taken)


@dataclass(frozen=True, slots=True)
class Objective:
    """What :meth:`Solver.best_split` maximises: the worth of a set of rank ``r`` in the suits of the
    4-bit pattern ``sp`` (``set_worth[r][sp]``), a cache of the set options at one rank in that worth,
    what a set that fits no run carries to the leaves (``item_payload[r][sp]``), and ``score``, which
    takes the enumerated choices and returns the objective's answer for the hand."""

    set_worth: list[list[int]]
    options: dict[int, list[Leaf]]
    item_payload: list[list[int]]
    score: Callable[..., tuple[int, int]]


class Solver:
    """Everything precomputed for one :class:`MeldRules`."""

    def __init__(self, rules: MeldRules) -> None:
        self.rules = rules
        self.weight = [v * SCALE + 1 for v in rules.values]  # by card code
        self.min_set = rules.min_set
        # (a, b, c, d) -> the ranks (13-bit) whose natural cards in the four suit masks make a set, no wild
        self.ranks_with_a_set: Callable[[int, int, int, int], int] = _RANKS_WITH_A_SET.get(rules.min_set, _no_sets)
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
        self.tabs = [suit_tables(tuple(self.weight[13 * s : 13 * s + 13]), rules.min_run, ace_high)
                     for s in range(4)]
        # a set of one natural plus wilds only when that is cheaper than a run of one natural plus wilds
        self.set_lo = 1 if rules.min_set < rules.min_run else 2
        self.natural_set_options = set_options(rules.min_set, rules.min_set)
        self.set_options = set_options(self.set_lo, rules.min_set)
        self.set_weight = [[sum(self.weight[13 * s + r] for s in range(4) if sp >> s & 1) for sp in range(16)]
                           for r in range(13)]
        self.spread = [[sum(1 << (13 * s + r) for s in range(4) if sp >> s & 1) for sp in range(16)]
                       for r in range(13)]
        # discard preference: higher value, then a natural over a wild, then the higher code
        ranked = sorted(range(53), key=lambda c: (-rules.values[c], rules.is_wild(c), -c))
        self.discard_order = [0] * 53
        for i, c in enumerate(ranked):
            self.discard_order[c] = i
        self.wild_cards_set = {c for c in range(53) if rules.is_wild(c)}
        self.set_value = [[w >> SCALE_BITS for w in row] for row in self.set_weight]
        # (rank, present suits) -> the item card to discard first, packed (value << 8) | code
        self.item_pick = [[max(((rules.values[13 * s + r] << 8) | (13 * s + r) for s in range(4) if sp >> s & 1),
                                default=0) for sp in range(16)] for r in range(13)]
        # the one-pass best discard needs every card to be worth something (see discard.discard_fast)
        self.discard_fast_ok = self.absorbing and min(rules.values) > 0
        self.most_melded = Objective(self.set_weight, {}, self.spread, _score_melded)
        # the best discard's objective (set worth in points; items carry their best card to discard), made by
        # engine.melds.discard on first use
        self.least_deadwood_discard: Objective | None = None
        self.memo: dict[int, int] = {}  # the general search's, by engine.melds.search
        self.by_code = ByCode.make(rules, self.weight)  # what that search adds up per card

    def _set_options(self, objective: Objective, wilds: int, r: int, present: int, runnable: int) -> list[Leaf]:
        """The sets to try at rank ``r`` within ``wilds`` (from ``set_options``), with their worth and cards."""
        worth = objective.set_worth[r]
        spread = self.spread[r]
        opts = [(cost, worth[sp], spread[sp]) for sp, cost in self.set_options[present][runnable] if cost <= wilds]
        objective.options[wilds << 12 | r << 8 | present << 4 | runnable] = opts
        return opts

    # ------------------------------------------------------------- entry points

    def solve(self, hand: Sequence[Card], want: bool = False) -> tuple[int, int, list[Card] | None]:
        """(total weight, best melded weight, the deadwood cards of a best split if ``want``, in no order)
        of ``hand``."""
        try:
            m = sum(map(_SHIFT, hand))
        except (TypeError, ValueError):
            for c in hand:
                check_card(c)
            raise
        if m.bit_count() == len(hand):  # all different (a sum of distinct powers of two has no carry)
            nj = m >> 52
            if nj:
                if nj > 1:
                    for c in hand:
                        check_card(c)
                m ^= 1 << 52
        else:  # duplicates, or several jokers
            if max(hand) > JOKER or set(map(type, hand)) != _INTS:
                for c in hand:
                    check_card(c)  # says which card is not one
            nj = hand.count(JOKER)
            if len(set(hand)) + max(nj - 1, 0) < len(hand):  # a card twice
                if self.all_wild_ok and self.absorbing and not want:
                    return solve_all_wild_ok(self, hand)
                return solve_by_search(self, hand, want)
            m -= nj << JOKER
        if not self.absorbing:
            return solve_by_search(self, hand, want)
        wm = m & self.wild_mask
        nat = m ^ wm
        wild_n = wm.bit_count()
        if self.jokers_wild:
            wild_n += nj
        if wild_n > FAST_WILDS:
            return solve_by_search(self, hand, want)
        t0, t1, t2, t3 = self.tabs
        wt_joker = self.weight[JOKER]
        total = t0.weight[m & 0x1FFF] + t1.weight[m >> 13 & 0x1FFF] + t2.weight[m >> 26 & 0x1FFF] \
            + t3.weight[m >> 39] + nj * wt_joker
        if wild_n == 0:
            melded, mask = self._no_wild(nat, want)
            if not want:
                return total, melded, None
            return total, melded, _mask_cards(nat & ~mask) + [JOKER] * nj
        wild_w = t0.weight[wm & 0x1FFF] + t1.weight[wm >> 13 & 0x1FFF] + t2.weight[wm >> 26 & 0x1FFF] \
            + t3.weight[wm >> 39] + (nj * wt_joker if self.jokers_wild else 0)
        most_melded = self.most_melded
        best, mask = self.best_split(nat, wild_n, most_melded, want)
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
                    f, f_mask = self.best_split(nat | sub, wild_n - n_sub, most_melded, want)
                if f > 0:
                    sub_w = t0.weight[sub & 0x1FFF] + t1.weight[sub >> 13 & 0x1FFF] \
                        + t2.weight[sub >> 26 & 0x1FFF] + t3.weight[sub >> 39]
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
        ms = self.min_set  # (self.ranks_with_a_set, inlined: this is the hottest path)
        if ms == 3:
            sets = (a & b & (c | d)) | (c & d & (a | b))
        elif ms == 2:
            sets = ((a | b) & (c | d)) | (a & b) | (c & d)
        else:
            sets = a & b & c & d if ms == 4 else 0
        if not sets:
            melded = t0.runs_weight[a] + t1.runs_weight[b] + t2.runs_weight[c] + t3.runs_weight[d]
            if not want:
                return melded, 0
            return melded, (t0.runs_cards[a] | t1.runs_cards[b] << 13 | t2.runs_cards[c] << 26
                            | t3.runs_cards[d] << 39)
        ra = t0.runnable[0][a]
        rb = t1.runnable[0][b]
        rc = t2.runnable[0][c]
        rd = t3.runnable[0][d]
        conflict = sets & (ra | rb | rc | rd)
        fixed = sets & ~conflict
        fixed_w = t0.weight[a & fixed] + t1.weight[b & fixed] + t2.weight[c & fixed] + t3.weight[d & fixed]
        if not conflict:
            melded = t0.runs_weight[a] + t1.runs_weight[b] + t2.runs_weight[c] + t3.runs_weight[d] + fixed_w
            if not want:
                return melded, 0
            return melded, ((t0.runs_cards[a] | fixed) | (t1.runs_cards[b] | fixed) << 13
                            | (t2.runs_cards[c] | fixed) << 26 | (t3.runs_cards[d] | fixed) << 39) & n
        # ranks that are a set and part of a run: try each way to split them
        fixed52 = (fixed | fixed << 13 | fixed << 26 | fixed << 39) & n
        rest0 = n & ~fixed52
        r0, r1, r2, r3 = t0.runs_weight, t1.runs_weight, t2.runs_weight, t3.runs_weight
        best = -1
        best_sel = 0
        for sel, v in self.branch_sets(a, b, c, d, (ra, rb, rc, rd), conflict, self.set_weight):
            rest = rest0 & ~sel
            v += fixed_w + r0[rest & 0x1FFF] + r1[rest >> 13 & 0x1FFF] + r2[rest >> 26 & 0x1FFF] + r3[rest >> 39]
            if v > best:
                best = v
                best_sel = sel
        if not want:
            return best, 0
        rest = rest0 & ~best_sel
        return best, (fixed52 | best_sel | t0.runs_cards[rest & 0x1FFF] | t1.runs_cards[rest >> 13 & 0x1FFF] << 13
                      | t2.runs_cards[rest >> 26 & 0x1FFF] << 26 | t3.runs_cards[rest >> 39] << 39)

    def branch_sets(self, a: int, b: int, c: int, d: int, runnable: tuple[int, int, int, int], ranks: int,
                    set_worth: list[list[int]]) -> list[tuple[int, int]]:
        """Every way to choose the sets (no wild) at ``ranks``, whose cards make a set and could also be
        in a run, as ``(cards the sets take, their worth in set_worth)``, the first rank varying slowest.
        ``a``..``d`` are the natural cards of each suit, ``runnable`` those that could be in a run."""
        ra, rb, rc, rd = runnable
        spread, natural_set_options = self.spread, self.natural_set_options
        leaves = [(0, 0)]
        while ranks:
            low = ranks & -ranks
            r = low.bit_length() - 1
            ranks ^= low
            present = (a >> r & 1) | (b >> r & 1) << 1 | (c >> r & 1) << 2 | (d >> r & 1) << 3
            in_runs = (ra >> r & 1) | (rb >> r & 1) << 1 | (rc >> r & 1) << 2 | (rd >> r & 1) << 3
            opts = [(spread[r][sp], set_worth[r][sp]) for sp, _ in natural_set_options[present][in_runs]]
            leaves = [(s1 | s2, w1 + w2) for s1, w1 in leaves for s2, w2 in opts]
        return leaves

    # ------------------------------------------------------------- one deck, 1..4 wilds

    def best_split(self, n: int, wilds: int, objective: Objective, want: bool = False) -> tuple[int, int]:
        """The best of ``objective`` over the ways to split the naturals ``n`` (one deck) into sets and
        runs with at most ``wilds`` wilds: for :attr:`most_melded`, the best melded weight (0: no natural
        can be melded) and, if ``want``, the cards melded; for the best discard's objective, the best
        melded value and the best discard's key (see :mod:`engine.melds.discard`).

        Sets are chosen per rank: only ranks whose cards also fit a run are branched on (the *leaves*
        are the combinations of those choices); a rank whose cards fit no run holds a set of its own
        when its naturals are enough, else it is an *item* that wilds may complete (a small knapsack).
        The objective's ``score`` takes it from there: runs come from the per-suit frontier tables,
        and the wilds left are shared out among the suits and the items.
        """
        a = n & 0x1FFF
        b = n >> 13 & 0x1FFF
        c = n >> 26 & 0x1FFF
        d = n >> 39
        t0, t1, t2, t3 = self.tabs
        runnable = t0.runnable[wilds]
        ra = runnable[a]
        if ra < 0:
            ra = t0.runnable_of(wilds, a)
        runnable = t1.runnable[wilds]
        rb = runnable[b]
        if rb < 0:
            rb = t1.runnable_of(wilds, b)
        runnable = t2.runnable[wilds]
        rc = runnable[c]
        if rc < 0:
            rc = t2.runnable_of(wilds, c)
        runnable = t3.runnable[wilds]
        rd = runnable[d]
        if rd < 0:
            rd = t3.runnable_of(wilds, d)
        cand = ((a | b) & (c | d)) | (a & b) | (c & d) if self.set_lo == 2 else a | b | c | d
        ms = self.min_set
        spread = self.spread
        set_worth, cache, payload = objective.set_worth, objective.options, objective.item_payload
        fixed_worth = 0
        fixed52 = 0
        items: list[Item] = []
        items52 = 0
        leaves: list[Leaf] | None = None
        sp4 = SPREAD4
        held = sp4[a] | sp4[b] << 1 | sp4[c] << 2 | sp4[d] << 3
        fits = sp4[ra] | sp4[rb] << 1 | sp4[rc] << 2 | sp4[rd] << 3
        while cand:
            low = cand & -cand
            r = low.bit_length() - 1
            cand ^= low
            present = held >> 4 * r & 15
            count = POP4[present]
            if count + wilds < ms:
                continue
            in_runs = fits >> 4 * r & 15
            if not in_runs:
                if count >= ms:
                    fixed_worth += set_worth[r][present]
                    fixed52 |= spread[r][present]
                else:
                    items.append((ms - count, set_worth[r][present], payload[r][present]))
                    items52 |= spread[r][present]
                continue
            opts = cache.get(wilds << 12 | r << 8 | present << 4 | in_runs) \
                or self._set_options(objective, wilds, r, present, in_runs)
            if leaves is None:
                leaves = opts
            else:
                leaves = [(c1 + c2, w1 + w2, m1 | m2) for c1, w1, m1 in leaves for c2, w2, m2 in opts
                          if c1 + c2 <= wilds]
        return objective.score(self, n, wilds, leaves or NO_SETS, fixed_worth, fixed52, items, items52, want)


def _score_melded(solver: Solver, n: int, wilds: int, leaves: Sequence[Leaf], fixed_w: int, fixed52: int,
                  items: list[Item], items52: int, want: bool) -> tuple[int, int]:
    """:attr:`Solver.most_melded`'s score: the best melded weight of the naturals ``n`` over the
    leaves, and the cards melded if ``want`` (items carry their cards)."""
    item_best: Sequence[int] = item_front(items, wilds) if items else ZEROS
    rest0 = n & ~fixed52
    t0, t1, t2, t3 = solver.tabs
    f0, f1, f2, f3 = t0.frontier_weight, t1.frontier_weight, t2.frontier_weight, t3.frontier_weight
    best = -1
    best_leaf = (0, 0)
    for spent, v, sel in leaves:
        rest = rest0 & ~sel
        x = rest & 0x1FFF
        ga = f0[x] or t0.frontier_weight_of(x)
        x = rest >> 13 & 0x1FFF
        gb = f1[x] or t1.frontier_weight_of(x)
        x = rest >> 26 & 0x1FFF
        gc = f2[x] or t2.frontier_weight_of(x)
        x = rest >> 39
        gd = f3[x] or t3.frontier_weight_of(x)
        budget = wilds - spent
        v += ga[0] + gb[0] + gc[0] + gd[0]
        if budget == 1:
            v += max(ga[1] - ga[0], gb[1] - gb[0], gc[1] - gc[0], gd[1] - gd[0], item_best[1])
        elif budget:
            v += share_gain(budget, ga, gb, gc, gd, item_best)
        if v > best:
            best = v
            best_leaf = (sel, spent)
    best += fixed_w
    if not want:
        return best, 0
    sel, spent = best_leaf
    rest = rest0 & ~sel
    tabs = solver.tabs
    budget = wilds - spent
    masks = (rest & 0x1FFF, rest >> 13 & 0x1FFF, rest >> 26 & 0x1FFF, rest >> 39)
    split: Sequence[int] = (0, 0, 0, 0, 0)
    if budget:
        fronts = [tabs[s].frontier_weight[masks[s]] or tabs[s].frontier_weight_of(masks[s]) for s in range(4)]
        if budget == 1:
            gains = [f[1] - f[0] for f in fronts] + [item_best[1]]
            one = [0] * 5
            one[gains.index(max(gains))] = 1
            split = one
        else:
            split = share_split(budget, fronts, item_best)
    mask = fixed52 | sel
    for s in range(4):
        mask |= tabs[s].frontier_cards[masks[s]][split[s]] << 13 * s
    if split[4]:
        for i in pick_items(items, split[4]):
            mask |= items[i][2]
    return best, mask


def _two_of_four(a: int, b: int, c: int, d: int) -> int:
    return ((a | b) & (c | d)) | (a & b) | (c & d)


def _three_of_four(a: int, b: int, c: int, d: int) -> int:
    return (a & b & (c | d)) | (c & d & (a | b))


def _four_of_four(a: int, b: int, c: int, d: int) -> int:
    return a & b & c & d


def _no_sets(a: int, b: int, c: int, d: int) -> int:
    return 0  # a set of 5 or more needs a second deck or a wild


_RANKS_WITH_A_SET = {2: _two_of_four, 3: _three_of_four, 4: _four_of_four}


def _mask_cards(mask: int) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


_SOLVERS: dict[MeldRules, Solver] = {}
_LAST_RULES: MeldRules | None = None
_LAST_SOLVER: Solver  # the solver of _LAST_RULES (set with it)


def solver_for(rules: MeldRules) -> Solver:
    """The solver of ``rules``, built once per distinct rules (the last one is found by identity)."""
    global _LAST_RULES, _LAST_SOLVER
    if rules is _LAST_RULES:
        return _LAST_SOLVER
    solver = _SOLVERS.get(rules)
    if solver is None:
        if len(_SOLVERS) >= 64:
            _SOLVERS.clear()
        solver = _SOLVERS[rules] = Solver(rules)
    if _LAST_RULES is not None and _LAST_SOLVER is not solver:
        _LAST_SOLVER.memo.clear()  # one solver's search memo is kept at a time
    _LAST_RULES, _LAST_SOLVER = rules, solver
    return solver
