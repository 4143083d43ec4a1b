"""Three Thirteen and Threezies (RULES.md §2-3): deadwood after one more draw.

Leaf: each hand's expected round score is its least deadwood after one more
draw (:func:`after_one_draw`): the exact mean, over every card its owner could
draw, of the least deadwood (the exact solver, :mod:`engine.melds`) after
drawing that card and making the best discard. It counts both ways a draw
helps: a card that joins a meld, and a low card that replaces the highest card
in no meld. For the seat the cards it could draw are all it cannot see (the
stock and the other hands of the world: the same set in every sampled world, so
each of its hands is scored once per decision); for the other seats, the world's
stock. A hand with no turn left (after someone went out, R7) scores its
deadwood; a hand fully melded now goes out on its next turn. The leaf's value
is the others' mean expected score minus the seat's; the round is won by the
lowest expected score.

Model policy (the other seats, and the seat's own later turns): go out when
possible; take the top discard only if it lowers the best deadwood (checked
with the solver only when the card could join a meld at all); discard the card
that leaves the least deadwood, ties to the highest card.

Belief (:mod:`ai.belief`, written and measured, but off: it did not help): a
player who took a card from the discard pile (``known``) is likely to hold
cards that meld with it; cards that sat in the discard pile were passed on (or
thrown) by the others, so their hands are less likely to hold cards that meld
with those. See ``RummyEvaluator.use_belief`` for the figures.

How this leaf was chosen (fifth session). Separate 100-200-game runs could not tell the leaves apart, so
the variants were compared *paired*: the same round deals (a round is dealt from the match seed whatever was
played before), both seats, against greedy, each variant's score on a deal minus the reference's on the same
deal (``bench/ai_ab.py`` does this for whole games). Figures are mean points per 11-round Three Thirteen game,
with 95% intervals, first for policies that play this leaf's one-ply choice exactly (every unseen card, no
sampling), then for the AI itself:

* the hope leaf that this one replaced (deadwood less ``min(deadwood, 5) (1 - (1 - u/S)^3)``, ``u`` of the
  ``S`` stock cards making a 3-card meld with the hand), 200 deals: +11.2 against greedy; with no hope term
  at all (deadwood only, so only the draw choice differs from greedy) +12.7 (+1.6 +- 1.8 over it); fewer hoped
  draws or a smaller shed were better (2 draws +0.7 +- 0.4, 5 draws -1.8 +- 0.5; shed 3 +1.2 +- 0.6, shed 8
  -1.6 +- 0.9): the hope term hurt;
* deadwood after one more draw, with the draw choice still by deadwood, 150 deals: +4.7 +- 2.4 over deadwood
  alone; ``a`` x it + (1 - ``a``) x deadwood with ``a`` = 0.7: +4.0 +- 2.2, 1.5: +7.2 +- 3.4, but 2: -17.6
  +- 3.2 against 1.5 (the negative weight on deadwood pays for holding high cards);
* ``meld_bonus`` (a drawn card that makes a meld counts 1 + ``b`` times its gain, which the draws after it
  keep): ``b`` = 0.5 +1.5 +- 1.4, 1: -1.6 +- 2.5, 2: -45 (150 deals); with the draw choice by this leaf too
  (100 deals) +1.4 +- 1.3 for the draw choice and +2.8 more for ``b`` = 0.5;
* the AI (level 3, 100 deals): the hope leaf +12.2, this leaf +16.2 (+4.0 +- 3.0), with ``b`` = 0.5 +17.0
  (+4.8 +- 3.4).

The fifth session's report (``bench/ai_strength.py --games 200``, deals 1-100, ``b`` = 0.5): Three Thirteen
0.642 [0.588, 0.697], margin +14.5 [10.9, 18.1]; Threezies 0.662 [0.611, 0.714], +14.0 [10.7, 17.2]. The hope leaf
on the same deals: 0.565, +11.0 and 0.645, +11.1.

Sixth session (``bench/ai_ab.py``, Three Thirteen against greedy, paired on the same deals):

* the root stock draw as an exact chance node (``draw_zone``: every unseen card on top of the stock in one
  world each, :mod:`ai.search`) against 24 sampled worlds, deals 1-50: +0.4 points per game [-1.8, +2.5] (the
  sampled draw scored -0.38 [-2.53, +1.77] against it), win share +0.005. No measurable gain, as the draw
  choice's sampling noise was small, but kept: it is the chance node the search promises, each card weighed
  by its exact probability, for about twice the worlds on draw decisions only (well inside the budget);
* one orbit of the other seat's reply again (``orbit_shift`` 0) with this leaf: deals 1-50 margin -0.4
  [-5.7, +4.8], win share +0.055 [-0.018, +0.128]; deals 51-100 margin -3.7 [-8.8, +1.4], win share -0.050
  [-0.139, +0.039]. No gain for twice the time: the reply stays out.

The sixth session's report (``bench/ai_strength.py --games 200``, deals 1-100): Three Thirteen 0.665 [0.613,
0.717], margin +16.3 [12.4, 20.3]; Threezies 0.657 [0.602, 0.713], +14.1 [11.0, 17.1]; on fresh deals 101-200 Three
Thirteen 0.662 [0.613, 0.712], +16.9 [13.4, 20.3]. The same code on deals 1-100 in the A/B runs above (more load,
so more decisions cut short by the clock) won 0.6525, +15.7: at the goal of 0.65, not clearly above it.

Earlier leaves and searches, each measured against the hope leaf above (``bench/ai_strength.py`` against
greedy, 60 duplicate deals = 120 games each, the same deals for both arms; baseline: the hope leaf, Three
Thirteen 0.588 [0.521, 0.654], Threezies 0.608 [0.546, 0.670]):

* modelling that the next player takes the card just discarded when it lowers its deadwood (a defensive
  term in the leaf): Three Thirteen 0.308 [0.235, 0.381]. Weighed against the crude hope term below, it
  makes the seat break its own partial melds to starve the opponent;
* replacing the hope term by the exact expected deadwood after one more draw (every stock card, the best
  discard after it): Threezies 0.562 [0.498, 0.627], and about 5x slower per decision. That was noise: paired,
  in the fifth session, it is this leaf's gain;
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

Why the bar was far for Three Thirteen: on those 100 games the AI's margin per game has a median of +9 and a
standard deviation of 42 points (a caught hand of round 1 alone can cost 30), and of the 1,100 rounds it scored
less than greedy in 500, more in 449 (151 even). At that spread, a win rate of 0.65 needs an edge of roughly
+16 to +20 points per game, not the +9 to +13 measured for the hope leaf.

Costly solver calls are cached per hand (the same hands recur across the
sampled worlds and candidate moves): :func:`deadwood`, :func:`discard_scores`
and :func:`after_one_draw` keep one dict per :class:`~engine.melds.MeldRules`.
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

MELDED_NOT_OUT = 1.0  # expected score of a fully melded hand that has not gone out yet
BELIEF_NEAR_KNOWN = 2.0  # weight of a card that melds with a card the seat took from the pile
BELIEF_NEAR_PILE = 0.5  # weight of a card that melds with a card left in the discard pile

# The caches are bounded per process (issue 15: one worker reached 2.33 GB): at most RULES_KEPT rule sets
# (a round's wild rank and aces option) keep tables, the least recently used is dropped, and a table that
# reaches its limit is emptied. A full set of tables holds well under 100 MB (bench/ai_memory.py).
RULES_KEPT = 2
DEADWOOD_LIMIT = 150_000
DISCARDS_LIMIT = 40_000  # each entry holds a dict of the hand's discards
ONE_DRAW_LIMIT = 60_000


class _Tables:
    """Per-rules caches of the solver's answers (the same hands recur across worlds and candidates)."""

    __slots__ = ("deadwood", "discards", "one_draw", "rules", "unseen_ids")

    def __init__(self, rules: melds.MeldRules):
        self.rules = rules
        self.deadwood: dict[tuple[Card, ...], int] = {}
        self.discards: dict[tuple[Card, ...], dict[Card, int]] = {}
        # keyed by (hand, the id of the unseen cards drawn from, meld bonus): the unseen tuple (up to 50
        # cards, the same for every hand of a decision) is stored once, in unseen_ids
        self.one_draw: dict[tuple[tuple[Card, ...], int, float], float] = {}
        self.unseen_ids: dict[tuple[Card, ...], int] = {}

    def sizes(self) -> int:
        return len(self.deadwood) + len(self.discards) + len(self.one_draw)


