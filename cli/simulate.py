"""``cardtable simulate``: a tournament between AI levels and baselines, from the command line.

The games are played by :mod:`ai.tournament` (duplicate deals, worker processes); this module parses the
command, shows progress with an estimate of the time left, prints the table (or JSON) and draws the plot.
What the command does is told to the user by :data:`HELP` (``cardtable simulate --help``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ai.tournament import (
    Entrant,
    GameResult,
    parse_entrant,
    play_all,
    schedule,
    standings,
    stop_like_ctrl_c,
    wilson_interval,
)
from cli.play import parse_options
from engine.errors import EngineError
from engine.game import Game
from engine.registry import get_game

__all__ = ["HELP", "add_parser", "main", "run", "summary_table", "wilson_interval"]

HELP = """\
Play a tournament between AI levels and baselines and report who wins.

Each entry of --seats is a player: ai or ai:L (the AI at level L, default 3), expert (a strong
hand-written player: exact deadwood, the next draw's odds, memory of the opponents' takes), greedy
(the best immediate move) or random (any legal move). Every player sees only its own seat's view.

Duplicate deals: with N players, games i*N .. i*N+N-1 are all dealt from seed SEED+i, with the seats
rotated each time, so every player plays every deal from every seat and the luck of the cards cancels
out. --no-rotate deals game i from SEED+i with the players in the order given.

