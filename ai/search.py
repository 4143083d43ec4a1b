"""The computer opponent: determinized expectimax from one seat's view, for any registered game.

``choose_move(game, view)`` plays the seat of ``view`` (an
:meth:`engine.game.Game.observation`) and never sees a state:

1. **Worlds.** The unseen cards are re-dealt consistently with the view
   (:meth:`~engine.game.Game.determinize`, biased by the game's belief model
   when it has one, :mod:`ai.belief`). World ``k`` comes from its own
   ``random.Random(f"ai/{seed}/{k}")``; every candidate move is evaluated on the
   *same* worlds (common random numbers), so their differences are sharp.
2. **Expectimax in a world.** After the candidate root move, the world is
   played forward: the seat's own later decisions in the same turn *maximise*
   the leaf evaluation (for example the discard after a draw), the other seats
   act by the evaluator's model policy, and the play stops when control has
   come back to the seat ``orbits`` times (the others' moves out of turn inside
   the seat's own turn, as the evaluator's ``turn_owner`` says, do not count), or the round ends (then the round's
   real scores are the leaf). Draws from the stock are chance nodes: each
   world fixes one stock order, so averaging over worlds weights each unseen
   card by its probability of being drawn (uniform, or the belief model's).
   A game that can afford it solves the rest of the round exactly once a
   world is small enough (:meth:`~ai.evaluate.Evaluator.solve`: Less Than
   Three's endgames at levels 4-5), and that value is the leaf.
   The seat's own root draw is enumerated rather than sampled when its
   evaluator names the zone it draws from (``draw_zone``): world ``k`` puts the
   ``k``-th card of a fixed shuffle of the distinct unseen cards on top of that
   zone (the rest dealt as usual around it), and levels 3-5 sample at least one
   world per distinct unseen card, so every card the draw could take is weighed,
   each with its exact probability: a world counts as many times as its top
   card has unseen copies (with two decks, two copies of a card are one world of
   weight 2, not two worlds).
3. **Leaves** are scored by the game's evaluator (:mod:`ai.evaluate`):
   the expected round margin in points from the seat's side, and the chance of
   winning the round.
4. **Root moves.** The moves that end the round for the seat (go out, knock,
   declare, go down: :meth:`~ai.evaluate.Evaluator.ends_round`) come first
   and are always searched. With more legal moves than the level's
   ``candidates``, every move is first evaluated once (one ply, on the
   root's world) and the best of the rest are kept. Every kept move is
   evaluated on the first world, whatever the clock; after each batch from
   the eighth world on, moves that are clearly worse than the best (by more
   than 3 standard errors each) stop being sampled.

**A work budget, not a clock.** A level fixes its work: ``samples`` worlds
(at least one per distinct unseen card for a root draw, with ``exact_draws``), pruned
every ``batch`` worlds, the look-ahead and the candidates. So a decision is a
function of ``(view, level, seed)`` only: the same on a busy machine as on an
idle one, in a fresh process as in a warm one. ``time_ms`` is an upper bound a
caller may add: the clock is read only between worlds, and a world that would
not fit is not started (the first world is always evaluated whole). A decision
cut that way is the one the same seed gives for that many worlds
(``Decision.samples``, a prefix of the same sequence of worlds). Each game's
evaluator may shift the level's orbits
(``orbit_shift``) and scale its worlds (``sample_scale``). :func:`warm_up` decides a few positions of every game once
per process, so that the first real decision costs what a later one does.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ai.evaluate import DealFn, Evaluator, Leaf, evaluator_for, plural
from engine.cards import Card
from engine.errors import GameOverError, NotYourTurnError
from engine.game import Game, Move, Observation, State, uniform_deal


@dataclass(frozen=True)
class Level:
    """One playing strength: its work budget (worlds, look-ahead, candidates), not a time."""

    number: int
    samples: int  # worlds to evaluate (the work budget; with exact_draws at least one per distinct unseen card)
    orbits: int  # how many times control returns to the seat before the leaf (0: end of own turn)
    candidates: int  # root moves searched; the rest are cut by a one-ply estimate
    batch: int  # worlds between two prunings (from 1 + batch worlds on, once 8 are in)
    randomness: float = 0.0  # chance of answering with a uniformly random legal move
    belief: bool = True  # use the game's belief model for re-deals (if it has one)
    exact_draws: bool = False  # a root draw is averaged over every unseen card (at least that many worlds)


LEVELS: dict[int, Level] = {
    1: Level(1, samples=1, orbits=0, candidates=4, batch=1, randomness=0.75),
    2: Level(2, samples=4, orbits=1, candidates=6, batch=2),
    3: Level(3, samples=24, orbits=1, candidates=10, batch=4, exact_draws=True),
    4: Level(4, samples=64, orbits=1, candidates=16, batch=8, exact_draws=True),
    5: Level(5, samples=160, orbits=2, candidates=24, batch=8, exact_draws=True),
}
DEFAULT_LEVEL = 3
ROUGH_BELOW = 8  # an explanation from fewer sampled deals says it is a rough estimate
MAX_PLIES_PER_WORLD = 400  # a world is cut off (and evaluated) after this many simulated moves
OWN_BRANCH_LIMIT = 24  # own inner decisions with more moves than this follow the model policy


@dataclass(frozen=True)
class Decision:
    """The AI's answer for one decision of one seat.

    ``move`` is one of the seat's legal moves. ``alternatives`` lists the moves
    the search compared, best first, each with its expected round margin in
    points from the seat's side (``move`` is the first). ``value`` is how many
    expected points the chosen move gains over the runner-up (0 when there was
    no choice). ``win_chance`` is the estimated chance of winning the round
    with the chosen move (by the rule of succession over the sampled deals,
    so never a certain 0 or 1 from a few), ``samples`` the number of sampled
    deals (worlds). ``explanation`` is one sentence about the chosen move, in
    the API's card notation (``KH``); from fewer than 8 sampled deals it says
    it is a rough estimate.
    """

    move: Move
    value: float
    alternatives: list[dict[str, Any]]
    win_chance: float
    samples: int
    explanation: str
    elapsed_ms: float
    level: int

    def to_json(self) -> dict[str, Any]:
        return {
            "move": dict(self.move),
            "value": self.value,
            "alternatives": [{"move": dict(a["move"]), "value": a["value"]} for a in self.alternatives],
            "win_chance": self.win_chance,
            "samples": self.samples,
            "explanation": self.explanation,
            "elapsed_ms": self.elapsed_ms,
            "level": self.level,
        }


def choose_move(
    game: Game,
    view: Observation,
    *,
    level: int = DEFAULT_LEVEL,
    time_ms: int | None = None,
    seed: int = 0,
) -> Decision:
    """The move of ``view``'s seat, chosen from that view only (see the module docstring)."""
    return search(game, view, level=level, time_ms=time_ms, seed=seed)


