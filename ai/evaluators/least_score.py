"""Least Score (RULES.md §5): the leaf is the deal's outcome if the lowest hand declared now.

A deal ends when someone declares; a right declare costs the others the
difference to the lowest hand, a wrong one costs the declarer 20 plus the
difference. So the value of an unfinished position is read as the standing
score of the hands (each hand's total minus the lowest), with each hand's
total adjusted by what its owner's next turn can shed: the best legal group it
can throw minus what it can expect to pick up (the cheapest floor card or an
average unseen card). The chance of winning the deal is the chance of holding
the lowest (adjusted) total — and the declare move itself is searched like any
other: in every sampled deal it ends the deal with the real scores, so the
search declares exactly when its estimated chance of being lowest makes the
declare worth more than playing on.

The search looks one orbit ahead (``orbit_shift`` 0), over three times the
level's worlds (``sample_scale``; a world is cheap here), level 4 over five
times and level 5 (also one orbit: ``level_orbit_shift``) over ten times
theirs (``level_scale``: in this game more sampled deals make a stronger
player, so the levels above the default spend them): after the seat's turn the
others play by the model policy, so playing on is weighed against the chance
that another hand, lower than the seat's, declares first. The **model policy**
plays as a careful player does: it declares on the odds (:func:`declare_gain`:
each other hand's known cards plus its unknown ones, each modelled as the
lowest of one to three cards of a full deck, the more the longer the deal has
run; it declares when that gains :attr:`declare_margin` points), and it
discards and picks by a hand's points less half of what its best discard would
shed next turn (a pair kept together, a floor card that pairs a high card).

The sampled deals (:meth:`LeastScoreEvaluator.deal`) lean the hidden hands to
low cards, the more the longer their owners have played the deal. A setting
for ``bench/ai_ab.py``, off by default (``declined``), also deals again, in a
game of three seats or more, a deal that gives another player who has had a
turn a hand it would declare with (by the model policy's odds): it could have
declared and did not. It matches the hands players really hold better
(``bench/ls_belief.py``), but it was not shown to play better (docs/ai-notes.md).
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, ClassVar

from ai.belief import Accept, weighted_deal
from ai.evaluate import DealFn, Evaluator, Leaf, register_evaluator
from engine.cards import CARD_NAMES, CARD_OF_NAME, Card
from engine.game import Game, Move, Observation, State
from engine.games import least_score as ls

MEAN_DECK_VALUE = 85 / 13  # the mean value of a random card of a full deck
MAX_CARD_POINTS = max(ls.VALUE)
MAX_HAND_POINTS = 5 * MAX_CARD_POINTS  # a hand never holds more than the five cards dealt (R2: discard, then pick)


@lru_cache(maxsize=65536)
def best_shed(hand: tuple[int, ...], same_suit: bool) -> tuple[int, tuple[int, ...]]:
    """The largest total one legal discard can throw from ``hand`` (sorted by rank), and that group."""
    best: tuple[int, tuple[int, ...]] = (0, ())
    for group in ls.legal_groups(hand, same_suit):
        value = sum(ls.VALUE[c] for c in group)
        if value > best[0] or (value == best[0] and len(group) > len(best[1])):
            best = (value, tuple(group))
    return best


@lru_cache(maxsize=64)
def hidden_total_odds(cards: int, keep: int) -> tuple[float, ...]:
    """The distribution (index: points) of the total of ``cards`` unknown cards of another hand, each card
    modelled as the lowest of ``keep`` cards drawn from a full deck (players keep their low cards)."""
    counts = [0] * 11
    for v in ls.VALUE[:52]:
        counts[v] += 1
    at_least = [sum(counts[v:]) / 52 for v in range(12)]  # P(one card >= v)
    one = [0.0] + [at_least[v] ** keep - at_least[v + 1] ** keep for v in range(1, 11)]
    dist = [1.0]
    for _ in range(cards):
        nxt = [0.0] * (len(dist) + 10)
        for t, p in enumerate(dist):
            if p:
                for v in range(1, 11):
                    nxt[t + v] += p * one[v]
        dist = nxt
    return tuple(dist)


def declare_gain(mine: int, others: list[tuple[int, int]], keep: int, tie_fails: bool) -> float:
    """Expected points declaring gains over playing on (0) for a hand of ``mine`` points, against other
    hands each given as (points of its known cards, number of unknown cards) (R5); the others independent."""
    hold = 1.0
    win_gain = 0.0
    fail_cost = 0.0
    for known, unknown in others:
        dist = hidden_total_odds(unknown, keep)
        p_hold = sum(p for t, p in enumerate(dist) if known + t > mine or (known + t == mine and not tie_fails))
        p_hold = max(p_hold, 1e-9)
        above = sum(p * (known + t - mine) for t, p in enumerate(dist)
                    if known + t > mine or (known + t == mine and not tie_fails))
        below = sum(p * (mine - known - t) for t, p in enumerate(dist) if known + t < mine)
        hold *= p_hold
        win_gain += above / p_hold / len(others)
        fail_cost = max(fail_cost, below / max(1e-9, 1.0 - p_hold) if p_hold < 1.0 else 0.0)
    return hold * win_gain - (1.0 - hold) * (20.0 + fail_cost)


def declare_limit(others: list[tuple[int, int]], keep: int, tie_fails: bool, margin: float) -> int:
    """The highest own total with which :func:`declare_gain` against ``others`` reaches ``margin`` (it falls as
    the total rises), or -1 if none does."""
    limit = -1
    for mine in range(0, MAX_HAND_POINTS + 1):
        if declare_gain(mine, others, keep, tie_fails) < margin:
            break
        limit = mine
    return limit


def kept_low_of(turns_in_round: int, players_in: int) -> int:
    """The model's ``keep`` (:func:`hidden_total_odds`): an unknown card of another hand is the lowest of one
    to three cards, one more per orbit played in the deal."""
    return 1 + min(2, turns_in_round // max(1, players_in))


def _pick_value(floor: list[int]) -> float:
    """What a pick is expected to add: the cheapest floor card, or an average card from the deck."""
    cheapest = min((ls.VALUE[c] for c in floor), default=99)
    return min(cheapest, MEAN_DECK_VALUE)


def _totals_before(state: State, round_index: int) -> list[int]:
    """Each seat's total when deal ``round_index`` began: its total now less that deal's and later deals' scores."""
    later = state.round_scores[round_index:]
    return [t - sum(r[i] for r in later) for i, t in enumerate(state.totals)]


