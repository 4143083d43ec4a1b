"""Three Thirteen and Threezies (RULES.md §2-3): deadwood after one more draw.

Leaf: each hand's expected round score is its least deadwood after one more
draw (:func:`after_one_draw`): the exact mean, over every card its owner could
draw, of the least deadwood (the exact solver, :mod:`engine.melds`) after
drawing that card and making the best discard. It counts both ways a draw
helps: a card that joins a meld, and a low card that replaces the highest card
in no meld; a card that joins a meld counts 1.5 times its gain
(``meld_bonus``: a meld made now keeps lowering the hand on later draws). For
the seat the cards it could draw are all it cannot see (the stock and the
other hands of the world: the same set in every sampled world, so each of its
hands is scored once per decision); each other seat is valued after drawing
one card of the world's stock, its own (seat i's is the i-th from the bottom,
which no root move touches): the world's stock is in random order, so that is
an unbiased sample of the same mean, for one card's work, and every root move
of a world meets the same draws (the whole stock when it holds few cards). A
hand with no turn left (after someone went out, R7) scores its deadwood. The
next seat's option of taking the top discard is not counted by default: with
``feed`` > 0 (a setting for ``bench/ai_ab.py``) its estimate is the better of a
stock draw and the least deadwood after taking that card and its best discard,
so a discard that completes a meld of the next seat's hand in a sampled world
(the cards it took from the pile are in every world) costs the seat what it
saves that hand; ``feed_known`` counts it only when the card melds with cards
the next seat is known to hold, ``feed_after_out`` False not after someone went
out (so a go-out discard is never taxed); ``out_bonus`` (also a setting, off)
counts each card that lets the seat go out on its next draw that many points
less. A hand fully melded now goes out on its next turn (``MELDED_NOT_OUT``, 1
point), and no hand still in play is valued below that, so going out beats
every discard.
The leaf's value is the others' mean expected score minus the seat's; the
round is won by the lowest expected score. The seat's own root draw from the
stock is a chance node over every unseen card (``draw_zone``, :mod:`ai.search`);
the other seats' replies are not searched (``orbit_shift`` -1). Levels 1-2
play with a plainer leaf (:meth:`RummyEvaluator.for_level`): every hand at its
deadwood now, no draw looked at.

Model policy (the other seats, and the seat's own later turns): go out when
possible; take the top discard only if it lowers the best deadwood (checked
with the solver only when the card could join a meld at all); discard the card
that leaves the least deadwood, ties to the highest card.

Costly solver calls are cached per hand (the same hands recur across the
sampled worlds and candidate moves): :func:`deadwood`, :func:`least_after_discard`, :func:`discard_scores`
and :func:`after_one_draw` keep tables per :class:`~engine.melds.MeldRules`,
bounded per process. What was tried and measured for this leaf, and dropped
(a belief model among others): ``docs/ai-notes.md``.
"""

from __future__ import annotations

import copy
import random

from ai.evaluate import Evaluator, Leaf, plural, register_evaluator
from engine import melds
from engine.cards import CARD_NAMES, JOKER, Card, parse_card, parse_cards
from engine.game import Game, Move, Observation, State
from engine.games.three_thirteen import RummyRoundsState
from engine.rummy import rummy_rounds

MELDED_NOT_OUT = 1.0  # expected score of a fully melded hand that has not gone out yet

# The caches are bounded per process (issue 15: one worker reached 2.33 GB): at most RULES_KEPT rule sets
# (a round's wild rank and aces option) keep tables, the least recently used is dropped, and a table that
# reaches its limit is emptied. A full set of tables of 14-card hands holds about 100 MB (deadwood 28, least 20,
# discards 33, one_draw 17); bench/ai_memory.py measures a whole process.
RULES_KEPT = 2
DEADWOOD_LIMIT = 150_000
LEAST_LIMIT = 100_000  # about 20 MB of 14-card hands
DISCARDS_LIMIT = 40_000  # each entry holds a dict of the hand's discards
ONE_DRAW_LIMIT = 60_000


