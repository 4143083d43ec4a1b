"""One conformance suite over every registered game (DEVELOPERS.md): random complete games from many
seeds with the invariants of ``tests/conformance.py`` checked after every move.

``CONFORMANCE_SCALE`` multiplies the number of games (default 1: the CI budget; try 10 for a soak).
"""

from __future__ import annotations

import os

import pytest

from engine.registry import all_games
from tests.engine.conformance import play_random_game

SCALE = float(os.environ.get("CONFORMANCE_SCALE", "1"))


def player_counts(game):
    lo, hi = game.info.min_players, game.info.max_players
    return sorted({lo, (lo + hi) // 2, hi})


CASES = [(g.info.id, n) for g in all_games() for n in player_counts(g)]
GAMES = {g.info.id: g for g in all_games()}


@pytest.mark.parametrize(("game_id", "num_players"), CASES)
def test_random_games_with_every_check_after_every_move(game_id, num_players):
    """A few complete games where JSON, views, re-deals and rejections are checked at every ply."""
    game = GAMES[game_id]
    for seed in range(max(1, int(3 * SCALE))):
        play_random_game(game, num_players, seed, {"max_turns_per_round": 12})


@pytest.mark.parametrize(("game_id", "num_players"), CASES)
def test_many_random_games(game_id, num_players):
    """Many seeds: the cheap invariants after every move, the costly ones every 25 plies."""
    game = GAMES[game_id]
    count = max(1, int(140 * SCALE / num_players))  # fewer long 8-player games, more 2-player ones
    for seed in range(1000, 1000 + count):
        turns = (10, 25, 60)[seed % 3]
        play_random_game(game, num_players, seed, {"max_turns_per_round": turns}, full_checks_every=25)


@pytest.mark.parametrize("game_id", sorted(GAMES))
def test_default_options_game(game_id):
    """One game at the default loop guard, so long rounds, reshuffles and the guard itself are exercised."""
    game = GAMES[game_id]
    play_random_game(game, game.info.min_players, 7, full_checks_every=50)
