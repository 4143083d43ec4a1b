"""Whether some cards are ONE legal meld, and what each wild in it stands for (the rules that
:func:`engine.melds.as_meld` enforces; the solver builds its melds with them too)."""

from __future__ import annotations

from collections import Counter

from engine.cards import JOKER, Card, make_card
from engine.melds.vocabulary import MAX_RUN, Meld, MeldRules, limit_ok, position_card


def meld_with_targets(cards: tuple[Card, ...], targets: tuple[Card, ...], rules: MeldRules) -> Meld | None:
    """``cards`` as one meld where card i stands for ``targets[i]``, or None: a set (``min_set``+ of one
    rank) or a run (``min_run``+ consecutive places of one suit, an ace at one end only), within the
    wild limit; a natural card stands only for itself."""
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
        if not limit_ok(naturals, n - naturals, rules.wild_limit):
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
            if not limit_ok(naturals, n - naturals, rules.wild_limit):
                return None
            return Meld("run", tuple(cards[i] for i in order), tuple(targets[i] for i in order))
    return None


def find_meld(cards: tuple[Card, ...], rules: MeldRules) -> Meld | None:
    """``cards`` as one meld with the wilds placed by a search (natural placements first), or None."""
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
            meld = meld_with_targets(cards, targets, rules)
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
            meld = _run_of_suit(cards, chosen, suit, top, rules)
            if meld is not None:
                return meld
    return None


def _run_of_suit(cards: tuple[Card, ...], chosen: list[int], suit: int, top: int, rules: MeldRules) -> Meld | None:
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
            targets[i] = position_card(suit, p)
        chosen_set = set(chosen)
        for i in range(n):
            if i not in chosen_set:
                targets[i] = position_card(suit, next(free))
        meld = meld_with_targets(cards, tuple(targets), rules)
        if meld is not None:
            return meld
    return None