def search(
    game: Game,
    view: Observation,
    *,
    level: int = DEFAULT_LEVEL,
    time_ms: int | None = None,
    seed: int = 0,
    belief: bool | None = None,
    evaluator: Evaluator | None = None,
) -> Decision:
    """:func:`choose_move` with the knobs the benchmarks turn (belief model on/off, another evaluator)."""
    start = time.perf_counter()
    if level not in LEVELS:
        raise ValueError(f"level must be one of {sorted(LEVELS)}, not {level!r}")
    if time_ms is not None and time_ms <= 0:
        raise ValueError(f"time_ms must be positive, not {time_ms!r}")
    lv = LEVELS[level]
    seat = _check_view(view)
    ev = (evaluator or evaluator_for(game)).for_level(level)
    target = max(1, round(lv.samples * ev.sample_scale))
    orbits = max(0, lv.orbits + ev.orbit_shift) if lv.orbits else 0
    use_belief = lv.belief if belief is None else belief
    deal = ev.deal(game, view) if use_belief else None
    deadline = start + time_ms / 1000.0 if time_ms is not None else None

    # The root draw as a chance node: world k puts the k-th of a fixed shuffle of the distinct unseen cards
    # on top of the drawn zone, weighted by that card's unseen copies, and at least one world per distinct
    # card (exact_draws) weights each card by exactly its probability.
    tops: list[Card] = []
    copies: Counter[Card] = Counter()
    if ev.draw_zone is not None and ev.draws_now(game, view):
        copies = Counter(game.unseen_cards(view))
        tops = sorted(copies)
        random.Random(f"ai/{seed}/tops").shuffle(tops)
        if lv.exact_draws:
            target = max(target, len(tops))

    root_rng = random.Random(f"ai/{seed}/root")
    world0 = game.determinize(view, root_rng, deal=deal)
    legal = game.legal_moves(world0)
    if not legal:
        raise GameOverError("there is no legal move in this position")

    if lv.randomness and root_rng.random() < lv.randomness:
        move = root_rng.choice(legal)
        leaf = _Runner(game, ev, seat, world0, 0, root_rng).after_move(world0, move)
        return _decision(game, ev, view, lv, [(move, leaf.value, leaf.win)], 1, start,
                         note="plays at random (level 1)")

    if len(legal) == 1:
        leaf = _Runner(game, ev, seat, world0, 0, random.Random(f"ai/{seed}/p0")).after_move(world0, legal[0])
        return _decision(game, ev, view, lv, [(legal[0], leaf.value, leaf.win)], 1, start, note="only move")

    # the moves that end the round for the seat come first, and are never cut by the one-ply estimate
    enders = [i for i, m in enumerate(legal) if ev.ends_round(game, world0, m)]
    candidates = enders + [i for i in range(len(legal)) if i not in enders]
    if len(legal) > lv.candidates:
        # every legal move is evaluated once (one ply, on the root's world) before any is cut
        runner = _Runner(game, ev, seat, world0, 0, random.Random(f"ai/{seed}/pre"))
        pre = {i: runner.after_move(world0, legal[i]).value for i in candidates}
        keep = max(0, lv.candidates - len(enders))
        rest = sorted((i for i in candidates if i not in enders), key=lambda i: (-pre[i], i))[:keep]
        candidates = enders + sorted(rest)

    stats = {i: _Stats() for i in candidates}
    active = list(candidates)
    done = 0
    first = 0.0  # seconds the first world took (it fills the solver's caches, so it is the slowest)
    searching = 0.0  # seconds spent on the worlds after it
    while done < target:
        # every candidate is evaluated on the first world, whatever the clock; a caller's time_ms is read
        # between worlds (a world costs what the worlds after the first did on average)
        if deadline is not None and done:
            per_world = searching / (done - 1) if done > 1 else first
            if time.perf_counter() + per_world > deadline:
                break
        t0 = time.perf_counter()
        wrng = random.Random(f"ai/{seed}/{done}")
        top = tops[done % len(tops)] if tops else None
        world_deal = _top_card_deal(deal, ev.draw_zone, top) if top is not None else deal
        weight = copies[top] if top is not None else 1
        world = game.determinize(view, wrng, deal=world_deal)
        for i in active:
            runner = _Runner(game, ev, seat, world, orbits, random.Random(f"ai/{seed}/{done}/policy"))
            stats[i].add(runner.after_move(world, legal[i]), weight)
        if done == 0:
            first = time.perf_counter() - t0
        else:
            searching += time.perf_counter() - t0
        done += 1
        # pruning at fixed counts of worlds (every ``batch`` from 1 + batch on, once 8 are in): a function
        # of the level only
        if done >= 8 and (done - 1) % lv.batch == 0 and len(active) > 2:
            active = _prune(active, stats)

    ranked = sorted(candidates, key=lambda i: (-stats[i].mean, i))
    results = [(legal[i], stats[i].mean, stats[i].win) for i in ranked]
    return _decision(game, ev, view, lv, results, done, start)


