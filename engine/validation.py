"""Checks of what clients send, before any work is done on it: moves, state blobs and views.

Three checks, each pure and linear in the size of its input:

* :func:`check_move_fields`: a move's fields are those its type declares (:class:`MoveField`, per game in
  ``Game.move_fields``), with values of the declared kind; cards in canonical notation. A move that passes
  holds nothing a client invented, so it can be stored and shown to others as it is.
* :func:`state_blob_problem`: the types of a state blob's fields, from the ``State`` dataclass annotations
  (``int``, ``int | None``, ``list[list[Card]]``...); :func:`common_state_problem`: seats and counters.
* :func:`check_view`: a view (what the AI and the stateless ``best-move`` take) is an observation the game
  could give: its common fields typed and in range, options the game allows, hidden zones that fit in the
  deck, and it must survive a re-deal of its unseen cards unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.cards import CARD_NAMES, parse_card
from engine.errors import EngineError, InvalidCardError, InvalidMoveError, InvalidViewError

if TYPE_CHECKING:
    from engine.game import Game, State

#: Integers in states, views and moves are 64-bit (seeds go up to 2**62).
MAX_INT = 2**63 - 1
#: A card list in a move never holds more cards than this (the longest meld or go-down of any game is shorter).
MAX_MOVE_CARDS = 64
#: Objects in a list field of a move (e.g. the melds of a go-down).
MAX_MOVE_OBJECTS = 16

_CANONICAL = frozenset(CARD_NAMES)


# ---------------------------------------------------------------------------
# Moves


@dataclass(frozen=True)
class MoveField:
    """The kind of value one field of a move holds.

    ``card``: one card in canonical notation (``"7H"``, ``"TS"``, ``"JK"``); ``cards``: a list of them;
    ``index``: a non-negative integer; ``bool``; ``choice``: one of ``choices``; ``objects``: a list of
    objects, each with the fields of ``fields``."""

    kind: str
    choices: tuple[str, ...] = ()
    fields: tuple[tuple[str, MoveField], ...] = ()

    def check(self, value: Any, where: str) -> None:
        """Raise :class:`InvalidMoveError` (:class:`InvalidCardError` for a string that is not a card)
        unless ``value`` is of this kind; ``where`` names the field in the message."""
        if self.kind == "card":
            _check_card(value, where)
        elif self.kind == "cards":
            if not isinstance(value, list) or len(value) > MAX_MOVE_CARDS:
                raise InvalidMoveError(f'{where} must be a list of at most {MAX_MOVE_CARDS} cards, e.g. ["7H", "8H"]')
            for item in value:
                _check_card(item, where)
        elif self.kind == "index":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
                raise InvalidMoveError(f"{where} must be a non-negative integer")
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise InvalidMoveError(f"{where} must be true or false")
        elif self.kind == "choice":
            if not (isinstance(value, str) and value in self.choices):
                raise InvalidMoveError(f"{where} must be one of " + ", ".join(f'"{c}"' for c in self.choices))
        elif self.kind == "objects":
            allowed = dict(self.fields)
            if not isinstance(value, list) or not 0 < len(value) <= MAX_MOVE_OBJECTS \
                    or not all(isinstance(item, dict) for item in value):
                raise InvalidMoveError(f"{where} must be a list of 1 to {MAX_MOVE_OBJECTS} objects with the fields "
                                       + ", ".join(allowed))
            for i, item in enumerate(value):
                for name, sub in item.items():
                    spec = allowed.get(name)
                    if spec is None:
                        raise InvalidMoveError(f"{where}: item {i} has no field {_short(name)} (its fields are "
                                               f"{', '.join(allowed)})")
                    spec.check(sub, f"{where}: item {i}'s {name!r}")
        else:
            raise AssertionError(f"unknown move field kind {self.kind!r}")

    def canonical(self, value: Any) -> Any:
        """A checked ``value`` with its cards in canonical notation (a new object: nothing shared)."""
        if self.kind == "card":
            return CARD_NAMES[parse_card(value)]
        if self.kind == "cards":
            return [CARD_NAMES[parse_card(v)] for v in value]
        if self.kind == "objects":
            allowed = dict(self.fields)
            return [{k: allowed[k].canonical(v) for k, v in item.items()} for item in value]
        return value


CARD = MoveField("card")
CARDS = MoveField("cards")
INDEX = MoveField("index")
BOOL = MoveField("bool")


def choice(*choices: str) -> MoveField:
    return MoveField("choice", choices=choices)


def objects(**fields: MoveField) -> MoveField:
    return MoveField("objects", fields=tuple(fields.items()))


#: A game's moves: each move type and the fields it may have (besides ``type``).
MoveTable = Mapping[str, Mapping[str, MoveField]]


def _check_card(value: Any, where: str) -> None:
    if isinstance(value, str) and value in _CANONICAL:
        return
    if not isinstance(value, str) or len(value) > 4:
        raise InvalidMoveError(f'{where} must hold cards like "7H", not {_short(value)}')
    try:
        parse_card(value)  # "7h" and "10H" are read too; the stored move says "7H" and "TH" (canonical_move)
    except InvalidCardError as exc:
        raise InvalidCardError(f"{where}: {exc}") from None


def check_move_fields(move: Mapping[str, Any], table: MoveTable, game_name: str) -> None:
    """Raise :class:`InvalidMoveError` unless every field of ``move`` is one its type declares, holding a
    value of the declared kind. Missing fields are left to the game, which says what it needs."""
    kind = move["type"]
    fields = table.get(kind)
    if fields is None:
        known = ", ".join(table) or "none declared"
        raise InvalidMoveError(f"unknown move type {_short(kind)}; {game_name} moves are {known}")
    for name, value in move.items():
        if name == "type":
            continue
        spec = fields.get(name)
        if spec is None:
            have = ", ".join(fields) if fields else "no other field"
            raise InvalidMoveError(f"a {kind!r} move has no field {_short(name)} (it takes {have})")
        spec.check(value, f"the {name!r} field of a {kind!r} move")


def canonical_move(move: Mapping[str, Any], table: MoveTable) -> dict[str, Any]:
    """``move`` (checked by :func:`check_move_fields`) with its cards in canonical notation: what to store
    and show others."""
    fields = table[move["type"]]
    return {name: value if name == "type" else fields[name].canonical(value) for name, value in move.items()}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------------------
# State blobs: the type of each field, from its annotation


def _type_checker(annotation: str) -> Callable[[Any], bool]:
    """A predicate for JSON values of the annotated type (the vocabulary the ``State`` classes use)."""
    text = annotation.replace(" ", "")
    if text.endswith("|None"):
        inner = _type_checker(text[: -len("|None")])
        return lambda v: v is None or inner(v)
    if text.startswith("list[") and text.endswith("]"):
        item = _type_checker(text[len("list[") : -1])
        return lambda v: isinstance(v, list) and all(item(x) for x in v)
    simple: dict[str, Callable[[Any], bool]] = {
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and -MAX_INT <= v <= MAX_INT,
        "bool": lambda v: isinstance(v, bool),
        "str": lambda v: isinstance(v, str) and len(v) <= 64,
        "CardName": lambda v: isinstance(v, str) and v in _CANONICAL,
        "Card": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < len(CARD_NAMES),
        "dict[str,Any]": lambda v: isinstance(v, dict) and all(isinstance(k, str) for k in v),
    }
    if text not in simple:
        raise TypeError(f"state fields of type {annotation!r} have no JSON check: add one to engine/validation.py")
    return simple[text]


_TYPE_WORDS = {"int": ("an integer", "integers"), "bool": ("true or false", "true or false values"),
               "str": ("a short string", "short strings"), "CardName": ("a card", "cards"),
               "Card": ("a card number", "card numbers"), "dict[str, Any]": ("an object", "objects")}
_CHECKS: dict[type, list[tuple[str, str, Callable[[Any], bool]]]] = {}


def _describe(annotation: str, plural: bool = False) -> str:
    """``list[list[int]]`` → "a list of lists of integers"."""
    if annotation.endswith(" | None"):
        return _describe(annotation[: -len(" | None")], plural) + (" or nulls" if plural else " or null")
    if annotation.startswith("list[") and annotation.endswith("]"):
        return ("lists of " if plural else "a list of ") + _describe(annotation[5:-1], True)
    words = _TYPE_WORDS.get(annotation, (annotation, annotation))
    return words[1] if plural else words[0]


def _field_checks(cls: type[State]) -> list[tuple[str, str, Callable[[Any], bool]]]:
    checks = _CHECKS.get(cls)
    if checks is None:
        checks = []
        for f in dataclasses.fields(cls):
            annotation = str(f.type)
            if f.metadata.get("cards"):  # card fields: (nested lists of) card names
                annotation = "list[" * f.metadata["depth"] + "CardName" + "]" * f.metadata["depth"]
            checks.append((f.name, annotation, _type_checker(annotation)))
        _CHECKS[cls] = checks
    return checks


def state_blob_problem(cls: type[State], blob: Mapping[str, Any]) -> str | None:
    """What is wrong with the type of a field of the JSON state ``blob`` of a ``cls`` state (the first
    problem found, naming the field), or None. Card fields hold canonical card names; missing fields are
    the caller's to report."""
    for name, annotation, check in _field_checks(cls):
        if name in blob and not check(blob[name]):
            return f"state field {name!r} must be {_describe(annotation)}, not {_short(blob[name])}"
    return None


