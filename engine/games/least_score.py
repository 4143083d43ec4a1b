"""Least Score (RULES.md §5): shed cards in legal groups, keep the lowest hand, declare at the right time.

Each player holds 5 hidden cards (A=1, 2-10 face, J/Q/K 10). A turn is either a
**declare** (not in a seat's first turn of a deal) or two steps: **discard**
one card or a legal group (R3), then **pick** one card — any card of the floor
(the previous player's discards) or the top of the deck. The rest of the old
floor goes dead and the discards become the new floor. A declare ends the deal
and scores it (R5); a player whose total goes over the threshold is knocked
out; deals continue among the rest until one player remains.

Moves::

    {"type": "declare"}
    {"type": "discard", "cards": ["5C", "6D", "7H"]}
    {"type": "pick", "source": "deck"}
    {"type": "pick", "source": "floor", "card": "7S"}

Readings of the rules, written down where the text leaves a choice:

* **The turn is two atomic moves** (``phase`` ``discard`` then ``pick``), so
  each step's legal list is short (a 5-card hand has a handful of groups; the
  floor at most 5 cards plus the deck) and a client can validate any step. The
  declare is offered only in the ``discard`` phase: it replaces the whole turn.
* **Declaring** (R4, seed rule 5: "not in the first round"): a seat may declare
  once it has completed a turn in the current deal (``played[seat]``), so in
  the first orbit nobody may (LS9).
* **Groups** (R3): a pair, or four cards of one rank (three never); a sequence
  of exactly 3 or 5 consecutive ranks in any suits (``sequence_same_suit``: one
  suit), the ace below the 2 or above the K but never both (K-A-2 is no
  sequence); a flush of 5 cards of one suit. With two decks identical cards are
  interchangeable: ``7H 7H`` is a pair, and a sequence needs distinct ranks.
* **The floor**: any one card of the previous player's discards may be picked
  (seed rule 4); after the pick the rest of that floor is dead. The turned-up
  card of the deal is the first floor.
* **Reshuffle** (R7): when a pick from the deck finds it empty, the dead pile
  (never the floor nor the discards of this turn) is shuffled into a new deck
  with :func:`~engine.game.chance_rng`. Hands, floor and discards hold at most
  40 of 52 cards (6 players) or 50 of 104 (8), so the deck pick is always
  possible.
* **Public information**: the floor, this turn's discards and the dead pile
  are face up (dead cards are listed in the view; after a reshuffle they are
  back in the hidden deck). A card picked from the floor is ``known`` to be in
  that hand until that seat discards a card of the same value (one copy is
  forgotten per copy discarded: with two decks nobody can tell which twin
  went).
* **Scoring a declare** (R5): the declarer is right when its total is the
  lowest — ties included, unless ``tie_is_false_declare``. Right: the declarer
  scores 0 and every other player still in scores its total minus the
  declarer's. Wrong: every other player scores 0 and the declarer scores
  20 + (its total − the lowest total).
* **Knock-out** (R6): over the threshold (``> threshold``), never at it (LS8).
  Knocked-out seats stay in the state with an empty hand and ``out[seat]``
  set; ``to_move`` skips them, they are dealt nothing and score nothing. The
  next deal is dealt by the next seat still in, left of the last dealer, and
  the seat left of it (among those still in) starts. When one seat remains it
  wins; when every seat still in crosses in the same deal the lowest total
  wins, equal totals share (kept as written, though R5's scoring never
  does that: see :func:`winners_after_deal`). When the game ends the hands of
  the last deal stay where they are and every view shows them (``hands``).
* **Loop guard** (C7): a deal that reaches ``max_turns_per_round`` completed
  turns (discard + pick; declares end the deal anyway) is scored as it stands
  as if the lowest hand had declared: the lowest total scores 0, every other
  player its total minus the lowest. Nobody takes the 20-point penalty for a
  declare nobody made, and points still accrue (unless every hand ties), so
  even players who never declare cross the threshold and the game ends.
* Discards list their cards in rank order, a sequence in sequence order
  (``QS KH AD``); a client may send them in any order.

Speed (``bench/playouts.py``, ``least_score_actions_per_s``): hands are kept
sorted by rank, then suit, so the ranks of a hand are a sorted tuple that
indexes a lazily built table of the group shapes it holds (at most 8,567
keys); and :meth:`LeastScore.apply` copies on write — the new state shares
the lists a move does not change with the old one, which is never mutated.
"""

from __future__ import annotations

import random
from bisect import insort
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise, product
from typing import Any

