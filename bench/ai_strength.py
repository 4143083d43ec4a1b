"""The AI against baselines, whole games on duplicate deals: win rate and score margin with 95% intervals.

    python bench/ai_strength.py --json --games 200              # the full report (hours on 2 cores)
    python bench/ai_strength.py --json --games 20 --time-ms 40  # what fits in a few minutes
    python bench/ai_strength.py --smoke --json                  # CI: one deal, a few rounds
    python bench/ai_strength.py --json --games 40 --games-only three-thirteen --opponents ai-nobelief

Pairings: for each game (2 players; and 4 players for contract rummy and Least
Score), the AI at ``--level`` (default 3) against each of ``--opponents``:
``random`` (uniform legal play), ``greedy`` (ai/baselines.py, one ply, no
look-ahead), ``ai-nobelief`` (the same AI with a uniform belief: the A/B test of
the belief model).

Duplicate deals: deal ``d`` is the match seed; it is played twice, the AI in the
even seats and then in the odd seats (2 players: seat 0, then seat 1; 4
players: the AI holds seats 0 and 2 against baselines in 1 and 3, then the
reverse), so the luck of the cards cancels out. ``--games`` counts games (two
per deal).

Reported per pairing: ``win_rate`` (a game's win is shared among its winners;
the AI's share is the fraction of winners that are AI seats) with a 95% interval
(normal approximation over deals), and ``margin`` (mean total of the baseline
seats minus mean total of the AI seats, signed so that positive favours the AI
in every game) with its 95% interval over deals. ``--rounds K`` stops each game
after K rounds (not whole games: say so when quoting).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.baselines import greedy_move, random_move
from ai.evaluate import Evaluator, evaluator_for
from ai.search import search
from engine.game import Game, Move, Observation
from engine.registry import all_games, get_game

PLAYERS = {"contract-rummy": [4], "least-score": [2, 4]}
OPPONENTS = ("random", "greedy", "ai-nobelief")


def _opponent_move(kind: str, game: Game, view: Observation, rng: random.Random, cfg: dict[str, Any],
                   seed: int) -> Move:
    if kind == "random":
        return random_move(game, view, rng)
    if kind == "greedy":
        return greedy_move(game, view, rng)
    if kind == "ai-nobelief":
        return search(game, view, level=cfg["level"], time_ms=cfg["time_ms"], seed=seed, belief=False).move
    raise ValueError(f"unknown opponent {kind!r}")


def tuned_evaluator(game: Game, overrides: dict[str, Any]) -> Evaluator | None:
    """The game's evaluator with some class constants overridden (``bench/ai_ab.py``), or None for the default."""
    if not overrides:
        return None
    base = evaluator_for(game)
    tuned = copy.copy(base)
    for name, value in overrides.items():
        if not hasattr(base, name):
            raise ValueError(f"{type(base).__name__} has no setting {name!r}")
        setattr(tuned, name, value)
    return tuned


def play_game(task: tuple[str, int, str, int, int, dict[str, Any]]) -> dict[str, Any]:
    """One whole game (or ``rounds`` rounds): the AI in seats of parity ``parity``."""
    game_id, players, opponent, deal, parity, cfg = task
    game = get_game(game_id)
    state = game.new_match(players, cfg.get("options") or None, seed=deal)
    rng = random.Random(f"bench/{deal}/{parity}")
    ai_seats = {s for s in range(players) if s % 2 == parity}
    evaluator = tuned_evaluator(game, cfg.get("evaluator") or {})
    decisions, ai_ms = 0, []
    ply = 0
    while not state.is_over:
        if cfg["rounds"] and len(state.round_scores) >= cfg["rounds"]:
            break
        seat = state.to_move
        assert seat is not None
        view = game.observation(state, seat)
        if seat in ai_seats:
            t0 = time.perf_counter()
            move = search(game, view, level=cfg["level"], time_ms=cfg["time_ms"], seed=deal * 100_003 + ply,
                          evaluator=evaluator).move
            ai_ms.append((time.perf_counter() - t0) * 1000)
            decisions += 1
        else:
            move = _opponent_move(opponent, game, view, rng, cfg, deal * 100_003 + ply + 7)
        state, _ = game.apply(state, move, seat=seat)
        ply += 1
    totals = state.totals
    if state.winners is not None:
        winners = state.winners
    else:  # cut after --rounds: the best total wins
        best = min(totals) if game.info.lower_score_wins else max(totals)
        winners = [i for i, t in enumerate(totals) if t == best]
    ai_share = sum(1 for w in winners if w in ai_seats) / len(winners)
    ai_mean = statistics.fmean(totals[s] for s in ai_seats)
    base_mean = statistics.fmean(totals[s] for s in range(players) if s not in ai_seats)
    margin = base_mean - ai_mean if game.info.lower_score_wins else ai_mean - base_mean
    return {"game": game_id, "players": players, "opponent": opponent, "deal": deal, "parity": parity,
            "win": ai_share, "margin": margin, "rounds": len(state.round_scores), "decisions": decisions,
            "ai_ms": ai_ms}


