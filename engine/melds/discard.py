"""The best discard (:func:`engine.melds.best_discard`) and the deadwood left after each discard
(:func:`engine.melds.discard_scores`).

Two ways: one pass over the set choices of the hand (:func:`discard_fast`, with the per-suit
"one card less" tables of :class:`~engine.melds.suit_tables.SuitTables`) where it can tell, else a
loop that solves the hand without each card that could beat the best so far. A discard *key* packs
a choice in one int (see ``drop_key`` in :mod:`engine.melds.suit_tables`): comparing keys prefers
the lower deadwood, then the dearer card, then the higher card code.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import JOKER, Card
from engine.melds.sharing import item_front, merge
from engine.melds.solver import Item, Leaf, Objective, Solver
from engine.melds.suit_tables import FAST_WILDS, SCALE, SCALE_BITS
from engine.melds.vocabulary import DiscardChoice

_SHIFT = (1).__lshift__
_MASK52 = (1 << 52) - 1
_NO_BRANCH = [(0, 0)]  # the one leaf when no rank needs a choice: no card taken, no worth


def best_discard(solver: Solver, hand: Sequence[Card]) -> DiscardChoice:
    """See :func:`engine.melds.best_discard`."""
    if solver.discard_fast_ok:
        choice = discard_fast(solver, hand)
        if choice is not None:
            return choice
    return _discard_loop(solver, hand)


def discard_scores(solver: Solver, hand: Sequence[Card]) -> dict[Card, int]:
    """See :func:`engine.melds.discard_scores`."""
    total, melded, dead = solver.solve(hand, True)
    assert dead is not None
    in_dead = set(dead)
    out = {}
    for card in sorted(set(hand)):
        if card in in_dead:
            out[card] = (total - melded - solver.weight[card]) // SCALE
        else:
            rest = list(hand)
            rest.remove(card)
            t, m, _ = solver.solve(rest)
            out[card] = (t - m) // SCALE
    return out


def _discard_loop(solver: Solver, hand: Sequence[Card]) -> DiscardChoice:
    """The best discard by solving ``hand`` minus each card that could beat the best so far.

    One solve gives the deadwood ``md`` and, where the plan is cheap, the
    deadwood ``dead`` of a best arrangement: its most preferred card leaves
    exactly ``md - value``. A card can only do better if ``md - its value``
    does not exceed the best score so far. A hand with identical cards under
    rules where every wild joins (Three Thirteen's two decks) skips the plan:
    the general search's plan costs more than the solves it saves.
    """
    if solver.absorbing and solver.all_wild_ok and len(set(hand)) < len(hand):
        total, melded, dead = solver.solve(hand)
    else:
        total, melded, dead = solver.solve(hand, True)
        assert dead is not None
    md_w = total - melded
    wt, order = solver.weight, solver.discard_order
    best_w = -1
    best_card = -1
    if dead:
        best_card = min(dead, key=order.__getitem__)
        best_w = md_w - wt[best_card]
    # where every wild joins once something is melded, discarding a wild of a hand that melds anything
    # leaves at least ``md`` (the other cards cannot meld more): it never beats a score below ``md``
    wilds_melded = solver.absorbing and melded > 0
    is_wild = solver.rules.is_wild
    for card in sorted(set(hand), key=order.__getitem__):
        if card == best_card:
            break  # the cards after it are worth less, or tie and come later
        if best_w >= 0 and (md_w - wt[card]) // SCALE > best_w // SCALE:
            break  # md - value only grows from here
        if wilds_melded and best_w >= 0 and best_w // SCALE < md_w // SCALE and is_wild(card):
            continue
        rest = list(hand)
        rest.remove(card)
        t, m, _ = solver.solve(rest)
        if best_w < 0 or (t - m) // SCALE < best_w // SCALE or (
            (t - m) // SCALE == best_w // SCALE and order[card] < order[best_card]
        ):
            best_w, best_card = t - m, card
    return DiscardChoice(best_card, best_w // SCALE, best_w == 0)


def discard_fast(solver: Solver, hand: Sequence[Card]) -> DiscardChoice | None:
    """The best discard in one pass over the set choices, or None when this cannot tell.

    When a best arrangement leaves a card worth more than 0 unmatched, a
    better-or-equal discard d scores below ``md``; then in a best
    arrangement of the hand without d, d's rank holds no set (a set there
    would also take d, giving at most ``md``), so d comes out of its suit's
    run part: the per-suit discard tables (``drop_key``) cover every such d. A
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
    wm = m & solver.wild_mask
    if wm and solver.limit != "none":
        return None  # natural 2s need the at_least_one_natural enumeration
    nat = m ^ wm
    joker_wild = nj if solver.jokers_wild else 0
    wild_n = wm.bit_count() + joker_wild
    if wild_n > FAST_WILDS or not nat:
        return None
    t0, t1, t2, t3 = solver.tabs
    values = solver.rules.values
    # the value of the cards that are not wild (a joker that is not wild is such a card)
    nat_v = (t0.weight[nat & 0x1FFF] + t1.weight[nat >> 13 & 0x1FFF] + t2.weight[nat >> 26 & 0x1FFF]
             + t3.weight[nat >> 39]) >> SCALE_BITS
    if nj > joker_wild:
        nat_v += values[JOKER]
    if wild_n:
        melded_v, key = solver.best_split(nat, wild_n, solver.least_deadwood_discard or _discard_objective(solver))
        if melded_v == 0 and not (solver.all_wild_ok and wild_n >= solver.all_wild_size):
            return None  # nothing melds: every card is deadwood (the loop settles it quickly)
    else:
        melded_v, key = _discard_no_wild(solver, nat)
    if key < 0:
        return None
    md = nat_v - melded_v  # the deadwood: every wild is melded once a natural is
    kept = key >> 32  # value melded after the discard, plus the discard's value
    value_d = (key >> 8) & 0xFFFFFF
    card = key & 0xFF
    if wild_n and kept == value_d and not (solver.all_wild_ok and wild_n >= solver.all_wild_size):
        return None  # nothing natural would be melded: the wilds would not be either
    score = nat_v - kept
    if score >= md:
        return None  # the hand is (nearly) fully melded: some meld must give up a card
    if nj and not solver.jokers_wild:  # a joker that is not wild is always deadwood
        joker_score = md - values[JOKER]
        if joker_score < score or (joker_score == score and solver.discard_order[JOKER] < solver.discard_order[card]):
            card, score = JOKER, joker_score
    return DiscardChoice(card, score, score == 0)


