"""Reading explicit starting positions (RULES.md C8): the checks every game's ``_setup`` hook shares.
Each raises :class:`~engine.errors.InvalidSetupError` naming the field and what it must be.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from engine.cards import CARD_NAMES, Card
from engine.errors import InvalidSetupError


def check_fields(setup: Mapping[str, Any], allowed: Collection[str]) -> None:
    """No field of ``setup`` but the ``allowed`` ones."""
    extra = set(setup) - set(allowed)
    if extra:
        raise InvalidSetupError(f"unknown setup fields {sorted(extra)}; allowed: {sorted(allowed)}")


def setup_int(setup: Mapping[str, Any], name: str, default: int, lo: int, hi: int) -> int:
    """The integer field ``name`` (``default`` if left out), from ``lo`` to ``hi``."""
    value = setup.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidSetupError(f"setup {name!r} must be an integer from {lo} to {hi}, not {value!r}")
    return value


def setup_totals(setup: Mapping[str, Any], num_players: int) -> list[int] | None:
    """The ``totals`` field, one integer per seat, or None if left out."""
    if "totals" not in setup:
        return None
    totals = setup["totals"]
    if not (isinstance(totals, list) and len(totals) == num_players
            and all(isinstance(t, int) and not isinstance(t, bool) for t in totals)):
        raise InvalidSetupError(f"totals must be a list of {num_players} integers")
    return list(totals)


def cards_left_out(deck: Iterable[Card], given: Iterable[Card],
                   too_many: str = "{card} appears more often than the deck holds") -> list[Card]:
    """The cards of ``deck`` (a multiset) that the setup does not place, sorted; ``too_many`` (with
    ``{card}``) is the error when ``given`` holds a card more often than the deck."""
    rest = Counter(deck)
    for card in given:
        if rest[card] <= 0:
            raise InvalidSetupError(too_many.format(card=CARD_NAMES[card]))
        rest[card] -= 1
    return sorted(rest.elements())
