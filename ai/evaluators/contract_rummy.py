"""Contract rummy (RULES.md §4): contract progress before going down, lay-offs after.

Leaf: each hand's expected R9 score (:data:`DEFAULT_LEAF`). A seat not yet down is measured by how
many cards its hand still *misses* to meet the hand's contract (the best
sets by natural count, the best run windows per suit, wilds filling gaps —
a quick estimate, not a solver; in hand 7, where the whole hand goes down at
once, each card held beyond the deal counts as one more missing). From that,
a chance of being caught before going down (higher when others are down
already): caught, it scores its whole hand (at least an average card's points
per card); down, a small share of it. A seat that is down scores the cards
it cannot lay off on the table, and 0.3 of the points of the others. A hand
holding bought cards is valued at no less than the points of what it would
keep once down a turn later, so that going down with a big hand is never
worse than waiting.
The value is the others' mean expected score minus the seat's, plus
``win_bonus`` (10) points where the seat holds the lowest (the round is won by
the lowest), also in a finished round: going out is worth racing for.

The others' buy decisions in the seat's own turn do not end its orbit in the
search (:meth:`ContractRummyEvaluator.turn_owner`), so a draw from the stock is
followed through the seat's discard and the next seat's turn, as taking the
discard is.

Model policy: take the discard only if it lowers the cards missing; buy it
only then, while nobody is down and never in hand 7; go down as soon as
possible; lay off whatever fits; discard the card that fits the contract
least, the most expensive first, never a wild before going down.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from ai.evaluate import Evaluator, Leaf, plural, register_evaluator
from engine.cards import CARD_NAMES, JOKER, Card, parse_card, parse_cards
from engine.game import Game, Move, Observation, State
from engine.games import contract_rummy as cr
from engine.games.contract_rummy.listing import table_index


def _is_wild(card: Card) -> bool:
    return card == JOKER or card % 13 == 1


def missing_cards(hand: list[Card] | tuple[Card, ...], round_no: int) -> int:
    """Cards the hand lacks to meet round ``round_no``'s contract (0: it can go down, roughly)."""
    return _missing(tuple(sorted(hand)), round_no)


@lru_cache(maxsize=50_000)
def _missing(hand: tuple[Card, ...], round_no: int) -> int:
    sets, runs, run_size, _ = cr.CONTRACTS[round_no]
    wilds = 0
    suit_mask = [0, 0, 0, 0]
    for c in hand:
        if _is_wild(c):
            wilds += 1
            continue
        suit, rank = divmod(c, 13)
        suit_mask[suit] |= 1 << (rank + 1)
        if rank == 0:
            suit_mask[suit] |= 1 << 14  # an ace also stands high
    used = [0, 0, 0, 0]
    missing = 0
    if runs:
        full = (1 << run_size) - 1
        windows = sorted(
            (run_size - (suit_mask[suit] & (full << low)).bit_count(), suit, full << low)
            for suit in range(4)
            for low in range(1, 16 - run_size)
        )
        taken = 0
        for miss, suit, window in windows:
            if taken == runs:
                break
            if window & used[suit]:
                continue
            used[suit] |= window
            missing += miss
            taken += 1
    if sets:
        by_rank = [0] * 13
        for c in hand:
            if not _is_wild(c):
                suit, rank = divmod(c, 13)
                if not used[suit] >> (rank + 1) & 1:
                    by_rank[rank] += 1
        best = sorted(by_rank, reverse=True)[:sets]
        missing += sum(max(0, cr.SET_SIZE - n) for n in best)
    return max(0, missing - wilds)


def _layable(s: cr.ContractRummyState) -> Collection[Card]:
    """The cards that could be laid off on the table's melds now (the engine's index of the table's lay-offs,
    cached per table)."""
    return table_index(s).keys()


#: chance that a hand not yet down is still not down when the hand ends, by the cards it misses (0, 1, 2...)
STUCK_BY_MISSING = (0.1, 0.35, 0.55, 0.7, 0.8, 0.9)
STUCK_PER_DOWN = 0.1  # and the chance grows by this for each other player already down (the end is nearer)
AVERAGE_CARD_POINTS = 8.5  # R9's points of a card, averaged over two decks and four jokers
DOWN_KEEP = 0.15  # share of its points a hand that goes down still holds at the end
LAY_OFF_KEEP = 0.3  # share of the points of cards that can be laid off still expected at the end
_POINTS = cr.CARD_POINTS