from engine.cards import CARD_NAMES, Card, parse_card, parse_cards, standard_deck
from engine.errors import (
    EngineError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidSetupError,
)
from engine.game import (
    MAX_TURNS_OPTION,
    Event,
    Game,
    GameInfo,
    Move,
    Observation,
    OptionSpec,
    State,
    card_field,
    chance_rng,
    hands_from_view,
    hidden_zone,
    list_field,
    view_state_fields,
)
from engine.registry import register
from engine.validation import CARD, CARDS, MoveTable, choice

#: The fields of each move type (``Game.move_fields``).
MOVE_FIELDS: MoveTable = {
    "declare": {},
    "discard": {"cards": CARDS},
    "pick": {"source": choice("deck", "floor"), "card": CARD},
}

HAND_SIZE = 5
FALSE_DECLARE_PENALTY = 20
THRESHOLDS = (25, 50, 100)
DISCARD, PICK, OVER = "discard", "pick", "over"

# Card attributes by card int (standard cards only: the game has no jokers).
RANK: tuple[int, ...] = tuple(c % 13 + 1 for c in range(52))
SUIT: tuple[int, ...] = tuple(c // 13 for c in range(52))
VALUE: tuple[int, ...] = tuple(min(c % 13 + 1, 10) for c in range(52))
# Hands are sorted by this key: rank first, then suit.
RANK_ORDER: tuple[int, ...] = tuple((c % 13) * 4 + c // 13 for c in range(52))
_rank_key = RANK_ORDER.__getitem__
_CARD_OF: dict[str, Card] = {name: c for c, name in enumerate(CARD_NAMES[:52])}

# The worst single-deal score: a false declare holding 50 against a lowest hand of 1.
_MAX_DEAL_SCORE = FALSE_DECLARE_PENALTY + 5 * 10 - 1


# ---------------------------------------------------------------------------
# Groups (R3) and hand values


def hand_total(cards: Iterable[Card]) -> int:
    """A hand's count (R1): A=1, 2-10 face value, J/Q/K 10. ``KS QH 2D AC`` totals 23 (LS7)."""
    return sum(map(VALUE.__getitem__, cards))


def _is_sequence(ranks: Sequence[int]) -> bool:
    """Consecutive distinct ranks, the ace low (A-2-3) or high (Q-K-A), never both (K-A-2)."""
    rs = sorted(ranks)
    if all(b == a + 1 for a, b in pairwise(rs)):
        return True
    if rs[0] == 1:  # try the ace above the king
        return all(b == a + 1 for a, b in pairwise([*rs[1:], 14]))
    return False


def is_legal_group(cards: Sequence[Card], sequence_same_suit: bool = False) -> bool:
    """Whether ``cards`` may be discarded together (R3).

    One card; a pair (``7S 7H``) or four of a kind (``KS KH KD KC``), never
    three (``7S 7H 7D``); a sequence of exactly 3 or 5 consecutive ranks in any
    suits (``5C 6D 7H``; ``QS KH AD`` and ``AD 2C 3S`` but not ``KH AD 2C``;
    one suit only with ``sequence_same_suit``); a flush of 5 cards of one suit
    (``2H 5H 9H JH KH``).
    """
    n = len(cards)
    if n == 1:
        return True
    ranks = [RANK[c] for c in cards]
    if n in (2, 4) and len(set(ranks)) == 1:
        return True
    if n == 5 and len({SUIT[c] for c in cards}) == 1:
        return True
    if n in (3, 5):
        if sequence_same_suit and len({SUIT[c] for c in cards}) != 1:
            return False
        return _is_sequence(ranks)
    return False


_SET, _SEQ = 0, 1
# ranks of a hand (sorted) -> the position tuples of its multi-card groups that hold for any suits
_SHAPES: dict[tuple[int, ...], tuple[tuple[int, tuple[int, ...]], ...]] = {}


def _shapes(ranks: tuple[int, ...]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The multi-card groups of a hand whose sorted ranks are ``ranks``, by positions in the hand.

    Kind ``_SET`` (pair, four of a kind) or ``_SEQ`` (sequence: needs one suit
    under ``sequence_same_suit``; positions in sequence order, so Q-K-A lists
    the ace last). Flushes depend on suits only and are found apart. Built
    once per rank pattern (at most 8,567 of them).
    """
    found = _SHAPES.get(ranks)
    if found is not None:
        return found
    at: dict[int, list[int]] = {}
    for p, r in enumerate(ranks):
        at.setdefault(r, []).append(p)
    out: list[tuple[int, tuple[int, ...]]] = []
    for ps in at.values():
        for size in (2, 4):
            out += [(_SET, pos) for pos in combinations(ps, size)]
    if len(at) >= 3:
        for size in (3, 5):
            for low in at:  # ranks low .. low+size-1, where 14 is the ace above the king
                if low + size > 15:
                    continue
                spots = [at.get(1 if r == 14 else r) for r in range(low, low + size)]
                if all(spots):
                    out += [(_SEQ, pos) for pos in product(*spots)]  # type: ignore[arg-type]
    result = tuple(out)
    _SHAPES[ranks] = result
    return result


def legal_groups(hand: Sequence[Card], sequence_same_suit: bool = False) -> list[tuple[Card, ...]]:
    """Every distinct legal discard of ``hand`` (R3), each a tuple in rank order: singles first.

    ``hand`` need not be sorted. Identical cards (two decks) give each group once.
    """
    cards = sorted(hand, key=_rank_key)
    return _groups_of_sorted(cards, sequence_same_suit)


def _groups_of_sorted(cards: list[Card], same_suit: bool) -> list[tuple[Card, ...]]:
    twins = len(set(cards)) != len(cards)
    if twins:
        out: list[tuple[Card, ...]] = list(dict.fromkeys((c,) for c in cards))
    else:
        out = [(c,) for c in cards]
    shapes = _shapes(tuple([RANK[c] for c in cards]))
    for kind, pos in shapes:
        group = tuple([cards[p] for p in pos])
        if kind == _SEQ and same_suit and len({SUIT[c] for c in group}) != 1:
            continue
        out.append(group)
    if twins:
        out = list(dict.fromkeys(out))
    if len(cards) == 5 and len({SUIT[c] for c in cards}) == 1:
        flush = tuple(cards)
        if flush not in out:  # a straight flush is already listed as a sequence
            out.append(flush)
    return out


# ---------------------------------------------------------------------------
# Deal scoring (R5) as pure functions


def declare_scores(hand_totals: Sequence[int | None], declarer: int, tie_is_false_declare: bool = False) -> list[int]:
    """The scores of a deal that ``declarer`` ended (R5); ``None`` marks a seat knocked out (scores 0).

    >>> declare_scores([10, 16, 17], 0)   # LS1
    [0, 6, 7]
    >>> declare_scores([10, 8, 15], 0)    # LS2
    [22, 0, 0]
    """
    mine = hand_totals[declarer]
    assert mine is not None
    others = [t for i, t in enumerate(hand_totals) if t is not None and i != declarer]
    lowest_other = min(others)
    right = mine < lowest_other if tie_is_false_declare else mine <= lowest_other
    if right:
        return [0 if t is None or i == declarer else t - mine for i, t in enumerate(hand_totals)]
    lowest = min(lowest_other, mine)
    return [FALSE_DECLARE_PENALTY + mine - lowest if i == declarer else 0 for i in range(len(hand_totals))]


def standing_scores(hand_totals: Sequence[int | None]) -> list[int]:
    """The scores of a deal stopped by the loop guard (C7), as if the lowest hand had declared:
    the lowest total scores 0, every other seat still in its total minus the lowest."""
    lowest = min(t for t in hand_totals if t is not None)
    return [0 if t is None else t - lowest for t in hand_totals]


def winners_after_deal(totals: Sequence[int], in_seats: Sequence[int], threshold: int) -> list[int] | None:
    """The winners once a deal is scored (R6), or ``None`` while two or more of ``in_seats`` stay in.

    A player is out when its total is **over** the threshold (at 50 of 50 it
    stays in, LS8). The last player in wins; if every player who was in crosses
    at once, the lowest total wins and equal totals share. (With R5's scoring
    that cannot happen in play — a right declarer, or the lowest hand at the
    loop guard, scores 0, and a false declare scores only the declarer — but
    the rule is kept as written.)
    """
    remaining = [i for i in in_seats if totals[i] <= threshold]
    if len(remaining) >= 2:
        return None
    if remaining:
        return remaining
    best = min(totals[i] for i in in_seats)
    return [i for i in in_seats if totals[i] == best]


# ---------------------------------------------------------------------------
# State


@dataclass(eq=True)
class LeastScoreState(State):
    """A Least Score state. ``round`` counts deals; ``turns_in_round`` completed turns of this deal."""

    hands: list[list[Card]] = card_field(2)  # sorted by rank, then suit; empty for seats knocked out
    deck: list[Card] = card_field(1)  # top card last
    floor: list[Card] = card_field(1)  # the previous player's discards: any one may be picked
    discarded: list[Card] = card_field(1)  # this turn's discards, waiting for the pick; then the floor
    dead: list[Card] = card_field(1)  # dead discards, oldest first: the next deck (R7)
    known: list[list[Card]] = card_field(2)  # per seat: cards picked from the floor, still in that hand
    played: list[bool] = list_field(1)  # per seat: has completed a turn this deal (may declare, R4)
    out: list[bool] = list_field(1)  # per seat: knocked out (R6)


def _s(state: State) -> LeastScoreState:
    assert isinstance(state, LeastScoreState)
    return state


class LeastScore(Game):
    info = GameInfo(
        id="least-score",
        name="Least Score",
        min_players=2,
        max_players=8,
        rules_section="RULES.md §5",
        summary=(
            "Hold 5 cards and keep your count low (A=1, face cards 10). Each turn discard one card, a pair, "
            "four of a kind, a sequence of 3 or 5, or a 5-card flush, then pick one of the previous player's "
            "discards or the top of the deck. Declare when you think you are lowest: right, and the others "
            "score the difference; wrong, and you score 20 plus the difference. Over the threshold you are "
            "out; the last player in wins."
        ),
        options=(
            OptionSpec("threshold", "int", 100, "A player whose total goes over this is knocked out.",
                       choices=THRESHOLDS),
            OptionSpec("sequence_same_suit", "bool", False, "Sequences must be of one suit."),
            OptionSpec("tie_is_false_declare", "bool", False,
                       "A declarer who only ties the lowest total has declared falsely."),
            MAX_TURNS_OPTION,
        ),
    )
    state_class = LeastScoreState
    move_fields = MOVE_FIELDS
    copy_on_write = True
    _decks = (standard_deck(1), standard_deck(2))  # by "two decks?" (R1); copied by _shuffled

    # -- the deck and bounds ---------------------------------------------------

    def num_decks(self, num_players: int) -> int:
        return 2 if num_players >= 7 else 1

    def deck(self, num_players: int, options: Mapping[str, Any]) -> list[Card]:
        return standard_deck(self.num_decks(num_players))

    def cards_in_play(self, state: State) -> list[Card]:
        s = _s(state)
        out = [c for h in s.hands for c in h]
        out += s.deck
        out += s.floor
        out += s.discarded
        out += s.dead
        return out

    def score_bounds(self, state: State) -> tuple[int, int]:
        return 0, state.options["threshold"] + _MAX_DEAL_SCORE

    def _invariant_problem(self, state: State) -> str | None:
        s = _s(state)
        n = s.num_players
        if len(s.hands) != n or len(s.known) != n or len(s.played) != n or len(s.out) != n:
            return f"hands, known, played and out must have one entry per seat ({n})"
        if not all(type(flag) is bool for flag in s.played + s.out):
            return "played and out must hold true or false per seat"
        for seat in range(n):
            if s.out[seat] and (s.hands[seat] or s.known[seat]) and not s.is_over:
                return f"seat {seat} is knocked out but holds cards"
            if Counter(s.known[seat]) - Counter(s.hands[seat]):
                return f"seat {seat} is said to hold known cards that are not in its hand"
            if s.hands[seat] != sorted(s.hands[seat], key=_rank_key):
                return f"hand {seat} is not sorted by rank"
        if s.is_over:
            return None
        if sum(not o for o in s.out) < 2:
            return "a deal needs at least two players still in (R6)"
        if s.phase not in (DISCARD, PICK):
            return f"phase {s.phase!r} is not discard or pick"
        mover = s.to_move
        assert mover is not None
        if s.out[mover]:
            return f"seat {mover} is knocked out and cannot be to move"
        if not s.floor:
            return "the floor is empty: it always holds the previous discards or the turned-up card (R2)"
        if (s.phase == PICK) != bool(s.discarded):
            return "the discards of this turn must be pending exactly in the pick phase"
        for seat in range(n):
            if s.out[seat]:
                continue
            size = len(s.hands[seat])
            lo, hi = (0, HAND_SIZE - 1) if (seat == mover and s.phase == PICK) else (1, HAND_SIZE)
            if not lo <= size <= hi:
                return f"hand {seat} holds {size} cards; it must hold {lo} to {hi} here (R1, R2)"
        if len(s.discarded) + len(s.hands[mover]) > HAND_SIZE:
            return "more cards discarded than a hand holds"
        return None

    # -- dealing ------------------------------------------------------------------

    def _start_game(self, state: State) -> None:
        s = _s(state)
        s.out = [False] * s.num_players
        s.dealer = chance_rng(s).randrange(s.num_players)
        self._deal(s)

    def _deal(self, s: LeastScoreState) -> None:
        """Deal 5 cards to every seat still in and turn one up as the first floor (R1, R2)."""
        cards = _shuffled(self._decks[s.num_players >= 7], chance_rng(s))
        n = s.num_players
        s.hands = [[] for _ in range(n)]
        for seat in range(n):
            if not s.out[seat]:
                hand = cards[-HAND_SIZE:]
                del cards[-HAND_SIZE:]
                hand.sort(key=_rank_key)
                s.hands[seat] = hand
        s.floor = [cards.pop()]
        s.deck = cards
        s.discarded = []
        s.dead = []
        s.known = [[] for _ in range(n)]
        s.played = [False] * n
        s.turns_in_round = 0
        s.phase = DISCARD
        s.to_move = _next_in(s.out, s.dealer)

    def _setup(self, state: State, setup: Mapping[str, Any]) -> None:
        """An explicit position (C8): ``hands`` (one list per seat, empty for a seat knocked out),
        ``deck`` (top first), ``floor``, ``dead``, ``dealer``, ``round``, ``totals``, ``out``,
        ``played``, ``to_move``. The deck, if left out, is the rest of the cards, shuffled; the
        floor, if left out, is turned up from the deck. The position starts in the discard phase."""
        s = _s(state)
        n = s.num_players
        allowed = {"hands", "deck", "floor", "dead", "dealer", "round", "totals", "out", "played", "to_move"}
        extra = set(setup) - allowed
        if extra:
            raise InvalidSetupError(f"unknown setup fields {sorted(extra)}; allowed: {sorted(allowed)}")
        s.round = _setup_int(setup, "round", 1, 1, 10**6)
        s.dealer = _setup_int(setup, "dealer", 0, 0, n - 1)
        if "totals" in setup:
            s.totals = _setup_list(setup, "totals", n, int)
        s.out = _setup_list(setup, "out", n, bool) if "out" in setup else [False] * n
        for seat in range(n):
            if not s.out[seat] and s.totals[seat] > s.options["threshold"]:
                raise InvalidSetupError(f"seat {seat} is over the threshold ({s.totals[seat]}) and must be out (R6)")
        if sum(not o for o in s.out) < 2:
            raise InvalidSetupError("at least two players must still be in (R6)")
        if "hands" not in setup:
            raise InvalidSetupError("a setup needs \"hands\": one list of cards per seat")
        try:
            hands = [parse_cards(h) for h in setup["hands"]]
            deck_top_first = parse_cards(setup["deck"]) if "deck" in setup else None
            floor = parse_cards(setup["floor"]) if "floor" in setup else None
            dead = parse_cards(setup.get("dead", []))
        except (TypeError, AttributeError) as exc:
            raise InvalidSetupError("hands, deck, floor and dead are lists of cards like \"7H\"") from exc
        except EngineError as exc:
            raise InvalidSetupError(str(exc)) from exc
        if len(hands) != n:
            raise InvalidSetupError(f"setup needs {n} hands, got {len(hands)}")
        for seat, hand in enumerate(hands):
            if s.out[seat] and hand:
                raise InvalidSetupError(f"seat {seat} is knocked out and must hold no cards")
            if not s.out[seat] and not 1 <= len(hand) <= HAND_SIZE:
                raise InvalidSetupError(f"hand {seat} must hold 1 to {HAND_SIZE} cards (R1), not {len(hand)}")
        rest = Counter(self.deck(n, s.options))
        for card in [c for h in hands for c in h] + (deck_top_first or []) + (floor or []) + dead:
            if rest[card] <= 0:
                raise InvalidSetupError(f"{CARD_NAMES[card]} appears more often than the deck holds")
            rest[card] -= 1
        left = sorted(rest.elements())
        if deck_top_first is None:
            deck = _shuffled(left, chance_rng(s))
        else:
            if left:
                raise InvalidSetupError("the setup gives a deck but leaves out "
                                        + " ".join(CARD_NAMES[c] for c in left))
            deck = deck_top_first[::-1]
        if not floor:
            if floor is not None and floor == []:
                raise InvalidSetupError("the floor cannot be empty (R2)")
            if not deck:
                raise InvalidSetupError("the deck is empty and no floor is given")
            floor = [deck.pop()]
        s.hands = [sorted(h, key=_rank_key) for h in hands]
        s.deck = deck
        s.floor = floor
        s.discarded = []
        s.dead = dead
        s.known = [[] for _ in range(n)]
        s.played = _setup_list(setup, "played", n, bool) if "played" in setup else [False] * n
        s.phase = DISCARD
        s.turns_in_round = 0
        s.to_move = _setup_int(setup, "to_move", _next_in(s.out, s.dealer), 0, n - 1)
        if s.out[s.to_move]:
            raise InvalidSetupError(f"seat {s.to_move} is knocked out and cannot be to move")

    # -- moves ----------------------------------------------------------------------

    def legal_moves(self, state: State) -> list[Move]:
        """Every legal move of the seat to move: a declare (after its first turn of the deal) and every
        distinct legal discard in the discard phase (R3, R4); every distinct floor card and the deck in
        the pick phase (R2). Discards list their cards in rank order."""
        s = _s(state)
        if s.winners is not None:
            return []
        seat: int = s.to_move  # type: ignore[assignment]
        names = CARD_NAMES
        if s.phase == PICK:
            moves: list[Move] = [{"type": "pick", "source": "deck"}] if (s.deck or s.dead) else []
            floor = s.floor
            for c in (floor if len(floor) == 1 else dict.fromkeys(floor)):
                moves.append({"type": "pick", "source": "floor", "card": names[c]})
            return moves
        hand = s.hands[seat]
        moves = [{"type": "declare"}] if s.played[seat] else []
        if s.num_players >= 7 and len(set(hand)) != len(hand):  # identical cards: list each group once
            for group in _groups_of_sorted(hand, s.options["sequence_same_suit"]):
                moves.append({"type": "discard", "cards": [names[c] for c in group]})
            return moves
        for c in hand:
            moves.append({"type": "discard", "cards": [names[c]]})
        shapes = _SHAPES.get(tuple(map(RANK.__getitem__, hand)))
        if shapes is None:
            shapes = _shapes(tuple(map(RANK.__getitem__, hand)))
        if shapes:
            same_suit = s.options["sequence_same_suit"]
            for kind, pos in shapes:
                cards = [hand[p] for p in pos]
                if kind == _SEQ and same_suit and len({SUIT[c] for c in cards}) != 1:
                    continue
                moves.append({"type": "discard", "cards": [names[c] for c in cards]})
        if len(hand) == 5 and SUIT[hand[0]] == SUIT[hand[1]] == SUIT[hand[2]] == SUIT[hand[3]] == SUIT[hand[4]]:
            flush = [names[c] for c in hand]
            if not (shapes and any(len(pos) == 5 for _, pos in shapes)):  # else listed as a straight flush
                moves.append({"type": "discard", "cards": flush})
        return moves

    def _legal_moves(self, state: State) -> list[Move]:
        return self.legal_moves(state)

    def _read_move(self, state: State, move: Mapping[str, Any]) -> Any:
        kind = move["type"]
        if kind == "discard":
            return (DISCARD, [_CARD_OF[name] for name in move["cards"]])
        if kind == "pick":
            return (PICK, _CARD_OF[move["card"]] if move["source"] == "floor" else None)
        return ("declare", None)

    def _check_move(self, state: State, move: Mapping[str, Any]) -> Any:
        s = _s(state)
        seat: int = s.to_move  # type: ignore[assignment]
        kind = move["type"]
        if kind == "declare":
            if s.phase != DISCARD:
                raise IllegalMoveError("you have discarded this turn: pick a card from the floor or the deck; "
                                       "a declare replaces the whole turn (R4)")
            if not s.played[seat]:
                raise IllegalMoveError("you may not declare during your first turn of a deal (R4)")
            return ("declare", None)
        if kind == "discard":
            cards = _move_cards(move)
            if s.phase != DISCARD:
                raise IllegalMoveError("you have already discarded this turn: now pick one card from the floor "
                                       "or the deck (R2)")
            missing = Counter(cards) - Counter(s.hands[seat])
            if missing:
                raise IllegalMoveError(f"{' '.join(CARD_NAMES[c] for c in sorted(missing.elements()))} "
                                       "is not in your hand")
            if not is_legal_group(cards, s.options["sequence_same_suit"]):
                raise IllegalMoveError(f"{' '.join(CARD_NAMES[c] for c in cards)} is not a legal group: discard one "
                                       "card, a pair, four of a kind (never three), a sequence of exactly 3 or 5 "
                                       + ("of one suit " if s.options["sequence_same_suit"] else "")
                                       + "(the ace low or high, not both), or a 5-card flush (R3)")
            return (DISCARD, cards)
        if kind == "pick":
            source = move.get("source")
            if source not in ("deck", "floor"):
                raise InvalidMoveError('a pick needs "source": "deck" or "floor", e.g. '
                                       '{"type": "pick", "source": "floor", "card": "7S"}')
            if s.phase != PICK:
                raise IllegalMoveError("discard first: a turn is a discard of one card or a legal group, then "
                                       "a pick (R2)")
            if source == "deck":
                if "card" in move:
                    raise InvalidMoveError("a pick from the deck names no card: the top card is hidden")
                if not (s.deck or s.dead):
                    raise IllegalMoveError("the deck and the dead pile are empty: pick from the floor (R7)")
                return (PICK, None)
            card = _move_card(move)
            if card not in s.floor:
                floor = " ".join(CARD_NAMES[c] for c in s.floor)
                raise IllegalMoveError(f"{CARD_NAMES[card]} is not on the floor ({floor}): pick one of the previous "
                                       "player's discards or the top of the deck (R2)")
            return (PICK, card)
        raise InvalidMoveError(f"unknown move type {kind!r}; {self.info.name} moves are declare, discard, pick")

    # _play and what it calls replace every list they change instead of mutating it (see apply).

    def _play(self, state: State, action: Any) -> list[Event]:
        """Play a checked action; every list it changes is replaced, never changed (copy on write)."""
        s = _s(state)
        kind, arg = action  # arg: a fresh list of cards, a card, or None
        seat: int = s.to_move  # type: ignore[assignment]
        if kind == DISCARD:
            return self._discard(s, seat, arg)
        if kind == PICK:
            return self._pick(s, seat, arg)
        return self._end_deal(s, "declare", seat)

    def _discard(self, s: LeastScoreState, seat: int, arg: list[Card]) -> list[Event]:
        """Discard the cards ``arg`` (a fresh list) from ``seat``'s hand; they wait for the pick (R2)."""
        hands = s.hands[:]
        hand = hands[seat][:]
        for c in arg:
            hand.remove(c)
        hands[seat] = hand
        s.hands = hands
        known = s.known[seat]
        if known:
            known = known[:]
            for c in arg:
                if c in known:
                    known.remove(c)
            s.known = s.known[:]
            s.known[seat] = known
        s.discarded = arg
        s.phase = PICK
        names = CARD_NAMES
        return [{"type": "discard", "seat": seat, "cards": [names[c] for c in arg]}]

    def _pick(self, s: LeastScoreState, seat: int, card: Card | None) -> list[Event]:
        events: list[Event] = []
        floor = s.floor
        if card is None:
            deck = s.deck
            if not deck:  # R7: the dead pile becomes the new deck
                deck = _shuffled(s.dead, chance_rng(s))
                s.dead = []
                events.append({"type": "reshuffle", "cards": len(deck)})
            card = deck[-1]
            s.deck = deck[:-1]
            events.append({"type": "pick", "seat": seat, "source": "deck"})
        else:
            floor = floor[:]
            floor.remove(card)
            s.known = s.known[:]
            s.known[seat] = s.known[seat] + [card]
            events.append({"type": "pick", "seat": seat, "source": "floor", "card": CARD_NAMES[card]})
        hand = s.hands[seat][:]
        insort(hand, card, key=_rank_key)
        s.hands = s.hands[:]
        s.hands[seat] = hand
        s.dead = s.dead + floor
        s.floor = s.discarded
        s.discarded = []
        if not s.played[seat]:
            s.played = s.played[:]
            s.played[seat] = True
        s.turns_in_round += 1
        if s.turns_in_round >= s.options["max_turns_per_round"]:
            return events + self._end_deal(s, "turn_limit", None)
        s.phase = DISCARD
        out = s.out
        n = s.num_players
        nxt = seat + 1 if seat + 1 < n else 0
        while out[nxt]:
            nxt = nxt + 1 if nxt + 1 < n else 0
        s.to_move = nxt
        return events

    def _end_deal(self, s: LeastScoreState, reason: str, declarer: int | None) -> list[Event]:
        """Score the deal (R5, or C7 as it stands), knock out who went over (R6), then deal again or end."""
        n = s.num_players
        in_seats = [i for i in range(n) if not s.out[i]]
        hand_totals: list[int | None] = [None if s.out[i] else hand_total(s.hands[i]) for i in range(n)]
        if declarer is not None:
            scores = declare_scores(hand_totals, declarer, s.options["tie_is_false_declare"])
        else:
            scores = standing_scores(hand_totals)
        s.totals = [t + p for t, p in zip(s.totals, scores, strict=True)]
        s.round_scores = [*s.round_scores, scores]
        threshold = s.options["threshold"]
        knocked = [i for i in in_seats if s.totals[i] > threshold]
        if knocked:
            s.out = [o or s.totals[i] > threshold for i, o in enumerate(s.out)]
        events: list[Event] = [{
            "type": "deal_end",
            "round": s.round,
            "reason": reason,
            "declarer": declarer,
            "hands": [[CARD_NAMES[c] for c in h] for h in s.hands],
            "hand_totals": hand_totals,
            "scores": scores,
            "totals": list(s.totals),
            "knocked_out": knocked,
        }]
        winners = winners_after_deal(s.totals, in_seats, threshold)
        if winners is None:
            s.round += 1
            s.dealer = _next_in(s.out, s.dealer)
            self._deal(s)
            events.append({"type": "deal_start", "round": s.round, "dealer": s.dealer,
                           "floor": [CARD_NAMES[c] for c in s.floor]})
            return events
        s.winners = winners
        s.to_move = None
        s.phase = OVER
        events.append({"type": "game_end", "totals": list(s.totals), "winners": list(s.winners)})
        return events

    # -- views ----------------------------------------------------------------------

    def _observe(self, state: State, seat: int | None, obs: Observation) -> None:
        s = _s(state)
        names = CARD_NAMES
        own = s.hands[seat] if seat is not None else []
        obs["hand"] = [names[c] for c in own]
        obs["hand_total"] = hand_total(own)
        obs["hand_sizes"] = [len(h) for h in s.hands]
        obs["floor"] = [names[c] for c in s.floor]
        obs["discarded"] = [names[c] for c in s.discarded]
        obs["dead"] = [names[c] for c in s.dead]
        obs["dead_size"] = len(s.dead)
        obs["deck_size"] = len(s.deck)
        obs["out"] = list(s.out)
        obs["played"] = list(s.played)
        obs["known"] = [[names[c] for c in sorted(k)] for k in s.known]
        zones = [hidden_zone("hand", len(s.hands[i]), i, s.known[i])
                 for i in range(s.num_players) if i != seat and not s.out[i]]
        zones.append(hidden_zone("deck", len(s.deck)))
        obs["hidden"] = zones
        if s.is_over:  # the last deal was revealed (R4)
            obs["hands"] = [[names[c] for c in h] for h in s.hands]

    def visible_cards(self, obs: Observation) -> list[Card]:
        cards = parse_cards(obs["hand"]) + parse_cards(obs["floor"]) + parse_cards(obs["discarded"])
        cards += parse_cards(obs["dead"])
        for zone in obs["hidden"]:
            cards += parse_cards(zone.get("known", []))
        return cards

    def _state_from_view(self, obs: Observation, zone_cards: list[list[Card]], seed: int) -> State:
        hands, others = hands_from_view(obs, zone_cards, key=_rank_key)
        deck = others.get("deck", [])
        return LeastScoreState(
            **view_state_fields(obs, seed),
            hands=hands,
            deck=deck,
            floor=parse_cards(obs["floor"]),
            discarded=parse_cards(obs["discarded"]),
            dead=parse_cards(obs["dead"]),
            known=[parse_cards(k) for k in obs["known"]],
            played=list(obs["played"]),
            out=list(obs["out"]),
        )


# ---------------------------------------------------------------------------
# Private helpers


def _shuffled(cards: Sequence[Card], rng: random.Random) -> list[Card]:
    """A shuffled copy of ``cards``."""
    out = list(cards)
    rng.shuffle(out)
    return out


def _next_in(out: Sequence[bool], seat: int) -> int:
    """The first seat left of ``seat`` that is still in (R8)."""
    n = len(out)
    nxt = (seat + 1) % n
    while out[nxt]:
        nxt = (nxt + 1) % n
    return nxt


def _move_cards(move: Mapping[str, Any]) -> list[Card]:
    cards = move.get("cards")
    if not isinstance(cards, list) or not 1 <= len(cards) <= HAND_SIZE:
        raise InvalidMoveError('a discard needs "cards": a list of 1 to 5 cards, e.g. '
                               '{"type": "discard", "cards": ["7S", "7H"]}')
    parsed = [parse_card(c) for c in cards]  # a bad card raises InvalidCardError (code invalid_card)
    if any(c >= 52 for c in parsed):
        raise InvalidMoveError("Least Score is played without jokers (R1)")
    return parsed


def _move_card(move: Mapping[str, Any]) -> Card:
    if "card" not in move:
        raise InvalidMoveError('a pick from the floor names the card, e.g. {"type": "pick", "source": "floor", '
                               '"card": "7S"}')
    card = parse_card(move["card"])
    if card >= 52:
        raise InvalidMoveError("Least Score is played without jokers (R1)")
    return card


def _setup_int(setup: Mapping[str, Any], name: str, default: int, lo: int, hi: int) -> int:
    value = setup.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidSetupError(f"setup {name!r} must be an integer from {lo} to {hi}, not {value!r}")
    return value


def _setup_list(setup: Mapping[str, Any], name: str, n: int, kind: type) -> list[Any]:
    value = setup[name]
    ok = isinstance(value, list) and len(value) == n and all(
        isinstance(v, kind) and (kind is bool or not isinstance(v, bool)) for v in value)
    if not ok:
        raise InvalidSetupError(f"setup {name!r} must be a list of {n} {kind.__name__} values")
    return list(value)


GAME = register(LeastScore())