_warmed: list[bool] = []  # not empty once warm_up() has run in this process


def warm_up(plies: int = 40, decisions: int = 2, level: int = 2) -> float:
    """Fill the tables the AI builds on first use (the solver's, the evaluators', the engine's), for every
    registered game, by deciding a few positions of a fixed game (a second or two): so that the first real
    decision in a fresh process costs about what a later one does. Once per process (a second call returns at once).
    Returns the seconds it took."""
    from engine.registry import all_games

    start = time.perf_counter()
    if _warmed:
        return 0.0
    _warmed.append(True)
    for game in all_games():
        rng = random.Random(0)
        state = game.new_match(game.info.min_players, seed=0)
        for ply in range(plies * decisions):
            if state.is_over:
                break
            if ply % plies == plies - 1:
                choose_move(game, game.observation(state, state.to_move), level=level, seed=ply)
            state = game.apply(state, rng.choice(game.legal_moves(state)), check=False)[0]
    return time.perf_counter() - start


def _top_card_deal(deal: DealFn | None, zone_name: str | None, card: Card) -> DealFn:
    """``deal`` (uniform if None), then ``card`` swapped onto the top (the last card) of the zone named
    ``zone_name``: the other cards stay dealt as ``deal`` deals them given that top card."""
    base = deal or uniform_deal

    def dealt(unseen: list[Card], zones: list[dict[str, Any]], rng: random.Random) -> list[list[Card]]:
        fills = base(unseen, zones, rng)
        top = next((f for z, f in zip(zones, fills, strict=True) if z.get("zone") == zone_name and f), None)
        if top is None or top[-1] == card:
            return fills
        for fill in fills:
            if card in fill:
                at = fill.index(card)
                fill[at], top[-1] = top[-1], card
                break
        return fills

    return dealt