def common_state_problem(state: State) -> str | None:
    """What is out of range in the fields every state has (seats, counters), or None."""
    n = state.num_players
    if not 0 <= state.dealer < n:
        return f"dealer {state.dealer} is not a seat of {n} players"
    if state.round < 1:
        return f"round {state.round} is below 1"
    for name in ("ply", "turns_in_round", "chance", "seed"):
        if getattr(state, name) < 0:
            return f"{name} {getattr(state, name)} is negative"
    if state.winners is not None and any(not 0 <= w < n for w in state.winners):
        return f"winners {state.winners} are not all seats of {n} players"
    return None


# ---------------------------------------------------------------------------
# Views

#: The fields every view has (``Game.observation``), with their JSON types.
VIEW_FIELDS: dict[str, str] = {
    "game": "str", "seat": "int | None", "num_players": "int", "options": "dict[str, Any]", "round": "int",
    "dealer": "int", "phase": "str", "to_move": "int | None", "ply": "int", "turns_in_round": "int",
    "totals": "list[int]", "round_scores": "list[list[int]]", "winners": "list[int] | None",
    "hand": "list[str]", "hidden": "list[dict[str, Any]]",
}
_VIEW_CHECKS = {name: _type_checker(t) for name, t in VIEW_FIELDS.items() if t != "list[dict[str, Any]]"}
_ZONE_FIELDS = frozenset({"zone", "size", "seat", "known"})