class _Tables:
    """Per-rules caches of the solver's answers (the same hands recur across worlds and candidates)."""

    __slots__ = ("deadwood", "discards", "least", "one_draw", "rules", "unseen_ids")

    def __init__(self, rules: melds.MeldRules):
        self.rules = rules
        self.deadwood: dict[tuple[Card, ...], int] = {}
        self.least: dict[tuple[Card, ...], int] = {}
        self.discards: dict[tuple[Card, ...], dict[Card, int]] = {}
        # keyed by (hand, the id of the unseen cards drawn from, meld bonus, out bonus): the unseen tuple (up to 50
        # cards, the same for every hand of a decision) is stored once, in unseen_ids
        self.one_draw: dict[tuple[tuple[Card, ...], int, float, float], float] = {}
        self.unseen_ids: dict[tuple[Card, ...], int] = {}

    def sizes(self) -> int:
        return len(self.deadwood) + len(self.least) + len(self.discards) + len(self.one_draw)


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


def least_after_discard(hand: tuple[Card, ...], rules: melds.MeldRules) -> int:
    """Cached least deadwood left by one discard from a sorted hand tuple: ``min(discard_scores(hand))``,
    by :func:`engine.melds.best_discard` (which stops at the best card instead of solving every discard)."""
    tables = _cache(rules)
    table = tables.least
    got = table.get(hand)
    if got is None:
        scores = tables.discards.get(hand)
        if scores is not None:
            return min(scores.values())
        if len(table) >= LEAST_LIMIT:
            table.clear()
        got = table[hand] = melds.best_discard(hand, rules).score
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
                   meld_bonus: float = 0.0, out_bonus: float = 0.0) -> float:
    """The hand's expected least deadwood after one more draw from ``unseen`` (sorted) and its best discard.

    Exact, and cheap: a card that is not :func:`is_useful` to the hand (and the hand holds at most one
    wild) is in no meld of the hand plus that card, so the best discard after drawing it leaves
    ``min(deadwood, least deadwood after one discard + its value)``; only the useful cards need the solver.
    With ``meld_bonus`` ``b``, what a card gains by joining a meld (beyond what it would leave as a card in
    no meld) counts ``1 + b`` times: a meld made now keeps lowering the hand on the draws after this one.
    With ``out_bonus`` ``o``, a card after which the best discard leaves no deadwood (the hand goes out on
    that draw) counts ``o`` points less: going out ends the round before the others improve further.
    """
    tables = _cache(rules)
    table = tables.one_draw
    uid = tables.unseen_ids.get(unseen)
    if uid is None:
        if len(tables.unseen_ids) >= 1000:
            tables.unseen_ids.clear()
            table.clear()  # its keys name ids of the unseen sets just forgotten
        uid = tables.unseen_ids[unseen] = len(tables.unseen_ids)
    key = (hand, uid, meld_bonus, out_bonus)
    got = table.get(key)
    if got is not None:
        return got
    if len(table) >= ONE_DRAW_LIMIT:
        table.clear()
    dw = deadwood(hand, rules)
    base = least_after_discard(hand, rules)
    shape = _shape(hand, rules)
    by_card: dict[Card, float] = {}  # each distinct card once (two decks: most unseen cards twice)
    for card in unseen:
        if card not in by_card:
            by_card[card] = _after_drawing(hand, card, rules, meld_bonus, dw, base, shape, out_bonus)
    total = 0.0
    for card in unseen:
        total += by_card[card]
    got = table[key] = total / len(unseen)
    return got


def after_drawing(hand: tuple[Card, ...], card: Card, rules: melds.MeldRules, meld_bonus: float = 0.0) -> float:
    """The hand's least deadwood after drawing ``card`` and its best discard, valued as one term of
    :func:`after_one_draw` (with its meld bonus)."""
    dw = deadwood(hand, rules)
    if dw == 0:
        return 0.0
    return _after_drawing(hand, card, rules, meld_bonus, dw, least_after_discard(hand, rules), _shape(hand, rules))


