"""An error names the rule it applies, e.g. ``(R3)``, and every rule an error of a game can name is on that game's
rules page for players, in its "Rule numbers" list (``engine/rules/<game>.md``, served at ``/rules/<game>``).

The errors are collected by refusing moves in random games: at each position, moves listed earlier in the game
(a draw when a discard is due, a lead when an answer is, ...), a card of the hand under every move type that names
one card, and cards of the hand in place of a move's cards, so that every kind of refusal a client can meet is
reached.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from engine.errors import EngineError
from engine.game import Game
from engine.registry import all_games, get_game

PLAYERS = {"contract-rummy": 4, "least-score": 3}
RULE_ID = re.compile(r"\b([CR]\d+)\b")


def listed_rules(game: Game) -> list[str]:
    """The rule numbers the game's rules page lists, in order."""
    _, found, section = game.info.rules.partition("\n## Rule numbers\n")
    assert found, f"{game.info.id}: the rules page has no 'Rule numbers' section"
    return re.findall(r"^- ([CR]\d+) ", section, re.MULTILINE)


def cited_rules(message: str) -> set[str]:
    """The rule numbers a message names in its brackets."""
    return {rule for bracket in re.findall(r"\(([^()]*)\)", message) for rule in RULE_ID.findall(bracket)}


def refusals(game: Game, num_players: int, seed: int, per_position: int = 8, plies: int = 400) -> list[str]:
    """The messages of the moves refused over the first ``plies`` moves of one random game."""
    rng = random.Random(seed)
    state = game.new_match(num_players, {}, seed=seed)
    seen: list[dict[str, Any]] = []
    messages: list[str] = []
    while not state.is_over and state.ply < plies:
        legal = game.legal_moves(state)
        seat = state.to_move
        seen.extend(rng.sample(legal, min(len(legal), 4)))
        hand = game.observation(state, seat).get("hand", [])
        one_card_types = {m["type"]: m for m in seen if "card" in m}.values()
        tries: list[dict[str, Any]] = []
        for move in rng.sample(seen, min(len(seen), per_position)):
            tries.append(move)
            if "card" in move and hand:
                card = rng.choice(hand)
                tries.extend(dict(other, card=card) for other in one_card_types)
            if "cards" in move and hand:
                tries.append(dict(move, cards=rng.sample(hand, min(len(hand), len(move["cards"])))))
        for move in tries:
            if move in legal:
                continue
            try:
                game.apply(state, move, seat=seat)
            except EngineError as exc:
                messages.append(str(exc))
        state = game.apply(state, rng.choice(legal), seat=seat)[0]
    return messages


@pytest.mark.parametrize("game_id", [g.info.id for g in all_games()])
def test_every_rule_an_error_names_is_on_the_rules_page(game_id: str) -> None:
    game = get_game(game_id)
    listed = listed_rules(game)
    assert len(listed) == len(set(listed))
    rules = [r for r in listed if r.startswith("R")]
    assert rules == [f"R{i}" for i in range(1, len(rules) + 1)], f"{game_id}: the R rules are not R1..Rn in order"
    messages = [m for seed in (1, 2) for m in refusals(game, PLAYERS.get(game_id, 2), seed)]
    cited: dict[str, str] = {}
    for message in messages:
        for rule in cited_rules(message):
            cited.setdefault(rule, message)
    assert len(cited) >= 2, f"{game_id}: only {sorted(cited)} cited in {len(messages)} refusals"
    missing = {rule: example for rule, example in cited.items() if rule not in listed}
    assert not missing, f"{game_id}: errors name rules its page does not list: {missing}"


def test_threezies_errors_use_its_own_numbers() -> None:
    """Threezies plays Three Thirteen's flow; its errors name Threezies' rules (RULES.md §3), not §2's."""
    game = get_game("threezies")
    state = game.from_setup(2, {"round": 1, "dealer": 1, "hands": [["2C", "7D", "KS"], ["4H", "8H", "QC"]]})
    with pytest.raises(EngineError, match=r"discard \(R3\)"):
        game.apply(state, {"type": "discard", "card": "KS"})
    state = game.apply(state, {"type": "draw", "source": "stock"})[0]
    with pytest.raises(EngineError, match=r"no set or run \(R3\)"):
        game.apply(state, {"type": "go_out", "card": "KS"})
