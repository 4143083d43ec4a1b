"""Memory of one process that plays many AI-played matches: are the AI's caches bounded?

    python bench/ai_memory.py --matches 1000 --ai-rounds 1     # the goal: RSS <= 300 MB at the end
    python bench/ai_memory.py --smoke --json                   # CI: a few short matches

The matches cycle through every game (2 players; 4 in contract rummy and Least
Score), each from its own seed. Every seat is played by the AI at ``--level``
(default 3). To reach many matches in reasonable time, ``--ai-rounds R`` lets
the AI play R rounds of each match from a round picked by the seed, the rounds
before it played fast by the game's model policy (so the caches see hands of
every round, as a worker's do); 0 plays whole matches. Printed: the resident
set size (RSS, now and peak) and the entries in the AI's caches, after every
``--every`` matches and at the end, with the goal and whether it is met.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai import choose_move
from ai.evaluate import cache_entries, evaluator_for
from engine.registry import all_games

PLAYERS = {"contract-rummy": 4, "least-score": 4}
GOAL_MB = 300


def rss_mb() -> float:
    """The process's resident set size now, in MB (from /proc; the peak where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return peak_mb()


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def play_match(game_id: str, seed: int, level: int, ai_rounds: int) -> int:
    """One match: the model policy up to a round picked by ``seed``, then the AI for ``ai_rounds`` rounds
    (0: the AI plays the whole match). Returns the AI decisions made."""
    game = next(g for g in all_games() if g.info.id == game_id)
    ev = evaluator_for(game)
    rng = random.Random(seed)
    state = game.new_match(PLAYERS.get(game_id, 2), seed=seed)
    if ai_rounds:
        start = rng.randint(0, 10)
        while not state.is_over and len(state.round_scores) < start:
            state = game.apply(state, ev.policy(game, state, rng), check=False)[0]
    first = len(state.round_scores)
    decisions = 0
    while not state.is_over and (not ai_rounds or len(state.round_scores) < first + ai_rounds):
        view = game.observation(state, state.to_move)
        move = choose_move(game, view, level=level, seed=seed * 1000 + decisions).move
        state = game.apply(state, move)[0]
        decisions += 1
    return decisions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=1000)
    parser.add_argument("--ai-rounds", type=int, default=1, help="rounds the AI plays per match (0: whole match)")
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--every", type=int, default=100, help="print a line after this many matches")
    parser.add_argument("--smoke", action="store_true", help="CI: 5 matches of one round at level 2")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = parser.parse_args(argv)
    if args.smoke:
        args.matches, args.ai_rounds, args.every, args.level = 5, 1, 5, 2
    games = [g.info.id for g in all_games()]
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    decisions = 0
    for i in range(args.matches):
        decisions += play_match(games[i % len(games)], seed=i + 1, level=args.level, ai_rounds=args.ai_rounds)
        if (i + 1) % args.every == 0 or i + 1 == args.matches:
            row = {"matches": i + 1, "decisions": decisions, "rss_mb": round(rss_mb(), 1),
                   "peak_rss_mb": round(peak_mb(), 1), "cache_entries": cache_entries(),
                   "seconds": round(time.perf_counter() - start, 1)}
            rows.append(row)
            if not args.json:
                print(json.dumps(row), flush=True)
    out = {"level": args.level, "ai_rounds": args.ai_rounds or "whole match", "matches": args.matches,
           "decisions": decisions, "rss_mb": rows[-1]["rss_mb"], "peak_rss_mb": rows[-1]["peak_rss_mb"],
           "goal_rss_mb": GOAL_MB, "meets_goal": rows[-1]["peak_rss_mb"] <= GOAL_MB, "checkpoints": rows}
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"{args.matches} matches, {decisions} AI decisions: RSS {out['rss_mb']} MB, peak "
              f"{out['peak_rss_mb']} MB (goal <= {GOAL_MB} MB: {'met' if out['meets_goal'] else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