def _discard_no_wild(solver: Solver, n: int) -> tuple[int, int]:
    """(best melded value, best discard key) of the naturals ``n`` (one deck, no wild)."""
    a = n & 0x1FFF
    b = n >> 13 & 0x1FFF
    c = n >> 26 & 0x1FFF
    d = n >> 39
    t0, t1, t2, t3 = solver.tabs
    runs0, runs1, runs2, runs3 = t0.runs_value, t1.runs_value, t2.runs_value, t3.runs_value
    drop0, drop1, drop2, drop3 = t0.drop_delta0, t1.drop_delta0, t2.drop_delta0, t3.drop_delta0
    sets = solver.ranks_with_a_set(a, b, c, d)
    if not sets:
        best = runs0[a] + runs1[b] + runs2[c] + runs3[d]
        return best, max(drop0[a], drop1[b] + 13, drop2[c] + 26, drop3[d] + 39) + (best << 32)
    ra, rb, rc, rd = t0.runnable[0][a], t1.runnable[0][b], t2.runnable[0][c], t3.runnable[0][d]
    conflict = sets & (ra | rb | rc | rd)
    fixed = sets & ~conflict
    rest0 = n & ~((fixed | fixed << 13 | fixed << 26 | fixed << 39) & n)
    fixed_v = (t0.weight[a & fixed] + t1.weight[b & fixed] + t2.weight[c & fixed]
               + t3.weight[d & fixed]) >> SCALE_BITS
    leaves = solver.branch_sets(a, b, c, d, (ra, rb, rc, rd), conflict, solver.set_value) if conflict else _NO_BRANCH
    best = -1
    best_key = -1
    for sel, v in leaves:
        rest = rest0 & ~sel
        a = rest & 0x1FFF
        b = rest >> 13 & 0x1FFF
        c = rest >> 26 & 0x1FFF
        d = rest >> 39
        v += fixed_v + runs0[a] + runs1[b] + runs2[c] + runs3[d]
        if v > best:
            best = v
        k = max(drop0[a], drop1[b] + 13, drop2[c] + 26, drop3[d] + 39) + (v << 32)
        if k > best_key:
            best_key = k
    return best, best_key


def _discard_objective(solver: Solver) -> Objective:
    """The best discard's :class:`~engine.melds.solver.Objective` for ``solver`` (made once): sets are worth
    their value in points, and an item carries its best card to discard."""
    objective = solver.least_deadwood_discard = Objective(solver.set_value, {}, solver.item_pick, score_discard_leaves)
    return objective


