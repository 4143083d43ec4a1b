"""The one interface every game implements, and the machinery they share.

Anatomy (after OpenSpiel's games): each game module under ``engine/games/``
declares a :class:`GameInfo` (id, players, options), a :class:`State`
subclass (plain data: lists of ints and cards), and a :class:`Game` subclass
with a handful of hooks; then registers an instance in ``engine.registry``.

* **Moves** are small JSON objects with a ``type`` (``{"type": "discard",
  "card": "7H"}``), exactly what clients post and what :meth:`Game.legal_moves`
  lists. Cards inside moves are in canonical notation.
* **apply** never mutates its input: it checks the move, copies the state and
  plays the move on the copy, returning ``(new_state, public_events)``.
  A rejected move raises an :class:`~engine.errors.EngineError` whose message
  names the rule, and the input state is untouched.
* **Chance** (shuffles, first dealer) comes only from :func:`chance_rng`,
  which derives a fresh ``random.Random`` from the match seed and a counter
  kept in the state; replaying the same moves from the same seed gives the
  same state.
* **Hidden information** is explicit: :meth:`Game.observation` is all a seat
  may know, including ``hidden``, the zones whose cards it cannot see (other
  hands, the stock…) with their sizes and the cards in them it does know.
  :meth:`Game.determinize` re-deals the unseen cards into those zones, which is
  how the AI samples worlds without ever reading a state.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from engine.cards import CARD_NAMES, Card, parse_card, parse_cards
from engine.errors import (
    GameOverError,
    InvalidMoveError,
    InvalidOptionError,
    InvalidSetupError,
    InvalidStateError,
    NotYourTurnError,
)
from engine.validation import (
    MoveTable,
    canonical_move,
    check_move_fields,
    check_view,
    common_state_problem,
    state_blob_problem,
)

STATE_FORMAT = 1

Move = dict[str, Any]
Event = dict[str, Any]
Observation = dict[str, Any]


# ---------------------------------------------------------------------------
# Options


@dataclass(frozen=True)
class OptionSpec:
    """One match option: name, type, default, allowed values and a one-line description."""

    name: str
    type: str  # "int" | "bool" | "enum"
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: Any) -> Any:
        """The value if it is allowed, else :class:`InvalidOptionError` naming the option."""
        if self.type == "bool":
            if not isinstance(value, bool):
                raise InvalidOptionError(self.name, f"must be true or false, not {value!r}")
            return value
        if self.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidOptionError(self.name, f"must be an integer, not {value!r}")
            if self.choices is not None and value not in self.choices:
                allowed = ", ".join(map(str, self.choices))
                raise InvalidOptionError(self.name, f"must be one of {allowed}, not {value}")
            if self.minimum is not None and value < self.minimum:
                raise InvalidOptionError(self.name, f"must be at least {self.minimum}, not {value}")
            if self.maximum is not None and value > self.maximum:
                raise InvalidOptionError(self.name, f"must be at most {self.maximum}, not {value}")
            return value
        if self.type == "enum":
            assert self.choices is not None
            if value not in self.choices:
                allowed = ", ".join(map(str, self.choices))
                raise InvalidOptionError(self.name, f"must be one of {allowed}, not {value!r}")
            return value
        raise AssertionError(f"unknown option type {self.type}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "description": self.description,
        }
        if self.choices is not None:
            out["choices"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out


MAX_TURNS_OPTION = OptionSpec(
    "max_turns_per_round",
    "int",
    500,
    "A safety limit: a round that reaches this many turns ends and is scored as it stands.",
    minimum=10,
    maximum=10_000,
)


@dataclass(frozen=True)
class GameInfo:
    """The declarative record of a game."""

    id: str
    name: str
    min_players: int
    max_players: int
    options: tuple[OptionSpec, ...]
    summary: str
    rules_section: str
    lower_score_wins: bool = True

    @property
    def players_text(self) -> str:
        """``2 players``, ``2-8 players``."""
        low, high = self.min_players, self.max_players
        return f"{low} players" if low == high else f"{low}-{high} players"

    @property
    def rules(self) -> str:
        """The rules written for players, in Markdown: ``engine/rules/<id>.md`` (every rule, option and
        decision of the game, in plain words)."""
        return rules_text(self.id)

    def option(self, name: str) -> OptionSpec:
        for spec in self.options:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "lower_score_wins": self.lower_score_wins,
            "options": [o.to_json() for o in self.options],
        }


@functools.cache
def rules_text(game_id: str) -> str:
    """The players' rules of a game (``engine/rules/<game_id>.md``, shipped with the package)."""
    return importlib.resources.files("engine").joinpath("rules").joinpath(f"{game_id}.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# State: plain data with declared copy depth and card fields


def card_field(depth: int = 1, default: Any = None) -> Any:
    """A field holding cards, nested ``depth`` lists deep (1: a pile, 2: one pile per seat).

    Cards are ints in memory and canonical strings in JSON (a state blob is checked for
    exactly that: engine/validation.py).
    """
    if default is None:
        return field(default_factory=list, metadata={"depth": depth, "cards": True})
    return field(default=default, metadata={"depth": depth, "cards": True})


def list_field(depth: int = 1) -> Any:
    """A field holding JSON values (ints, strings…) nested ``depth`` lists deep."""
    return field(default_factory=list, metadata={"depth": depth, "cards": False})


def _cards_to_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_cards_to_json(v) for v in value]
    if value is None:
        return None
    return CARD_NAMES[value]


