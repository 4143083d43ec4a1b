"""What the search asks of a game: a leaf evaluation, a model policy, a belief model and words.

The search (:mod:`ai.search`) never looks at which game it plays; everything it
needs to know about a game comes through an :class:`Evaluator` registered
under the game's id in :data:`EVALUATORS`. A game without one still gets legal
play from :class:`Evaluator` itself (leaf value from the round scores only, a
uniform model policy), so a newly registered game is playable at once.

Conventions every evaluator follows:

* A **leaf** is a :class:`Leaf`: ``value`` is the expected round margin in
  points *from the seat's side* (positive is good: for a lower-score-wins game,
  the others' expected round score minus the seat's, averaged over the others;
  for a higher-score-wins game the reverse), and ``win`` the seat's estimated
  chance (0..1) of winning the round.
* Leaves are computed on sampled worlds (states re-dealt from the seat's view
  by :meth:`engine.game.Game.determinize`), never on the real state.
* The **policy** is the cheap model of how a seat plays: used for the other
  seats, and for the searching seat's own later decisions when the search does
  not branch on them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.cards import Card
from engine.game import Game, Move, Observation, State

DealFn = Callable[[list[Card], list[dict[str, Any]], random.Random], list[list[Card]]]


@dataclass(frozen=True)
class Leaf:
    """An evaluated position: expected round margin (points, the seat's side) and round-win chance."""

    value: float
    win: float


def win_chance_from_margin(margin: float, scale: float) -> float:
    """A logistic guess of the chance to win the round from an expected margin (``scale`` points ~ 73%)."""
    x = max(-30.0, min(30.0, margin / scale))
    return 1.0 / (1.0 + math.exp(-x))


class Evaluator:
    """The generic fallback, and the base of the per-game evaluators."""

    #: orbits of look-ahead added to (or taken from) the level's, for this game: measured per game with
    #: bench/ai_strength.py (a short race like Less Than Three gains from playing worlds out; in the rummy
    #: games and Least Score the model of the other seats' replies costs more than it tells)
    orbit_shift: int = 0
    #: the level's worlds are multiplied by this for this game (a game whose worlds are cheap can afford more)
    sample_scale: float = 1.0
    #: points of margin that make a round about 3:1 in the seat's favour (for :func:`win_chance_from_margin`)
    margin_scale: float = 10.0
    #: the hidden zone (a view's ``hidden`` entry's ``zone``) that the seat's root move may draw the top
    #: card of, when :meth:`draws_now`; its fill's last card is its top (every game stores its stock
    #: top-last). The search then makes that card a chance node over every unseen card (see ai.search).
    draw_zone: str | None = None

    def for_level(self, level: int) -> Evaluator:
        """The evaluator a level plays with (default: this one). A game whose leaf, not its sampling, decides
        its play gives its lower levels a plainer leaf, so that each level plays better than the one below."""
        return self

    def round_seats(self, state: State, seat: int, round_index: int) -> list[int]:
        """The seats a finished round is judged among (default: every seat; ``seat`` is always one)."""
        return list(range(len(state.round_scores[round_index])))

    def round_result(self, game: Game, state: State, seat: int, round_index: int) -> Leaf:
        """The exact leaf of a finished round (``state.round_scores[round_index]`` exists): the seat's margin
        over the mean of the others of :meth:`round_seats`, and its share of the best score among them."""
        scores = state.round_scores[round_index]
        seats = self.round_seats(state, seat, round_index)
        others = [scores[i] for i in seats if i != seat]
        mean_other = sum(others) / len(others) if others else 0.0
        mine = scores[seat]
        counted = [scores[i] for i in seats]
        if game.info.lower_score_wins:
            margin = mean_other - mine
            best = min(counted)
        else:
            margin = mine - mean_other
            best = max(counted)
        win = 0.0 if mine != best else 1.0 / counted.count(best)
        return Leaf(margin, win)

    def leaf(self, game: Game, state: State, seat: int) -> Leaf:
        """The value of an unfinished position for ``seat`` (the fallback knows nothing: even)."""
        return Leaf(0.0, 1.0 / state.num_players)

    @property
    def solves(self) -> bool:
        """Whether :meth:`solve` may answer: the search asks it at every ply of a world only then."""
        return False

    def solve(self, game: Game, state: State, seat: int) -> Leaf | None:
        """The exact value of the rest of the round from ``state`` in this sampled world (every hand known),
        when the game can afford to solve it there; None to play the world on (default: never)."""
        return None

    def policy(self, game: Game, state: State, rng: random.Random) -> Move:
        """The model move of the seat to move (the fallback: uniform)."""
        return rng.choice(game.legal_moves(state))

    def can_maximise(self, game: Game, state: State) -> bool:
        """Whether the seat may pick its move in ``state`` by the best leaf of *this* sampled world.

        True when the decision's outcome reveals nothing hidden before the seat sees it (a discard after
        a draw); False when a move takes an unseen card (a pick from the deck): maximising there would
        let the seat choose knowing the sampled card, so the model policy decides instead.
        """
        return True

    def turn_owner(self, state: State) -> int | None:
        """The seat whose turn it is (default: the seat to move). A game with moves out of turn (contract
        rummy's buys) names the seat whose turn they interrupt: the search's orbits count turns, not moves."""
        return state.to_move

    def ends_round(self, game: Game, state: State, move: Move) -> bool:
        """Whether ``move`` ends the round for the seat to move (go out, knock, declare): the search
        evaluates such moves first and never cuts them before sampling."""
        return move.get("type") in ("go_out", "declare") or bool(move.get("knock"))

    def own_candidates(self, game: Game, state: State, moves: list[Move]) -> list[Move]:
        """The moves worth a leaf when the seat maximises inside the search (default: all of them)."""
        return moves

    def draws_now(self, game: Game, view: Observation) -> bool:
        """Whether the seat of ``view`` is about to choose a draw that may take :attr:`draw_zone`'s top card."""
        return False

    def deal(self, game: Game, view: Observation) -> DealFn | None:
        """The belief model for re-dealing the unseen cards of ``view`` (None: uniform)."""
        return None

    def cache_entries(self) -> int:
        """Entries held by this evaluator's caches (each is bounded: see bench/ai_memory.py)."""
        return 0

    def explain(self, game: Game, view: Observation, move: Move, ranked: list[tuple[Move, float]]) -> str:
        """One sentence saying why ``move`` was chosen (``ranked``: every searched move, best first)."""
        return f"plays {describe_move(move)}, the best of {len(ranked)} moves by expected round margin"


def plural(n: int | float, noun: str) -> str:
    """``1 card``, ``2 cards``, ``0 cards`` (``noun`` takes an s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def describe_move(move: Move) -> str:
    """A short human description of a move dict ("discard 7H", "draw from the stock")."""
    parts = [str(move.get("type", "move")).replace("_", " ")]
    for key, value in move.items():
        if key == "type":
            continue
        if isinstance(value, list):
            text = " ".join(str(v) if not isinstance(v, list) else " ".join(map(str, v)) for v in value)
        else:
            text = str(value)
        parts.append(f"{key} {text}" if key not in ("card", "cards") else text)
    return " ".join(parts)


EVALUATORS: dict[str, Evaluator] = {}
_FALLBACK = Evaluator()


def register_evaluator(game_id: str, evaluator: Evaluator) -> Evaluator:
    EVALUATORS[game_id] = evaluator
    return evaluator


def cache_entries() -> dict[str, int]:
    """Entries held by each game's evaluator caches now, by game id."""
    import ai.evaluators  # noqa: F401

    return {game_id: ev.cache_entries() for game_id, ev in EVALUATORS.items()}


def evaluator_for(game: Game) -> Evaluator:
    """The game's evaluator (loaded on first use), or the generic fallback."""
    import ai.evaluators  # noqa: F401  (each module registers its evaluators on import)

    return EVALUATORS.get(game.info.id, _FALLBACK)