def _check_view(view: Observation) -> int:
    if not isinstance(view, dict) or "seat" not in view or "hidden" not in view:
        raise ValueError("choose_move needs a seat's view: game.observation(state, seat)")
    seat = view["seat"]
    if seat is None:
        raise ValueError("a spectator's view has no seat to play for")
    if view.get("winners") is not None or view.get("to_move") is None:
        raise GameOverError("the game is over: there is no move to choose")
    if view["to_move"] != seat:
        raise NotYourTurnError(f"it is seat {view['to_move']}'s decision, not seat {seat}'s: the AI plays "
                               "only for the seat whose turn it is")
    return int(seat)


class _Stats:
    """Weighted leaf statistics of one root move (a world's weight: its top card's unseen copies, else 1)."""

    __slots__ = ("n", "sum", "sum_sq", "weight", "weight_sq", "wins")

    def __init__(self) -> None:
        self.n = 0  # worlds
        self.weight = 0.0
        self.weight_sq = 0.0
        self.sum = 0.0
        self.sum_sq = 0.0
        self.wins = 0.0

    def add(self, leaf: Leaf, weight: float = 1) -> None:
        self.n += 1
        self.weight += weight
        self.weight_sq += weight * weight
        self.sum += weight * leaf.value
        self.sum_sq += weight * leaf.value * leaf.value
        self.wins += weight * leaf.win

    @property
    def mean(self) -> float:
        return self.sum / self.weight if self.n else -math.inf

    @property
    def win(self) -> float:
        return self.wins / self.weight if self.n else 0.0

    @property
    def stderr(self) -> float:
        """The weighted mean's standard error (the plain one when every weight is 1)."""
        if self.n < 2:
            return math.inf
        w, w2 = self.weight, self.weight_sq
        var = max(0.0, (self.sum_sq - self.sum * self.sum / w) / (w - w2 / w))  # unbiased, reliability weights
        if w2 == w:  # every weight 1
            return math.sqrt(var / w)
        return math.sqrt(var * w2) / w  # the mean's variance: var * sum(w^2) / sum(w)^2


def _prune(active: list[int], stats: dict[int, _Stats]) -> list[int]:
    best = max(active, key=lambda i: (stats[i].mean, -i))
    floor = stats[best].mean - 3 * stats[best].stderr
    return [i for i in active if i == best or stats[i].mean + 3 * stats[i].stderr >= floor]


