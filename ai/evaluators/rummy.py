"""Three Thirteen and Threezies (RULES.md §2-3): deadwood now, and the cards that would lower it.

Leaf: each hand's expected round score is its minimum deadwood (the exact
solver, :mod:`engine.melds`) less what its owner can hope to shed before the
round ends: if ``u`` of the ``S`` cards in this world's stock are *useful* to
the hand (a wild, or a card making a 3-card set or run with two cards of the
hand — which also covers cards that extend a meld and free a deadwood card),
the chance that one of its next ``T`` draws is useful is ``1 - (1 - u/S)^T``,
and such a draw sheds about one deadwood card. A hand fully melded now goes
out on its next turn (score 0). The leaf's value is the others' mean expected
score minus the seat's; the round is won by the lowest expected score.

Model policy (the other seats, and the seat's own later turns): go out when
possible; take the top discard only if it lowers the best deadwood (checked
with the solver only when the card could join a meld at all); discard the card
that leaves the least deadwood, ties to the highest card.

Belief (:mod:`ai.belief`, written and measured, but off: it did not help): a
player who took a card from the discard pile (``known``) is likely to hold
cards that meld with it; cards that sat in the discard pile were passed on (or
thrown) by the others, so their hands are less likely to hold cards that meld
with those. See ``RummyEvaluator.use_belief`` for the figures.

Tried and dropped (``bench/ai_strength.py`` against greedy, 60 duplicate deals = 120 games each, the
same deals for both arms; baseline: this evaluator, Three Thirteen 0.588 [0.521, 0.654], Threezies 0.608
[0.546, 0.670]):

* modelling that the next player takes the card just discarded when it lowers its deadwood (a defensive
  term in the leaf): Three Thirteen 0.308 [0.235, 0.381]. Weighed against the crude hope term below, it
  makes the seat break its own partial melds to starve the opponent;
* replacing the hope term by the exact expected deadwood after one more draw (every stock card, the best
  discard after it): Threezies 0.562 [0.498, 0.627], and about 5x slower per decision;
* (third session, same 60 deals) greedy rollouts to the end of the round (``orbit_shift`` +20): 99 ms median,
  151 ms p95 per decision, but Three Thirteen 0.381 [0.247, 0.515] after 42 games (stopped): a round's
  outcome is so noisy that 24 worlds (fewer when the clock cuts) pick among the discards nearly at random;
* (third session) a leaf fitted on 4.1 million hands from 10,000 self-play games per game of the model
  policy: the mean round score, then the share of its deadwood a hand keeps, per (cards, deadwood, useful
  share of the stock, draws next / wants the top discard, the closest other hand's deadwood): Three Thirteen
  0.554 [0.476, 0.632] and 0.558 [0.485, 0.631], Threezies 0.632 [0.550, 0.714] (102 games). No better than
  the formula, and a megabyte of table, so it was not kept: the leaf's calibration is not what limits a
  one-ply search against a one-ply greedy player;
* (third session) one orbit of the others' replies (``orbit_shift`` 0) with this leaf: Three Thirteen 0.574
  [0.501, 0.647] after 94 games, the same as without it within the interval (the 0.40 of the first session
  was a small sample);
* (third session) four times the worlds (96 instead of 24 at level 3; p95 160 ms on a loaded machine): Three
  Thirteen 0.574 [0.504, 0.644], margin +13.8 [8.0, 19.6] after 68 games (stopped): sampling noise is not
  what limits it either;
* (third session, 100 duplicate deals = 200 games per game) the hope term's ``SHED_PER_USEFUL_DRAW`` at 10
  instead of 5: Three Thirteen 0.535 [0.481, 0.589], margin +7.8 [4.3, 11.3], Threezies 0.620 after 166 games;
  at 2.5: Three Thirteen 0.595 [0.547, 0.643], +12.4 [9.2, 15.7], Threezies 0.637 [0.588, 0.687], +11.2
  [8.6, 13.8] — against 0.565 / +11.0 and 0.645 / +11.1 for 5 in the report: within the noise, so 5 stays.
* (fourth session, 50 duplicate deals = 100 games, deals 1-50; this evaluator on the same deals: Three
  Thirteen 0.550 [0.480, 0.620], margin +12.9 [8.1, 17.7]) a *race* leaf: each hand's distance to going out
  (the fewest cards to replace: the least ``k`` for which the hand plus ``k`` jokers leaves at most ``k``
  unmelded cards, the solver run with every card worth 1) and the cards whose draw shortens it; from those,
  when each seat goes out, who goes out first, and the others caught with this leaf's expected score.
  With one chance per draw for every step: 0.240 [0.170, 0.310], margin -23.5 [-29.5, -17.5] (many cards
  bring a hand two away one step closer, few finish it, so far hands look fast). With go-out times fitted on
  6,000 solitaire positions (``1 / (0.6 f + 0.05)`` draws at one card away, ``f`` the share of the stock
  that finishes the hand, plus 3.5 per further card): 0.560 [0.481, 0.639], +10.4 [4.4, 16.4], five times
  slower; Threezies 0.565 [0.495, 0.635], +10.1 [5.6, 14.6]. No gain;
* (fourth session, same deals, no search) playing for speed alone: fewest cards to go out, then most cards
  that shorten it, then deadwood: 0.415 [0.344, 0.486], margin -13.0 [-20.6, -5.4]; the fitted draws to go
  out plus 0.3 or 1.0 x the deadwood: 0.470 [0.411, 0.529] and 0.470 [0.399, 0.541], margin -4.2 and -1.3.
  Racing does not beat greedy's least deadwood: the hand caught pays more than the race gains;
* (fourth session, same deals) looking one own turn further: after the root turn the other seat replies by
  the model policy, the seat draws by it and its discard maximises this leaf: 0.425 [0.345, 0.505], margin
  -3.2 [-9.2, 2.8] (median 97 ms per decision); the same without the reply (the seat draws the next stock
  card at once): 0.535 [0.461, 0.609], +3.8 [-0.9, 8.5]. Each extra ply counts a hand's flexibility again on
  top of the hope term, and the margin falls.
* (fourth session, same deals) playing for the game instead of the round: each leaf's margin ``m`` becomes
  the chance of finishing ahead, ``Phi((lead + m) / (12 sqrt(rounds left + 1/2)))`` (12 points: a round's
  spread), scaled back to points: 0.555 [0.485, 0.625], margin +9.0 [4.7, 13.3]. The same win rate.
* (fourth session) the hope term only for hands of at most 8 cards (deadwood alone above): 0.610 [0.540, 0.680],
  +14.6 on deals 1-50, and with no hope term at all 0.615 [0.551, 0.679], +12.5; but on fresh deals 51-150 (200
  games) 0.593 [0.544, 0.642], +8.1 [5.1, 11.1] against 0.590 [0.544, 0.636], +8.6 [5.3, 11.9] for this
  evaluator. Noise: 100 games tell apart only differences of about 0.1 in win rate.

Why the bar is far for Three Thirteen: on those 100 games the AI's margin per game has a median of +9 and a
standard deviation of 42 points (a caught hand of round 1 alone can cost 30), and of the 1,100 rounds it scored
less than greedy in 500, more in 449 (151 even). At that spread, a win rate of 0.65 needs an edge of roughly
+16 to +20 points per game, not the +9 to +13 measured for this evaluator.

Costly solver calls are cached per hand (the same hands recur across the
sampled worlds and candidate moves): :func:`deadwood` and
:func:`discard_scores` keep one dict per :class:`~engine.melds.MeldRules`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from ai.belief import weighted_deal
from ai.evaluate import DealFn, Evaluator, Leaf, register_evaluator
from engine import melds
from engine.cards import CARD_NAMES, JOKER, Card, parse_card, parse_cards
from engine.game import Game, Move, Observation, State
from engine.games.three_thirteen import RummyRoundsState

TURNS_AHEAD = 3  # draws a hand can still hope to improve with, at a leaf
SHED_PER_USEFUL_DRAW = 5.0  # points a useful draw sheds, at most the hand's deadwood
MELDED_NOT_OUT = 1.0  # expected score of a fully melded hand that has not gone out yet
CACHE_LIMIT = 300_000
BELIEF_NEAR_KNOWN = 2.0  # weight of a card that melds with a card the seat took from the pile
BELIEF_NEAR_PILE = 0.5  # weight of a card that melds with a card left in the discard pile

_caches: dict[int, tuple[melds.MeldRules, dict[tuple[Card, ...], int], dict[tuple[Card, ...], dict[Card, int]]]] = {}


def _cache(rules: melds.MeldRules) -> tuple[dict[tuple[Card, ...], int], dict[tuple[Card, ...], dict[Card, int]]]:
    entry = _caches.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_caches) > 64:
            _caches.clear()
        entry = _caches[id(rules)] = (rules, {}, {})
    return entry[1], entry[2]


def deadwood(hand: tuple[Card, ...], rules: melds.MeldRules) -> int:
    """Cached :func:`engine.melds.min_deadwood` of a sorted hand tuple."""
    table, _ = _cache(rules)
    got = table.get(hand)
    if got is None:
        if len(table) > CACHE_LIMIT:
            table.clear()
        got = table[hand] = melds.min_deadwood(hand, rules)
    return got


def discard_scores(hand: tuple[Card, ...], rules: melds.MeldRules) -> dict[Card, int]:
    """Cached :func:`engine.melds.discard_scores` of a sorted hand tuple."""
    _, table = _cache(rules)
    got = table.get(hand)
    if got is None:
        if len(table) > CACHE_LIMIT:
            table.clear()
        got = table[hand] = melds.discard_scores(hand, rules)
    return got


def _shape(hand: tuple[Card, ...], rules: melds.MeldRules) -> tuple[list[int], list[int], int]:
    """Per rank: natural cards held; per suit: bitmask of natural ranks held (bit r, ace also at 14)."""
    by_rank = [0] * 15
    by_suit = [0, 0, 0, 0]
    wilds = 0
    for c in hand:
        if rules.is_wild(c):
            wilds += 1
            continue
        r, s = c % 13 + 1, c // 13
        by_rank[r] += 1
        by_suit[s] |= 1 << r
        if r == 1 and rules.aces == "high_or_low":
            by_suit[s] |= 1 << 14
    return by_rank, by_suit, wilds


def is_useful(card: Card, shape: tuple[list[int], list[int], int], rules: melds.MeldRules) -> bool:
    """Whether ``card`` makes a 3-card set or run with two cards of the hand (or is wild)."""
    if rules.is_wild(card):
        return True
    if card == JOKER:
        return False
    by_rank, by_suit, wilds = shape
    r, s = card % 13 + 1, card // 13
    if by_rank[r] >= 2 or (wilds and by_rank[r] >= 1):
        return True
    m = by_suit[s]
    for p in ((1, 14) if r == 1 and rules.aces == "high_or_low" else (r,)):
        held = [p + d >= 1 and bool(m >> (p + d) & 1) for d in (-2, -1, 1, 2)]
        if (held[0] and held[1]) or (held[1] and held[2]) or (held[2] and held[3]):
            return True
        if wilds and any(held):
            return True
    return False


def expected_score(hand: tuple[Card, ...], rules: melds.MeldRules, stock: list[Card], turns: int) -> float:
    """A hand's expected round score: deadwood less the hope of useful draws from ``stock``."""
    dw = deadwood(hand, rules)
    if dw == 0 or turns <= 0 or not stock:
        return float(dw)
    shape = _shape(hand, rules)
    useful = sum(1 for c in stock if is_useful(c, shape, rules))
    hope = 1.0 - (1.0 - useful / len(stock)) ** turns
    return dw - min(float(dw), SHED_PER_USEFUL_DRAW) * hope