def score_discard_leaves(solver: Solver, n: int, wilds: int, leaves: Sequence[Leaf], fixed_v: int, fixed52: int,
                         items: list[Item], items52: int, want: bool) -> tuple[int, int]:
    """The best discard's score (see :func:`_discard_objective`), for the naturals ``n`` with
    ``wilds`` wilds (one deck): (best melded natural value, best discard key) over the leaves.

    An item's cards fit no run: they leave the suit masks, and are discard candidates of their own
    (the item is then not melded: a set there would keep the discard); items carry their best card
    to discard, packed ``value << 8 | code``.
    """
    tabs = solver.tabs
    t0, t1, t2, t3 = tabs
    if items:
        item_best = item_front(items, wilds)
        items_without = [item_front(items[:i] + items[i + 1:], wilds) for i in range(len(items))]
    else:
        item_best = [0] * (wilds + 1)
        items_without = []
    rest0 = n & ~fixed52 & ~items52
    val0, val1, val2, val3 = t0.frontier_value, t1.frontier_value, t2.frontier_value, t3.frontier_value
    delta0, delta1, delta2, delta3 = t0.drop_delta, t1.drop_delta, t2.drop_delta, t3.drop_delta
    best = -1
    best_key = -1
    for spent, v, sel in leaves:
        rest = rest0 & ~sel
        x0 = rest & 0x1FFF
        x1 = rest >> 13 & 0x1FFF
        x2 = rest >> 26 & 0x1FFF
        x3 = rest >> 39
        f0 = val0[x0] or t0.frontier_value_of(x0)
        f1 = val1[x1] or t1.frontier_value_of(x1)
        f2 = val2[x2] or t2.frontier_value_of(x2)
        f3 = val3[x3] or t3.frontier_value_of(x3)
        budget = wilds - spent
        base = v + fixed_v + f0[0] + f1[0] + f2[0] + f3[0]
        if budget == 0:
            if base > best:
                best = base
            k = max((delta0[x0] or t0.drop_delta_of(x0))[0], (delta1[x1] or t1.drop_delta_of(x1))[0] + 13,
                    (delta2[x2] or t2.drop_delta_of(x2))[0] + 26,
                    (delta3[x3] or t3.drop_delta_of(x3))[0] + 39) + (base << 32)
            for _, _, pick in items:
                k = max(k, ((base + (pick >> 8)) << 32) | pick)
        elif budget == 1:
            g0 = f0[1] - f0[0]
            g1 = f1[1] - f1[0]
            g2 = f2[1] - f2[0]
            g3 = f3[1] - f3[0]
            gi = item_best[1]
            top = max(g0, g1, g2, g3, gi)
            if base + top > best:
                best = base + top
            e0 = delta0[x0] or t0.drop_delta_of(x0)
            e1 = delta1[x1] or t1.drop_delta_of(x1)
            e2 = delta2[x2] or t2.drop_delta_of(x2)
            e3 = delta3[x3] or t3.drop_delta_of(x3)
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
            gain, k = _discard_share(solver, budget, base, (f0, f1, f2, f3), (x0, x1, x2, x3), item_best,
                                     items, items_without)
            if base + gain > best:
                best = base + gain
        if k > best_key:
            best_key = k
    return best, best_key


def _discard_share(solver: Solver, budget: int, base: int, fronts: tuple[tuple[int, ...], ...],
                   masks: tuple[int, ...], item_best: list[int], items: list[Item],
                   items_without: list[list[int]]) -> tuple[int, int]:
    """(best gain of ``budget`` wilds, best discard key) of one leaf, for 2+ wilds.

    Max-plus merges of the wild-gain curves: prefix and suffix products give,
    for each suit, the best the other suits and the items make of any budget.
    """
    if budget == 2:
        return _discard_share_two_wilds(solver, base, fronts, masks, item_best, items, items_without)
    parts = [[f[w] - f[0] for w in range(budget + 1)] for f in fronts]
    parts.append(item_best[: budget + 1])
    prefix = [[0] * (budget + 1), parts[0]]
    for part in parts[1:]:
        prefix.append(merge(prefix[-1], part))
    suffix = [parts[4]]
    for part in reversed(parts[:4]):
        suffix.append(merge(suffix[-1], part))
    suffix.reverse()  # suffix[i]: parts i..4
    k = -1
    for s in range(4):
        if not masks[s]:
            continue
        table = solver.tabs[s]
        e = table.drop_delta[masks[s]] or table.drop_delta_of(masks[s])
        others = merge(prefix[s], suffix[s + 1])
        for w in range(budget + 1):
            k = max(k, e[w] + ((base + others[budget - w]) << 32) + 13 * s)
    for i, (_, _, pick) in enumerate(items):
        other_gain = merge(prefix[4], items_without[i][: budget + 1])[budget]
        k = max(k, ((base + other_gain + (pick >> 8)) << 32) | pick)
    return prefix[5][budget], k  # prefix[5] merges all five curves


def _discard_share_two_wilds(solver: Solver, base: int, fronts: tuple[tuple[int, ...], ...],
                             masks: tuple[int, ...], item_best: list[int], items: list[Item],
                             items_without: list[list[int]]) -> tuple[int, int]:
    """:func:`_discard_share` for exactly 2 wilds: both in one part, or one in each of two parts."""
    one = [f[1] - f[0] for f in fronts]
    two = [f[2] - f[0] for f in fronts]
    one.append(item_best[1])
    two.append(item_best[2])
    by_one = sorted(range(5), key=one.__getitem__, reverse=True)
    by_two = sorted(range(5), key=two.__getitem__, reverse=True)
    p, q, u = by_one[0], by_one[1], by_one[2]
    gain = max(two[by_two[0]], one[p] + one[q])
    k = -1
    for s in range(4):
        if not masks[s]:
            continue
        table = solver.tabs[s]
        e = table.drop_delta[masks[s]] or table.drop_delta_of(masks[s])
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
