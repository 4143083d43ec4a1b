"""Sharing a few wild cards out among the parts of a hand: the four suits' run frontiers (the best
run weight of a suit for 0, 1, 2... wilds) and the *items*, sets that wilds may complete (a knapsack).
A gain curve is what 0..k wilds add to a part; all of them start at 0."""

from __future__ import annotations

from collections.abc import Sequence


def share_gain(budget: int, ga: tuple[int, ...], gb: tuple[int, ...], gc: tuple[int, ...],
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


def merge(x: Sequence[int], y: Sequence[int]) -> list[int]:
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


def item_front(items: Sequence[tuple[int, int, int]], budget: int) -> list[int]:
    """Best total (second field) of the items (first field: wilds needed) within 0..budget wilds."""
    front = [0] * (budget + 1)
    for cost, w, _ in items:
        for bud in range(budget, cost - 1, -1):
            if front[bud - cost] + w > front[bud]:
                front[bud] = front[bud - cost] + w
    return front


def share_split(budget: int, fronts: Sequence[tuple[int, ...]], items: Sequence[int]) -> list[int]:
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


def pick_items(items: list[tuple[int, int, int]], budget: int) -> list[int]:
    """Which knapsack items (cost, weight, cards) reach the best weight within ``budget``."""
    best: dict[int, tuple[int, list[int]]] = {0: (0, [])}
    for i, (cost, w, _) in enumerate(items):
        for spent, (value, picked) in list(best.items()):
            s = spent + cost
            if s <= budget and (s not in best or best[s][0] < value + w):
                best[s] = (value + w, [*picked, i])
    return max(best.values(), key=lambda t: t[0])[1]
