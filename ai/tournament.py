"""Tournaments between players (the AI at any level, the baselines) on duplicate deals, in parallel.

The one runner behind ``cardtable simulate`` and ``bench/ai_strength.py`` / ``bench/ai_ab.py``:

    entrants = [parse_entrant("ai:3"), parse_entrant("expert")]
    tasks = schedule("three-thirteen", entrants, games=40)        # 20 deals, each played with the seats swapped
    results = list(play_all(tasks, workers=2))                    # whole games, in worker processes
    standings(results, entrants, lower_score_wins=True)           # per player: win share, margin, with 95% CIs

**Duplicate deals.** Game ``i`` of an ``N``-player tournament is dealt from seed ``first_seed + i // N`` with the
seats rotated by ``i % N`` (player ``p`` sits at seat ``(p + shift) mod N``): every deal is played ``N`` times, once
with each player in each seat, so the luck of the cards cancels out. Without rotation, game ``i`` is seed
``first_seed + i`` with player ``p`` at seat ``p``.

**Players** (:func:`parse_entrant`): ``ai`` / ``ai:L`` (:func:`ai.choose_move` at level ``L``, default 3),
``expert`` (:mod:`ai.experts`), ``greedy``, ``random`` (:mod:`ai.baselines`), and for the benchmarks
``ai-nobelief`` (the AI with a uniform belief) and the AI with some evaluator settings overridden
(:class:`Entrant` ``evaluator``). Every player decides from its seat's view (``game.observation``) only; a
player with memory (the expert) is built afresh for each game and seat.

**Results** (:func:`standings`), per player over the games played: ``wins`` (a shared win counts ``1/k`` for each
of ``k`` winners), ``win_rate`` with its 95% Wilson score interval over games, ``fair_share`` (``1/N``), the mean
final score and its standard deviation, ``margin`` (the player's total against the mean of the others' totals,
signed so that positive is better whichever way the game scores) with a 95% interval over deals (each deal's
games averaged first: the games of one deal are not independent), and the thinking time per move.
"""

from __future__ import annotations

import contextlib
import copy
import math
import multiprocessing
import random
import signal
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.game import Game, Move, Observation, State
from engine.registry import get_game

Z95 = 1.959963984540054

#: a player's decision: (game, the seat's view, the player's own seeded rng) -> move
Chooser = Callable[[Game, Observation, random.Random], Move]

BASELINES = ("expert", "greedy", "random")


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sensible near 0 and 1, unlike p ± z·se).

    >>> [round(x, 4) for x in wilson_interval(5, 10)]
    [0.2366, 0.7634]
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(xs: Sequence[float], z: float = Z95) -> tuple[float, float | None, float | None]:
    """The mean of ``xs`` and its 95% interval (normal approximation); no interval for fewer than 2 values."""
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, None, None
    half = z * statistics.stdev(xs) / math.sqrt(len(xs))
    return m, m - half, m + half


# -- players ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entrant:
    """One player of a tournament, as data (it crosses to worker processes): ``spec`` is how it is named."""

    spec: str
    kind: str  # "ai" | "expert" | "greedy" | "random"
    level: int = 3
    time_ms: int | None = None
    belief: bool | None = None  # the AI's belief model: None = the level's default
    evaluator: tuple[tuple[str, Any], ...] = ()  # the AI's evaluator settings overridden (bench/ai_ab.py)

    @property
    def is_ai(self) -> bool:
        return self.kind == "ai"


def parse_entrant(spec: str, time_ms: int | None = None) -> Entrant:
    """``ai``, ``ai:L``, ``ai-nobelief``, ``expert``, ``greedy`` or ``random``; ValueError names a bad one."""
    text = spec.strip()
    name, _, arg = text.partition(":")
    if name in BASELINES and not arg:
        return Entrant(text, name)
    if name in ("ai", "ai-nobelief"):
        try:
            level = int(arg) if arg else 3
        except ValueError:
            raise ValueError(f"seat {spec!r}: the AI level must be a number, e.g. ai:3") from None
        from ai import LEVELS

        if level not in LEVELS:
            raise ValueError(f"seat {spec!r}: AI levels are {', '.join(map(str, sorted(LEVELS)))}")
        return Entrant(text, "ai", level=level, time_ms=time_ms, belief=False if name == "ai-nobelief" else None)
    raise ValueError(f"seat {spec!r} is not a player: use ai, ai:LEVEL, expert, greedy or random")