_caches: dict[int, _Tables] = {}


def _cache(rules: melds.MeldRules) -> _Tables:
    entry = _caches.get(id(rules))
    if entry is None or entry.rules is not rules:
        _caches.pop(id(rules), None)
        while len(_caches) >= RULES_KEPT:
            del _caches[next(iter(_caches))]  # the least recently used rules
        entry = _caches[id(rules)] = _Tables(rules)
    elif next(reversed(_caches)) != id(rules):
        _caches[id(rules)] = _caches.pop(id(rules))  # most recently used last
    return entry


def cache_entries() -> int:
    """Entries held by this module's caches now (all rules)."""
    return sum(t.sizes() for t in _caches.values())


def deadwood(hand: tuple[Card, ...], rules: melds.MeldRules) -> int:
    """Cached :func:`engine.melds.min_deadwood` of a sorted hand tuple."""
    table = _cache(rules).deadwood
    got = table.get(hand)
    if got is None:
        if len(table) >= DEADWOOD_LIMIT:
            table.clear()
        got = table[hand] = melds.min_deadwood(hand, rules)
    return got


def discard_scores(hand: tuple[Card, ...], rules: melds.MeldRules) -> dict[Card, int]:
    """Cached :func:`engine.melds.discard_scores` of a sorted hand tuple."""
    table = _cache(rules).discards
    got = table.get(hand)
    if got is None:
        if len(table) >= DISCARDS_LIMIT:
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