class RummyEvaluator(Evaluator):
    margin_scale = 12.0
    orbit_shift = -1  # measured: 0.65 against greedy without the others' reply, 0.40 with it (Threezies)

    def leaf(self, game: Game, state: State, seat: int) -> Leaf:
        s = state
        assert isinstance(s, RummyRoundsState)
        rules = game.meld_rules(s.options, s.round)  # type: ignore[attr-defined]
        keys = [self._hand_after_discard(game, s, i, rules) for i in range(s.num_players)]
        melded = [i for i, k in enumerate(keys) if i != s.went_out and deadwood(k, rules) == 0]
        # after someone went out the others have one draw left; a fully melded hand that has not gone out
        # yet goes out on its next turn, so the others get two (going out now would have left them one)
        turns = 1 if s.went_out is not None else 2 if melded else TURNS_AHEAD
        est: list[float] = []
        for i, key in enumerate(keys):
            if i == s.went_out:
                est.append(0.0)
                continue
            # a fully melded hand that has not gone out gives the others a turn more: worth a little
            est.append(MELDED_NOT_OUT if i in melded else expected_score(key, rules, s.stock, turns))
        mine = est[seat]
        others = [e for i, e in enumerate(est) if i != seat]
        margin = sum(others) / len(others) - mine
        low = min(est)
        win = (1.0 / est.count(low)) if mine == low else 0.0
        if win == 0.0 and mine - low < 3:
            win = 0.3  # close: the estimates are rough
        return Leaf(margin, win)

    def _hand_after_discard(self, game: Game, s: RummyRoundsState, i: int, rules: melds.MeldRules
                            ) -> tuple[Card, ...]:
        """Seat ``i``'s hand, or after its best discard if it is mid-turn (drawn, not yet discarded)."""
        hand = s.hands[i]
        key = tuple(hand)
        if len(hand) > game.deal_size(s.round):  # type: ignore[attr-defined]
            scores = discard_scores(key, rules)
            if s.taken is not None and not s.options.get("allow_rediscard"):
                scores = {c: v for c, v in scores.items() if c != s.taken} or scores
            card = min(scores, key=lambda c: (scores[c], -rules.values[c], -c))
            rest = list(hand)
            rest.remove(card)
            key = tuple(rest)
        return key

    def own_candidates(self, game: Game, state: State, moves: list[Move]) -> list[Move]:
        """After a draw, only the go-outs and the 4 discards leaving the least deadwood are worth a leaf."""
        s = state
        assert isinstance(s, RummyRoundsState)
        if s.phase != "discard" or len(moves) <= 5:
            return moves
        rules = game.meld_rules(s.options, s.round)  # type: ignore[attr-defined]
        scores = discard_scores(tuple(s.hands[s.to_move]), rules)  # type: ignore[index]
        outs = [m for m in moves if m["type"] == "go_out"]
        if outs:
            return outs[:1]
        ranked = sorted(moves, key=lambda m: (scores[parse_card(m["card"])], -rules.values[parse_card(m["card"])]))
        return ranked[:4]

    def policy(self, game: Game, state: State, rng: random.Random) -> Move:
        s = state
        assert isinstance(s, RummyRoundsState)
        seat = s.to_move
        assert seat is not None
        rules = game.meld_rules(s.options, s.round)  # type: ignore[attr-defined]
        hand = tuple(s.hands[seat])
        rediscard = bool(s.options.get("allow_rediscard"))
        if s.phase == "draw":
            if s.discard:
                top = s.discard[-1]
                if is_useful(top, _shape(hand, rules), rules):
                    scores = discard_scores(tuple(sorted((*hand, top))), rules)
                    best = min(v for c, v in scores.items() if c != top or rediscard) if len(scores) > 1 else 99
                    if best < deadwood(hand, rules):
                        return {"type": "draw", "source": "discard"}
            return {"type": "draw", "source": "stock"}
        scores = discard_scores(hand, rules)
        forbidden = None if rediscard else s.taken
        card = min((c for c in scores if c != forbidden), key=lambda c: (scores[c], -rules.values[c], -c))
        if scores[card] == 0 and s.went_out is None:
            return {"type": "go_out", "card": CARD_NAMES[card]}
        return {"type": "discard", "card": CARD_NAMES[card]}

    #: the belief model below, measured against the uniform deal (bench/ai_strength.py --opponents
    #: ai-nobelief, 40 games at 50 ms): Three Thirteen win 0.525 [0.476, 0.574], margin +2.6 [-2.5, 7.6];
    #: Threezies 0.525 [0.439, 0.611], +2.0 [-1.6, 5.6] — no measurable gain, so it is off.
    use_belief = False

    def deal(self, game: Game, view: Observation) -> DealFn | None:
        if not self.use_belief:
            return None
        rules = game.meld_rules(view["options"], view["round"])  # type: ignore[attr-defined]
        pile_shape = _shape(tuple(parse_cards(view["discard"][:-1])), rules)
        known_shapes = {z["seat"]: _shape(tuple(parse_cards(z["known"])), rules)
                        for z in view["hidden"] if z.get("zone") == "hand" and z.get("known")}
        if not view["discard"][:-1] and not known_shapes:
            return None

        def weight(zone: Mapping[str, Any], card: Card) -> float | None:
            if zone.get("zone") != "hand" or rules.is_wild(card):
                return None if zone.get("zone") != "hand" else 1.0
            w = 1.0
            near = known_shapes.get(zone["seat"])
            if near is not None and _near(card, near):
                w *= BELIEF_NEAR_KNOWN
            if _near(card, pile_shape):
                w *= BELIEF_NEAR_PILE
            return w

        return weighted_deal(weight)

    def explain(self, game: Game, view: Observation, move: Move, ranked: list[tuple[Move, float]]) -> str:
        rules = game.meld_rules(view["options"], view["round"])  # type: ignore[attr-defined]
        hand = parse_cards(view["hand"])
        unseen = game.unseen_cards(view)
        if move["type"] == "draw":
            now = deadwood(tuple(hand), rules)
            if not view["discard"]:
                return f"draws from the stock (no discard to take); deadwood {now}"
            top = parse_card(view["discard"][-1])
            scores = discard_scores(tuple(sorted((*hand, top))), rules)
            after = min(v for c, v in scores.items() if c != top or view["options"].get("allow_rediscard"))
            if move["source"] == "discard":
                return (f"takes {CARD_NAMES[top]} from the discard pile: with it the best discard leaves "
                        f"{after} deadwood instead of {now}")
            better = sum(1 for c in unseen if min(discard_scores(tuple(sorted((*hand, c))), rules).values()) < now)
            return (f"draws from the stock: {CARD_NAMES[top]} would leave {after} deadwood against {now} now, "
                    f"and {better} of the {len(unseen)} unseen cards would lower it")
        card = parse_card(move["card"])
        rest = list(hand)
        rest.remove(card)
        arrangement = melds.best_arrangement(rest, rules)
        before = melds.best_arrangement(hand, rules)
        if move["type"] == "go_out":
            groups = "; ".join(" ".join(CARD_NAMES[c] for c in m.cards) for m in arrangement.melds)
            return f"goes out discarding {CARD_NAMES[card]}: {groups} are all melded"
        dead_before = [c for c in before.deadwood]
        if card in dead_before and rules.values[card] == max(rules.values[c] for c in dead_before):
            why = "the highest card that is in no meld"
        elif card in dead_before:
            why = "a card in no meld"
        else:
            why = "breaking a meld is worth it here"
        text = f"discards {CARD_NAMES[card]}, {why}; deadwood {arrangement.score}"
        partial = _best_partial(arrangement.deadwood, rules, unseen)
        if partial is not None:
            cards, outs = partial
            text += f"; keeps {' '.join(CARD_NAMES[c] for c in cards)}, which {outs} unseen cards would complete"
        return text