The table gives per player: the win rate (a shared win counts 1/k for each of k winners) with its 95%
Wilson interval, the mean margin (points better than the others' mean, per game) with its 95% interval
over deals, the mean final score and its spread, and the thinking time per move. --workers plays games
in parallel processes; Ctrl-C (or SIGTERM) stops and prints what was measured so far. --plot draws the score
distributions and the win rates (missing folders are created).

examples:
  cardtable simulate three-thirteen --games 40 --seats ai:3,expert --workers 2
  cardtable simulate three-thirteen --games 30 --seats ai:3,greedy,random --plot out/scores.png
  cardtable simulate least-score --games 40 --seats expert,ai:2,greedy,random --json
"""


# -- progress ---------------------------------------------------------------------------------------


def _clock(seconds: float) -> str:
    hours, rest = divmod(max(0, round(seconds)), 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """One status line on stderr: games done, elapsed time, an estimate of the time left, the win rates so far.

    Until the first game ends there is nothing to estimate from, and the line says so; on a terminal the line
    is rewritten in place, elsewhere (a pipe, a log) one line is written per finished game.
    """

    def __init__(self, label: str, total: int, workers: int, stream: TextIO, enabled: bool) -> None:
        self.label, self.total, self.workers, self.stream, self.enabled = label, total, workers, stream, enabled
        self.start = time.perf_counter()
        self.live = enabled and stream.isatty()
        if enabled:
            parallel = f" on {workers} workers" if workers > 1 else ""
            self._write(f"{label}: 0/{total} games{parallel}; the time left is estimated when the first game ends")

    def _write(self, text: str) -> None:
        if self.live:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def update(self, done: int, rates: str) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed / done * (self.total - done)
        self._write(f"{self.label}: {done}/{self.total} games, {_clock(elapsed)} elapsed, "
                    f"about {_clock(left)} left ({_clock(elapsed / done)} a game) | {rates}")

    def close(self, note: str = "") -> None:
        if self.enabled and self.live:
            self.stream.write("\n")
        if self.enabled and note:
            self.stream.write(note + "\n")
        self.stream.flush()


# -- the summary ----------------------------------------------------------------------------------------


def summarize(game: Game, entrants: Sequence[Entrant], results: list[GameResult], *, planned: int, seed: int,
              rotate: bool, options: dict[str, Any], workers: int, seconds: float) -> dict[str, Any]:
    results = sorted(results, key=lambda r: r.index)
    seeds = sorted({r.seed for r in results})
    return {
        "game": game.info.id,
        "games": len(results),
        "games_planned": planned,
        "complete": len(results) == planned,
        "seed": seed,
        "deals": [seeds[0], seeds[-1]] if seeds else None,
        "rotate": rotate,
        "options": options,
        "lower_score_wins": game.info.lower_score_wins,
        "workers": workers,
        "moves": sum(len(ms) for r in results for ms in r.move_ms),
        "seconds": round(seconds, 3),
        "players": standings(results, entrants, lower_score_wins=game.info.lower_score_wins),
        "_scores": [[r.score(p) for r in results] for p in range(len(entrants))],
    }


def summary_table(summary: dict[str, Any]) -> str:
    deals = summary["deals"]
    where = f"deals {deals[0]}..{deals[1]}" if deals else "no deal played"
    head = (f"{'#':>2}  {'player':<10} {'win rate':>8}  {'95% CI':<14} {'margin':>7}  {'95% CI':<16} "
            f"{'mean score':>10} {'sd':>7}  {'ms/move':>9} {'median':>8} {'moves':>7}")
    games = f"{summary['games']} games"
    if not summary["complete"]:
        games += f" of {summary['games_planned']} (stopped)"
    lines = [
        f"{summary['game']}: {games}, {where}"
        + (", seats rotate" if summary["rotate"] else "")
        + (" (lower score wins)" if summary["lower_score_wins"] else " (higher score wins)"),
        head,
        "-" * len(head),
    ]
    for i, p in enumerate(summary["players"], start=1):
        low, high = p["win_rate_ci95"]
        ci = f"[{low:.2f}, {high:.2f}]"
        mci = "" if p["margin_ci95"] is None else f"[{p['margin_ci95'][0]:+.1f}, {p['margin_ci95'][1]:+.1f}]"
        mean = "—" if p["mean_score"] is None else f"{p['mean_score']:.1f}"
        ms = "—" if p["ms_per_move_mean"] is None else f"{p['ms_per_move_mean']:.2f}"
        med = "—" if p["ms_per_move_median"] is None else f"{p['ms_per_move_median']:.2f}"
        lines.append(f"{i:>2}  {p['player']:<10} {p['win_rate']:>8.3f}  {ci:<14} {p['margin']:>+7.1f}  {mci:<16} "
                     f"{mean:>10} {p['score_sd']:>7.1f}  {ms:>9} {med:>8} {p['moves']:>7}")
    return "\n".join(lines)


def plot(game: Game, summary: dict[str, Any], path: str) -> None:
    """Score distributions (left) and win rates with 95% intervals (right), one colour per player."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    players = summary["players"]
    scores: list[list[int]] = summary["_scores"]
    labels = [f"{i}. {p['player']}" for i, p in enumerate(players, start=1)]
    colors = [plt.get_cmap("tab10")(i % 10) for i in range(len(players))]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    all_scores = [s for ss in scores for s in ss]
    lo, hi = (min(all_scores), max(all_scores)) if all_scores else (0, 1)
    bins = min(30, max(5, hi - lo + 1))
    for ss, label, color in zip(scores, labels, colors, strict=True):
        if ss:
            left.hist(ss, bins=bins, range=(lo, hi + 1), histtype="step", linewidth=2, color=color,
                      label=f"{label} (mean {statistics.fmean(ss):.1f})")
            left.axvline(statistics.fmean(ss), color=color, linestyle="--", linewidth=1)
    better = "lower" if summary["lower_score_wins"] else "higher"
    left.set_title(f"Final scores ({better} is better)")
    left.set_xlabel("score")
    left.set_ylabel("games")
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    left.legend(fontsize="small")
    rates = [p["win_rate"] for p in players]
    errors = [[r - p["win_rate_ci95"][0] for r, p in zip(rates, players, strict=True)],
              [p["win_rate_ci95"][1] - r for r, p in zip(rates, players, strict=True)]]
    right.bar(labels, rates, yerr=errors, capsize=6, color=colors)
    for i, rate in enumerate(rates):
        right.text(i, 0.02, f"{rate:.0%}", ha="center", va="bottom", fontweight="bold",
                   bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})
    right.axhline(1 / len(players), color="grey", linestyle=":", linewidth=1, label="even share")
    right.set_ylim(0, 1)
    right.set_title("Win rate (95% Wilson interval)")
    right.legend(fontsize="small")
    right.tick_params(axis="x", labelrotation=20)
    fig.suptitle(f"{game.info.name}: {summary['games']} games")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- the command -------------------------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``simulate`` on the ``cardtable`` command's subparsers."""
    parser = subparsers.add_parser("simulate", help="run a tournament between AI levels and baselines",
                                   description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser)
    parser.set_defaults(func=run)
    return parser


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="game id, e.g. three-thirteen (cardtable games lists them)")
    parser.add_argument("--games", type=int, default=20,
                        help="number of games (default 20); a multiple of the number of players keeps every "
                             "deal played from every seat")
    parser.add_argument("--seats", default="ai:3,greedy",
                        help="comma-separated players: ai, ai:LEVEL, expert, greedy, random (default ai:3,greedy)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first deal (default 0)")
    parser.add_argument("--time-ms", type=int, default=None, help="AI time budget per move (default: the level's)")
    parser.add_argument("--workers", type=int, default=1, help="games played in parallel processes (default 1)")
    parser.add_argument("--no-rotate", action="store_true", help="a new deal every game, players keep their seats")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a match option, e.g. -o max_turns_per_round=50 (repeatable)")
    parser.add_argument("--plot", metavar="OUT.png", help="draw score distributions and win rates")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress display")