def tuned_evaluator(game: Game, overrides: dict[str, Any]) -> Any:
    """The game's AI evaluator with some class constants overridden, or None for the default one."""
    if not overrides:
        return None
    from ai.evaluate import evaluator_for

    base = evaluator_for(game)
    tuned = copy.copy(base)
    for name, value in overrides.items():
        if not hasattr(base, name):
            raise ValueError(f"{type(base).__name__} has no setting {name!r}")
        setattr(tuned, name, value)
    return tuned


def chooser(entrant: Entrant, game: Game) -> Chooser:
    """A fresh player for one seat of one game (the expert remembers what it saw during that game)."""
    if entrant.kind == "ai":
        if entrant.belief is None and not entrant.evaluator:
            from ai import choose_move

            def ai(game: Game, view: Observation, rng: random.Random) -> Move:
                return choose_move(game, view, level=entrant.level, time_ms=entrant.time_ms,
                                   seed=rng.getrandbits(31)).move

            return ai
        from ai.search import search

        evaluator = tuned_evaluator(game, dict(entrant.evaluator))
        knobs: dict[str, Any] = {"evaluator": evaluator} if evaluator is not None else {}
        if entrant.belief is not None:
            knobs["belief"] = entrant.belief

        def variant(game: Game, view: Observation, rng: random.Random) -> Move:
            return search(game, view, level=entrant.level, time_ms=entrant.time_ms, seed=rng.getrandbits(31),
                          **knobs).move

        return variant
    from ai import baselines

    return baselines.player(entrant.kind, game)


# -- one game ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameTask:
    """Game ``index`` of a tournament: the deal's seed, and player ``p`` at seat ``(p + shift) % N``."""

    index: int
    game_id: str
    entrants: tuple[Entrant, ...]
    seed: int
    shift: int
    options: tuple[tuple[str, Any], ...] = ()
    rounds: int = 0  # stop after this many rounds (0: the whole game); the best total then wins

    @property
    def seating(self) -> list[int]:
        """The player index at each seat."""
        n = len(self.entrants)
        return [(seat - self.shift) % n for seat in range(n)]


@dataclass
class GameResult:
    """What one game gave: scores per seat, the winners, and each player's thinking time per move."""

    index: int
    seed: int
    shift: int
    seating: list[int]
    totals: list[int]
    winners: list[int]
    rounds: int
    move_ms: list[list[float]] = field(default_factory=list)  # per player

    def share(self, player: int) -> float:
        """The player's share of the win: 1/k if it is one of k winners."""
        seat = self.seating.index(player)
        return 1 / len(self.winners) if seat in self.winners else 0.0

    def score(self, player: int) -> int:
        return self.totals[self.seating.index(player)]

    def margin(self, player: int, lower_score_wins: bool) -> float:
        """The player's total against the mean of the others', positive when better."""
        mine = self.score(player)
        others = statistics.fmean(t for s, t in enumerate(self.totals) if self.seating[s] != player)
        return others - mine if lower_score_wins else mine - others


#: how a seat's view is made for its player: (game, state, seat, the player) -> view
ViewFn = Callable[[Game, State, int, Entrant], Observation]


def seat_view(game: Game, state: State, seat: int, entrant: Entrant) -> Observation:
    """The seat's own view (``game.observation``): what every player of a tournament decides from."""
    return game.observation(state, seat)


def play_game(task: GameTask, view_of: ViewFn = seat_view) -> GameResult:
    """Play one game of ``task`` to its end (or ``task.rounds`` rounds), each seat from its own view
    (``view_of``: a benchmark may show a player more, e.g. ``bench/ai_ab.py``'s ``reveal``)."""
    game = get_game(task.game_id)
    n = len(task.entrants)
    seating = task.seating
    state = game.new_match(n, dict(task.options) or None, seed=task.seed)
    choosers = [chooser(task.entrants[p], game) for p in seating]
    rngs = [random.Random(f"tournament/{task.seed}/{seating[seat]}/{task.shift}") for seat in range(n)]
    move_ms: list[list[float]] = [[] for _ in range(n)]
    while not state.is_over:
        if task.rounds and len(state.round_scores) >= task.rounds:
            break
        seat = state.to_move
        assert seat is not None
        view = view_of(game, state, seat, task.entrants[seating[seat]])
        t0 = time.perf_counter()
        move = choosers[seat](game, view, rngs[seat])
        move_ms[seating[seat]].append((time.perf_counter() - t0) * 1000)
        state, _ = game.apply(state, move, seat=seat)
    totals = list(state.totals)
    if state.winners is not None:
        winners = list(state.winners)
    else:  # cut after task.rounds: the best total wins
        best = min(totals) if game.info.lower_score_wins else max(totals)
        winners = [s for s, t in enumerate(totals) if t == best]
    return GameResult(task.index, task.seed, task.shift, seating, totals, winners, len(state.round_scores), move_ms)


