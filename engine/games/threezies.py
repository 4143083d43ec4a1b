"""Threezies (RULES.md §3): Three Thirteen's flow for 2-3 players over 8 rounds.

Differences from Three Thirteen, and nothing else: one 52-card deck, no
jokers; round k (1..8) deals k+2 cards and rank k+2 is wild (3s … 10s); aces
are high or low in a straight (never wrapping) but an unmatched ace counts 1
(R5). The turn is draw, a compulsory discard, then going out if every card
left is in a group (R3) — the same ``go_out`` move as Three Thirteen's: a
discard that leaves the hand fully grouped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine import melds
from engine.game import MAX_TURNS_OPTION, GameInfo, OptionSpec
from engine.games.three_thirteen import ThreeThirteen
from engine.rummy import RummyRoundsState

_ACES = {"aces": "high_or_low"}  # Threezies aces are always high or low


class Threezies(ThreeThirteen):
    info = GameInfo(
        id="threezies",
        name="Threezies",
        min_players=2,
        max_players=3,
        rules_section="RULES.md §3",
        summary=(
            "8 rounds of rummy with one deck; round k deals k+2 cards and that rank is wild (3s … 10s). "
            "Draw, discard, and go out when every card left is in a group of 3+ (a set, or a straight "
            "with aces high or low). The others get one more draw and discard. Lowest total wins."
        ),
        options=(
            OptionSpec("allow_rediscard", "bool", False,
                       "Allow discarding the card just taken from the discard pile in the same turn."),
            MAX_TURNS_OPTION,
        ),
    )
    state_class = RummyRoundsState
    rounds = 8
    rule_deal, rule_turn, rule_go_out, rule_last_turn = "R1", "R3", "R3", "R3"  # RULES.md §3

    def num_decks(self, num_players: int, options: Mapping[str, Any]) -> int:
        return 1

    def meld_rules(self, options: Mapping[str, Any], round_no: int) -> melds.MeldRules:
        rules = self._rules_cache.get(("high_or_low", round_no))  # filled by the base class
        return rules if rules is not None else super().meld_rules(_ACES, round_no)

    def _ace_penalty(self, options: Mapping[str, Any]) -> int:
        return 1


GAME = Threezies()
