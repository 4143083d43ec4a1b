"""Random playouts through the engine interface the AI uses: list legal moves, apply one.

    python bench/playouts.py --json            # ~10 s per game
    python bench/playouts.py --smoke --json    # CI: a fraction of a second per game

Prints one JSON object: ``<game>_actions_per_s`` for every registered game (2 players; 4 for
contract rummy and Least Score), the median over repetitions, plus ``extra`` figures that a
game's module adds below. ``apply`` is called with ``check=False`` (moves come from the legal list).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.game import Game
from engine.registry import all_games

PLAYERS = {"contract-rummy": 4, "least-score": 4}

# Process CPU time by default: the machines are shared, and CPU time leaves out the time other
# processes take from this one (``--clock wall`` measures elapsed time instead).
CLOCK = time.process_time


def playout_rate(game: Game, players: int, seconds: float, seed: int) -> float:
    """Actions per second over complete games (new games until ``seconds`` have passed)."""
    rng = random.Random(seed)
    actions = 0
    spent = 0.0
    game_seed = seed
    while spent < seconds:
        state = game.new_match(players, seed=game_seed)
        game_seed += 1
        legal_moves, apply, choice = game.legal_moves, game.apply, rng.choice
        start = CLOCK()
        n = 0
        while not state.is_over:
            state, _ = apply(state, choice(legal_moves(state)), check=False)
            n += 1
        spent += CLOCK() - start
        actions += n
    return actions / spent


# Extra figures: name -> function(seconds, seed) -> per-second rate. Game modules' owners add theirs.
EXTRA: dict[str, Callable[[float, int], float]] = {}


def less_than_three_lead_moves_rate(seconds: float, seed: int) -> float:
    """Listings per second of every legal lead from a freshly dealt 15-card hand (Less Than Three).

    1,000 fresh deals (from seeds ``seed``...), the dealer to lead; only ``legal_moves`` is timed.
    """
    from engine.registry import get_game

    game = get_game("less-than-three")
    states = [game.new_match(2, seed=seed + i) for i in range(1000)]
    legal_moves = game.legal_moves
    listed = 0
    spent = 0.0
    while spent < seconds:
        start = CLOCK()
        for state in states:
            legal_moves(state)
        spent += CLOCK() - start
        listed += len(states)
    return listed / spent


EXTRA["less_than_three_lead_moves_per_s"] = less_than_three_lead_moves_rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="a very short run (CI)")
    parser.add_argument("--seconds", type=float, default=None, help="time per repetition per game")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--games", default="", help="comma-separated game ids (default: all)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="time base (default: CPU time)")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    seconds = args.seconds or (0.2 if args.smoke else 2.0)
    repeats = args.repeats or (1 if args.smoke else 5)
    wanted = set(filter(None, args.games.split(",")))
    out: dict[str, float] = {}
    for game in all_games():
        if wanted and game.info.id not in wanted:
            continue
        players = PLAYERS.get(game.info.id, 2)
        rates = [playout_rate(game, players, seconds, 1000 * r) for r in range(repeats)]
        out[game.info.id.replace("-", "_") + "_actions_per_s"] = round(statistics.median(rates))
    for name, fn in EXTRA.items():
        if wanted and not any(name.startswith(w.replace("-", "_")) for w in wanted):
            continue
        out[name] = round(statistics.median(fn(seconds, 1000 * r) for r in range(repeats)))
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:40s} {v:>12,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
