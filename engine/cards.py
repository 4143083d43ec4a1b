"""Cards as small ints, and their notation (RULES.md §0).

A card is an ``int``: ``suit * 13 + (rank - 1)`` for the 52 standard cards
(suits in the order C, D, H, S; ranks A=1 … K=13) and ``JOKER == 52``.
Ints keep hands cheap to copy, hash and turn into bitmasks for the solver;
this module is the only place that knows the encoding.

>>> parse_card("10h"), format_card(parse_card("10h"))
(35, 'TH')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.errors import InvalidCardError

RANKS = "A23456789TJQK"
SUITS = "CDHS"
JOKER = 52
NUM_CARD_KINDS = 53  # 52 standard cards and the joker

Card = int


def make_card(rank: int, suit: int) -> Card:
    """The card of ``rank`` (1..13) and ``suit`` (0..3)."""
    return suit * 13 + rank - 1


def rank_of(card: Card) -> int:
    """Rank number 1..13 (A..K); the joker has rank 0."""
    return 0 if card == JOKER else card % 13 + 1


def suit_of(card: Card) -> int:
    """Suit number 0..3 (C, D, H, S); the joker has suit -1."""
    return -1 if card == JOKER else card // 13


def format_card(card: Card) -> str:
    """Canonical notation: ``7H``, ``TS``, ``AD``, ``JK``."""
    if card == JOKER:
        return "JK"
    return RANKS[card % 13] + SUITS[card // 13]


def _build_parse_table() -> dict[str, Card]:
    table: dict[str, Card] = {"JK": JOKER}
    for s, suit in enumerate(SUITS):
        for r, rank in enumerate(RANKS, start=1):
            table[rank + suit] = make_card(r, s)
        table["10" + suit] = make_card(10, s)
    return table


_PARSE = _build_parse_table()
CARD_NAMES: tuple[str, ...] = tuple(format_card(c) for c in range(NUM_CARD_KINDS))
#: The card of each canonical name (``"TH"``, not ``"10h"``): a fast look-up for names the engine wrote
#: itself, such as the cards of a listed move; :func:`parse_card` reads what clients send.
CARD_OF_NAME: dict[str, Card] = {name: c for c, name in enumerate(CARD_NAMES)}


def parse_card(token: str) -> Card:
    """Parse one card; accepts ``10`` for ``T`` and lower case.

    Raises :class:`InvalidCardError` naming the token otherwise.
    """
    card = _PARSE.get(token) if isinstance(token, str) else None
    if card is None and isinstance(token, str):
        card = _PARSE.get(token.strip().upper())
    if card is None:
        raise InvalidCardError(
            f"{token!r} is not a card: write rank A 2-9 T(10) J Q K then suit C D H S, "
            "e.g. 7H, TS, AD, or JK for a joker (RULES.md §0)"
        )
    return card


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse ``"7H 8H 9h"`` (spaces or commas) or a list of tokens."""
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [parse_card(t) for t in tokens]


def format_cards(cards: Iterable[Card]) -> list[str]:
    return [CARD_NAMES[c] for c in cards]


def cards_str(cards: Iterable[Card]) -> str:
    return " ".join(CARD_NAMES[c] for c in cards)


def standard_deck(packs: int = 1, jokers: int = 0, ranks: Sequence[int] = tuple(range(1, 14))) -> list[Card]:
    """``packs`` copies of every card of ``ranks`` in four suits, plus ``jokers`` jokers."""
    one = [make_card(r, s) for s in range(4) for r in ranks]
    return one * packs + [JOKER] * jokers