def _cards_from_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_cards_from_json(v) for v in value]
    if value is None:
        return None
    return parse_card(value)


def _copy_expr(expr: str, depth: int) -> str:
    if depth <= 0:
        return expr
    if depth == 1:
        return f"{expr}[:]"
    return f"[{_copy_expr('x' + str(depth), depth - 1)} for x{depth} in {expr}]"


@dataclass(eq=True)
class State:
    """Fields every game's state has. Subclasses add their own (all plain data).

    ``to_move`` is the seat whose decision it is, or ``None`` once the game is over.
    ``round_scores[r][seat]`` itemizes the points of each finished round;
    ``totals`` adds them up. ``winners`` is set when the game ends.
    """

    num_players: int = 2
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    chance: int = 0
    round: int = 1
    dealer: int = 0
    to_move: int | None = 0
    phase: str = ""
    ply: int = 0
    turns_in_round: int = 0
    totals: list[int] = list_field(1)
    round_scores: list[list[int]] = list_field(2)
    winners: list[int] | None = None

    _clone: ClassVar[Callable[[Any], Any] | None]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._clone = None  # built lazily once the dataclass exists

    @property
    def is_over(self) -> bool:
        return self.winners is not None

    def clone(self) -> Any:
        """A copy sharing nothing mutable with ``self`` (fast: generated per class)."""
        fn = type(self).__dict__.get("_clone")
        if fn is None:
            fn = _make_clone(type(self))
            type(self)._clone = fn
        return fn(self)


def _make_clone(cls: type) -> Callable[[Any], Any]:
    lines = ["def clone(self):", "    new = object.__new__(cls)"]
    for f in dataclasses.fields(cls):
        depth = f.metadata.get("depth", 0)
        if f.name == "winners":
            depth = 1
        expr = f"self.{f.name}"
        if depth:
            lines.append(f"    v = {expr}")
            lines.append(f"    new.{f.name} = None if v is None else {_copy_expr('v', depth)}")
        else:
            lines.append(f"    new.{f.name} = {expr}")
    lines.append("    return new")
    namespace: dict[str, Any] = {"cls": cls}
    exec("\n".join(lines), namespace)
    return namespace["clone"]


S = TypeVar("S", bound=State)


def state_to_json(game_id: str, state: State) -> dict[str, Any]:
    """The versioned JSON form of a state (exact: :func:`state_from_json` gives it back equal)."""
    out: dict[str, Any] = {"format": STATE_FORMAT, "game": game_id}
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        out[f.name] = _cards_to_json(value) if f.metadata.get("cards") else value
    return out


def state_from_json(cls: type[S], data: Mapping[str, Any]) -> S:
    if not isinstance(data, Mapping):
        raise InvalidStateError("a state must be a JSON object")
    if data.get("format") != STATE_FORMAT:
        raise InvalidStateError(f"unsupported state format {data.get('format')!r} (this engine reads {STATE_FORMAT})")
    problem = state_blob_problem(cls, data)
    if problem:
        raise InvalidStateError(problem)
    kwargs: dict[str, Any] = {}
    try:
        for f in dataclasses.fields(cls):
            if f.name not in data:
                raise InvalidStateError(f"state field {f.name!r} is missing")
            value = data[f.name]
            if f.metadata.get("cards"):
                value = _cards_from_json(value)
            elif isinstance(value, list):
                value = _deep_list(value)
            elif isinstance(value, dict):
                value = dict(value)
            kwargs[f.name] = value
    except InvalidStateError:
        raise
    except Exception as exc:  # a bad card or a wrong shape
        raise InvalidStateError(f"state does not parse: {exc}") from exc
    return cls(**kwargs)


