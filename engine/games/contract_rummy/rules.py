"""Contract rummy's numbers and state (RULES.md §4 R1, R2, R9): the contract of each hand, the points of
a card left in hand, and :class:`ContractRummyState`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine import contracts
from engine.cards import CARD_NAMES, SUITS, Card
from engine.contracts import TableMeld
from engine.game import card_field, list_field
from engine.rummy import RummyState

DRAW, BUY, PLAY = "draw", "buy", "play"

# hand -> (sets, runs, run size, cards dealt)  (R2; CR1)
CONTRACTS: dict[int, tuple[int, int, int, int]] = {
    1: (2, 0, 4, 7),
    2: (1, 1, 4, 8),
    3: (0, 2, 4, 9),
    4: (3, 0, 4, 10),
    5: (1, 1, 7, 11),
    6: (1, 2, 4, 12),
    7: (1, 2, 4, 12),
}
SET_SIZE = 3
MAX_LISTED_GO_DOWNS = 24

# R9: points for a card left in hand, by card (the values of contract rummy's melds)
CARD_POINTS: tuple[int, ...] = contracts.CONTRACT_MELDS.values


def card_points(cards: Sequence[Card]) -> int:
    """R9: 3-9 score 5, T-K 10, an ace 15, a 2 20, a joker 25 (CR2: ``3S 9D TC KH AS 2C JK`` is 90)."""
    return sum(CARD_POINTS[c] for c in cards)


def contract_text(hand_no: int) -> str:
    sets, runs, run_size, _ = CONTRACTS[hand_no]
    parts = []
    if sets:
        parts.append(f"{sets} set{'s' if sets > 1 else ''} of 3")
    if runs:
        parts.append(f"{runs} run{'s' if runs > 1 else ''} of {run_size}")
    return " + ".join(parts)


@dataclass(eq=True)
class ContractRummyState(RummyState):
    """A contract rummy state (plus the piles). Melds are parallel lists."""

    down: list[int] = list_field(1)  # 1 once the seat has gone down this hand
    buys: list[int] = list_field(1)  # buys per seat this hand
    turn: int = 0  # the seat whose turn it is (to_move is a buyer during a buy window)
    discarder: int = -1  # the seat that discarded the top discard (-1: nobody)
    taken: Card | None = None  # the card taken from the discard pile this turn (C3)
    went_down_now: bool = False  # the player to move went down this turn (no laying off, R6)
    meld_owner: list[int] = list_field(1)
    meld_suit: list[int] = list_field(1)  # -1 for a set
    meld_low: list[int] = list_field(1)  # a set's rank, a run's lowest position (14 = ace high)
    meld_cards: list[list[Card]] = card_field(2)  # a run's cards low to high
    went_out: int | None = None


def meld_json(meld: TableMeld, owner: int) -> dict[str, Any]:
    """A meld on the table as views and events show it."""
    suit, low, cards = meld
    if suit < 0:
        return {"owner": owner, "kind": "set", "rank": "A23456789TJQK"[low - 1],
                "cards": [CARD_NAMES[c] for c in cards]}
    return {"owner": owner, "kind": "run", "suit": SUITS[suit], "cards": [CARD_NAMES[c] for c in cards],
            "stands_for": [CARD_NAMES[c] for c in contracts.stands_for(meld)]}
