"""The meld vocabulary of the rummy games (RULES.md §0, C5), declared once for the solver and the
contract code: the rules of a game's melds, wild cards and their limits, run positions, and the
value types the solver answers with.

A *set* is cards of one rank; a *run* is consecutive ranks of one suit, never wrapping (K-A-2);
a *wild* card may stand for another; *deadwood* is what is in no meld.

>>> limit_ok(1, 2, "at_least_one_natural"), limit_ok(1, 2, "not_more_than_naturals")
(True, False)
>>> CARD_NAMES[position_card(3, 14)], CARD_NAMES[position_card(3, 2)]
('AS', '2S')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.cards import CARD_NAMES, JOKER, Card
from engine.errors import InvalidCardError, InvalidOptionError

ACES = ("low", "high_or_low")
WILD_LIMITS = ("none", "at_least_one_natural", "not_more_than_naturals", "fewer_than_naturals")
MAX_RUN = 13  # a run never holds an ace at both ends, so it spans at most 13 of the 14 positions
HIGH_ACE = 14  # the run position of an ace above the king (1 is the ace below the 2)


def rummy_values(
    ace: int = 1, joker: int = 20, two: int | None = None, low: int | None = None, ten_to_king: int = 10
) -> tuple[int, ...]:
    """The deadwood value of every card code 0..52 (``values[JOKER]`` is the joker's).

    Ranks 2-9 count their face value unless ``low`` is given (then 3-9, and 2
    unless ``two`` is given, count ``low``); T, J, Q, K count ``ten_to_king``.

    * Three Thirteen (§2 R4): ``rummy_values()``; with aces high_or_low ``rummy_values(ace=15)``.
    * Threezies (§3 R5): ``rummy_values()``.
    * Contract rummy (§4 R9): ``rummy_values(ace=15, joker=25, two=20, low=5)``.

    >>> v = rummy_values(ace=15, joker=25, two=20, low=5)
    >>> v[0], v[1], v[6], v[12], v[JOKER]          # AC 2C 7C KC JK
    (15, 20, 5, 10, 25)
    """
    by_rank = [0, ace]
    for rank in range(2, 10):
        by_rank.append(rank if low is None else low)
    if two is not None:
        by_rank[2] = two
    by_rank += [ten_to_king] * 4
    return (*(by_rank[c % 13 + 1] for c in range(52)), joker)


_DEFAULT_VALUES = rummy_values()


@dataclass(frozen=True)
class MeldRules:
    """What counts as a meld in one game (and round), and what deadwood costs.

    * ``min_set``: a set is ``min_set``+ cards of one rank; identical cards from
      several decks are allowed (``7H 7H 7S``).
    * ``min_run``: a run is ``min_run``+ consecutive ranks of one suit, no two of
      the same rank, never wrapping (K-A-2).
    * ``aces``: ``"low"`` (A-2-3 only) or ``"high_or_low"`` (A-2-3 or Q-K-A,
      never both ends of one run). An ace's value never changes.
    * ``wild_ranks``: ranks whose cards are wild (Three Thirteen round k: {k+2};
      contract rummy: {2}). ``jokers_wild``: whether a joker is wild (a joker
      that is not wild fits no meld).
    * ``wild_limit``: ``"none"`` (any number of wilds, even an all-wild meld),
      ``"at_least_one_natural"``, ``"not_more_than_naturals"`` or
      ``"fewer_than_naturals"`` (per meld: see :func:`limit_ok`). A wild used as
      itself — a 2 in a set of 2s, or 2H at the 2H place of a hearts run — counts as natural.
    * ``values``: deadwood value of each card code 0..52 (see :func:`rummy_values`);
      an unmatched wild scores its own value.

    >>> from engine.cards import parse_card
    >>> MeldRules(wild_ranks=frozenset({2})).is_wild(parse_card("2H"))
    True
    """

    min_set: int = 3
    min_run: int = 3
    aces: str = "low"
    wild_ranks: frozenset[int] = frozenset()
    jokers_wild: bool = True
    wild_limit: str = "none"
    values: tuple[int, ...] = _DEFAULT_VALUES

    def __post_init__(self) -> None:
        for name in ("min_set", "min_run"):
            size = getattr(self, name)
            if isinstance(size, bool) or not isinstance(size, int) or not 2 <= size <= MAX_RUN:
                raise InvalidOptionError(name, f"must be an integer from 2 to {MAX_RUN}, not {size!r}")
        if self.aces not in ACES:
            raise InvalidOptionError("aces", f"must be one of {', '.join(ACES)}, not {self.aces!r}")
        if self.wild_limit not in WILD_LIMITS:
            raise InvalidOptionError(
                "wild_limit", f"must be one of {', '.join(WILD_LIMITS)}, not {self.wild_limit!r}"
            )
        ranks = frozenset(self.wild_ranks)
        if not all(isinstance(r, int) and 1 <= r <= 13 for r in ranks):
            raise InvalidOptionError("wild_ranks", f"ranks are 1 (ace) to 13 (king), not {sorted(ranks)!r}")
        object.__setattr__(self, "wild_ranks", ranks)
        values = tuple(self.values)
        if len(values) != 53 or not all(isinstance(v, int) and 0 <= v <= 1_000_000 for v in values):
            raise InvalidOptionError("values", "must give a value 0..1000000 for each of the 53 card codes")
        object.__setattr__(self, "values", values)

    def is_wild(self, card: Card) -> bool:
        """Whether ``card`` is wild under these rules (it *may* stand for another card)."""
        if card == JOKER:
            return self.jokers_wild
        return card % 13 + 1 in self.wild_ranks


def limit_ok(naturals: int, wilds: int, limit: str) -> bool:
    """The per-meld wild limit (RULES.md §2 R5, §3 R4, §4 R3): ``none`` allows any meld, even an
    all-wild one; the others need at least one natural card, and ``not_more_than_naturals`` no more
    wilds than naturals, ``fewer_than_naturals`` fewer wilds than naturals.

    >>> limit_ok(0, 3, "none"), limit_ok(2, 2, "not_more_than_naturals"), limit_ok(2, 2, "fewer_than_naturals")
    (True, True, False)
    """
    if limit == "none":
        return True
    if naturals < 1:
        return False
    if limit == "not_more_than_naturals":
        return wilds <= naturals
    if limit == "fewer_than_naturals":
        return wilds < naturals
    return True


def position_card(suit: int, position: int) -> Card:
    """The card at run ``position`` 1..14 of ``suit`` (1 = ace low … 13 = king, 14 = ace high)."""
    return suit * 13 + (0 if position == HIGH_ACE else position - 1)  # make_card, inlined (hot in searches)


def card_positions(card: Card) -> tuple[int, ...]:
    """The run positions a natural card can take: an ace is 1 or 14.

    >>> from engine.cards import parse_card
    >>> card_positions(parse_card("AS")), card_positions(parse_card("7S"))
    ((1, 14), (7,))
    """
    r = card % 13 + 1
    return (1, HIGH_ACE) if r == 1 else (r,)


def check_card(card: Any) -> None:
    """InvalidCardError unless ``card`` is a card code."""
    if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card <= JOKER:
        raise InvalidCardError(f"{card!r} is not a card code (0..52, see engine/cards.py)")


@dataclass(frozen=True)
class Meld:
    """One meld: ``cards`` in meld order (runs low to high) and, position by
    position, the natural card each one ``stands_for`` (a natural card stands
    for itself; a wild in a set stands for a card of the set's rank).

    >>> from engine.cards import parse_cards
    >>> from engine.melds import as_meld
    >>> m = as_meld(parse_cards("QS KS AS 2S"), MeldRules(min_run=4, aces="high_or_low",
    ...             wild_ranks=frozenset({2})))
    >>> str(m)
    'run 2S=JS QS KS AS'
    """

    kind: str
    cards: tuple[Card, ...]
    stands_for: tuple[Card, ...]

    def to_json(self) -> dict[str, Any]:
        """``{"kind": ..., "cards": [...], "stands_for": [...]}`` with cards by name (events, views, analyses)."""
        return {
            "kind": self.kind,
            "cards": [CARD_NAMES[c] for c in self.cards],
            "stands_for": [CARD_NAMES[c] for c in self.stands_for],
        }

    def __str__(self) -> str:
        return self.kind + " " + " ".join(
            CARD_NAMES[c] if c == f else f"{CARD_NAMES[c]}={CARD_NAMES[f]}"
            for c, f in zip(self.cards, self.stands_for, strict=True)
        )


@dataclass(frozen=True)
class Arrangement:
    """A best split of a hand: its ``score`` (deadwood value), the melds and the deadwood cards."""

    score: int
    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]


@dataclass(frozen=True)
class DiscardChoice:
    """The discard of :func:`engine.melds.best_discard`: ``score`` is the minimum deadwood of
    the hand left after discarding ``card``; ``can_go_out`` says that hand is fully melded."""

    card: Card
    score: int
    can_go_out: bool