def _deep_list(value: list[Any]) -> list[Any]:
    return [_deep_list(v) if isinstance(v, list) else v for v in value]


# ---------------------------------------------------------------------------
# Chance


def chance_rng(state: State) -> random.Random:
    """A fresh RNG for the next chance event of ``state`` (advances ``state.chance``).

    Derived from the seed and a counter, so a state needs to store two ints,
    and a match replays exactly from its seed and move list (RULES.md C8).
    """
    rng = random.Random(f"cardtable/{state.seed}/{state.chance}")
    state.chance += 1
    return rng


# ---------------------------------------------------------------------------
# The game interface


class Game:
    """Base of the five games. Subclasses set ``info`` and ``state_class`` and fill in the hooks."""

    info: ClassVar[GameInfo]
    state_class: ClassVar[type[State]]
    # True: ``apply`` makes a shallow copy and ``_play`` replaces every list it changes instead of
    # changing it in place (copy on write), so states share their unchanged lists. States are
    # values either way: change them only through ``apply``, or ``clone()`` one first.
    copy_on_write: ClassVar[bool] = False
    #: Each move type and the fields it may have besides ``type`` (checked by ``apply`` before the game's own
    #: checks: a move with any other field, or a value of another kind, is refused).
    move_fields: ClassVar[MoveTable] = {}

    # -- options and setup -------------------------------------------------

    def check_options(self, options: Mapping[str, Any] | None, num_players: int | None = None) -> dict[str, Any]:
        """The full option set (defaults filled in); unknown names or bad values raise, naming the option."""
        options = dict(options or {})
        out: dict[str, Any] = {}
        known = {o.name for o in self.info.options}
        for name in options:
            if name not in known:
                listed = ", ".join(sorted(known))
                raise InvalidOptionError(name, f"is not an option of {self.info.name}; options are: {listed}")
        for spec in self.info.options:
            out[spec.name] = spec.check(options[spec.name]) if spec.name in options else spec.default
        if num_players is not None:
            self._check_option_combination(out, num_players)
        return out

    def _check_option_combination(self, options: dict[str, Any], num_players: int) -> None:
        """Hook: reject combinations of options and player count that cannot be played."""

    def check_players(self, num_players: Any) -> int:
        lo, hi = self.info.min_players, self.info.max_players
        if isinstance(num_players, bool) or not isinstance(num_players, int) or not lo <= num_players <= hi:
            raise InvalidOptionError("players", f"{self.info.name} is for {lo}-{hi} players, not {num_players!r}")
        return num_players

    def new_match(self, num_players: int, options: Mapping[str, Any] | None = None, seed: int = 0) -> State:
        """A new match, dealt from ``seed``."""
        num_players = self.check_players(num_players)
        opts = self.check_options(options, num_players)
        state = self.state_class(num_players=num_players, options=opts, seed=seed)
        state.totals = [0] * num_players
        self._start_game(state)
        return state

    def from_setup(
        self,
        num_players: int,
        setup: Mapping[str, Any],
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
    ) -> State:
        """A match from an explicit position (RULES.md C8): hands, stock (top first), discard pile
        (bottom first), dealer, round, scores. What the setup leaves out is dealt from the seed."""
        num_players = self.check_players(num_players)
        opts = self.check_options(options, num_players)
        if not isinstance(setup, Mapping):
            raise InvalidSetupError("setup must be an object")
        state = self.state_class(num_players=num_players, options=opts, seed=seed)
        state.totals = [0] * num_players
        self._setup(state, setup)
        self._check_card_conservation(state)
        return state

    def _start_game(self, state: State) -> None:
        raise NotImplementedError

    def _setup(self, state: State, setup: Mapping[str, Any]) -> None:
        raise InvalidSetupError(f"{self.info.name} does not support explicit positions yet")

    # -- the deck -----------------------------------------------------------

    def deck(self, num_players: int, options: Mapping[str, Any]) -> list[Card]:
        """Every card of a match of this size, as a multiset (one round's deck)."""
        raise NotImplementedError

    def cards_in_play(self, state: State) -> list[Card]:
        """Every card of the state, wherever it is (hands, piles, table...): the same multiset as the deck."""
        raise NotImplementedError

    def _sorted_deck(self, num_players: int, options: Mapping[str, Any]) -> list[Card]:
        key = (num_players, tuple(sorted(options.items())))
        cache = self.__dict__.setdefault("_deck_cache", {})
        deck = cache.get(key)
        if deck is None:
            deck = cache[key] = sorted(self.deck(num_players, options))
        return deck

    def _check_card_conservation(self, state: State) -> None:
        if sorted(self.cards_in_play(state)) == self._sorted_deck(state.num_players, state.options):
            return
        have = Counter(self.cards_in_play(state))
        want = Counter(self.deck(state.num_players, state.options))
        if have != want:
            extra = sorted((have - want).elements())
            missing = sorted((want - have).elements())
            parts = []
            if extra:
                parts.append("more copies than the deck holds of " + " ".join(CARD_NAMES[c] for c in extra))
            if missing:
                parts.append("missing " + " ".join(CARD_NAMES[c] for c in missing))
            raise InvalidSetupError("the position does not account for every card exactly once: " + "; ".join(parts))

    # -- play ---------------------------------------------------------------

    def current_player(self, state: State) -> int | None:
        return state.to_move

    def legal_moves(self, state: State) -> list[Move]:
        """Every legal move of the seat to move (empty once the game is over)."""
        if state.is_over:
            return []
        return self._legal_moves(state)

    def _legal_moves(self, state: State) -> list[Move]:
        raise NotImplementedError

    def apply(
        self, state: State, move: Mapping[str, Any], *, seat: int | None = None, check: bool = True
    ) -> tuple[State, list[Event]]:
        """Play ``move`` for the seat to move (or for ``seat``, which must be that seat).

        Returns the new state and the public events. ``check=False`` skips the
        legality check for a move taken from :meth:`legal_moves` (search code).
        """
        if state.winners is not None:
            raise GameOverError("the game is over: no more moves")
        if seat is not None and seat != state.to_move:
            raise NotYourTurnError(f"it is seat {state.to_move}'s decision, not seat {seat}'s")
        if (type(move) is not dict and not isinstance(move, Mapping)) or not isinstance(move.get("type"), str):
            raise InvalidMoveError('a move is a JSON object with a "type", e.g. {"type": "draw", "source": "stock"}')
        if check:
            check_move_fields(move, self.move_fields, self.info.name)
        action = self._check_move(state, move) if check else self._read_move(state, move)
        if self.copy_on_write:
            new = object.__new__(type(state))
            new.__dict__ = state.__dict__.copy()
        else:
            new = state.clone()
        events = self._play(new, action)
        new.ply += 1
        return new, events

    def canonical_move(self, move: Mapping[str, Any]) -> Move:
        """A move that ``apply`` took, as it is stored and shown to others: only its declared fields, cards in
        canonical notation (``"7h"`` → ``"7H"``)."""
        return canonical_move(move, self.move_fields)

    def _check_move(self, state: State, move: Mapping[str, Any]) -> Any:
        """Parse and check a move; raise InvalidMoveError / IllegalMoveError naming the rule."""
        raise NotImplementedError

    def _read_move(self, state: State, move: Mapping[str, Any]) -> Any:
        """Parse a move known to be legal (default: the full check)."""
        return self._check_move(state, move)

    def _play(self, state: State, action: Any) -> list[Event]:
        """Play a checked action on ``state`` in place; return the public events."""
        raise NotImplementedError

    def is_over(self, state: State) -> bool:
        return state.is_over

    def scores(self, state: State) -> dict[str, Any]:
        """Totals, itemized round scores, and the winners once the game is over."""
        return {
            "totals": list(state.totals),
            "rounds": [list(r) for r in state.round_scores],
            "winners": None if state.winners is None else list(state.winners),
        }

    def score_bounds(self, state: State) -> tuple[int, int]:
        """Bounds that every total stays within (checked by the conformance suite)."""
        raise NotImplementedError

    # -- hidden information -------------------------------------------------

    def observation(self, state: State, seat: int | None) -> Observation:
        """All that ``seat`` may know (``None``: a spectator), as JSON.

        Never contains another seat's hidden cards, the stock order or the seed.
        Common keys: game, seat, num_players, options, round, dealer, phase,
        to_move, ply, hand (own cards), hand_sizes, totals, round_scores,
        winners, hidden; each game adds its public table.
        """
        obs: Observation = {
            "game": self.info.id,
            "seat": seat,
            "num_players": state.num_players,
            "options": dict(state.options),
            "round": state.round,
            "dealer": state.dealer,
            "phase": state.phase,
            "to_move": state.to_move,
            "ply": state.ply,
            "turns_in_round": state.turns_in_round,
            "totals": list(state.totals),
            "round_scores": [list(r) for r in state.round_scores],
            "winners": None if state.winners is None else list(state.winners),
        }
        self._observe(state, seat, obs)
        return obs

    def _observe(self, state: State, seat: int | None, obs: Observation) -> None:
        """Hook: add ``hand``, ``hand_sizes``, the public table and ``hidden`` zones."""
        raise NotImplementedError

    def visible_cards(self, obs: Observation) -> list[Card]:
        """Every card the observer can see or locate, as a multiset (own hand, piles, table, known cards)."""
        raise NotImplementedError

    def unseen_cards(self, obs: Observation) -> list[Card]:
        """The multiset of cards the observer cannot locate: the deck minus :meth:`visible_cards`."""
        rest = Counter(self.deck(obs["num_players"], obs["options"]))
        rest.subtract(self.visible_cards(obs))
        if any(n < 0 for n in rest.values()):
            raise InvalidStateError("the view shows more copies of a card than the deck holds")
        return sorted(rest.elements())

    def determinize(
        self,
        obs: Observation,
        rng: random.Random,
        deal: Callable[[list[Card], list[dict[str, Any]], random.Random], list[list[Card]]] | None = None,
    ) -> State:
        """A full state consistent with ``obs``: the unseen cards re-dealt into the hidden zones.

        ``deal(unseen, zones, rng)`` may replace the uniform deal (the AI's
        belief model); it returns, for each zone, its unknown cards.
        """
        unseen = self.unseen_cards(obs)
        zones = obs["hidden"]
        fills = uniform_deal(unseen, zones, rng) if deal is None else deal(unseen, zones, rng)
        contents = [[parse_card(c) for c in z.get("known", ())] + fill for z, fill in zip(zones, fills, strict=True)]
        return self._state_from_view(obs, contents, rng.getrandbits(62))

    def _state_from_view(self, obs: Observation, zone_cards: list[list[Card]], seed: int) -> State:
        """Hook: rebuild a state from a view and the full contents of each hidden zone."""
        raise NotImplementedError

    # -- serialization ------------------------------------------------------

    def to_json(self, state: State) -> dict[str, Any]:
        return state_to_json(self.info.id, state)

    def from_json(self, data: Mapping[str, Any]) -> State:
        if not isinstance(data, Mapping) or data.get("game") != self.info.id:
            raise InvalidStateError(f"not a {self.info.id} state")
        state = state_from_json(self.state_class, data)
        try:
            self.check_players(state.num_players)
            state.options = self.check_options(state.options, state.num_players)
        except InvalidOptionError as exc:
            raise InvalidStateError(str(exc)) from exc
        self.check_state(state)
        return state

    def check_state(self, state: State) -> None:
        """Raise InvalidStateError unless ``state`` is consistent: every card exactly once, seats,
        scores and the game's own invariants (hand sizes...). Run on every blob a client sends."""
        try:
            self._check_card_conservation(state)
        except InvalidSetupError as exc:
            raise InvalidStateError(str(exc)) from exc
        n = state.num_players
        if len(state.totals) != n or any(len(r) != n for r in state.round_scores):
            raise InvalidStateError(f"scores must have one entry per seat ({n})")
        if state.is_over != (state.to_move is None):
            raise InvalidStateError("to_move must be null exactly when the game is over")
        if state.to_move is not None and not 0 <= state.to_move < n:
            raise InvalidStateError(f"to_move {state.to_move} is not a seat")
        problem = common_state_problem(state)
        if problem:
            raise InvalidStateError(problem)
        lo, hi = self.score_bounds(state)
        if any(not lo <= t <= hi for t in state.totals):
            raise InvalidStateError(f"totals {state.totals} are outside the possible range {lo}..{hi}")
        problem = self._invariant_problem(state)
        if problem:
            raise InvalidStateError(problem)

    def check_view(self, view: Any) -> None:
        """Raise InvalidViewError unless ``view`` is an observation this game could give to a seat (see
        :func:`engine.validation.check_view`). Run on every view a client sends, before the AI sees it."""
        check_view(self, view)

    def _invariant_problem(self, state: State) -> str | None:
        """Hook: a description of what is inconsistent in ``state`` (hand sizes, phase...), or None."""
        return None

    def replay(self, initial: State, moves: Iterable[Mapping[str, Any]]) -> State:
        """The state after playing ``moves`` from ``initial`` (deterministic, seeded chance)."""
        state = initial
        for move in moves:
            state, _ = self.apply(state, move)
        return state