def _after_drawing(hand: tuple[Card, ...], card: Card, rules: melds.MeldRules, meld_bonus: float, dw: int,
                   base: int, shape: tuple[list[int], list[int], int], out_bonus: float = 0.0) -> float:
    """One term of :func:`after_one_draw`: ``dw`` the hand's deadwood, ``base`` its least after a discard."""
    plain = min(dw, base + rules.values[card])  # what the card leaves if it joins no meld
    if shape[2] >= 2 or is_useful(card, shape, rules):  # (two wilds meld with any card)
        best = least_after_discard(tuple(sorted((*hand, card))), rules)
        # best <= plain: the card may always stay unmelded
        return best - meld_bonus * (plain - best) - (out_bonus if best == 0 else 0.0)
    return plain - (out_bonus if plain == 0 else 0.0)


def expected_score(hand: tuple[Card, ...], rules: melds.MeldRules, draws_from: tuple[Card, ...], draws: bool,
                   meld_bonus: float = 0.0, out_bonus: float = 0.0) -> float:
    """A hand's expected round score at a leaf: its deadwood after one more draw from ``draws_from``
    (:func:`after_one_draw`, with its bonuses) if it ``draws`` again this round, else its deadwood."""
    dw = deadwood(hand, rules)
    if dw == 0 or not draws or not draws_from:
        return float(dw)
    return after_one_draw(hand, rules, draws_from, meld_bonus, out_bonus)


