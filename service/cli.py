"""The ``cardtable`` command (placeholder until the service issue lands)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from engine.registry import all_games

    for game in all_games():
        print(f"{game.info.id}: {game.info.name} ({game.info.min_players}-{game.info.max_players} players)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
