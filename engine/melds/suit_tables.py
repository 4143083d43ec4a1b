"""The solver's precomputed tables: the runs of one suit for every mask of its cards, and the set
choices at one rank for every pattern of suits (see :mod:`engine.melds.solver` for how they are used).

Masks: a suit's natural cards are a 13-bit mask (bit r-1 = rank r); a one-deck hand is four of them
side by side, a 52-bit mask whose bit ``c`` is card ``c``. Weights: a card weighs ``value * SCALE + 1``
(see :mod:`engine.melds.solver`).
"""

from __future__ import annotations

from engine.melds.vocabulary import MAX_RUN

SCALE_BITS = 8
SCALE = 1 << SCALE_BITS  # weight = value * SCALE + 1; hands must hold fewer than SCALE cards
FAST_WILDS = 4  # the one-deck path handles up to this many wilds
INF = 1 << 30
SUIT_BITS = 0x1FFF  # one suit's 13 cards in a 52-bit hand mask (``hand >> 13 * suit & SUIT_BITS``)

POP4 = [bin(p).count("1") for p in range(16)]  # cards in a 4-bit pattern of suits
# a 13-bit suit mask spread to one bit in four (bit r -> bit 4r): four of them interleave into
# a rank-major mask whose nibble r says which suits hold rank r
SPREAD4 = [sum(1 << 4 * r for r in range(13) if m >> r & 1) for m in range(1 << 13)]
HOPELESS = -(1 << 80)  # a discard key below every real one
NO_SETS = ((0, 0, 0),)  # the one leaf when no rank needs a choice
ZEROS = (0,) * (FAST_WILDS + 1)


def _segments(mask: int, min_run: int) -> int:
    """Bits of ``mask`` inside a stretch of ``min_run``+ consecutive bits."""
    starts = mask
    for i in range(1, min_run):
        starts &= mask >> i
    covered = 0
    for i in range(min_run):
        covered |= starts << i
    return covered


