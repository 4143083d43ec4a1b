"""``cardtable state GAME``: print a state blob, or a seat's view, for the stateless endpoints.

The stateless endpoints (``POST /v1/games/{game}/legal-moves``, ``validate``, ``best-move``) take the state
the client keeps: the engine's versioned JSON (``game.to_json(state)``) or, for ``best-move``, the view of
the seat to move (``game.observation(state, seat)``). This command deals a new match from a seed and prints
either, so that those endpoints can be tried from a shell:

    S=$(cardtable state three-thirteen --seed 42)
    curl -s -X POST $B/v1/games/three-thirteen/legal-moves -H 'Content-Type: application/json' -d "{\\"state\\": $S}"
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cli.play import parse_options
from engine.errors import EngineError
from engine.registry import get_game

DESCRIPTION = """\
Print the state blob of a new match (the engine's JSON, what the stateless endpoints legal-moves and
validate take), or with --view the view of the seat to move (what best-move takes)."""
EPILOG = """\
examples:
  cardtable state three-thirteen --seed 42
  cardtable state contract-rummy --players 4 --seed 7 -o play_hand_7=false
  cardtable state threezies --seed 42 --view
  cardtable state three-thirteen --seed 42 --move '{"type": "draw", "source": "stock"}'"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("state", help="print a new match's state blob (or a seat's view) as JSON",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", help="game id, e.g. three-thirteen (cardtable games lists them)")
    parser.add_argument("--players", type=int, default=None, help="number of players (default: the game's minimum)")
    parser.add_argument("--seed", type=int, default=0, help="deal seed (default 0)")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a match option, e.g. -o aces=high_or_low (repeatable)")
    parser.add_argument("--move", action="append", default=[], metavar="JSON",
                        help="apply this move first (repeatable, in order)")
    parser.add_argument("--view", action="store_true", help="print the view of the seat to move instead")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        game = get_game(args.game)
        players = args.players if args.players is not None else game.info.min_players
        state = game.new_match(players, parse_options(args.option), seed=args.seed)
        for raw in args.move:
            state, _ = game.apply(state, json.loads(raw))
        if args.view:
            if state.to_move is None:
                raise ValueError("the match is over: no seat is to move")
            out: Any = game.observation(state, state.to_move)
        else:
            out = game.to_json(state)
    except (EngineError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        print(f"cardtable state: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out, separators=(",", ":")))
    return 0