def view_state_fields(obs: Observation, seed: int) -> dict[str, Any]:
    """The fields every :class:`State` has, rebuilt from a view (for ``_state_from_view``).

    The chance counter restarts at 0 under the new ``seed``: a re-dealt world's future
    shuffles are its own.
    """
    return {
        "num_players": obs["num_players"],
        "options": dict(obs["options"]),
        "seed": seed,
        "chance": 0,
        "round": obs["round"],
        "dealer": obs["dealer"],
        "to_move": obs["to_move"],
        "phase": obs["phase"],
        "ply": obs["ply"],
        "turns_in_round": obs["turns_in_round"],
        "totals": list(obs["totals"]),
        "round_scores": [list(r) for r in obs["round_scores"]],
        "winners": None if obs["winners"] is None else list(obs["winners"]),
    }


def hands_from_view(
    obs: Observation, zone_cards: list[list[Card]], key: Callable[[Card], Any] | None = None
) -> tuple[list[list[Card]], dict[str, list[Card]]]:
    """For ``_state_from_view``: every seat's hand (the viewer's own from ``obs["hand"]``, the others'
    from their hidden zones, sorted by ``key``) and the other hidden zones' cards by zone name, in
    the order dealt (a re-dealt stock's order is its random order)."""
    hands: list[list[Card]] = [[] for _ in range(obs["num_players"])]
    others: dict[str, list[Card]] = {}
    for zone, cards in zip(obs["hidden"], zone_cards, strict=True):
        if zone["zone"] == "hand":
            hands[zone["seat"]] = sorted(cards, key=key)
        else:
            others[zone["zone"]] = list(cards)
    if obs["seat"] is not None:
        own = parse_cards(obs["hand"])
        hands[obs["seat"]] = own if key is None else sorted(own, key=key)
    return hands, others


