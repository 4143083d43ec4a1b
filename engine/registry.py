"""The registry of games: ``get_game("three-thirteen")``, ``all_games()``."""

from __future__ import annotations

from typing import Any, TypeVar

from engine.errors import UnknownGameError
from engine.game import Game

_GAMES: dict[str, Game[Any]] = {}
G = TypeVar("G", bound=Game[Any])


def register(game: G) -> G:
    """Add a game instance under its ``info.id`` (done once by each game module)."""
    if game.info.id in _GAMES:
        raise ValueError(f"game {game.info.id!r} is registered twice")
    _GAMES[game.info.id] = game
    return game


def _load() -> None:
    import engine.games  # noqa: F401  (each game module registers itself on import)


def get_game(game_id: str) -> Game[Any]:
    _load()
    try:
        return _GAMES[game_id]
    except KeyError:
        known = ", ".join(sorted(_GAMES))
        raise UnknownGameError(f"unknown game {game_id!r}; the games are: {known}") from None


def all_games() -> list[Game[Any]]:
    _load()
    return [_GAMES[k] for k in sorted(_GAMES)]