def _near(card: Card, shape: tuple[list[int], list[int], int]) -> bool:
    """Whether ``card`` shares a rank with, or is within 2 ranks in its suit of, a card of ``shape``."""
    if card == JOKER:
        return False
    by_rank, by_suit, _ = shape
    r, s = card % 13 + 1, card // 13
    if by_rank[r]:
        return True
    m = by_suit[s]
    return any(r + d >= 1 and m >> (r + d) & 1 for d in (-2, -1, 1, 2))


def _best_partial(dead: tuple[Card, ...], rules: melds.MeldRules, unseen: list[Card]) -> tuple[list[Card], int] | None:
    """The pair or near-run in the deadwood with the most unseen cards that would complete it."""
    best: tuple[list[Card], int] | None = None
    naturals = [c for c in dead if not rules.is_wild(c) and c != JOKER]
    for i, a in enumerate(naturals):
        for b in naturals[i + 1 :]:
            shape = _shape((a, b), rules)
            if a % 13 == b % 13 or (a // 13 == b // 13 and abs(a - b) <= 2):
                outs = sum(1 for c in unseen if c not in (a, b) and is_useful(c, shape, rules))
                if outs and (best is None or outs > best[1]):
                    best = ([a, b], outs)
    return best


_EVALUATOR = RummyEvaluator()
register_evaluator("three-thirteen", _EVALUATOR)
register_evaluator("threezies", _EVALUATOR)