class SuitTables:
    """Run tables of one suit: index = 13-bit mask of the suit's naturals (bit r-1 = rank r).

    * ``weight[m]``: the weight of the cards.
    * ``runs_weight[m]`` / ``runs_cards[m]`` / ``runs_value[m]``: the best run weight, its cards and
      its value in points with no wild (every maximal stretch of ``min_run``+).
    * ``runnable[w][m]``: the cards that can be in some run using at most ``w`` wilds
      (:meth:`runnable_of` fills an entry; -1 is not filled yet).
    * ``frontier_weight[m]`` / ``frontier_cards[m]`` / ``frontier_value[m]`` (filled lazily by
      :meth:`frontier_weight_of`, :meth:`frontier_value_of`): for 0..4 wilds, the best run weight,
      the cards it melds, and the same in points.
    * For the best discard, in points: ``drop_key0[m]`` / ``drop_key[m][w]`` the best "one card of
      ``m`` discarded", packed in one int as ``(value kept in runs + the card's value) << 32 |
      the card's value << 8 | its rank - 1``, so that comparing packed ints prefers the lower deadwood,
      then the dearer card, then the higher rank; ``drop_delta0`` / ``drop_delta`` (:meth:`drop_delta_of`)
      the same less the value ``m`` keeps in runs without a discard.
    """

    def __init__(self, weights: tuple[int, ...], min_run: int, ace_high: bool) -> None:
        self.weights = weights
        self.min_run = min_run
        self.ace_high = ace_high
        size = 1 << 13
        weight = [0] * size
        for m in range(1, size):
            low = m & -m
            weight[m] = weight[m ^ low] + weights[low.bit_length() - 1]
        self.weight = weight
        runs_weight = [0] * size
        runs_cards = [0] * size
        runnable0 = [0] * size
        for m in range(size):
            cov = _segments(m, min_run)
            if ace_high and m & 1:
                cov_high = _segments((m ^ 1) | 1 << 13, min_run)
                cov_high = (cov_high & SUIT_BITS) | cov_high >> 13
                runnable0[m] = cov | cov_high
                if weight[cov_high] > weight[cov]:
                    cov = cov_high
            else:
                runnable0[m] = cov
            runs_weight[m] = weight[cov]
            runs_cards[m] = cov
        self.runs_weight = runs_weight
        self.runs_cards = runs_cards
        self.runnable: list[list[int]] = [runnable0] + [[-1] * size for _ in range(FAST_WILDS)]
        self.frontier_weight: list[tuple[int, ...] | None] = [None] * size
        self.frontier_cards: list[tuple[int, ...]] = [()] * size
        self._position_weights = [*list(weights), weights[0]]  # positions 1..14: the ace high weighs as low
        self._frontiers: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {0: ((0,) * (FAST_WILDS + 1),) * 2}
        self.card_values = [w >> SCALE_BITS for w in weights]
        runs_value = [x >> SCALE_BITS for x in runs_weight]
        self.runs_value = runs_value
        drop_key0 = [-1] * size
        for m in range(1, size):
            best = -1
            x = m
            while x:
                low = x & -x
                r = low.bit_length() - 1
                x ^= low
                vd = self.card_values[r]
                e = ((vd + runs_value[m ^ low]) << 32) | (vd << 8) | r
                if e > best:
                    best = e
            drop_key0[m] = best
        self.drop_key0 = drop_key0
        # a leaf adds its own total once; an empty suit gets a hopeless entry instead of a test
        self.drop_delta0 = [HOPELESS] + [drop_key0[m] - (runs_value[m] << 32) for m in range(1, size)]
        self.frontier_value: list[tuple[int, ...] | None] = [None] * size
        self.drop_key: list[tuple[int, ...] | None] = [None] * size
        self.drop_delta: list[tuple[int, ...] | None] = [(HOPELESS,) * (FAST_WILDS + 1)] + [None] * (size - 1)

    def fill_all(self) -> None:
        """Fill the lazy tables completely (a fraction of a second)."""
        for m in range(1 << 13):
            if self.frontier_weight[m] is None:
                self.frontier_weight_of(m)
            if self.drop_delta[m] is None:
                self._fill_drop_keys(m)
            for w in range(1, FAST_WILDS + 1):
                if self.runnable[w][m] < 0:
                    self.runnable_of(w, m)

    def runnable_of(self, wilds: int, m: int) -> int:
        """``runnable[wilds][m]``, filled: the cards of ``m`` in some window of ``min_run`` positions
        that holds at least ``min_run - wilds`` of them."""
        pm = m | ((m & 1) << 13) if self.ace_high else m
        need = self.min_run - wilds
        out = 0
        width = (1 << self.min_run) - 1
        for start in range((14 if self.ace_high else 13) - self.min_run + 1):
            got = pm & (width << start)
            if got.bit_count() >= need:
                out |= got
        out = (out & SUIT_BITS) | (out >> 13)
        self.runnable[wilds][m] = out
        return out

    def frontier_weight_of(self, m: int) -> tuple[int, ...]:
        """``frontier_weight[m]``, filled (with ``frontier_cards[m]`` and ``frontier_value[m]``)."""
        res = self._frontier(m)
        if self.ace_high and m & 1:
            best_h, how_h = self._frontier((m ^ 1) | 1 << 13)
            best, how = list(res[0]), list(res[1])
            for w in range(FAST_WILDS + 1):
                if best_h[w] > best[w]:
                    best[w] = best_h[w]
                    how[w] = (how_h[w] & SUIT_BITS) | how_h[w] >> 13
            res = (tuple(best), tuple(how))
        self.frontier_weight[m] = res[0]
        self.frontier_cards[m] = res[1]
        self.frontier_value[m] = tuple(x >> SCALE_BITS for x in res[0])
        return res[0]

    def frontier_value_of(self, m: int) -> tuple[int, ...]:
        """``frontier_value[m]``, filled."""
        self.frontier_weight_of(m)
        res = self.frontier_value[m]
        assert res is not None
        return res

    def _fill_drop_keys(self, m: int) -> tuple[int, ...]:
        """Fill ``drop_key[m]`` and ``drop_delta[m]`` for 0..4 wilds (-1: no card)."""
        best = [-1] * (FAST_WILDS + 1)
        x = m
        while x:
            low = x & -x
            r = low.bit_length() - 1
            x ^= low
            sub = self.frontier_value[m ^ low] or self.frontier_value_of(m ^ low)
            vd = self.card_values[r]
            for w in range(FAST_WILDS + 1):
                e = ((vd + sub[w]) << 32) | (vd << 8) | r
                if e > best[w]:
                    best[w] = e
        res = tuple(best)
        self.drop_key[m] = res
        if m:
            kept = self.frontier_value[m] or self.frontier_value_of(m)
            self.drop_delta[m] = tuple(e - (kept[0] << 32) for e in res)
        return res

    def drop_delta_of(self, m: int) -> tuple[int, ...]:
        """``drop_delta[m]``, filled."""
        self._fill_drop_keys(m)
        res = self.drop_delta[m]
        assert res is not None
        return res

    def _frontier(self, pm: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Best run weight of the position mask ``pm`` (bit i = position i+1) for 0..4 wilds.

        The lowest card is deadwood, or starts a run with the next j cards of
        the suit: runs never need to skip a natural of their span (swapping it
        in for the wild is never worse, and two overlapping runs merge into one
        needing fewer wilds), so this DP is exact.
        """
        hit = self._frontiers.get(pm)
        if hit is not None:
            return hit
        low = pm & -pm
        p = low.bit_length() - 1
        sub_best, sub_how = self._frontier(pm ^ low)
        best = list(sub_best)
        how = list(sub_how)
        pw = self._position_weights
        min_run = self.min_run
        run, rest, wsum, k, q = low, pm ^ low, pw[p], 1, p
        while True:
            span = q - p + 1
            cost = span - k + (min_run - span if span < min_run else 0)
            if cost <= FAST_WILDS:
                f_best, f_how = self._frontier(pm ^ run)
                for w in range(cost, FAST_WILDS + 1):
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
        self._frontiers[pm] = res
        return res


_SUIT_TABLES: dict[tuple[tuple[int, ...], int, bool], SuitTables] = {}


def suit_tables(weights: tuple[int, ...], min_run: int, ace_high: bool) -> SuitTables:
    """The tables of one suit whose cards weigh ``weights`` (ace to king), built once."""
    key = (weights, min_run, ace_high)
    tables = _SUIT_TABLES.get(key)
    if tables is None:
        if len(_SUIT_TABLES) >= 32:
            _SUIT_TABLES.clear()
        tables = _SUIT_TABLES[key] = SuitTables(weights, min_run, ace_high)
    return tables


def set_options(lo: int, min_set: int) -> list[list[list[tuple[int, int]]]]:
    """``[present][runnable]`` -> the sets worth trying at one rank, as (suits, wilds needed), where
    ``present`` is the 4-bit pattern of the suits holding the rank and ``runnable`` those of them
    that could also be in a run; ``lo`` is the fewest naturals a set is tried with.

    Cards of the rank that fit no run are always in the set when there is one
    (and there is one when they alone are enough).
    When the rank has ``min_set`` naturals, a set that uses fewer of them plus
    wilds is never better than a natural set of ``min_set``: the wilds can go
    to the runs instead, standing for the naturals the set took from them.
    """
    table: list[list[list[tuple[int, int]]]] = []
    for present in range(16):
        row = []
        for runnable in range(16):
            must = present & ~runnable
            # no set at all loses to the set of the cards that fit no run, when they are enough
            opts = [] if POP4[must] >= min_set else [(0, 0)]
            for s in range(1, 16):
                size = POP4[s]
                if s & present == s and s & must == must and size >= (min_set if POP4[present] >= min_set else lo):
                    opts.append((s, max(0, min_set - size)))
            row.append(opts)
        table.append(row)
    return table
