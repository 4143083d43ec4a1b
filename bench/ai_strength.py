"""The AI against baselines, whole games on duplicate deals: win share and score margin with 95% intervals.

    python bench/ai_strength.py --json --games 200 --opponents expert    # the full report (hours on 2 cores)
    python bench/ai_strength.py --json --games 40 --workers 2 --opponents expert,greedy
    python bench/ai_strength.py --smoke --json                           # CI: one deal, two rounds per game
    python bench/ai_strength.py --json --games 40 --games-only three-thirteen --opponents ai-nobelief
    python bench/ai_strength.py --json --games 40 --pairings expert-vs-greedy   # the baselines between themselves
    python bench/ai_strength.py --json --games 100 --pairings levels --levels 4  # level 4 against level 3

Pairings: for each game and player count (2 players; 3 for Three Thirteen; 4 for contract rummy and Least Score),
the AI at ``--level`` (default 3) in one seat against copies of each of ``--opponents``: ``random``, ``greedy``,
``expert`` (:mod:`ai.baselines`), ``ai-nobelief`` (the same AI with a uniform belief). ``--pairings
expert-vs-greedy`` plays the expert in the AI's place against greedy instead (how strong the yardstick is).
``--pairings levels`` plays each level ``L`` of ``--levels`` (default 2-5) in one seat against copies of level
``L - 1``, at each game's smallest player count here (issue 15 item 5: every level beats the one below).

The games are played by :mod:`ai.tournament`, the same runner as ``cardtable simulate``: deal ``d`` (from
``--first-deal``) is played once per seat, the AI in each seat in turn (2 players: the seats swapped), so the luck
of the cards cancels out. ``--games`` counts games per pairing, rounded up to whole deals (N games per deal for N
players). The games are played deal by deal across the pairings, so a run stopped early (Ctrl-C) reports every
pairing over about as many deals.

Reported per pairing: ``win_rate``, the AI's share of the wins (a shared win is split among its winners) with its
95% Wilson interval over games, against ``fair_share`` (1/N); ``margin``, the AI's total against the mean of the
others' totals, signed so that positive favours the AI in every game, with its 95% interval over deals; the
median time per AI decision. ``--rounds K`` stops each game after K rounds (not whole games: say so when quoting).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai.tournament import (
    Entrant,
    GameResult,
    GameTask,
    parse_entrant,
    play_all,
    schedule,
    standings,
    stop_like_ctrl_c,
)
from engine.registry import all_games, get_game

PLAYERS = {"three-thirteen": [2, 3], "contract-rummy": [4], "least-score": [2, 4]}
OPPONENTS = ("random", "greedy", "expert", "ai-nobelief")


def pairing_key(game_id: str, players: int, first: str, opponent: str) -> str:
    head = "" if first == "ai" else f"{first}-"
    return f"{game_id}/{players}p/{head}vs-{opponent}"


def summarize(results: list[GameResult], entrants: list[Entrant], lower_score_wins: bool) -> dict[str, Any]:
    """The first player's (the AI's) standing: ``bench/ai_strength.py``'s figures for one pairing."""
    me = standings(results, entrants, lower_score_wins=lower_score_wins)[0]
    ms = sorted(t for r in results for t in r.move_ms[0])
    return {
        "games": len(results),
        "deals": len({r.seed for r in results}),
        "win_rate": round(me["win_rate"], 3),
        "win_rate_ci95": [round(x, 3) for x in me["win_rate_ci95"]],
        "fair_share": me["fair_share"],
        "margin": me["margin"],
        "margin_ci95": me["margin_ci95"],
        "rounds_per_game": round(sum(r.rounds for r in results) / len(results), 1) if results else None,
        "ai_decisions": len(ms),
        "ai_ms_median": round(ms[len(ms) // 2], 1) if ms else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="CI: one deal of 2 rounds per pairing, fast AI")
    parser.add_argument("--games", type=int, default=20, help="games per pairing (N per duplicate deal)")
    parser.add_argument("--games-only", default="", help="comma-separated game ids (default: all)")
    parser.add_argument("--players", default="", help="only these player counts, e.g. 2")
    parser.add_argument("--opponents", default="random,greedy,expert", help=f"comma-separated, from {OPPONENTS}")
    parser.add_argument("--pairings", default="ai", choices=("ai", "expert-vs-greedy", "levels"),
                        help="ai: the AI against each opponent; expert-vs-greedy: the expert against greedy; "
                             "levels: each of --levels against the level below")
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--levels", default="2,3,4,5", help="with --pairings levels: the upper levels to play")
    parser.add_argument("--time-ms", type=int, default=None, help="AI budget per decision (default: the level's)")
    parser.add_argument("--rounds", type=int, default=0, help="stop each game after this many rounds (0: whole)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--first-deal", type=int, default=1)
    parser.add_argument("--progress", action="store_true", help="print each finished game to stderr (JSON)")
    parser.add_argument("--option", action="append", default=[], help="game option NAME=VALUE (JSON value)")
    args = parser.parse_args(argv)
    stop_like_ctrl_c()  # SIGINT (even in the background) and SIGTERM stop the run; the report counts the games finished
    if args.smoke:
        args.rounds, args.time_ms = 2, args.time_ms or 20
    options = {}
    for item in args.option:
        name, _, value = item.partition("=")
        options[name] = json.loads(value)
    wanted = set(filter(None, args.games_only.split(",")))
    counts = {int(p) for p in args.players.split(",") if p}
    # (first player, its opponent, the opponent's name in the pairing key): the first is the one reported
    if args.pairings == "expert-vs-greedy":
        matchups = [("expert", "greedy", "greedy")]
    elif args.pairings == "levels":
        try:
            uppers = [int(x) for x in args.levels.split(",") if x]
        except ValueError:
            parser.error(f"--levels takes comma-separated level numbers, not {args.levels!r}")
        matchups = [(f"ai:{u}", f"ai:{u - 1}", f"ai:{u - 1}") for u in uppers]
    else:
        matchups = []
        for o in filter(None, args.opponents.split(",")):
            if o not in OPPONENTS:
                parser.error(f"unknown opponent {o!r}: choose from {', '.join(OPPONENTS)}")
            matchups.append(("ai", f"{o}:{args.level}" if o == "ai-nobelief" else o, o))
    try:
        entrants = {spec: parse_entrant(f"ai:{args.level}" if spec == "ai" else spec, args.time_ms)
                    for first, opponent, _ in matchups for spec in (first, opponent)}
    except ValueError as exc:
        parser.error(str(exc))
    keyed: list[tuple[str, GameTask]] = []  # each game with its pairing's key
    lineups: dict[str, list[Entrant]] = {}
    for game in all_games():
        gid = game.info.id
        if wanted and gid not in wanted:
            continue
        counts_here = [p for p in PLAYERS.get(gid, [2]) if not counts or p in counts]
        if args.pairings == "levels":
            counts_here = counts_here[:1]
        for players in counts_here:
            for first, opponent, name in matchups:
                lineup = [entrants[first]] + [entrants[opponent]] * (players - 1)
                games = players if args.smoke else -(-args.games // players) * players  # whole deals
                key = pairing_key(gid, players, first, name)
                lineups[key] = lineup
                keyed += [(key, task) for task in schedule(gid, lineup, games, first_seed=args.first_deal,
                                                             options=options, rounds=args.rounds)]
    results: dict[str, list[GameResult]] = {key: [] for key in lineups}
    keyed.sort(key=lambda kt: kt[1].seed)  # deal by deal across the pairings (stable: seats in order within a deal)
    index_of = {i: key for i, (key, _) in enumerate(keyed)}
    numbered = [dataclasses.replace(task, index=i) for i, (_, task) in enumerate(keyed)]
    start = time.perf_counter()
    try:
        for r in play_all(numbered, workers=args.workers):
            key = index_of[r.index]
            results[key].append(r)
            if args.progress:  # a stopped run still leaves its finished games on stderr
                print(json.dumps({"pairing": key, "deal": r.seed, "shift": r.shift, "totals": r.totals,
                                  "winners": r.winners, "rounds": r.rounds}), file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print("stopped: the report counts the games finished", file=sys.stderr)
    out: dict[str, Any] = {"level": args.level, "time_ms": args.time_ms, "rounds": args.rounds or "whole game",
                           "options": options, "date": time.strftime("%Y-%m-%d"), "pairings": {}}
    for key, rs in results.items():
        if rs:
            game = get_game(key.split("/")[0])
            out["pairings"][key] = summarize(rs, lineups[key], game.info.lower_score_wins)
    out["seconds"] = round(time.perf_counter() - start, 1)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for key, s in out["pairings"].items():
            print(f"{key:44s} win {s['win_rate']:.3f} {s['win_rate_ci95']} (fair {s['fair_share']:.2f})  "
                  f"margin {s['margin']:+.2f} {s['margin_ci95']}  ({s['games']} games, "
                  f"{s['ai_ms_median']} ms/decision)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
