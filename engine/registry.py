"""The registry of games: ``get_game("three-thirteen")``, ``all_games()``.

It stands above the game modules: each module defines its game, :data:`engine.games.GAMES` lists them,
and nothing under ``engine/games/`` imports this module.
"""

from __future__ import annotations

from typing import Any

from engine.errors import UnknownGameError
from engine.game import Game
from engine.games import GAMES

_GAMES: dict[str, Game[Any]] = {}
for _game in GAMES:
    if _game.info.id in _GAMES:
        raise ValueError(f"game {_game.info.id!r} is listed twice")
    _GAMES[_game.info.id] = _game


def get_game(game_id: str) -> Game[Any]:
    """The game of ``game_id``; UnknownGameError names the games there are."""
    try:
        return _GAMES[game_id]
    except KeyError:
        known = ", ".join(sorted(_GAMES))
        raise UnknownGameError(f"unknown game {game_id!r}; the games are: {known}") from None


def all_games() -> list[Game[Any]]:
    """Every game, by id."""
    return [_GAMES[k] for k in sorted(_GAMES)]
