"""Milliseconds per AI decision at the default level, on mid-game positions of every game.

    python bench/ai_speed.py --json             # 40 positions per game
    python bench/ai_speed.py --smoke --json     # CI: 4 positions per game

Positions: random legal play from fixed seeds, sampled every few plies once a
game is past its first rounds (Three Thirteen rounds 5-11 hold the biggest
hands), 2 players, and 4 for contract rummy and Least Score. Reported per game:
median and p95 wall milliseconds of ``choose_move`` (default level 3, default
budget), the goal (p95 <= 250 ms for 2 players, <= 500 ms for 4), and the
same p95 divided by a fixed-work baseline (a pure-Python loop) timed in the same
run, so that runs on a busy shared machine can be compared.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai import choose_move
from engine.game import Game, Observation
from engine.registry import all_games

PLAYERS = {"contract-rummy": 4, "least-score": 4}
GOAL_MS = {2: 250, 4: 500}


def fixed_work_ms(repeats: int = 5) -> float:
    """The median time of a fixed pure-Python workload (the machine's speed right now)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        acc = 0
        for i in range(300_000):
            acc += (i * i) % 7
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def mid_game_views(game: Game, players: int, count: int, seed: int) -> list[Observation]:
    """``count`` views of the seat to move, from random games past their first two rounds."""
    rng = random.Random(seed)
    views: list[Observation] = []
    game_seed = seed
    while len(views) < count:
        state = game.new_match(players, seed=game_seed)
        game_seed += 1
        ply = 0
        while not state.is_over and len(views) < count:
            if state.round >= 3 and ply % 11 == 0:
                views.append(game.observation(state, state.to_move))
            state, _ = game.apply(state, rng.choice(game.legal_moves(state)), check=False)
            ply += 1
    return views


def measure(game: Game, players: int, count: int) -> dict[str, Any]:
    views = mid_game_views(game, players, count, seed=7)
    ms = []
    for i, view in enumerate(views):
        t0 = time.perf_counter()
        choose_move(game, view, seed=i)
        ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {"players": players, "positions": len(ms), "median_ms": round(statistics.median(ms), 1),
            "p95_ms": round(p95, 1), "max_ms": round(ms[-1], 1), "goal_p95_ms": GOAL_MS.get(players, 500)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="CI: 4 positions per game")
    parser.add_argument("--positions", type=int, default=None)
    parser.add_argument("--games", default="", help="comma-separated game ids (default: all)")
    args = parser.parse_args(argv)
    count = args.positions or (4 if args.smoke else 40)
    wanted = set(filter(None, args.games.split(",")))
    before = fixed_work_ms()
    out: dict[str, Any] = {}
    for game in all_games():
        if wanted and game.info.id not in wanted:
            continue
        out[game.info.id] = measure(game, PLAYERS.get(game.info.id, 2), count)
    baseline = statistics.fmean([before, fixed_work_ms()])
    out["fixed_work_ms"] = round(baseline, 1)
    for row in out.values():
        if isinstance(row, dict):
            row["p95_over_fixed_work"] = round(row["p95_ms"] / baseline, 2)
            row["meets_goal"] = row["p95_ms"] <= row["goal_p95_ms"]
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for key, row in out.items():
            print(f"{key:20s} {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