def check_view(game: Game, view: Any) -> None:
    """Raise :class:`InvalidViewError` unless ``view`` is an observation ``game`` could give to a seat.

    Checked in order, each before any work that depends on it: the common fields' types; the player count
    and the options (so the deck is bounded by what the game allows); seats, counters and the hidden zones
    against the deck; then the view must come back unchanged from a re-deal of its unseen cards (a full,
    consistent state: every card exactly once, the game's own invariants)."""
    if not isinstance(view, Mapping):
        raise InvalidViewError("a view is a JSON object: the 'view' of a match, as GET /v1/matches/{id} gives it")
    if view.get("game") != game.info.id:
        raise InvalidViewError(f"the view is not a {game.info.id} view (its game is {_short(view.get('game'))})")
    for name, check in _VIEW_CHECKS.items():
        if name not in view:
            raise InvalidViewError(f"the view has no {name!r} field")
        if not check(view[name]):
            raise InvalidViewError(f"view field {name!r} must be {_describe(VIEW_FIELDS[name])}, "
                                   f"not {_short(view[name])}")
    n = view["num_players"]
    try:
        game.check_players(n)
        options = game.check_options(view["options"], n)
    except EngineError as exc:
        raise InvalidViewError(f"the view's {exc}") from None
    if options != view["options"]:
        missing = sorted(set(options) - set(view["options"]))
        raise InvalidViewError(f"the view's options must list every option of the game (missing: {missing})")
    for name in ("seat", "to_move", "dealer"):
        value = view[name]
        if value is not None and not 0 <= value < n:
            raise InvalidViewError(f"view field {name!r} is {value}, not a seat of {n} players")
    for name in ("ply", "turns_in_round", "round"):
        if view[name] < (1 if name == "round" else 0):
            raise InvalidViewError(f"view field {name!r} is {view[name]}, below its least value")
    if len(view["totals"]) != n or any(len(r) != n for r in view["round_scores"]):
        raise InvalidViewError(f"the view's scores must have one entry per seat ({n})")
    deck_size = len(game.deck(n, options))
    _check_zones(view["hidden"], n, deck_size)
    if len(view["hand"]) > deck_size:
        raise InvalidViewError(f"the view's hand holds {len(view['hand'])} cards; the deck has {deck_size}")
    seat = view["seat"]
    try:
        state = game.determinize(dict(view), random.Random(0))
        problem = state_blob_problem(type(state), game.to_json(state))
        if problem:
            raise InvalidViewError(f"the view does not make a valid state: {problem}")
        game.check_state(state)
        again = game.observation(state, seat)
    except InvalidViewError:
        raise
    except EngineError as exc:
        raise InvalidViewError(f"the view is not consistent: {exc}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        what = f"the view has no {exc.args[0]!r} field" if isinstance(exc, KeyError) and exc.args else \
            f"the view is malformed ({exc.__class__.__name__}: {exc})"
        raise InvalidViewError(what) from None
    if json.dumps(again, sort_keys=True) != json.dumps(view, sort_keys=True):  # 1 == 1.0 == True, but not as JSON
        changed = sorted(k for k in set(again) | set(view) if json.dumps(again.get(k)) != json.dumps(view.get(k))
                         or (k in again) != (k in view))
        raise InvalidViewError(f"the view is not an observation the engine would give: field(s) "
                               f"{', '.join(map(repr, changed[:5]))} differ from what the rest of it implies")


def _check_zones(zones: list[Any], n: int, deck_size: int) -> None:
    if len(zones) > n + 4:
        raise InvalidViewError(f"the view lists {len(zones)} hidden zones; a game of {n} has at most {n + 4}")
    total = 0
    for i, zone in enumerate(zones):
        if not isinstance(zone, dict) or not isinstance(zone.get("zone"), str) or set(zone) - _ZONE_FIELDS:
            raise InvalidViewError(f"hidden zone {i} must be an object with 'zone', 'size' and optionally "
                                   "'seat' and 'known'")
        size = zone.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= deck_size:
            raise InvalidViewError(f"hidden zone {i}'s size must be an integer from 0 to {deck_size}")
        seat = zone.get("seat")
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n):
            raise InvalidViewError(f"hidden zone {i}'s seat must be a seat of {n} players")
        known = zone.get("known", [])
        if not isinstance(known, list) or len(known) > size or not all(isinstance(c, str) for c in known):
            raise InvalidViewError(f"hidden zone {i}'s known cards must be a list of at most {size} cards")
        total += size
    if total > deck_size:
        raise InvalidViewError(f"the hidden zones hold {total} cards; the deck has {deck_size}")