@dataclass(frozen=True, eq=False)  # hashed by identity: a cache key on every leaf
class LeafModel:
    """The settings of a not-down hand's expected score (one object, so that ``bench/ai_ab.py`` can compare
    models: ``leaf_model={...}``)."""

    stuck_by_missing: tuple[float, ...] = STUCK_BY_MISSING
    stuck_per_down: float = STUCK_PER_DOWN
    caught_card_points: float = AVERAGE_CARD_POINTS
    down_keep: float = DOWN_KEEP
    hand7_extra: bool = True  # in hand 7 each card beyond the deal counts as missing
    free_wilds: bool = False  # a wild held before going down counts no points (it will end in a meld)


#: the leaf before issue 15 (0.3 of its points once it can go down, 0.35 + 0.15 per further missing card):
#: kept to compare with (``bench/ai_ab.py --variants base 'leaf_model="old"'``)
OLD_LEAF = LeafModel((0.3, 0.35, 0.5, 0.65, 0.8, 0.95, 1.0), 0.0, 0.0, 0.0, False)


def effective_missing(hand: list[Card] | tuple[Card, ...], round_no: int, hand7_extra: bool = True) -> int:
    """:func:`missing_cards`, plus in hand 7 (R8: the whole hand goes down at once) each card held beyond
    the deal (a bought card and its penalty card) that must also find a place in the melds."""
    miss = missing_cards(hand, round_no)
    if round_no == 7 and hand7_extra:
        miss += max(0, len(hand) - cr.CONTRACTS[round_no][3])
    return miss


def expected_points(hand: list[Card] | tuple[Card, ...], down: bool, round_no: int,
                    layable: Collection[Card], others_down: int = 0, model: LeafModel = LeafModel()) -> float:
    """A hand's expected R9 score at the end of the hand.

    Down: its points, less most of the points of the cards it can lay off. Not down: with the chance of
    being caught (:data:`STUCK_BY_MISSING` by the cards it misses, more when others are down already) it
    scores all its points, otherwise what a hand that went down keeps. A card that brings the contract one
    step nearer is worth about a fifth of the hand's points: more than a wild's 20 points in the hand.
    A caught hand is valued at no fewer points than an average card's per card: a low hand's points now
    say little about the hand it will be caught with.
    """
    if down:  # its points, a card that can be laid off counting LAY_OFF_KEEP of its points
        value = 0.0
        for c in hand:
            value += _POINTS[c] * LAY_OFF_KEEP if c in layable else _POINTS[c]
        return value
    return _not_down(tuple(hand), round_no, others_down, model)


@lru_cache(maxsize=50_000)
def _not_down(hand: tuple[Card, ...], round_no: int, others_down: int, model: LeafModel) -> float:
    points = cr.card_points(hand)
    if model.free_wilds:
        points -= cr.card_points([c for c in hand if _is_wild(c)])
    miss = effective_missing(hand, round_no, model.hand7_extra)
    table = model.stuck_by_missing
    stuck = table[min(miss, len(table) - 1)]
    if miss:
        stuck = min(1.0, stuck + model.stuck_per_down * others_down)
    # a hand caught at the end holds the cards it has drawn by then, not its cards now: no fewer points
    # than an average card's for each card held
    caught = max(points, model.caught_card_points * len(hand))
    return stuck * caught + (1 - stuck) * model.down_keep * points


@dataclass(frozen=True, eq=False)  # hashed by identity: a cache key on every leaf
class FittedLeaf:
    """A hand's expected end-of-hand score read from tables fitted on expert self-play
    (``bench/contract_leaf_fit.py``: every seat at every draw, against the score it ended the hand with).

    Not down: ``per_unit[k][d]`` times ``n / 2 + points / 17`` (n cards, about one unit per average card),
    by the cards still missing ``k`` and the other players already down ``d``; hand 7 has its own row
    (nobody is down there). What a hand holds at the end is mostly what it draws by then, so its card count
    weighs as much as its points now. Down: ``down_ratio[u - 1][d]`` of the points of the ``u`` cards that
    fit no meld on the table (beyond the fitted ``u``, ``down_step`` more per card, at most all of them), and
    :data:`LAY_OFF_KEEP` of the others. A hand holding more cards than the deal (bought ones) is valued at
    no less than what it would be left with once down a turn later: its cards beyond the contract's, at the
    down ratio, plus ``delay`` points.
    """

    not_down: tuple[tuple[float, ...], ...]
    hand7: tuple[float, ...]
    down_ratio: tuple[tuple[float, ...], ...]
    down_step: float = 0.1
    delay: float = 2.0
    stuck: LeafModel | None = None  # not down: this model's value instead of the table's (and the leftover rule)
    free_wilds: bool = False  # not down: a wild held counts no points (it will end in a meld)


