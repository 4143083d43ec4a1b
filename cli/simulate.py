"""``cardtable simulate GAME --games N --seats ai:3,greedy,random``: tournaments between policies.

Each entry of ``--seats`` is a player: ``ai`` / ``ai:L`` (the AI at level L,
from the player's view only), ``greedy`` (:mod:`ai.baselines`) or ``random``
(a uniformly random legal move). Game ``i`` is dealt from seed ``seed + i`` and,
unless ``--no-rotate``, player ``p`` sits at seat ``(p + i) mod N`` so that no
player keeps the advantage of a seat.

The summary gives, per player: the win rate (a shared win counts 1/k for each
of the k winners) with its 95% Wilson score interval, the mean final score and
its standard deviation, and the time per move (mean and median, the policy's
thinking time only). ``--plot out.png`` draws the score distributions and the
win rates with their intervals; ``--json`` prints the summary as JSON.

    cardtable simulate three-thirteen --games 200 --seats ai:3,greedy
    cardtable simulate least-score --games 50 --seats ai:2,random,random --plot out.png
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cli.play import parse_options
from engine.errors import EngineError
from engine.game import Game, Move, Observation, State
from engine.registry import get_game

Z95 = 1.959963984540054

# A policy picks the move of the seat to move: (game, state, view of that seat, rng) -> move.
# Only "random" and the built-in ones see the state, and only to list the seat's legal moves.
PolicyFn = Callable[[Game, State, Observation, random.Random], Move]


@dataclass
class Player:
    """One entry of ``--seats`` and what it did over the tournament."""

    spec: str
    choose: PolicyFn
    wins: float = 0.0
    scores: list[int] = field(default_factory=list)
    move_seconds: list[float] = field(default_factory=list)

    def summary(self, games: int) -> dict[str, Any]:
        rate = self.wins / games if games else 0.0
        low, high = wilson_interval(self.wins, games)
        times = [t * 1000 for t in self.move_seconds]
        return {
            "player": self.spec,
            "wins": round(self.wins, 3),
            "win_rate": round(rate, 4),
            "win_rate_ci95": [round(low, 4), round(high, 4)],
            "mean_score": round(statistics.fmean(self.scores), 2) if self.scores else None,
            "score_sd": round(statistics.stdev(self.scores), 2) if len(self.scores) > 1 else 0.0,
            "moves": len(times),
            "ms_per_move_mean": round(statistics.fmean(times), 3) if times else None,
            "ms_per_move_median": round(statistics.median(times), 3) if times else None,
        }


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sensible near 0 and 1, unlike p ± z·se)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


# -- policies -------------------------------------------------------------------------------


def random_policy(game: Game, state: State, view: Observation, rng: random.Random) -> Move:
    return rng.choice(game.legal_moves(state))


def ai_policy(level: int, time_ms: int | None) -> PolicyFn:
    from ai import choose_move

    def choose(game: Game, state: State, view: Observation, rng: random.Random) -> Move:
        return choose_move(game, view, level=level, time_ms=time_ms, seed=rng.getrandbits(31)).move

    return choose


def greedy_policy() -> PolicyFn:
    """The greedy baseline of :mod:`ai.baselines` (one ply, from the seat's view)."""
    from ai.baselines import greedy_move

    def choose(game: Game, state: State, view: Observation, rng: random.Random) -> Move:
        return greedy_move(game, view, rng)

    return choose


def make_player(spec: str, time_ms: int | None) -> Player:
    name, _, arg = spec.strip().partition(":")
    if name == "random" and not arg:
        return Player(spec, random_policy)
    if name == "greedy" and not arg:
        return Player(spec, greedy_policy())
    if name == "ai":
        try:
            level = int(arg) if arg else 3
        except ValueError:
            raise ValueError(f"seat {spec!r}: the AI level must be a number, e.g. ai:3") from None
        from ai import LEVELS

        if level not in LEVELS:
            raise ValueError(f"seat {spec!r}: AI levels are {', '.join(map(str, sorted(LEVELS)))}")
        return Player(spec, ai_policy(level, time_ms))
    raise ValueError(f"seat {spec!r} is not a policy: use ai, ai:LEVEL, greedy or random")


# -- the tournament -------------------------------------------------------------------------


@dataclass
class Tournament:
    game: Game
    players: list[Player]
    options: dict[str, Any]
    seed: int = 0
    rotate: bool = True
    games_played: int = 0
    moves: int = 0
    seconds: float = 0.0

    def play_one(self, index: int) -> list[int]:
        """Play game ``index``; returns the player index of each seat."""
        n = len(self.players)
        shift = index % n if self.rotate else 0
        at_seat = [(seat - shift) % n for seat in range(n)]  # player p sits at (p + shift) % n
        game_seed = self.seed + index
        state = self.game.new_match(n, self.options, seed=game_seed)
        rngs = [random.Random(f"simulate/{game_seed}/{p}") for p in range(n)]
        started = time.perf_counter()
        while not state.is_over:
            seat = state.to_move
            assert seat is not None
            player = self.players[at_seat[seat]]
            view = self.game.observation(state, seat)
            t0 = time.perf_counter()
            move = player.choose(self.game, state, view, rngs[at_seat[seat]])
            player.move_seconds.append(time.perf_counter() - t0)
            state, _ = self.game.apply(state, move, seat=seat)
            self.moves += 1
        self.seconds += time.perf_counter() - started
        winners = state.winners or []
        for seat in range(n):
            p = self.players[at_seat[seat]]
            p.scores.append(state.totals[seat])
            if seat in winners:
                p.wins += 1 / len(winners)
        self.games_played += 1
        return at_seat

    def summary(self) -> dict[str, Any]:
        return {
            "game": self.game.info.id,
            "games": self.games_played,
            "seed": self.seed,
            "rotate": self.rotate,
            "options": self.options,
            "lower_score_wins": self.game.info.lower_score_wins,
            "moves": self.moves,
            "seconds": round(self.seconds, 3),
            "players": [p.summary(self.games_played) for p in self.players],
        }


def summary_table(summary: dict[str, Any]) -> str:
    head = f"{'#':>2}  {'player':<10} {'win rate':>8}  {'95% CI':<15} {'mean score':>10} {'sd':>7}  " \
           f"{'ms/move':>9} {'median':>8} {'moves':>7}"
    lines = [
        f"{summary['game']}: {summary['games']} games, "
        f"seeds {summary['seed']}..{summary['seed'] + summary['games'] - 1}"
        + (", seats rotate" if summary["rotate"] else "")
        + (" (lower score wins)" if summary["lower_score_wins"] else " (higher score wins)"),
        head,
        "-" * len(head),
    ]
    for i, p in enumerate(summary["players"], start=1):
        low, high = p["win_rate_ci95"]
        ci = f"[{low:.2f}, {high:.2f}]"
        mean = "—" if p["mean_score"] is None else f"{p['mean_score']:.1f}"
        ms = "—" if p["ms_per_move_mean"] is None else f"{p['ms_per_move_mean']:.2f}"
        med = "—" if p["ms_per_move_median"] is None else f"{p['ms_per_move_median']:.2f}"
        lines.append(f"{i:>2}  {p['player']:<10} {p['win_rate']:>8.3f}  {ci:<15} {mean:>10} {p['score_sd']:>7.1f}  "
                     f"{ms:>9} {med:>8} {p['moves']:>7}")
    return "\n".join(lines)


def plot(tournament: Tournament, path: str) -> None:
    """Score distributions (left) and win rates with 95% intervals (right), one colour per player."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    summary = tournament.summary()
    players = tournament.players
    labels = [f"{i}. {p.spec}" for i, p in enumerate(players, start=1)]
    colors = [plt.get_cmap("tab10")(i % 10) for i in range(len(players))]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    all_scores = [s for p in players for s in p.scores]
    lo, hi = (min(all_scores), max(all_scores)) if all_scores else (0, 1)
    bins = min(30, max(5, hi - lo + 1))
    for p, label, color in zip(players, labels, colors, strict=True):
        if p.scores:
            left.hist(p.scores, bins=bins, range=(lo, hi + 1), histtype="step", linewidth=2, color=color,
                      label=f"{label} (mean {statistics.fmean(p.scores):.1f})")
            left.axvline(statistics.fmean(p.scores), color=color, linestyle="--", linewidth=1)
    better = "lower" if summary["lower_score_wins"] else "higher"
    left.set_title(f"Final scores ({better} is better)")
    left.set_xlabel("score")
    left.set_ylabel("games")
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    left.legend(fontsize="small")
    rates = [s["win_rate"] for s in summary["players"]]
    errors = [[r - s["win_rate_ci95"][0] for r, s in zip(rates, summary["players"], strict=True)],
              [s["win_rate_ci95"][1] - r for r, s in zip(rates, summary["players"], strict=True)]]
    right.bar(labels, rates, yerr=errors, capsize=6, color=colors)
    for i, rate in enumerate(rates):
        right.text(i, 0.02, f"{rate:.0%}", ha="center", va="bottom", fontweight="bold",
                   bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})
    right.axhline(1 / len(players), color="grey", linestyle=":", linewidth=1, label="even share")
    right.set_ylim(0, 1)
    right.set_title("Win rate (95% Wilson interval)")
    right.legend(fontsize="small")
    right.tick_params(axis="x", labelrotation=20)
    fig.suptitle(f"{tournament.game.info.name}: {summary['games']} games")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# -- the command -------------------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``simulate`` on the ``cardtable`` command's subparsers."""
    parser = subparsers.add_parser("simulate", help="run a tournament between AI levels and baselines",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser)
    parser.set_defaults(func=run)
    return parser


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="game id, e.g. three-thirteen (`cardtable games` lists them)")
    parser.add_argument("--games", type=int, default=20, help="number of games (default 20)")
    parser.add_argument("--seats", default="ai:3,greedy",
                        help="comma-separated players: ai, ai:LEVEL, greedy, random (default ai:3,greedy)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0)")
    parser.add_argument("--time-ms", type=int, default=None, help="AI time budget per move")
    parser.add_argument("--no-rotate", action="store_true", help="keep each player in the same seat")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a match option, e.g. -o max_turns_per_round=50 (repeatable)")
    parser.add_argument("--plot", metavar="OUT.png", help="draw score distributions and win rates")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    try:
        game = get_game(args.game)
        if args.games < 1:
            raise ValueError("--games must be at least 1")
        specs = [s for s in args.seats.split(",") if s.strip()]
        players = [make_player(s, args.time_ms) for s in specs]
        game.check_players(len(players))
        options = game.check_options(parse_options(args.option), len(players))
    except (EngineError, ValueError) as exc:
        print(f"cardtable simulate: {exc}", file=sys.stderr)
        return 2
    tournament = Tournament(game, players, options, seed=args.seed, rotate=not args.no_rotate)
    bar = tqdm(range(args.games), desc=f"{game.info.id}", unit="game", file=sys.stderr, disable=args.quiet,
               dynamic_ncols=True)
    for index in bar:
        tournament.play_one(index)
        bar.set_postfix_str(" ".join(f"{p.spec} {p.wins / tournament.games_played:.2f}" for p in players))
    bar.close()
    summary = tournament.summary()
    if args.plot:
        plot(tournament, args.plot)
        summary["plot"] = args.plot
    if args.json:
        print(json.dumps(summary))
    else:
        print(summary_table(summary))
        if args.plot:
            print(f"plot: {args.plot}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardtable simulate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
