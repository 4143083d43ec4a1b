"""Contract rummy meld math (RULES.md §4 R3, R6, R7): melds with wild 2s and jokers, laying off, and the
searches for the ways a hand meets a contract. It speaks the meld vocabulary of :mod:`engine.melds`
(wild limits, run positions, ``MAX_RUN``), with contract rummy's own rules on top:

* :mod:`~engine.contracts.table`: a meld on the table (:data:`TableMeld`), reading the melds a client
  sends (:func:`read_set`, :func:`read_run`), checking a stored one (:func:`meld_problem`) and laying
  off (:func:`lay_off_options`, :func:`meld_wants`).
* :mod:`~engine.contracts.go_down`: the ways to meet a contract of hands 1-6 (:func:`minimal_go_downs`).
* :mod:`~engine.contracts.hand7`: the ways to go down with a whole hand 7 (:func:`exact_go_downs`).

>>> from engine.cards import parse_cards
>>> read_run(parse_cards("5H 6H 2C 8H"))   # CR4: 2C stands for 7H
(2, 5, (30, 31, 1, 33))
"""

from __future__ import annotations

from engine.cards import parse_cards
from engine.contracts.go_down import NODE_BUDGET, minimal_go_downs
from engine.contracts.hand7 import exact_go_downs
from engine.contracts.table import (
    CONTRACT_MELDS,
    POS_CARD,
    WILD_LIMITS,
    GoDown,
    TableMeld,
    is_wild,
    lay_off_moves,
    lay_off_options,
    meld_counts,
    meld_problem,
    meld_wants,
    read_run,
    read_set,
    stands_for,
)
from engine.melds import MAX_RUN, card_positions, limit_ok, position_card

__all__ = [
    "CONTRACT_MELDS",
    "MAX_RUN",
    "NODE_BUDGET",
    "POS_CARD",
    "WILD_LIMITS",
    "GoDown",
    "TableMeld",
    "card_positions",
    "exact_go_downs",
    "is_wild",
    "lay_off_moves",
    "lay_off_options",
    "limit_ok",
    "meld_counts",
    "meld_problem",
    "meld_wants",
    "minimal_go_downs",
    "parse_cards",
    "position_card",
    "read_run",
    "read_set",
    "stands_for",
]