#: fitted on 218 hands of four experts (hands 1-7, 16,832 positions), 2026-12-02
FITTED_LEAF = FittedLeaf(
    not_down=((0.64, 0.64, 0.64), (2.29, 4.8, 6.46), (3.65, 5.66, 7.56), (4.7, 6.88, 7.56),
              (6.36, 7.75, 8.15), (7.27, 7.75, 8.15)),
    hand7=(4.81, 6.22, 6.26, 7.32, 7.8, 7.92),
    down_ratio=((0.16, 0.38, 0.69), (0.23, 0.47, 0.73), (0.28, 0.64, 0.73)),
)
#: the leaf the AI plays: :class:`LeafModel` (a hand that is down at its points, 0.3 of those it can lay
#: off), and a hand holding bought cards at no less than the points of what it would keep once down a
#: turn later (plus ``delay``); the fitted down ratios are not used (they cost points against greedy)
DEFAULT_LEAF = dataclasses.replace(FITTED_LEAF, stuck=LeafModel(), down_ratio=((1.0,),), down_step=0.0)


def _down_ratio(model: FittedLeaf, unfit: int, others_down: int) -> float:
    rows = model.down_ratio
    row = rows[min(max(unfit, 1), len(rows)) - 1]
    ratio = row[min(others_down, len(row) - 1)]
    return min(1.0, ratio + model.down_step * max(0, unfit - len(rows)))


@lru_cache(maxsize=50_000)
def _fitted_not_down(hand: tuple[Card, ...], round_no: int, others_down: int, model: FittedLeaf) -> float:
    points = cr.card_points(hand)
    n = len(hand)
    miss = effective_missing(hand, round_no)
    wild_points = cr.card_points([c for c in hand if _is_wild(c)]) if model.free_wilds else 0
    units = 0.5 * n + (points - wild_points) / 17.0
    if model.stuck is not None:
        value = _not_down(hand, round_no, others_down, model.stuck)
        left = n - cr.CONTRACTS[round_no][3] + 1
        if left > 1 and round_no != 7:
            value = max(value, _down_ratio(model, left, others_down) * points * left / n + model.delay)
        return value
    if round_no == 7:
        return model.hand7[min(miss, len(model.hand7) - 1)] * units
    row = model.not_down[min(miss, len(model.not_down) - 1)]
    value = row[min(others_down, len(row) - 1)] * units
    left = n - cr.CONTRACTS[round_no][3] + 1  # cards left once down (after the draw and the discard)
    if left > 1:
        value = max(value, _down_ratio(model, left, others_down) * points * left / n + model.delay)
    return value


def fitted_points(hand: list[Card] | tuple[Card, ...], down: bool, round_no: int, layable: Collection[Card],
                  others_down: int = 0, model: FittedLeaf = FITTED_LEAF) -> float:
    """A hand's expected score at the end of the hand by :class:`FittedLeaf`."""
    if not down:
        return _fitted_not_down(tuple(sorted(hand)), round_no, others_down, model)
    unfit = [c for c in hand if c not in layable]
    fit = sum(_POINTS[c] for c in hand if c in layable)
    return (_down_ratio(model, len(unfit), others_down) * sum(_POINTS[c] for c in unfit) + LAY_OFF_KEEP * fit)