def uniform_deal(unseen: Sequence[Card], zones: Sequence[Mapping[str, Any]], rng: random.Random) -> list[list[Card]]:
    """Deal ``unseen`` uniformly at random into the zones' unknown slots."""
    cards = list(unseen)
    rng.shuffle(cards)
    fills: list[list[Card]] = []
    at = 0
    for zone in zones:
        n = zone["size"] - len(zone.get("known", ()))
        fills.append(cards[at : at + n])
        at += n
    if at != len(cards):
        raise InvalidStateError(f"the hidden zones hold {at} unknown cards but {len(cards)} are unseen")
    return fills


def hidden_zone(zone: str, size: int, seat: int | None = None, known: Iterable[Card] = ()) -> dict[str, Any]:
    """One entry of an observation's ``hidden`` list."""
    out: dict[str, Any] = {"zone": zone, "size": size}
    if seat is not None:
        out["seat"] = seat
    known = list(known)
    if known:
        out["known"] = [CARD_NAMES[c] for c in sorted(known)]
    return out


def move_key(move: Mapping[str, Any]) -> tuple[Any, ...]:
    """A hashable key of a move (order of fields ignored)."""
    return tuple(sorted((k, _freeze(v)) for k, v in move.items()))


def _freeze(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


def require_field(move: Mapping[str, Any], name: str, kind: type | tuple[type, ...], example: str) -> Any:
    """A move's field, or an InvalidMoveError saying what is missing."""
    if name not in move:
        raise InvalidMoveError(f'a {move["type"]!r} move needs a {name!r} field, e.g. {example}')
    value = move[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise InvalidMoveError(f'the {name!r} field of a {move["type"]!r} move is malformed, e.g. {example}')
    return value