def run(args: argparse.Namespace) -> int:
    try:
        game = get_game(args.game)
        if args.games < 1:
            raise ValueError("--games must be at least 1")
        if args.workers < 1:
            raise ValueError("--workers must be at least 1")
        specs = [s for s in args.seats.split(",") if s.strip()]
        entrants = [parse_entrant(s, args.time_ms) for s in specs]
        game.check_players(len(entrants))
        options = game.check_options(parse_options(args.option), len(entrants))
    except (EngineError, ValueError) as exc:
        print(f"cardtable simulate: {exc}", file=sys.stderr)
        return 2
    rotate = not args.no_rotate
    tasks = schedule(game.info.id, entrants, args.games, first_seed=args.seed, rotate=rotate, options=options)
    progress = Progress(game.info.id, args.games, args.workers, sys.stderr, enabled=not args.quiet)
    results: list[GameResult] = []
    wins = [0.0] * len(entrants)
    interrupted = False
    start = time.perf_counter()
    stop_like_ctrl_c()  # Ctrl-C, or SIGINT / SIGTERM from a script, stops the workers and prints the table so far
    try:
        for result in play_all(tasks, workers=args.workers):
            results.append(result)
            for p in range(len(entrants)):
                wins[p] += result.share(p)
            progress.update(len(results), " ".join(f"{e.spec} {w / len(results):.2f}"
                                                   for e, w in zip(entrants, wins, strict=True)))
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - start
    progress.close(f"stopped after {len(results)} of {args.games} games: the table counts those" if interrupted
                   else "")
    summary = summarize(game, entrants, results, planned=args.games, seed=args.seed, rotate=rotate,
                        options=options, workers=args.workers, seconds=seconds)
    status = 130 if interrupted else 0
    if args.plot and results:
        try:
            plot(game, summary, args.plot)
            summary["plot"] = args.plot
        except OSError as exc:
            print(f"cardtable simulate: could not write the plot {args.plot}: {exc}", file=sys.stderr)
            status = status or 1
    summary.pop("_scores")  # the plot's data, not part of the summary
    if args.json:
        print(json.dumps(summary))
    else:
        print(summary_table(summary))
        if "plot" in summary:
            print(f"plot: {summary['plot']}")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardtable simulate", description=HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