def after_one_draw(hand: tuple[Card, ...], rules: melds.MeldRules, unseen: tuple[Card, ...],
                   meld_bonus: float = 0.0) -> float:
    """The hand's expected least deadwood after one more draw from ``unseen`` (sorted) and its best discard.

    Exact, and cheap: a card that is not :func:`is_useful` to the hand (and the hand holds at most one
    wild) is in no meld of the hand plus that card, so the best discard after drawing it leaves
    ``min(deadwood, least deadwood after one discard + its value)``; only the useful cards need the solver.
    With ``meld_bonus`` ``b``, what a card gains by joining a meld (beyond what it would leave as a card in
    no meld) counts ``1 + b`` times: a meld made now keeps lowering the hand on the draws after this one.
    """
    tables = _cache(rules)
    table = tables.one_draw
    uid = tables.unseen_ids.get(unseen)
    if uid is None:
        if len(tables.unseen_ids) >= 1000:
            tables.unseen_ids.clear()
            table.clear()  # its keys name ids of the unseen sets just forgotten
        uid = tables.unseen_ids[unseen] = len(tables.unseen_ids)
    key = (hand, uid, meld_bonus)
    got = table.get(key)
    if got is not None:
        return got
    if len(table) >= ONE_DRAW_LIMIT:
        table.clear()
    dw = deadwood(hand, rules)
    base = min(discard_scores(hand, rules).values())
    shape = _shape(hand, rules)
    exact = shape[2] >= 2  # two wilds meld with any card
    values = rules.values
    total = 0.0
    for card in unseen:
        plain = min(dw, base + values[card])  # what the card leaves if it joins no meld
        if exact or is_useful(card, shape, rules):
            best = min(discard_scores(tuple(sorted((*hand, card))), rules).values())
            total += best - meld_bonus * (plain - best)  # best <= plain: the card may always stay unmelded
        else:
            total += plain
    got = table[key] = total / len(unseen)
    return got


def expected_score(hand: tuple[Card, ...], rules: melds.MeldRules, draws_from: tuple[Card, ...], draws: bool,
                   meld_bonus: float = 0.0) -> float:
    """A hand's expected round score at a leaf: its deadwood after one more draw from ``draws_from``
    (:func:`after_one_draw`) if it ``draws`` again this round, else its deadwood."""
    dw = deadwood(hand, rules)
    if dw == 0 or not draws or not draws_from:
        return float(dw)
    return after_one_draw(hand, rules, draws_from, meld_bonus)


class RummyEvaluator(Evaluator):
    meld_bonus = 0.5  # a drawn card that makes a meld counts 1.5 times its gain (measured: see the module docstring)
    margin_scale = 12.0
    draw_zone = "stock"  # a draw from the stock is a chance node over every unseen card (ai.search)
    orbit_shift = -1  # no reply of the others: it never helped here, in three sessions (the module docstring)

    def leaf(self, game: Game, state: State, seat: int) -> Leaf:
        s = state
        assert isinstance(s, RummyRoundsState)
        rules = game.meld_rules(s.options, s.round)  # type: ignore[attr-defined]
        keys = [self._hand_after_discard(game, s, i, rules) for i in range(s.num_players)]
        melded = [i for i, k in enumerate(keys) if i != s.went_out and deadwood(k, rules) == 0]
        if s.went_out is None:
            to_draw = set(range(s.num_players))
        else:  # the seats still to take their last turn, from the one to move (R7); mid-turn has drawn
            mid_turn = int(s.phase != "draw")
            first = (s.to_move or 0) + mid_turn
            to_draw = {(first + j) % s.num_players for j in range(s.last_turns - mid_turn)}
        stock = tuple(sorted(s.stock))
        # no hand still in play can expect less than a melded hand that has not gone out: with the meld
        # bonus an unmelded hand's estimate may dip below it (even below 0, what going out scores)
        floor = MELDED_NOT_OUT if s.went_out is None else 0.0
        est: list[float] = []
        for i, key in enumerate(keys):
            if i == s.went_out:
                est.append(0.0)
            elif i in melded and s.went_out is None:
                est.append(MELDED_NOT_OUT)  # goes out on its next turn, which gives the others one more
            elif i == seat:
                # the seat's own next draw: from all it cannot see, the same set in every sampled world
                unseen = tuple(sorted([*s.stock, *(c for j, h in enumerate(s.hands) if j != seat for c in h)]))
                est.append(max(floor, expected_score(key, rules, unseen, i in to_draw, self.meld_bonus)))
            else:
                est.append(max(floor, expected_score(key, rules, stock, i in to_draw, self.meld_bonus)))
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

    def cache_entries(self) -> int:
        return cache_entries()

    def draws_now(self, game: Game, view: Observation) -> bool:
        return view["phase"] == "draw" and view["to_move"] == view["seat"]

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
