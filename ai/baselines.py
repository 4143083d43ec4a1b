"""Baseline players for every game, playing from a seat's view only: ``random``, ``greedy`` and ``expert``.

    player(kind, game) -> fn                 # a fresh player for one seat of one game: fn(game, view, rng) -> move
    greedy_move(game, view, rng) -> move     # a legal move for the view's seat, from the view only
    random_move(game, view, rng) -> move     # a uniformly random legal move

The expert (:mod:`ai.experts`, one module per game family) plays as a strong human would, with a memory of the
game where it helps; it is described there. Greedy, below, looks at its own move's immediate effect only.

They never look ahead and never model the opponents:

* **rummy** (Three Thirteen, Threezies): go out when possible; take the top
  discard only if it lowers the hand's best deadwood; discard the card that
  leaves the least deadwood (ties: the highest card). "Best immediate deadwood".
* **Least Score**: throw the legal group worth the most points; pick the
  cheapest floor card if it is below an average card, else the deck; declare
  with 6 points or fewer. "Lowest total".
* **Less Than Three**: lead the meld that sheds the most cards (ties: the
  highest); answer with the highest answer (the hardest to beat), else sweep
  if possible, else pass; knock whenever the play leaves fewer cards than the
  opponent holds. "Highest beatable answer".
* **Contract rummy**: go down as soon as possible; lay off everything that
  fits; take the discard only if it joins a partial contract meld in hand;
  discard the card that fits worst (highest points among cards with the
  fewest partners); never buy.

Legal moves come from a re-deal of the view (``game.determinize``), as any
client would list them; the baselines read only the view.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from engine.cards import CARD_NAMES, parse_card, parse_cards
from engine.contracts.table import is_wild
from engine.game import Game, Move, Observation
from engine.rummy import rummy_rounds

Baseline = Callable[[Game, Observation, random.Random], Move]


def legal_moves(game: Game, view: Observation, rng: random.Random) -> list[Move]:
    return game.legal_moves(game.determinize(view, rng))


def random_move(game: Game, view: Observation, rng: random.Random) -> Move:
    return rng.choice(legal_moves(game, view, rng))


# -- rummy: Three Thirteen, Threezies ------------------------------------------------------


@lru_cache(maxsize=200_000)
def _deadwood(hand: tuple[int, ...], rules: Any) -> int:
    from engine import melds

    return int(melds.min_deadwood(list(hand), rules))


def _best_after_discard(hand: list[int], rules: Any, forbidden: int | None) -> tuple[int, int]:
    """(deadwood, -value) of the best discard, and the card: ties go to the highest card."""
    best: tuple[int, int, int] | None = None
    values = rules.values
    for c in sorted(set(hand)):
        if c == forbidden:
            continue
        rest = list(hand)
        rest.remove(c)
        key = (_deadwood(tuple(sorted(rest)), rules), -values[c], -c)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[0], -best[2]


def greedy_rummy(game: Game, view: Observation, rng: random.Random) -> Move:
    moves = legal_moves(game, view, rng)
    rules = rummy_rounds(game).meld_rules(view["options"], view["round"])
    hand = parse_cards(view["hand"])
    if view["phase"] == "draw":
        if not view["discard"]:
            return {"type": "draw", "source": "stock"}
        top = parse_card(view["discard"][-1])
        now = _deadwood(tuple(sorted(hand)), rules)
        forbidden = None if view["options"].get("allow_rediscard") else top
        after, _ = _best_after_discard([*hand, top], rules, forbidden)
        return {"type": "draw", "source": "discard" if after < now else "stock"}
    outs = [m for m in moves if m["type"] == "go_out"]
    if outs:
        return outs[0]
    taken = parse_card(view["taken"]) if view.get("taken") and not view["options"].get("allow_rediscard") else None
    _, card = _best_after_discard(hand, rules, taken)
    return {"type": "discard", "card": CARD_NAMES[card]}


# -- Least Score ---------------------------------------------------------------------------

_LS_VALUE = tuple(min(c % 13 + 1, 10) for c in range(52))
LS_DECLARE_AT = 6


def greedy_least_score(game: Game, view: Observation, rng: random.Random) -> Move:
    moves = legal_moves(game, view, rng)
    hand = parse_cards(view["hand"])
    if view["phase"] == "pick":
        floor = [m for m in moves if m.get("source") == "floor"]
        if floor:
            cheapest = min(floor, key=lambda m: (_LS_VALUE[parse_card(m["card"])], m["card"]))
            if _LS_VALUE[parse_card(cheapest["card"])] < 85 / 13 or len(floor) == len(moves):
                return cheapest
        return {"type": "pick", "source": "deck"}
    if any(m["type"] == "declare" for m in moves) and sum(_LS_VALUE[c] for c in hand) <= LS_DECLARE_AT:
        return {"type": "declare"}
    discards = [m for m in moves if m["type"] == "discard"]
    return max(discards, key=lambda m: (sum(_LS_VALUE[parse_card(c)] for c in m["cards"]), len(m["cards"])))


# -- Less Than Three -------------------------------------------------------------------------


def _lt3_rank(move: Move) -> int:
    cards = parse_cards(move["cards"])
    return max(c % 13 for c in cards)


def greedy_less_than_three(game: Game, view: Observation, rng: random.Random) -> Move:
    moves = legal_moves(game, view, rng)
    seat = view["seat"]
    mine, theirs = view["hand_sizes"][seat], view["hand_sizes"][1 - seat]
    plays = [m for m in moves if m["type"] == "play"]

    def wants_knock(m: Move) -> bool:
        left = mine - len(m["cards"])
        return 0 < left <= 2 and left < theirs

    plays = [m for m in plays if m["knock"] == wants_knock(m)] or plays
    if view["phase"] == "lead":
        return max(plays, key=lambda m: (len(m["cards"]), _lt3_rank(m)))
    if plays:
        return max(plays, key=lambda m: (_lt3_rank(m), len(m["cards"])))
    if any(m["type"] == "sweep" for m in moves):
        return {"type": "sweep"}
    return {"type": "pass"}


# -- Contract rummy --------------------------------------------------------------------------

_CR_POINTS = tuple(25 if c == 52 else 15 if c % 13 == 0 else 20 if c % 13 == 1 else 10 if c % 13 >= 9 else 5
                   for c in range(53))


def _cr_partners(card: int, hand: list[int], runs: bool, sets: bool) -> int:
    return sum(1 for c in hand if c != card and not is_wild(c) and (
        (sets and c % 13 == card % 13) or (runs and c // 13 == card // 13 and 0 < abs(c - card) <= 2)))


def greedy_contract_rummy(game: Game, view: Observation, rng: random.Random) -> Move:
    moves = legal_moves(game, view, rng)
    hand = parse_cards(view["hand"])
    runs, sets = view["contract"]["runs"] > 0, view["contract"]["sets"] > 0
    if view["phase"] == "buy":
        return {"type": "pass"}
    if view["phase"] == "draw":
        if view["discard"]:
            top = parse_card(view["discard"][-1])
            if is_wild(top) or (not view["down"][view["seat"]] and _cr_partners(top, hand, runs, sets)):
                return {"type": "take_discard"}
        return {"type": "draw"}
    for kind in ("go_down", "lay_off"):
        for m in moves:
            if m["type"] == kind:
                return m
    discards = [m for m in moves if m["type"] == "discard"]

    def badness(m: Move) -> tuple[int, int, int]:
        c = parse_card(m["card"])
        return (not is_wild(c), -_cr_partners(c, hand, runs, sets), _CR_POINTS[c])

    return max(discards, key=badness)


GREEDY: dict[str, Baseline] = {
    "contract-rummy": greedy_contract_rummy,
    "three-thirteen": greedy_rummy,
    "threezies": greedy_rummy,
    "least-score": greedy_least_score,
    "less-than-three": greedy_less_than_three,
}


def greedy_move(game: Game, view: Observation, rng: random.Random) -> Move:
    """The greedy baseline's move for the view's seat (random legal play for a game without one)."""
    fn = GREEDY.get(game.info.id)
    if fn is None:
        return random_move(game, view, rng)
    return fn(game, view, rng)


BASELINES: dict[str, Baseline] = {"greedy": greedy_move, "random": random_move}


def player(kind: str, game: Game) -> Baseline:
    """A fresh baseline player of ``kind`` for one seat of one game of ``game``."""
    if kind == "expert":
        from ai.experts import expert_player

        return expert_player(game)
    try:
        return BASELINES[kind]
    except KeyError:
        raise ValueError(f"no baseline {kind!r}: the baselines are {', '.join(sorted(BASELINES))}") from None