class RummyEvaluator(Evaluator):
    # a hand's estimate is its deadwood after one more draw; below level plain_below, its deadwood now (the
    # sampled deals hardly change a rummy decision, the leaf does: docs/ai-notes.md)
    one_draw = True
    plain_below = 3
    meld_bonus = 0.5  # a drawn card that makes a meld counts 1.5 times its gain (measured: docs/ai-notes.md)
    margin_scale = 12.0
    draw_zone = "stock"  # a draw from the stock is a chance node over every unseen card (ai.search)
    orbit_shift = -1  # no reply of the others: it never helped here, in three sessions (docs/ai-notes.md)
    # the next seat may take the top discard: with feed f > 0 its estimate moves f of the way from a stock draw
    # to the better of that and taking the card (off: it cost points against the expert, docs/ai-notes.md)
    feed = 0.0
    feed_known = False  # ... only when the top discard melds with cards the next seat is known to hold
    feed_after_out = True  # ... also on the last turns after someone went out (False: going out is never taxed)
    #: the seat's own one-draw estimate counts each card that would let it go out this many points less (going
    #: out ends the round before the others improve further); off: against the expert it gained points on one
    #: set of deals and not on the next, nor in Threezies (docs/ai-notes.md)
    out_bonus = 0.0

    def for_level(self, level: int) -> Evaluator:
        if level >= self.plain_below or not self.one_draw:
            return self
        plain = copy.copy(self)
        plain.one_draw = False
        return plain

    def leaf(self, game: Game, state: State, seat: int) -> Leaf:
        s = state
        assert isinstance(s, RummyRoundsState)
        rules = rummy_rounds(game).meld_rules(s.options, s.round)
        keys = [self._hand_after_discard(game, s, i, rules) for i in range(s.num_players)]
        melded = [i for i, k in enumerate(keys) if i != s.went_out and deadwood(k, rules) == 0]
        if not self.one_draw:
            to_draw = set()  # every hand at its deadwood now
        elif s.went_out is None:
            to_draw = set(range(s.num_players))
        else:  # the seats still to take their last turn, from the one to move (R7); mid-turn has drawn
            mid_turn = int(s.phase != "draw")
            first = (s.to_move or 0) + mid_turn
            to_draw = {(first + j) % s.num_players for j in range(s.last_turns - mid_turn)}
        # the others' next draws: a sampled world's stock is in random order, so each other seat still to
        # draw is valued after drawing one card of it (an unbiased sample of its one-draw estimate over the
        # stock, for one card's work instead of the stock's): seat i's is the i-th from the bottom, which no
        # root move touches, so every root move of a world meets the same draws
        n = s.num_players
        next_draw = s.stock[:n] if len(s.stock) > 2 * n else []
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
                out_bonus = self.out_bonus if s.went_out is None else 0.0  # after an out: no race left
                est.append(max(floor, expected_score(key, rules, unseen, i in to_draw, self.meld_bonus, out_bonus)))
            else:
                if i in to_draw and next_draw:
                    e = max(floor, after_drawing(key, next_draw[i], rules, self.meld_bonus))
                else:  # the whole stock (few cards left), or no draw at all: no stock to sort
                    stock = tuple(sorted(s.stock)) if i in to_draw else ()
                    e = max(floor, expected_score(key, rules, stock, i in to_draw, self.meld_bonus))
                if (self.feed and i == s.to_move and s.phase == "draw" and s.discard and i in to_draw
                        and (self.feed_after_out or s.went_out is None)
                        and (not self.feed_known or is_useful(s.discard[-1], _shape(tuple(sorted(s.known[i])),
                                                                                     rules), rules))):
                    taken = max(floor, _after_taking(key, s.discard[-1], rules,
                                                     bool(s.options.get("allow_rediscard"))))
                    e -= self.feed * max(0.0, e - taken)
                est.append(e)
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
        if len(hand) > rummy_rounds(game).deal_size(s.round):
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
        rules = rummy_rounds(game).meld_rules(s.options, s.round)
        assert s.to_move is not None
        scores = discard_scores(tuple(s.hands[s.to_move]), rules)
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
        rules = rummy_rounds(game).meld_rules(s.options, s.round)
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

    def explain(self, game: Game, view: Observation, move: Move, ranked: list[tuple[Move, float]]) -> str:
        rules = rummy_rounds(game).meld_rules(view["options"], view["round"])
        hand = parse_cards(view["hand"])
        unseen = game.unseen_cards(view)
        if move["type"] == "draw":
            key = tuple(sorted(hand))
            now = deadwood(key, rules)
            # what a stock draw is worth: the mean least deadwood after it and the best discard
            stock = after_one_draw(key, rules, tuple(sorted(unseen))) if unseen else float(now)
            better = sum(1 for c in unseen if least_after_discard(tuple(sorted((*hand, c))), rules) < now)
            odds = f"{better} of the {len(unseen)} unseen cards would lower it"
            if not view["discard"]:
                return f"draws from the stock (no discard to take): deadwood {now} now, {odds}"
            top = parse_card(view["discard"][-1])
            scores = discard_scores(tuple(sorted((*hand, top))), rules)
            after = min(v for c, v in scores.items() if c != top or view["options"].get("allow_rediscard"))
            if move["source"] == "discard":
                return (f"takes {CARD_NAMES[top]} from the discard pile: with it the best discard leaves "
                        f"{after} deadwood (now {now}), against {stock:.1f} expected from a stock draw")
            return (f"draws from the stock: the best discard after it leaves {stock:.1f} deadwood on average "
                    f"({odds}), against {after} with {CARD_NAMES[top]} from the discard pile (now {now})")
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
            text += (f"; keeps {' '.join(CARD_NAMES[c] for c in cards)}, which {plural(outs, 'unseen card')} "
                     f"would complete")
        return text


def _after_taking(hand: tuple[Card, ...], top: Card, rules: melds.MeldRules, rediscard: bool) -> float:
    """The least deadwood of ``hand`` after taking ``top`` from the discard pile and its best discard."""
    if not is_useful(top, _shape(hand, rules), rules) and sum(1 for c in hand if rules.is_wild(c)) < 2:
        dw = deadwood(hand, rules)
        return float(min(dw, least_after_discard(hand, rules) + rules.values[top]))
    scores = discard_scores(tuple(sorted((*hand, top))), rules)
    return float(min((v for c, v in scores.items() if c != top or rediscard), default=99))


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