def _mean_ci(xs: list[float]) -> tuple[float, float, float]:
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, math.nan, math.nan
    half = 1.96 * statistics.stdev(xs) / math.sqrt(len(xs))
    return m, m - half, m + half


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    by_deal: dict[int, list[dict[str, Any]]] = {}
    for r in results:
        by_deal.setdefault(r["deal"], []).append(r)
    wins = [statistics.fmean(x["win"] for x in rs) for rs in by_deal.values()]
    margins = [statistics.fmean(x["margin"] for x in rs) for rs in by_deal.values()]
    w, wlo, whi = _mean_ci(wins)
    m, mlo, mhi = _mean_ci(margins)
    ms = sorted(t for r in results for t in r["ai_ms"])
    return {
        "games": len(results),
        "deals": len(by_deal),
        "win_rate": round(w, 3),
        "win_rate_ci95": [round(max(0.0, wlo), 3), round(min(1.0, whi), 3)] if len(wins) > 1 else None,
        "margin": round(m, 2),
        "margin_ci95": [round(mlo, 2), round(mhi, 2)] if len(margins) > 1 else None,
        "rounds_per_game": round(statistics.fmean(r["rounds"] for r in results), 1),
        "ai_decisions": sum(r["decisions"] for r in results),
        "ai_ms_median": round(statistics.median(ms), 1) if ms else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="CI: 2 games of 2 rounds per pairing, fast AI")
    parser.add_argument("--games", type=int, default=20, help="games per pairing (two per duplicate deal)")
    parser.add_argument("--games-only", default="", help="comma-separated game ids (default: all)")
    parser.add_argument("--players", default="", help="only these player counts, e.g. 2")
    parser.add_argument("--opponents", default="random,greedy", help=f"comma-separated, from {OPPONENTS}")
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--time-ms", type=int, default=None, help="AI budget per decision (default: the level's)")
    parser.add_argument("--rounds", type=int, default=0, help="stop each game after this many rounds (0: whole)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--first-deal", type=int, default=1)
    parser.add_argument("--progress", action="store_true", help="print each finished game to stderr (JSON)")
    parser.add_argument("--option", action="append", default=[], help="game option NAME=VALUE (JSON value)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.games, args.rounds, args.time_ms = 2, 2, args.time_ms or 20
    options = {}
    for item in args.option:
        name, _, value = item.partition("=")
        options[name] = json.loads(value)
    cfg = {"level": args.level, "time_ms": args.time_ms, "rounds": args.rounds, "options": options}
    wanted = set(filter(None, args.games_only.split(",")))
    counts = {int(p) for p in args.players.split(",") if p}
    opponents = [o for o in args.opponents.split(",") if o]
    deals = max(1, args.games // 2)
    tasks = []
    for game in all_games():
        gid = game.info.id
        if wanted and gid not in wanted:
            continue
        for players in PLAYERS.get(gid, [2]):
            if counts and players not in counts:
                continue
            for opponent in opponents:
                for d in range(args.first_deal, args.first_deal + deals):
                    for parity in (0, 1):
                        tasks.append((gid, players, opponent, d, parity, cfg))
    start = time.perf_counter()
    results: list[dict[str, Any]] = []
    with multiprocessing.Pool(args.workers) if args.workers > 1 else contextlib.nullcontext() as pool:
        for r in pool.imap_unordered(play_game, tasks) if pool is not None else map(play_game, tasks):
            results.append(r)
            if args.progress:  # a stopped run still leaves its finished games on stderr
                print(json.dumps({k: v for k, v in r.items() if k != "ai_ms"}), file=sys.stderr, flush=True)
    out: dict[str, Any] = {"level": args.level, "time_ms": args.time_ms, "rounds": args.rounds or "whole game",
                           "options": options, "pairings": {}}
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        groups.setdefault(f"{r['game']}/{r['players']}p/vs-{r['opponent']}", []).append(r)
    for key, rs in groups.items():
        out["pairings"][key] = summarize(rs)
    out["seconds"] = round(time.perf_counter() - start, 1)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for key, s in out["pairings"].items():
            print(f"{key:40s} win {s['win_rate']:.3f} {s['win_rate_ci95']}  margin {s['margin']:+.2f} "
                  f"{s['margin_ci95']}  ({s['games']} games, {s['ai_ms_median']} ms/decision)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