class _Runner:
    """Plays one world forward from a root move and scores the leaf, for one seat."""

    def __init__(self, game: Game, ev: Evaluator, seat: int, root: State, orbits: int, rng: random.Random):
        self.game = game
        self.ev = ev
        self.seat = seat
        self.round_index = len(root.round_scores)
        self.orbits = orbits
        self.rng = rng
        self.apply: Callable[..., tuple[State, Any]] = game.apply
        self.solve = ev.solve if ev.solves else None

    def _finished(self, state: State) -> bool:
        return len(state.round_scores) > self.round_index or state.is_over

    def _leaf(self, state: State) -> Leaf:
        if len(state.round_scores) > self.round_index:
            return self.ev.round_result(self.game, state, self.seat, self.round_index)
        return self.ev.leaf(self.game, state, self.seat)

    def after_move(self, state: State, move: Move) -> Leaf:
        state = self.apply(state, move, check=False)[0]
        orbits_left = self.orbits
        others_moved = False
        for _ in range(MAX_PLIES_PER_WORLD):
            if self._finished(state):
                break
            if self.solve is not None:
                solved = self.solve(self.game, state, self.seat)
                if solved is not None:
                    return solved
            mover = state.to_move
            if mover == self.seat:
                if others_moved:
                    orbits_left -= 1
                    others_moved = False
                    if orbits_left <= 0:
                        break
                move = self._own_choice(state, in_root_turn=not others_moved and orbits_left == self.orbits)
            else:
                if orbits_left <= 0:
                    break
                # the others' moves out of turn inside the seat's own turn (contract rummy's buys after its
                # draw from the stock) do not make control come back to it
                if self.ev.turn_owner(state) != self.seat:
                    others_moved = True
                move = self.ev.policy(self.game, state, self.rng)
            state = self.apply(state, move, check=False)[0]
        return self._leaf(state)

    def _own_choice(self, state: State, in_root_turn: bool) -> Move:
        """The seat's own later decision in the root turn maximises the leaf; later turns follow the policy.

        Maximising in a sampled world is honest only when the seat would know what the world reveals by
        then: within the root turn it does (a discard after a stock draw sees the drawn card) unless the
        evaluator says the move takes an unseen card; in later turns it would not, so the policy plays.
        """
        moves = self.game.legal_moves(state)
        if len(moves) == 1:
            return moves[0]
        if (not in_root_turn or len(moves) > OWN_BRANCH_LIMIT
                or not self.ev.can_maximise(self.game, state)):
            return self.ev.policy(self.game, state, self.rng)
        moves = self.ev.own_candidates(self.game, state, moves)
        best, best_value = moves[0], -math.inf
        for m in moves:
            nxt = self.apply(state, m, check=False)[0]
            value = self._leaf(nxt).value
            if value > best_value:
                best, best_value = m, value
        return best


def _decision(
    game: Game,
    ev: Evaluator,
    view: Observation,
    lv: Level,
    results: list[tuple[Move, float, float]],
    samples: int,
    start: float,
    note: str | None = None,
) -> Decision:
    move, value, win = results[0]
    gain = value - results[1][1] if len(results) > 1 else 0.0
    ranked = [(m, v) for m, v, _ in results]
    explanation = ev.explain(game, view, move, ranked)
    notes = [note] if note else []
    if samples < ROUGH_BELOW and len(results) > 1:
        notes.append(f"a rough estimate: {plural(samples, 'sampled deal')}")
    if notes:
        explanation = f"{explanation} ({'; '.join(notes)})"
    # the chance of winning, as Laplace's rule of succession over the sampled deals: never a certain 0 or 1
    # from a few samples (one sampled win is 2/3, not 100%)
    win_chance = (win * samples + 1) / (samples + 2)
    return Decision(
        move=dict(move),
        value=round(gain, 3),
        alternatives=[{"move": dict(m), "value": round(v, 3)} for m, v in ranked],
        win_chance=round(min(1.0, max(0.0, win_chance)), 4),
        samples=samples,
        explanation=explanation,
        elapsed_ms=round((time.perf_counter() - start) * 1000.0, 2),
        level=lv.number,
    )


__all__ = ["LEVELS", "DealFn", "Decision", "Level", "choose_move", "search", "warm_up"]
