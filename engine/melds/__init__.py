"""Melds and the exact minimum-deadwood solver of the rummy games (RULES.md C5).

Vocabulary (RULES.md §0): a *set* is cards of one rank, a *run* is consecutive
ranks of one suit (never wrapping K-A-2), no card is in two melds, and
*deadwood* is what is in no meld. A hand scores the **minimum** deadwood over
every way to split it into melds; a greedy grouping is wrong (RULES.md TT3,
TT4, TT5, TZ5). Every rummy game describes its melds with one
:class:`MeldRules` and asks this package.

>>> from engine.cards import parse_cards
>>> tt_round_4 = MeldRules(wild_ranks=frozenset({6}))
>>> min_deadwood(parse_cards("7H 8H 9H 9S 9D 9C"), tt_round_4)   # TT3
0

This module is the public face; the modules behind it, by idea:

* :mod:`~engine.melds.vocabulary`: the rules of a game's melds (:class:`MeldRules`), wild limits, run
  positions, and the value types answered (:class:`Meld`, :class:`Arrangement`, :class:`DiscardChoice`);
  the contract code (:mod:`engine.contracts`) speaks it too.
* :mod:`~engine.melds.validity`: whether some cards are one meld (:func:`as_meld`).
* :mod:`~engine.melds.solver`: the exact solver and its one-deck fast paths (how it works is told
  there), over the tables of :mod:`~engine.melds.suit_tables` and the wild sharing of
  :mod:`~engine.melds.sharing`; :mod:`~engine.melds.search` is its general search and builds
  arrangements; :mod:`~engine.melds.discard` finds the best discard.
* :mod:`~engine.melds.going_out`: the narrower searches that decide going out.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import Card
from engine.melds import discard, search
from engine.melds.going_out import cover_setup, naturals_in_reach
from engine.melds.solver import solver_for
from engine.melds.suit_tables import SCALE
from engine.melds.validity import find_meld, meld_with_targets
from engine.melds.vocabulary import (
    ACES,
    MAX_RUN,
    WILD_LIMITS,
    Arrangement,
    DiscardChoice,
    Meld,
    MeldRules,
    card_positions,
    check_card,
    limit_ok,
    position_card,
    rummy_values,
)


def min_deadwood(hand: Sequence[Card], rules: MeldRules) -> int:
    """The minimum deadwood value of ``hand`` over all ways to meld it (RULES.md C5).

    >>> from engine.cards import parse_cards
    >>> min_deadwood(parse_cards("JS KS TS QH QD 6C"), MeldRules(wild_ranks=frozenset({6})))  # TT5
    20
    """
    total, melded, _ = solver_for(rules).solve(hand)
    return (total - melded) // SCALE


def is_fully_melded(hand: Sequence[Card], rules: MeldRules) -> bool:
    """Whether every card of ``hand`` can be put in a meld at once (going out, TT R6).

    >>> from engine.cards import parse_cards
    >>> is_fully_melded(parse_cards("4C 9S 9H 9D"), MeldRules(wild_ranks=frozenset({4})))
    True
    """
    total, melded, _ = solver_for(rules).solve(hand)
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
    return search.arrangement(solver_for(rules), hand)


def best_discard(hand: Sequence[Card], rules: MeldRules) -> DiscardChoice:
    """For a hand of n+1 cards: the discard that leaves the least deadwood.

    Ties go to the discard of higher value, then to a natural over a wild,
    then to the higher card code (``KS`` before ``KH``); the choice depends
    on the hand (as a multiset) and the rules only.

    >>> from engine.cards import parse_cards, format_card
    >>> d = best_discard(parse_cards("4C 9S 9H 9D KS"), MeldRules(wild_ranks=frozenset({4})))  # TT10
    >>> format_card(d.card), d.score, d.can_go_out
    ('KS', 0, True)
    """
    if not hand:
        raise ValueError("best_discard needs at least one card")
    return discard.best_discard(solver_for(rules), hand)


def discard_scores(hand: Sequence[Card], rules: MeldRules) -> dict[Card, int]:
    """The minimum deadwood left after each distinct discard from ``hand``.

    >>> from engine.cards import parse_cards, format_cards
    >>> s = discard_scores(parse_cards("7H 8H 9H KS"), MeldRules())
    >>> {format_cards([c])[0]: v for c, v in sorted(s.items())}
    {'7H': 27, '8H': 26, '9H': 25, 'KS': 0}
    """
    return discard.discard_scores(solver_for(rules), hand)


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
    return naturals_in_reach(hand, rules)


def can_go_out(hand: Sequence[Card], rules: MeldRules) -> bool:
    """Whether some discard from ``hand`` leaves the rest fully melded (going out, TT R6):
    the same answer as ``best_discard(hand, rules).can_go_out``, by a narrower search.

    With one deck, no wild limit and ``min_set >= min_run`` it asks only how few wilds
    cover every natural card but one (see :class:`~engine.melds.going_out.Cover`); other rules go to the solver.

    >>> from engine.cards import parse_cards
    >>> can_go_out(parse_cards("4C 9S 9H 9D KS"), MeldRules(wild_ranks=frozenset({4})))  # TT10
    True
    >>> can_go_out(parse_cards("7H 8H 9H KS KC 2C"), MeldRules())  # KC and 2C would both be left
    False
    """
    fast = cover_setup(hand, rules)
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
    fast = cover_setup(hand, rules)
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


def prepare(rules: MeldRules) -> None:
    """Build every table the solver uses for ``rules`` now (about 0.1-0.3 s) instead of
    lazily on first use: call it at start-up where the first answers must be fast."""
    for tables in solver_for(rules).tabs:
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
        check_card(c)
    if stands_for is None:
        return find_meld(cards, rules)
    targets = tuple(stands_for)
    for f in targets:
        check_card(f)
    return meld_with_targets(cards, targets, rules)


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
    "card_positions",
    "discard_scores",
    "go_out_discards",
    "is_fully_melded",
    "limit_ok",
    "may_go_out",
    "min_deadwood",
    "position_card",
    "prepare",
    "rummy_values",
]