# -- a tournament --------------------------------------------------------------------------------------


def schedule(game_id: str, entrants: Sequence[Entrant], games: int, *, first_seed: int = 0, rotate: bool = True,
             options: dict[str, Any] | None = None, rounds: int = 0) -> list[GameTask]:
    """The games of a tournament: duplicate deals with the seats rotated (see the module docstring)."""
    n = len(entrants)
    opts = tuple(sorted((options or {}).items()))
    tasks = []
    for i in range(games):
        seed, shift = (first_seed + i // n, i % n) if rotate else (first_seed + i, 0)
        tasks.append(GameTask(i, game_id, tuple(entrants), seed, shift, opts, rounds))
    return tasks


def stop_like_ctrl_c() -> None:
    """Make SIGINT and SIGTERM stop a run as Ctrl-C does: ``KeyboardInterrupt`` in the main thread, so that
    :func:`play_all` stops its workers and the caller reports the games finished.

    Call it from a command's main thread. A run started in the background of a script has SIGINT ignored,
    and SIGTERM's default ends the process at once, leaving the pool's workers to play on without it.
    """
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _worker_signals() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the pool and keeps what was measured; and the
    # pool stops a worker by SIGTERM, which must end it whatever the parent's handler was
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def play_all(tasks: Iterable[GameTask], workers: int = 1,
             play: Callable[[Any], Any] = play_game) -> Iterator[Any]:
    """``play(task)`` for each task, yielded as games finish: in this process, or in ``workers`` processes.

    Stopping the iteration (or Ctrl-C in the caller; SIGTERM too after :func:`stop_like_ctrl_c`) stops the
    workers; the games already yielded are kept.
    """
    tasks = list(tasks)
    if workers <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield play(task)
        return
    pool = multiprocessing.Pool(min(workers, len(tasks)), initializer=_worker_signals)
    try:
        yield from pool.imap_unordered(play, tasks)
        pool.close()
    finally:
        pool.terminate()
        with contextlib.suppress(Exception):
            pool.join()


def standings(results: Sequence[GameResult], entrants: Sequence[Entrant], *,
              lower_score_wins: bool) -> list[dict[str, Any]]:
    """Per player: win share (Wilson 95%), margin (95% over deals), scores and time per move."""
    out = []
    n = len(entrants)
    games = len(results)
    for p, entrant in enumerate(entrants):
        wins = sum(r.share(p) for r in results)
        low, high = wilson_interval(wins, games)
        scores = [r.score(p) for r in results]
        by_deal: dict[int, list[float]] = {}
        for r in results:
            by_deal.setdefault(r.seed, []).append(r.margin(p, lower_score_wins))
        margin, mlo, mhi = mean_interval([statistics.fmean(ms) for ms in by_deal.values()]) if by_deal else (
            0.0, None, None)
        times = [t for r in results for t in r.move_ms[p]]
        out.append({
            "player": entrant.spec,
            "games": games,
            "wins": round(wins, 3),
            "win_rate": round(wins / games, 4) if games else 0.0,
            "win_rate_ci95": [round(low, 4), round(high, 4)],
            "fair_share": round(1 / n, 4),
            "margin": round(margin, 2),
            "margin_ci95": None if mlo is None or mhi is None else [round(mlo, 2), round(mhi, 2)],
            "mean_score": round(statistics.fmean(scores), 2) if scores else None,
            "score_sd": round(statistics.stdev(scores), 2) if len(scores) > 1 else 0.0,
            "moves": len(times),
            "ms_per_move_mean": round(statistics.fmean(times), 3) if times else None,
            "ms_per_move_median": round(statistics.median(times), 3) if times else None,
        })
    return out