def game_chance(before: list[int], deal: Mapping[int, float], threshold: int, seat: int, power: float) -> float:
    """``seat``'s chance to win the game once a deal scores ``deal`` (by seat; missing: 0) on the totals
    ``before`` it, read from the room each player in keeps under the threshold: its room to the
    threshold (``threshold + 1 - total``; none once over it: knocked out, R6) to the ``power``, over the
    sum of them. The last player in wins; if every player in crosses at once, the lowest total wins (ties
    share)."""
    after = {i: total + deal.get(i, 0.0) for i, total in enumerate(before) if total <= threshold}
    rooms = {i: max(0.0, threshold + 1 - total) ** power for i, total in after.items()}
    whole = sum(rooms.values())
    if whole:
        return rooms.get(seat, 0.0) / whole
    low = min(after.values(), default=0.0)
    lowest = [i for i, total in after.items() if total == low]
    return 1.0 / len(lowest) if seat in lowest else 0.0


class LeastScoreEvaluator(Evaluator):
    margin_scale = 6.0
    next_turn_weight = 0.5  # how much of a seat's next-turn shedding counts at a leaf
    declare_at = 5  # the model policy declares with a total this low or lower
    low_card_belief = 0.07  # per turn played: how much a hidden hand leans to low cards (players shed high ones)
    policy_play = "measure"  # the model's discards and picks: "measure" (see _measured_move) or "shed" (the
    # largest group; the floor's cheapest card when it is 4 or less)
    policy_declare = "odds"  # the model policy declares on the odds ("odds") or at a total ("total": declare_at)
    declare_margin = 2.0  # the model policy declares when that gains this many points by its odds
    belief_turns = 5.0  # the lean grows with the turns played up to this many
    #: a player who could have declared and did not is unlikely to hold a hand it would declare with: the
    #: chance that a sampled deal giving another seat such a hand (by the model policy's odds) is dealt again,
    #: once that seat has completed ``declined_turns`` turns of the deal, in a game of at least
    #: ``declined_players`` seats; at most ``declined_tries`` deals. Off: not shown to play better
    #: (docs/ai-notes.md)
    declined = 0.0
    declined_players = 3
    declined_turns = 1
    declined_tries = 20
    #: with ``match_players`` seats or more, a deal's value also counts the seat's chance to win the game
    #: (:func:`game_chance` after the deal, ``match_power``), at this many points: the last player in wins,
    #: so points taken near the threshold cost more than points taken far from it. Off: not shown to win
    #: more games (docs/ai-notes.md)
    match_weight = 0.0
    match_power = 2.0
    match_players = 3
    knockout_value = 0.0  # a deal's result is worth this much more for each player it knocks out (round_result)
    orbit_shift = 0
    sample_scale = 3.0  # a Least Score world is cheap: three times the level's worlds (measured: docs/ai-notes.md)
    #: the worlds' scale of a level above the default, instead of sample_scale (level 4: 320 worlds to level 3's
    #: 72, measured: docs/ai-notes.md; level 5: 1,600)
    level_scale: ClassVar[dict[int, float]] = {4: 5.0, 5: 10.0}
    #: level 5 looks one orbit ahead like the levels below, not two: its extra work goes to worlds, the
    #: dimension measured to help in this game
    level_orbit_shift: ClassVar[dict[int, int]] = {5: -1}

    def for_level(self, level: int) -> Evaluator:
        scale = self.level_scale.get(level, self.sample_scale)
        shift = self.level_orbit_shift.get(level, 0)
        if scale == self.sample_scale and not shift:
            return self
        scaled = copy.copy(self)
        scaled.sample_scale = scale
        scaled.orbit_shift = self.orbit_shift + shift
        return scaled

    def _adjusted_totals(self, s: ls.LeastScoreState) -> dict[int, float]:
        same_suit = s.options["sequence_same_suit"]
        out: dict[int, float] = {}
        for i, hand in enumerate(s.hands):
            if s.out[i]:
                continue
            total = float(sum(ls.VALUE[c] for c in hand))
            if i == s.to_move and s.phase == ls.PICK:
                total += _pick_value(s.floor)  # mid-turn: the pick is still to come
            else:
                shed, _ = best_shed(tuple(hand), same_suit)
                total += self.next_turn_weight * (_pick_value(s.floor if i == s.to_move else []) - shed)
            out[i] = total
        return out

    def cache_entries(self) -> int:
        return best_shed.cache_info().currsize

    def round_seats(self, state: State, seat: int, round_index: int) -> list[int]:
        """The players dealt in: a player knocked out before the deal scores 0 in it and is not counted (R6)."""
        threshold = state.options["threshold"]
        return [i for i, t in enumerate(_totals_before(state, round_index)) if t <= threshold or i == seat]

    def round_result(self, game: Game, state: State, seat: int, round_index: int) -> Leaf:
        """The deal's real scores among the players dealt in, plus the game's term (:attr:`match_weight`), plus
        :attr:`knockout_value` for each player the deal knocked out: minus it for the seat itself, plus its
        share for another."""
        leaf = super().round_result(game, state, seat, round_index)
        if not self.match_weight and not self.knockout_value:
            return leaf
        scores = state.round_scores[round_index]
        before = _totals_before(state, round_index)
        value = leaf.value + self._game_term(state, seat, before, dict(enumerate(map(float, scores))))
        threshold = state.options["threshold"]
        knocked = [i for i, t in enumerate(before) if t <= threshold < t + scores[i]]
        if knocked and self.knockout_value:
            share = max(1, state.num_players - 1)
            value += sum(-1.0 if i == seat else 1.0 / share for i in knocked) * self.knockout_value
        return Leaf(value, leaf.win)

    def _game_term(self, state: State, seat: int, before: list[int], deal: Mapping[int, float]) -> float:
        """:attr:`match_weight` times the seat's :func:`game_chance` once ``deal`` is scored (0 when off)."""
        if not self.match_weight or state.num_players < self.match_players:
            return 0.0
        return self.match_weight * game_chance(before, deal, state.options["threshold"], seat, self.match_power)

    def leaf(self, game: Game, state: State, seat: int) -> Leaf:
        s = state
        assert isinstance(s, ls.LeastScoreState)
        totals = self._adjusted_totals(s)
        low = min(totals.values())
        scores = {i: t - low for i, t in totals.items()}
        others = [v for i, v in scores.items() if i != seat]
        margin = (sum(others) / len(others) if others else 0.0) - scores[seat]
        margin += self._game_term(s, seat, s.totals, scores)  # as if the lowest hand declared now
        lowest = [i for i, t in totals.items() if t == low]
        win = 1.0 / len(lowest) if seat in lowest else 0.0
        return Leaf(margin, win)

    def can_maximise(self, game: Game, state: State) -> bool:
        # a pick from the deck takes a hidden card: the seat may not choose it knowing that card
        return state.phase != ls.PICK

    def policy(self, game: Game, state: State, rng: random.Random) -> Move:
        s = state
        assert isinstance(s, ls.LeastScoreState)
        seat = s.to_move
        assert seat is not None
        hand = s.hands[seat]
        same_suit = s.options["sequence_same_suit"]
        if self.policy_play == "measure":
            return self._measured_move(s, seat, same_suit)
        if s.phase == ls.PICK:
            cheapest = min(s.floor, key=lambda c: (ls.VALUE[c], c), default=None)
            if cheapest is not None and (ls.VALUE[cheapest] <= 4 or not (s.deck or s.dead)):
                return {"type": "pick", "source": "floor", "card": CARD_NAMES[cheapest]}
            return {"type": "pick", "source": "deck"}
        if s.played[seat] and self._model_declares(s, seat):
            return {"type": "declare"}
        _, group = best_shed(tuple(hand), same_suit)
        return {"type": "discard", "cards": [CARD_NAMES[c] for c in group]}

    def _measure(self, hand: list[int], same_suit: bool) -> float:
        """A hand's points less half of what its best discard would shed next turn."""
        return sum(ls.VALUE[c] for c in hand) - 0.5 * best_shed(tuple(sorted(hand)), same_suit)[0]

    def _measured_move(self, s: ls.LeastScoreState, seat: int, same_suit: bool) -> Move:
        """The model move by :meth:`_measure`: the pick, or the discard that leaves the best measure after
        the pick that follows it (the deck counted as an average card)."""
        hand = s.hands[seat]
        if s.phase == ls.PICK:
            best: tuple[float, int] = (self._measure(hand, same_suit) + MEAN_DECK_VALUE, -1)
            if not (s.deck or s.dead):
                best = (math.inf, -1)
            for c in s.floor:
                option = (self._measure([*hand, c], same_suit), c)
                if option < best:
                    best = option
            if best[1] < 0:
                return {"type": "pick", "source": "deck"}
            return {"type": "pick", "source": "floor", "card": CARD_NAMES[best[1]]}
        if s.played[seat] and self._model_declares(s, seat):
            return {"type": "declare"}
        choice: tuple[float, int, tuple[int, ...]] | None = None
        for group in ls.legal_groups(hand, same_suit):
            rest = list(hand)
            for c in group:
                rest.remove(c)
            after = min([self._measure([*rest, c], same_suit) for c in s.floor]
                        + [self._measure(rest, same_suit) + MEAN_DECK_VALUE])
            key = (after, -len(group), group)
            if choice is None or key < choice:
                choice = key
        assert choice is not None
        return {"type": "discard", "cards": [CARD_NAMES[c] for c in choice[2]]}

    def _model_declares(self, s: ls.LeastScoreState, seat: int) -> bool:
        mine = sum(ls.VALUE[c] for c in s.hands[seat])
        if self.policy_declare == "total":
            return mine <= self.declare_at
        keep = kept_low_of(s.turns_in_round, sum(1 for o in s.out if not o))
        others = [(sum(ls.VALUE[c] for c in s.known[i]), len(s.hands[i]) - len(s.known[i]))
                  for i in range(len(s.hands)) if i != seat and not s.out[i]]
        return bool(others) and declare_gain(mine, others, keep, s.options["tie_is_false_declare"]) >= \
            self.declare_margin

    def deal(self, game: Game, view: Observation) -> DealFn | None:
        """Hidden hands lean to low cards, more so the more turns their owners have played this deal; with
        :attr:`declined`, in a game of :attr:`declined_players` seats or more, not to hands their owners would
        have declared with."""
        players_in = max(1, sum(1 for o in view["out"] if not o))
        turns = view["turns_in_round"] / players_in
        beta = max(0.0, self.low_card_belief * min(turns, self.belief_turns))
        accept = self._not_declared(view) if self.declined and view["num_players"] >= self.declined_players \
            else None
        if beta <= 0 and accept is None:
            return None
        factor = [math.exp(-beta * v) for v in ls.VALUE]

        def weights(zone: Mapping[str, Any]) -> list[float] | None:
            return factor if zone.get("zone") == "hand" else None

        return weighted_deal(weights, accept, self.declined_tries)

    def _not_declared(self, view: Observation) -> Accept | None:
        """A test of the other hands of a deal: it fails (with chance :attr:`declined`) where a player who
        has completed :attr:`declined_turns` turns of the deal holds a hand the model policy would declare
        with: it could have declared and did not. None if no hand can fail it."""
        n = view["num_players"]
        players_in = sum(1 for o in view["out"] if not o)
        turns = view["turns_in_round"]
        order = [(view["dealer"] + k) % n for k in range(1, n + 1) if not view["out"][(view["dealer"] + k) % n]]
        keep = kept_low_of(turns, players_in)
        tie_fails = bool(view["options"].get("tie_is_false_declare"))
        known = [sum(ls.VALUE[CARD_OF_NAME[c]] for c in k) for k in view["known"]]
        unknown = [view["hand_sizes"][i] - len(view["known"][i]) for i in range(n)]
        # (zone index, points of its known cards, the highest total its owner would declare with)
        checked: list[tuple[int, int, int]] = []
        for i, zone in enumerate(view["hidden"]):
            o = zone.get("seat")
            if zone.get("zone") != "hand" or o is None:
                continue
            p = order.index(o)
            if (turns - p + players_in - 1) // players_in < self.declined_turns:
                continue
            others = [(known[j], unknown[j]) for j in range(n) if j != o and not view["out"][j]]
            limit = declare_limit(others, keep, tie_fails, self.declare_margin)
            if limit < known[o]:
                continue  # no hand of its could be one it declares with
            if limit >= known[o] + MAX_CARD_POINTS * unknown[o]:
                continue  # every hand of its would be: the model is wrong about that player, so no test
            checked.append((i, known[o], limit))
        if not checked:
            return None
        rate = self.declined
        value = ls.VALUE

        def accept(fills: list[list[Card]], rng: random.Random) -> bool:
            if all(points + sum(value[c] for c in fills[i]) > limit for i, points, limit in checked):
                return True
            return rng.random() >= rate

        return accept

    def explain(self, game: Game, view: Observation, move: Move, ranked: list[tuple[Move, float]]) -> str:
        hand = view["hand"]
        total = view["hand_total"]
        others = [m for m, _ in ranked[1:]]
        if move["type"] == "declare":
            return (f"declares with {' '.join(hand)} ({total} points): the sampled deals make it the lowest hand "
                    "often enough to be worth more than playing on")
        if move["type"] == "discard":
            cards = move["cards"]
            value = sum(ls.VALUE[CARD_OF_NAME[c]] for c in cards)
            left = total - value
            declined = " rather than declaring" if any(m["type"] == "declare" for m in others) else ""
            return (f"discards {' '.join(cards)} ({value} points){declined}, leaving {left} before the pick "
                    f"from {' '.join(c for c in hand if c not in cards) or 'nothing'}")
        if move.get("source") == "floor":
            return f"picks {move['card']} from the floor, cheaper than an average unseen card"
        floor = view["floor"]
        return f"picks from the deck: nothing on the floor ({' '.join(floor)}) is cheap enough to take"


EVALUATOR = register_evaluator("least-score", LeastScoreEvaluator())