#: the leaves ``bench/ai_ab.py`` and ``bench/contract_hands.py`` compare by name (``leaf_model="stuck"``)
NAMED_LEAVES: dict[str, LeafModel | FittedLeaf] = {
    "old": OLD_LEAF, "stuck": DEFAULT_LEAF.stuck or LeafModel(), "fitted": FITTED_LEAF, "default": DEFAULT_LEAF,
    "hybrid": dataclasses.replace(FITTED_LEAF, stuck=LeafModel()),
    "hybrid-wilds": dataclasses.replace(FITTED_LEAF, stuck=LeafModel(free_wilds=True)),
    "fitted-wilds": dataclasses.replace(FITTED_LEAF, free_wilds=True),
    "stuck-left": DEFAULT_LEAF,
}


class ContractRummyEvaluator(Evaluator):
    margin_scale = 20.0
    orbit_by_turn: bool = True  # False: the others' buys in the seat's turn end its orbit (before issue 15)
    win_bonus: float = 10.0  # points added to a leaf where the seat holds the lowest hand (wins the hand)
    leaf_model: LeafModel | FittedLeaf | str = DEFAULT_LEAF  # or "old", "stuck", "fitted" ... (bench/ai_ab.py)

    def cache_entries(self) -> int:
        return sum(f.cache_info().currsize for f in (_missing, _not_down, _fitted_not_down))

    def turn_owner(self, state: State) -> int | None:
        """The seat whose turn it is, also while the others decide whether to buy its discard (R5)."""
        assert isinstance(state, cr.ContractRummyState)
        if not self.orbit_by_turn or state.to_move is None:
            return state.to_move
        return state.turn

    def ends_round(self, game: Game, state: State, move: Move) -> bool:
        """Going down with all but at most one card (always so in hand 7: the discard after it goes out), or
        any move that plays the last card."""
        s = state
        assert isinstance(s, cr.ContractRummyState)
        held = len(s.hands[s.to_move or 0])
        if move["type"] == "go_down":
            return held - sum(len(m["cards"]) for m in move["melds"]) <= 1
        return move["type"] in ("discard", "lay_off") and held == 1

    def leaf(self, game: Game, state: State, seat: int) -> Leaf:
        s = state
        assert isinstance(s, cr.ContractRummyState)
        layable = _layable(s) if s.meld_cards else ()
        downs = sum(1 for d in s.down if d)
        model = NAMED_LEAVES[self.leaf_model] if isinstance(self.leaf_model, str) else self.leaf_model
        if isinstance(model, FittedLeaf):
            est = [fitted_points(h, bool(s.down[i]), s.round, layable, downs - bool(s.down[i]), model)
                   for i, h in enumerate(s.hands)]
        else:
            assert isinstance(model, LeafModel)
            est = [expected_points(h, bool(s.down[i]), s.round, layable, downs - bool(s.down[i]), model)
                   for i, h in enumerate(s.hands)]
        mine = est[seat]
        others = [e for i, e in enumerate(est) if i != seat]
        low = min(est)
        win = 1.0 / est.count(low) if mine == low else 0.0
        return Leaf(sum(others) / len(others) - mine + self.win_bonus * win, win)

    def round_result(self, game: Game, state: State, seat: int, round_index: int) -> Leaf:
        leaf = super().round_result(game, state, seat, round_index)
        return Leaf(leaf.value + self.win_bonus * leaf.win, leaf.win) if self.win_bonus else leaf

    def policy(self, game: Game, state: State, rng: random.Random) -> Move:
        s = state
        assert isinstance(s, cr.ContractRummyState)
        seat = s.to_move
        assert seat is not None
        if s.phase in (cr.DRAW, cr.BUY):
            top = s.discard[-1] if s.discard else None
            good = top is not None and self._wants(s, seat, top)
            if s.phase == cr.DRAW:
                return {"type": "take_discard"} if good else {"type": "draw"}
            return {"type": "buy"} if good and self._buy_pays(s, seat) else {"type": "pass"}
        moves = game.legal_moves(s)
        for kind in ("go_down", "lay_off"):
            for m in moves:
                if m["type"] == kind:
                    return m
        discards = [m for m in moves if m["type"] == "discard"]
        return max(discards, key=lambda m: self._discard_key(s, seat, parse_card(m["card"])))

    def _buy_pays(self, s: cr.ContractRummyState, seat: int) -> bool:
        """A buy (the card it wants, plus a penalty card) while nobody is down, and not in hand 7, where
        every card held must go down at once (R8)."""
        return not any(s.down) and s.round != 7 and len(s.hands[seat]) <= cr.CONTRACTS[s.round][3] + 2

    def _wants(self, s: cr.ContractRummyState, seat: int, card: Card) -> bool:
        hand = s.hands[seat]
        if s.down[seat]:
            return card in _layable(s)
        if _is_wild(card):
            return True
        return missing_cards([*hand, card], s.round) < missing_cards(hand, s.round)

    def _discard_key(self, s: cr.ContractRummyState, seat: int, card: Card) -> tuple[float, int]:
        hand = s.hands[seat]
        if _is_wild(card):
            return (-100.0, card)
        if s.down[seat]:
            return (cr.CARD_POINTS[card] - (50 if card in _layable(s) else 0), card)
        rest = list(hand)
        rest.remove(card)
        worse = missing_cards(rest, s.round) - missing_cards(hand, s.round)
        return (cr.CARD_POINTS[card] - 30.0 * worse, card)

    def explain(self, game: Game, view: Observation, move: Move, ranked: list[tuple[Move, float]]) -> str:
        hand = parse_cards(view["hand"])
        contract = view["contract"]["text"]
        miss = missing_cards(hand, view["round"])
        top = view["discard"][-1] if view["discard"] else None
        kind = move["type"]
        if kind == "go_down":
            melds = "; ".join(" ".join(m["cards"]) for m in move["melds"])
            used = sum(len(m["cards"]) for m in move["melds"])
            return f"goes down with {melds} ({contract}), leaving {plural(len(hand) - used, 'card')} in hand"
        if kind == "lay_off":
            return f"lays off {move['card']} on meld {move['meld']}: {cr.CARD_POINTS[parse_card(move['card'])]} " \
                   "points fewer in hand"
        if kind == "discard":
            card = move["card"]
            return (f"discards {card} ({cr.CARD_POINTS[parse_card(card)]} points), the card that helps least "
                    f"toward {contract}; {plural(miss, 'card')} still missing" if not view["down"][view["seat"]]
                    else f"discards {card} ({cr.CARD_POINTS[parse_card(card)]} points), which fits no meld on "
                    "the table")
        after = missing_cards([*hand, parse_card(top)], view["round"]) if top else miss
        group = _best_group(hand)
        keeps = f"; its best group is {' '.join(CARD_NAMES[c] for c in group)}" if group else ""
        if kind in ("take_discard", "buy"):
            what = "takes" if kind == "take_discard" else "buys (with a penalty card)"
            mates = _partners(parse_card(top), hand) if top else []
            joins = f", joining {' '.join(CARD_NAMES[c] for c in mates)}" if mates else ""
            change = f"instead of {miss}" if after != miss else "as before, but a better hand"
            return (f"{what} {top} from the discard pile{joins}: {plural(after, 'card')} missing for {contract} "
                    f"({change})")
        if kind == "pass":
            return (f"passes on {top}: it would leave {plural(after, 'card')} missing for {contract} "
                    f"(now {miss}){keeps}")
        if not top:
            return f"draws from the stock (no discard to take); {plural(miss, 'card')} missing for {contract}{keeps}"
        return (f"draws from the stock rather than taking {top}, which would leave {plural(after, 'card')} missing "
                f"for {contract} (now {miss}){keeps}")


def _partners(card: Card, hand: list[Card]) -> list[Card]:
    """The natural cards of ``hand`` that ``card`` could meld with: its rank, or its suit within 3 ranks."""
    if _is_wild(card):
        return []
    return [c for c in hand if not _is_wild(c)
            and (c % 13 == card % 13 or (c // 13 == card // 13 and 0 < abs(c - card) <= 3))]


def _best_group(hand: list[Card]) -> list[Card]:
    """The largest group of the hand's natural cards sharing a rank, or a suit within a 4-rank window."""
    naturals = [c for c in hand if not _is_wild(c)]
    best: list[Card] = []
    for c in naturals:
        same = [d for d in naturals if d % 13 == c % 13]
        near = [d for d in naturals if d // 13 == c // 13 and 0 <= d - c <= 3]
        for group in (same, near):
            if len(group) > len(best):
                best = group
    return best if len(best) >= 2 else []


EVALUATOR = register_evaluator("contract-rummy", ContractRummyEvaluator())
