"""Contract rummy (RULES.md §4): the Liverpool family — seven hands, each with a contract to meet.

2s and jokers are wild. Hand k deals one card more than its contract needs (7, 8, 9, 10, 11, 12, 12); a
turn is: take the top discard or draw from the stock (which opens the **buy window**), then optionally go
down with exactly the contract and/or lay off, then discard — or go out by getting rid of the last card.
Cards left in hand score R9 points; the lowest total after the last hand wins.

Moves (JSON, ``type`` first):

* phase ``draw`` (the player whose turn it is): ``{"type": "take_discard"}`` or ``{"type": "draw"}``.
* phase ``buy`` (R5): a draw from the stock makes ``to_move`` each seat that may buy, in seat order after
  the player whose turn it is; each answers ``{"type": "buy"}`` or ``{"type": "pass"}``. The first buyer
  takes the top discard and the top stock card (the penalty); then — or when everyone passed — the player
  whose turn it is gets the top stock card and ``to_move`` is theirs again, in phase ``play``. ``turn`` is
  always the seat whose turn it is.
* phase ``play``: ``{"type": "go_down", "melds": [{"kind": "set", "cards": ["7S", "7H", "JK"]},
  {"kind": "run", "cards": ["5H", "6H", "2C", "8H"], "stands_for": ["5H", "6H", "7H", "8H"]}]}``;
  ``{"type": "lay_off", "card": "7H", "meld": 3, "wild_to": "low"}`` (``meld`` indexes the table's meld
  list; ``end``: ``"low"``/``"high"`` where a card extends a run, ``wild_to`` where a natural card
  replaces the wild standing for it and the wild moves to that end); ``{"type": "discard", "card": "9C"}``.
  ``end``/``wild_to`` may be left out when there is only one choice; a run's ``stands_for`` may be left
  out when the wilds' places are forced.

Readings of the rules, written down where the text leaves a choice:

* Decks (R1): option ``decks`` 0 means "by player count" (2 for 3-4 players, 3 for 5-8);
  ``jokers_per_deck`` defaults to 2 (so 4 or 6 jokers).
* Naturalness (R3) comes from the place a card takes: a 2 in the place of its own suit's 2 in a run, or
  in a set of 2s, is natural; jokers never are. In a set of 2s the wild places take jokers. Every meld
  needs at least one natural card whatever ``wild_limit`` says.
* A wild in a set stands for the set's rank (its suit means nothing); the view gives a set's ``rank``
  and a run's ``stands_for`` card by card.
* A run has 4 to 13 cards: an ace is low (A-2-3-4) or high (J-Q-K-A), never both in one run.
* Two sets of one rank, or two runs of one suit, may be part of the same contract (nothing forbids it).
* Going down (R6) must leave at least one card in hand to discard (a turn ends with a discard, R4).
  ``contract_meld_size: exact`` limits going down to melds of exactly 3 (sets) and 4 or 7 (runs); laying
  off later may still lengthen them. In hand 7 the whole hand goes down but one card, so its melds are
  always "at least", whatever the option says.
* Hand 7 (R8): ``go_down`` must use every card but one, the discard that follows goes out; the card
  taken from the discard pile this turn may not be that last card (C3) unless ``allow_rediscard``.
* C3: the card taken from the discard pile may not be discarded this turn — unless every card left in
  hand is that card (otherwise a player could be left with no legal move).
* Buying (R5): only after a draw from the stock; not by the player to move, not by the discarder of the
  top card (the up card of C1 has no discarder), not by a seat that has used ``max_buys_per_hand`` buys
  this hand (0 = unlimited). A seat that is down may buy. The bought card is known to all to be in the
  buyer's hand (``known``) until it is played, like a card taken from the discard pile; the penalty card
  is not shown. A buy when the stock is empty reshuffles (C4), and may end the round (C4) like any draw.
* Laying off (R7): only once down, not on the turn you go down, on any meld on the table (all belong to
  down players). A natural card that is the card a run's wild stands for replaces it and the wild goes to
  the end the player names (``wild_to``) — only the ends where the run stays within A..K / 2..A. The
  wild never returns to a hand. Wilds laid off must keep the meld within ``wild_limit``. Sets have no
  wild replacement: a natural is simply added.
* Going out (R8): when the hand becomes empty, by a discard or by laying off the last card. The round
  ends at once; every other hand scores R9. The whole discard pile is public; after a reshuffle (C4) its
  cards are back in the unseen stock.
* ``turns_in_round`` counts completed turns (ended by a discard); C7 ends the round at
  ``max_turns_per_round``.

What ``legal_moves`` lists for going down (the validator accepts every legal arrangement, listed or not).
The list is meant to hold a ``go_down`` whenever some legal arrangement exists (so that a client, or an AI
that plays only listed moves, can always go down); ``tests/engine/test_contract_rummy_go_down.py`` checks this
against a brute-force search for every contract and option. It holds at most :data:`MAX_LISTED_GO_DOWNS`
moves, no two of the same cards: *distinct* is as a multiset of melds, each the multiset of its cards.

* Hands 1-6: the ways to meet the contract with melds of exactly the contract sizes in which no wild stands
  where a natural card left in the hand could stand instead (a set takes every natural of its rank unless
  another set of that rank, or a run, takes the rest; a run takes every natural it covers unless the next
  run of its suit takes it). With ``contract_meld_size: at_least`` and ``wild_limit``
  not_more_than_naturals or fewer_than_naturals, also the ways with a run longer than the contract's that
  is *minimal*: no run of at least the contract size inside it meets the wild limit with its natural cards
  (5H-JK-7H-2C-9H under fewer_than_naturals, where every four places hold two wilds); such ways always
  leave a card to discard. Order: the ways with runs of the contract size (fewest wilds first, roughly),
  then those with a longer run; when both kinds together are more than the cap, the longer ones keep
  ``MAX_LISTED_GO_DOWNS // 4`` places (all of them if they are fewer). With ``contract_meld_size: exact``
  only melds of exactly 3 / 4 / 7 cards are listed, as only those are legal.
* Hand 7: the ways to lay down all but one card as a set and two runs of any lengths: for each card that
  may be left (C3), each split of the natural cards among the melds — two runs of one suit take one each of
  a card held twice and may share the single cards out in any way, at a rank (3-6D / 7-JD) or crossing
  (3-4-5-JK-7D / 6-JK-8-9D) — and each share of the wilds among the melds. Order: by the set's rank, the
  card left and the split; the first way found for each split comes first, then the other ways (other
  wild counts per meld), so that the cap cuts off wild shares before it cuts off a split.
* Wilds, in every hand: where a run's wilds sit and which wild cards are used are collapsed to one
  canonical form: jokers before 2s (2s by suit; a set of 2s takes jokers as its wilds, the other 2s
  may be wilds in the runs), a run's extra wilds extend it upwards first, and a run whose places include
  its suit's 2 holds that 2 there, as a natural card (in hand 7 a run extends downwards to reach it).

Other arrangements (longer melds where the contract sizes do, other wild choices) are for the client to
send. See :mod:`engine.contracts` for the searches and their limits.

Listed moves are shared, read-only dicts (go-downs are cached per hand, lay-offs per meld): copy one
before changing it.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engine import contracts
from engine.cards import CARD_NAMES, JOKER, SUITS, Card, cards_str, parse_card, parse_cards, standard_deck
from engine.contracts import TableMeld
from engine.errors import (
    IllegalMoveError,
    InvalidCardError,
    InvalidMoveError,
    InvalidOptionError,
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
from engine.validation import CARD, CARDS, INDEX, MoveTable, choice, objects

#: The fields of each move type (``Game.move_fields``).
MOVE_FIELDS: MoveTable = {
    "take_discard": {}, "draw": {}, "buy": {}, "pass": {},
    "go_down": {"melds": objects(kind=choice("set", "run"), cards=CARDS, stands_for=CARDS)},
    "lay_off": {"card": CARD, "meld": INDEX, "end": choice("low", "high"), "wild_to": choice("low", "high")},
    "discard": {"card": CARD},
}

DRAW, BUY, PLAY = "draw", "buy", "play"

# hand -> (sets, runs, run size, cards dealt)  (R2; CR1)
CONTRACTS: dict[int, tuple[int, int, int, int]] = {
    1: (2, 0, 4, 7),
    2: (1, 1, 4, 8),
    3: (0, 2, 4, 9),
    4: (3, 0, 4, 10),
    5: (1, 1, 7, 11),
    6: (1, 2, 4, 12),
    7: (1, 2, 4, 12),
}
SET_SIZE = 3
MAX_LISTED_GO_DOWNS = 24

# R9: points for a card left in hand, by card
CARD_POINTS: tuple[int, ...] = tuple(
    25 if c == JOKER else 15 if c % 13 == 0 else 20 if c % 13 == 1 else 10 if c % 13 >= 9 else 5
    for c in range(53)
)


def card_points(cards: Sequence[Card]) -> int:
    """R9: 3-9 score 5, T-K 10, an ace 15, a 2 20, a joker 25 (CR2: ``3S 9D TC KH AS 2C JK`` is 90)."""
    return sum(CARD_POINTS[c] for c in cards)


def contract_text(hand_no: int) -> str:
    sets, runs, run_size, _ = CONTRACTS[hand_no]
    parts = []
    if sets:
        parts.append(f"{sets} set{'s' if sets > 1 else ''} of 3")
    if runs:
        parts.append(f"{runs} run{'s' if runs > 1 else ''} of {run_size}")
    return " + ".join(parts)


@dataclass(eq=True)
class ContractRummyState(State):
    """A contract rummy state (plus the fields every state has). Melds are parallel lists."""

    hands: list[list[Card]] = card_field(2)  # each sorted
    stock: list[Card] = card_field(1)  # top card last
    discard: list[Card] = card_field(1)  # top card last
    known: list[list[Card]] = card_field(2)  # per seat: cards all players know are in that hand
    down: list[int] = list_field(1)  # 1 once the seat has gone down this hand
    buys: list[int] = list_field(1)  # buys per seat this hand
    turn: int = 0  # the seat whose turn it is (to_move is a buyer during a buy window)
    discarder: int = -1  # the seat that discarded the top discard (-1: nobody)
    taken: Card | None = None  # the card taken from the discard pile this turn (C3)
    went_down_now: bool = False  # the player to move went down this turn (no laying off, R6)
    meld_owner: list[int] = list_field(1)
    meld_suit: list[int] = list_field(1)  # -1 for a set
    meld_low: list[int] = list_field(1)  # a set's rank, a run's lowest position (14 = ace high)
    meld_cards: list[list[Card]] = card_field(2)  # a run's cards low to high
    went_out: int | None = None


class ContractRummy(Game):
    info = GameInfo(
        id="contract-rummy",
        name="Contract rummy",
        min_players=3,
        max_players=8,
        rules_section="RULES.md §4",
        summary=(
            "Seven hands of Liverpool rummy: each hand has a contract (two sets of 3, a run of 4 and a set of "
            "3, ...) that you must lay down at once before laying off on the table. 2s and jokers are wild. "
            "Buy discards out of turn at the price of a penalty card. Cards left in hand score; lowest wins."
        ),
        options=(
            OptionSpec("decks", "int", 0, "Number of 52-card decks; 0 means 2 for 3-4 players, 3 for 5-8.",
                       minimum=0, maximum=4),
            OptionSpec("jokers_per_deck", "int", 2, "Jokers added per deck (always wild, 25 points).",
                       minimum=0, maximum=4),
            OptionSpec("play_hand_7", "bool", True,
                       "Play hand 7: two runs of 4 and a set of 3, going down with the whole hand at once."),
            OptionSpec("contract_meld_size", "enum", "at_least",
                       "at_least: contract melds may be longer than the minimum; exact: exactly 3 / 4 / 7 cards.",
                       choices=("at_least", "exact")),
            OptionSpec("wild_limit", "enum", "at_least_one_natural",
                       "Wilds per meld: at least one natural card; not more wilds than naturals; fewer wilds "
                       "than naturals.", choices=contracts.WILD_LIMITS),
            OptionSpec("max_buys_per_hand", "int", 0, "Buys allowed per player per hand; 0 means unlimited.",
                       minimum=0, maximum=50),
            OptionSpec("allow_rediscard", "bool", False,
                       "Allow discarding the card just taken from the discard pile in the same turn."),
            MAX_TURNS_OPTION,
        ),
    )
    state_class = ContractRummyState
    move_fields = MOVE_FIELDS
    copy_on_write = True

    # -- rules per hand -------------------------------------------------------

    def num_hands(self, options: Mapping[str, Any]) -> int:
        return 7 if options.get("play_hand_7", True) else 6

    def deal_size(self, hand_no: int) -> int:
        return CONTRACTS[hand_no][3]

    def num_decks(self, num_players: int, options: Mapping[str, Any]) -> int:
        return options.get("decks") or (2 if num_players <= 4 else 3)

    def deck(self, num_players: int, options: Mapping[str, Any]) -> list[Card]:
        packs = self.num_decks(num_players, options)
        return standard_deck(packs, jokers=packs * options.get("jokers_per_deck", 2))

    def _check_option_combination(self, options: dict[str, Any], num_players: int) -> None:
        need = num_players * 12 + 2
        have = len(self.deck(num_players, options))
        if have < need:
            raise InvalidOptionError(
                "decks", f"{have} cards are too few for {num_players} players: hand 6 deals {num_players * 12} "
                "cards plus the up card and a stock")

    def cards_in_play(self, state: State) -> list[Card]:
        s = _s(state)
        out = [c for h in s.hands for c in h]
        out += s.stock
        out += s.discard
        for m in s.meld_cards:
            out += m
        return out

    def score_bounds(self, state: State) -> tuple[int, int]:
        worst = card_points(self.deck(state.num_players, state.options))
        return 0, worst * self.num_hands(state.options)

    def _melds(self, s: ContractRummyState) -> list[TableMeld]:
        return [(su, lo, tuple(cs)) for su, lo, cs in zip(s.meld_suit, s.meld_low, s.meld_cards, strict=True)]

    def _invariant_problem(self, state: State) -> str | None:
        s = _s(state)
        n = s.num_players
        if any(len(x) != n for x in (s.hands, s.known, s.down, s.buys)):
            return "hands, known, down and buys need one entry per seat"
        if not (len(s.meld_owner) == len(s.meld_suit) == len(s.meld_low) == len(s.meld_cards)):
            return "the meld lists must have the same length"
        if s.is_over:
            return None
        if s.phase not in (DRAW, BUY, PLAY):
            return f"phase {s.phase!r} is not draw, buy or play"
        if not 1 <= s.round <= self.num_hands(s.options):
            return f"hand {s.round} is not played with these options"
        if not 0 <= s.turn < n or not -1 <= s.discarder < n:
            return "turn or discarder is not a seat"
        if (s.phase == BUY) == (s.to_move == s.turn):
            return "to_move must be the seat whose turn it is, except during a buy window"
        deal = self.deal_size(s.round)
        for seat, hand in enumerate(s.hands):
            if hand != sorted(hand):
                return f"hand {seat} is not sorted"
            if Counter(s.known[seat]) - Counter(hand):
                return f"seat {seat} is said to hold cards it does not hold"
            if not s.down[seat]:
                want = deal + 2 * s.buys[seat] + (1 if seat == s.turn and s.phase == PLAY else 0)
                if len(hand) != want:
                    return f"hand {seat} holds {len(hand)} cards; it should hold {want} (R2, R5)"
            elif not hand:
                return f"hand {seat} is empty but the round goes on"
        limit = s.options["wild_limit"]
        for owner, meld in zip(s.meld_owner, self._melds(s), strict=True):
            if not 0 <= owner < n or not s.down[owner]:
                return "a meld belongs to a seat that is not down"
            problem = contracts.meld_problem(meld, limit)
            if problem:
                return problem
        return None

    # -- dealing --------------------------------------------------------------

    def _start_game(self, state: State) -> None:
        s = _s(state)
        s.dealer = chance_rng(s).randrange(s.num_players)
        self._deal(s)

    def _reset_hand(self, s: ContractRummyState) -> None:
        n = s.num_players
        s.known = [[] for _ in range(n)]
        s.down = [0] * n
        s.buys = [0] * n
        s.meld_owner, s.meld_suit, s.meld_low, s.meld_cards = [], [], [], []
        s.taken = None
        s.discarder = -1
        s.went_down_now = False
        s.went_out = None
        s.turns_in_round = 0
        s.phase = DRAW
        s.turn = (s.dealer + 1) % n
        s.to_move = s.turn

    def _deal(self, s: ContractRummyState) -> None:
        cards = self.deck(s.num_players, s.options)
        chance_rng(s).shuffle(cards)
        k = self.deal_size(s.round)
        s.hands = [sorted(cards[i * k:(i + 1) * k]) for i in range(s.num_players)]
        rest = cards[s.num_players * k:]
        s.discard = [rest.pop()]  # C1
        s.stock = rest
        self._reset_hand(s)

    def _setup(self, state: State, setup: Mapping[str, Any]) -> None:
        s = _s(state)
        allowed = {"hands", "stock", "discard", "dealer", "round", "totals", "to_move", "melds", "buys"}
        extra = set(setup) - allowed
        if extra:
            raise InvalidSetupError(f"unknown setup fields {sorted(extra)}; allowed: {sorted(allowed)}")
        n = s.num_players
        s.round = _setup_int(setup, "round", 1, 1, self.num_hands(s.options))
        s.dealer = _setup_int(setup, "dealer", 0, 0, n - 1)
        if "totals" in setup:
            totals = setup["totals"]
            if not (isinstance(totals, list) and len(totals) == n
                    and all(isinstance(t, int) and not isinstance(t, bool) for t in totals)):
                raise InvalidSetupError(f"totals must be a list of {n} integers")
            s.totals = list(totals)
        self._reset_hand(s)
        buys = setup.get("buys", [0] * n)
        if not (isinstance(buys, list) and len(buys) == n
                and all(isinstance(b, int) and not isinstance(b, bool) and b >= 0 for b in buys)):
            raise InvalidSetupError(f"buys must be a list of {n} non-negative integers")
        s.buys = list(buys)
        try:
            hands = [parse_cards(h) for h in setup.get("hands", [])]
            stock_top_first = parse_cards(setup["stock"]) if "stock" in setup else None
            discard = parse_cards(setup["discard"]) if "discard" in setup else None
        except (TypeError, AttributeError) as exc:
            raise InvalidSetupError('hands, stock and discard are lists of cards like "7H"') from exc
        if len(hands) != n:
            raise InvalidSetupError(f"setup needs {n} hands, got {len(hands)}")
        limit = s.options["wild_limit"]
        for spec in setup.get("melds", []):
            if not isinstance(spec, Mapping) or not isinstance(spec.get("owner"), int) \
                    or not 0 <= spec["owner"] < n:
                raise InvalidSetupError('a setup meld is {"owner": seat, "kind": "set"|"run", "cards": [...]}')
            try:
                meld = self._parse_meld(spec, limit)
            except (InvalidMoveError, IllegalMoveError) as exc:
                raise InvalidSetupError(f"setup meld: {exc}") from exc
            self._add_meld(s, spec["owner"], meld)
            s.down[spec["owner"]] = 1
        k = self.deal_size(s.round)
        for seat, hand in enumerate(hands):
            want = k + 2 * s.buys[seat]
            if not s.down[seat] and len(hand) != want:
                raise InvalidSetupError(f"hand {s.round} deals {k} cards (R2) and seat {seat} bought "
                                        f"{s.buys[seat]} times, so hand {seat} needs {want}, not {len(hand)}")
            if s.down[seat] and not hand:
                raise InvalidSetupError(f"seat {seat} is down with no cards: it would have gone out")
        rest = Counter(self.deck(n, s.options))
        on_table = [c for m in s.meld_cards for c in m]
        for card in [c for h in hands for c in h] + on_table + (stock_top_first or []) + (discard or []):
            if rest[card] <= 0:
                raise InvalidSetupError(f"{CARD_NAMES[card]} appears more often than the deck holds")
            rest[card] -= 1
        left = sorted(rest.elements())
        if stock_top_first is None:
            chance_rng(s).shuffle(left)
            stock = left
        else:
            if left:
                raise InvalidSetupError("the setup gives a stock but leaves out " + cards_str(left))
            stock = stock_top_first[::-1]
        discard = discard or []
        if not discard:
            if not stock:
                raise InvalidSetupError("the stock is empty and no discard pile is given")
            discard = [stock.pop()]
        s.hands = [sorted(h) for h in hands]
        s.stock = stock
        s.discard = discard
        s.turn = _setup_int(setup, "to_move", (s.dealer + 1) % n, 0, n - 1)
        s.to_move = s.turn

    # -- moves ----------------------------------------------------------------

    def _legal_moves(self, state: State) -> list[Move]:
        s = _s(state)
        if s.phase == DRAW:
            return [_TAKE_DISCARD, _DRAW] if s.discard else [_DRAW]
        if s.phase == BUY:
            return [_BUY, _PASS]
        seat = s.turn
        hand = s.hands[seat]
        opts = s.options
        moves: list[Move] = []
        if not s.down[seat]:
            keep_out = None
            if s.round == 7 and not opts["allow_rediscard"]:
                keep_out = s.taken
            moves.extend(_go_down_moves(tuple(hand), s.round, opts["wild_limit"], keep_out,
                                        opts["contract_meld_size"] == "exact"))
        elif not s.went_down_now and s.meld_cards:
            moves.extend(self._lay_off_moves(s, hand))
        forbidden = self._forbidden_discard(s, hand)
        last = -1
        for c in hand:
            if c != last and c != forbidden:
                moves.append(_DISCARDS[c])
            last = c
        return moves

    def _forbidden_discard(self, s: ContractRummyState, hand: list[Card]) -> Card | None:
        """C3 (with this module's exception: a hand holding nothing else may discard it)."""
        t = s.taken
        if t is None or s.options["allow_rediscard"] or (hand[0] == t and hand[-1] == t):
            return None
        return t

    def _lay_off_moves(self, s: ContractRummyState, hand: list[Card]) -> list[Move]:
        index = _table_index(s)
        moves: list[Move] = []
        last = -1
        for c in hand:
            if c != last:
                last = c
                found = index.get(c)
                if found:
                    moves.extend(found)
        return moves

    def _read_move(self, state: State, move: Mapping[str, Any]) -> Any:
        kind = move["type"]
        if kind == "discard":
            return ("discard", _CARD_OF[move["card"]])
        if kind in ("draw", "take_discard", "buy", "pass"):
            return (kind, None)
        s = _s(state)
        if kind == "lay_off":
            card, index = _CARD_OF[move["card"]], move["meld"]
            meld = (s.meld_suit[index], s.meld_low[index], tuple(s.meld_cards[index]))
            where = move.get("wild_to") or move.get("end") or ""
            how = "replace" if "wild_to" in move else "end" if "end" in move else "add"
            for option in contracts.lay_off_options(meld, card, s.options["wild_limit"]):
                if option[0] == how and option[1] == where:
                    return ("lay_off", (card, index, option))
        if kind == "go_down":  # a listed go_down: runs in order with stands_for, sets in any order
            melds = []
            for spec in move["melds"]:
                cards = tuple(_CARD_OF[n] for n in spec["cards"])
                if spec["kind"] == "set":
                    rank = next((c % 13 + 1 for c in cards if c != JOKER and c % 13 != 1), 2)
                    melds.append((-1, rank, tuple(sorted(cards))))
                else:
                    first = _CARD_OF[spec["stands_for"][0]]
                    melds.append((first // 13, first % 13 + 1, cards))
            return ("go_down", tuple(melds))
        return self._check_move(state, move)

    def _check_move(self, state: State, move: Mapping[str, Any]) -> Any:
        s = _s(state)
        kind = move["type"]
        if kind in ("draw", "take_discard"):
            if s.phase != DRAW:
                raise IllegalMoveError("you have already drawn this turn (R4)" if s.phase == PLAY
                                       else "a buy window is open: answer buy or pass (R5)")
            if kind == "take_discard" and not s.discard:
                raise IllegalMoveError("the discard pile is empty: draw from the stock (C2)")
            return (kind, None)
        if kind in ("buy", "pass"):
            if s.phase != BUY:
                raise IllegalMoveError("buy and pass answer a buy window, which opens when the player to move "
                                       "draws from the stock (R5)")
            return (kind, None)
        if kind not in ("go_down", "lay_off", "discard"):
            raise InvalidMoveError(f"unknown move type {kind!r}; {self.info.name} moves are take_discard, draw, "
                                   "buy, pass, go_down, lay_off, discard")
        if s.phase != PLAY:
            if s.phase == BUY:
                raise IllegalMoveError("a buy window is open: answer buy or pass (R5)")
            raise IllegalMoveError("draw first: take the top discard or draw from the stock (R4)")
        seat = s.turn
        hand = s.hands[seat]
        if kind == "discard":
            card = _move_card(move)
            if card not in hand:
                raise IllegalMoveError(f"{CARD_NAMES[card]} is not in your hand")
            if card == self._forbidden_discard(s, hand):
                raise IllegalMoveError(f"{CARD_NAMES[card]} was just taken from the discard pile and may not be "
                                       "discarded in the same turn (C3)")
            return ("discard", card)
        if kind == "lay_off":
            return self._check_lay_off(s, seat, hand, move)
        return self._check_go_down(s, seat, hand, move)

    def _parse_meld(self, spec: Any, limit: str) -> TableMeld:
        if not isinstance(spec, Mapping) or spec.get("kind") not in ("set", "run") \
                or not isinstance(spec.get("cards"), list):
            raise InvalidMoveError('each meld is {"kind": "set" or "run", "cards": ["7H", ...], '
                                   '"stands_for": [...] (optional)}')
        cards = _cards(spec["cards"])
        sf = spec.get("stands_for")
        stand_ins = None if sf is None else _cards(sf)
        if spec["kind"] == "set":
            rank = contracts.read_set(cards, limit, stand_ins)
            return (-1, rank, tuple(sorted(cards)))
        return contracts.read_run(cards, limit, stand_ins)

    def _check_go_down(self, s: ContractRummyState, seat: int, hand: list[Card], move: Mapping[str, Any]) -> Any:
        specs = move.get("melds")
        if not isinstance(specs, list) or not specs:
            raise InvalidMoveError('a go_down move needs "melds": a list of the contract melds, e.g. '
                                   '[{"kind": "set", "cards": ["7S", "7H", "7D"]}, ...]')
        if s.down[seat]:
            raise IllegalMoveError("you are already down this hand: no more melds, only laying off (R6)")
        hand_no = s.round
        sets, runs, run_size, _ = CONTRACTS[hand_no]
        n_sets = sum(1 for m in specs if isinstance(m, Mapping) and m.get("kind") == "set")
        n_runs = sum(1 for m in specs if isinstance(m, Mapping) and m.get("kind") == "run")
        if n_sets > sets or n_runs > runs:
            raise IllegalMoveError(f"extra meld: hand {hand_no}'s contract is {contract_text(hand_no)}, and no "
                                   "other meld may be laid down (R6)")
        limit = s.options["wild_limit"]
        melds = [self._parse_meld(m, limit) for m in specs]
        if n_sets < sets or n_runs < runs:
            raise IllegalMoveError(f"hand {hand_no}'s contract is {contract_text(hand_no)}: all of it goes down at "
                                   "once (R6)")
        exact = s.options["contract_meld_size"] == "exact" and hand_no != 7
        for suit, _low, cards in melds:
            if suit >= 0 and len(cards) < run_size:
                raise IllegalMoveError(f"{cards_str(cards)}: too few cards: hand {hand_no}'s run needs "
                                       f"{run_size} (R2)")
            want = SET_SIZE if suit < 0 else run_size
            if exact and len(cards) != want:
                raise IllegalMoveError(f"{cards_str(cards)}: contract melds are exactly {want} cards "
                                       "with contract_meld_size exact (R3)")
        used = Counter(c for m in melds for c in m[2])
        have = Counter(hand)
        missing = used - have
        if missing:
            raise IllegalMoveError(f"{cards_str(sorted(missing.elements()))} not in your hand")
        left = len(hand) - sum(used.values())
        if hand_no == 7:
            if left != 1:
                raise IllegalMoveError("hand 7: go down with your whole hand but the one card you discard (R8)")
            rest = list((have - used).elements())
            if rest[0] == s.taken and not s.options["allow_rediscard"]:
                raise IllegalMoveError(f"hand 7: the card left to discard, {CARD_NAMES[rest[0]]}, was just taken "
                                       "from the discard pile and may not be discarded this turn (C3)")
        elif left < 1:
            raise IllegalMoveError("keep a card to discard: a turn ends with a discard (R4)")
        return ("go_down", tuple(melds))

    def _check_lay_off(self, s: ContractRummyState, seat: int, hand: list[Card], move: Mapping[str, Any]) -> Any:
        card = _move_card(move)
        index = move.get("meld")
        if isinstance(index, bool) or not isinstance(index, int):
            raise InvalidMoveError('a lay_off move needs "meld": the index of a meld on the table')
        end = move.get("end")
        wild_to = move.get("wild_to")
        for name, value in (("end", end), ("wild_to", wild_to)):
            if value is not None and value not in ("low", "high"):
                raise InvalidMoveError(f'"{name}" is "low" or "high"')
        if not s.down[seat]:
            raise IllegalMoveError("go down first: only a player who is down may lay off (R7)")
        if s.went_down_now:
            raise IllegalMoveError("no laying off on the turn you go down (R6)")
        if card not in hand:
            raise IllegalMoveError(f"{CARD_NAMES[card]} is not in your hand")
        if not 0 <= index < len(s.meld_cards):
            raise IllegalMoveError(f"there is no meld {index} on the table ({len(s.meld_cards)} melds)")
        meld = (s.meld_suit[index], s.meld_low[index], tuple(s.meld_cards[index]))
        options = contracts.lay_off_options(meld, card, s.options["wild_limit"])
        if not options:
            raise IllegalMoveError(f"{CARD_NAMES[card]} cannot be laid off on meld {index} "
                                   f"({cards_str(meld[2])}): the meld would not stay legal (R3, R7)")
        if wild_to is not None:
            chosen = [o for o in options if o[0] == "replace" and o[1] == wild_to]
            if not chosen:
                raise IllegalMoveError(f"{CARD_NAMES[card]} does not replace a wild that can move to the {wild_to} "
                                       f"end of meld {index} (R7)")
        elif end is not None:
            chosen = [o for o in options if o[0] == "end" and o[1] == end]
            if not chosen:
                raise IllegalMoveError(f"{CARD_NAMES[card]} cannot go at the {end} end of meld {index} (R7)")
        else:
            chosen = options
            if len(chosen) > 1:
                what = "wild_to" if chosen[0][0] == "replace" else "end"
                raise IllegalMoveError(f"{CARD_NAMES[card]} can go on meld {index} in more than one way: say "
                                       f'"{what}": "low" or "high" (R7)')
        return ("lay_off", (card, index, chosen[0]))

    # -- playing ------------------------------------------------------------------

    def _play(self, state: State, action: Any) -> list[Event]:
        s = _s(state)
        kind, arg = action
        if kind == "take_discard":
            card = s.discard[-1]
            s.discard = s.discard[:-1]
            seat = s.turn
            _hand_add(s, seat, card)
            _known_add(s, seat, card)
            s.taken = card
            s.phase = PLAY
            return [{"type": "take_discard", "seat": seat, "card": CARD_NAMES[card]}]
        if kind == "draw":
            events: list[Event] = [{"type": "draw", "seat": s.turn}]
            return events + self._next_buyer(s, s.turn)
        if kind == "pass":
            passer = s.to_move
            assert passer is not None
            return [{"type": "pass", "seat": passer}, *self._next_buyer(s, passer)]
        if kind == "buy":
            return self._buy(s)
        seat = s.turn
        if kind == "discard":
            hand = _hand_remove(s, seat, arg)
            s.discard = [*s.discard, arg]
            s.discarder = seat
            events = [{"type": "discard", "seat": seat, "card": CARD_NAMES[arg]}]
            s.turns_in_round += 1
            if not hand:
                s.went_out = seat
                return events + self._end_round(s, "went_out")
            if s.turns_in_round >= s.options["max_turns_per_round"]:
                return events + self._end_round(s, "turn_limit")
            s.turn = (seat + 1) % s.num_players
            s.to_move = s.turn
            s.phase = DRAW
            s.taken = None
            s.went_down_now = False
            return events
        if kind == "go_down":
            old_table = s.meld_cards
            for meld in arg:
                for c in meld[2]:
                    _hand_remove(s, seat, c)
                self._add_meld(s, seat, meld)
            s.down = s.down[:]
            s.down[seat] = 1
            _derive_index(s, old_table, len(old_table), len(s.meld_cards))
            s.went_down_now = True
            return [{"type": "go_down", "seat": seat,
                     "melds": [_meld_json(m, seat) for m in arg]}]
        # lay_off
        card, index, (how, end, new) = arg
        hand = _hand_remove(s, seat, card)
        s.meld_low = s.meld_low[:]
        s.meld_low[index] = new[1]
        old_table = s.meld_cards
        s.meld_cards = s.meld_cards[:]
        s.meld_cards[index] = list(new[2])
        _derive_index(s, old_table, index, index + 1)
        event: Event = {"type": "lay_off", "seat": seat, "card": CARD_NAMES[card], "meld": index}
        if how == "end":
            event["end"] = end
        elif how == "replace":
            event["wild_to"] = end
        events = [event]
        if not hand:
            s.went_out = seat
            s.turns_in_round += 1
            return events + self._end_round(s, "went_out")
        return events

    def _add_meld(self, s: ContractRummyState, owner: int, meld: TableMeld) -> None:
        s.meld_owner = [*s.meld_owner, owner]
        s.meld_suit = [*s.meld_suit, meld[0]]
        s.meld_low = [*s.meld_low, meld[1]]
        s.meld_cards = [*s.meld_cards, list(meld[2])]

    def _eligible_buyer_after(self, s: ContractRummyState, seat: int) -> int | None:
        if not s.discard:
            return None
        n = s.num_players
        cap = s.options["max_buys_per_hand"]
        i = (seat + 1) % n
        while i != s.turn:
            if i != s.discarder and (cap == 0 or s.buys[i] < cap):
                return i
            i = (i + 1) % n
        return None

    def _next_buyer(self, s: ContractRummyState, after: int) -> list[Event]:
        buyer = self._eligible_buyer_after(s, after)
        if buyer is not None:
            s.phase = BUY
            s.to_move = buyer
            return []
        return self._draw_for_turn(s)

    def _draw_card(self, s: ContractRummyState, events: list[Event]) -> Card | None:
        if not s.stock:
            # C4: shuffle the discard pile but its top card into a new stock
            if len(s.discard) > 1:
                stock = s.discard[:-1]
                chance_rng(s).shuffle(stock)
                s.stock = stock
                s.discard = s.discard[-1:]
                events.append({"type": "reshuffle", "cards": len(s.stock)})
            if not s.stock:
                return None
        card = s.stock[-1]
        s.stock = s.stock[:-1]
        return card

    def _draw_for_turn(self, s: ContractRummyState) -> list[Event]:
        events: list[Event] = []
        card = self._draw_card(s, events)
        if card is None:
            return events + self._end_round(s, "stock_exhausted")
        _hand_add(s, s.turn, card)
        s.taken = None
        s.phase = PLAY
        s.to_move = s.turn
        return events

    def _buy(self, s: ContractRummyState) -> list[Event]:
        buyer = s.to_move
        assert buyer is not None
        card = s.discard[-1]
        s.discard = s.discard[:-1]
        _hand_add(s, buyer, card)
        _known_add(s, buyer, card)
        s.buys = s.buys[:]
        s.buys[buyer] += 1
        events: list[Event] = [{"type": "buy", "seat": buyer, "card": CARD_NAMES[card]}]
        penalty = self._draw_card(s, events)
        if penalty is None:
            return events + self._end_round(s, "stock_exhausted")
        _hand_add(s, buyer, penalty)
        return events + self._draw_for_turn(s)

    def _end_round(self, s: ContractRummyState, reason: str) -> list[Event]:
        scores = [card_points(h) for h in s.hands]
        s.totals = [t + pts for t, pts in zip(s.totals, scores, strict=True)]
        s.round_scores = [*s.round_scores, scores]
        events: list[Event] = [{
            "type": "round_end",
            "round": s.round,
            "reason": reason,
            "went_out": s.went_out,
            "hands": [[CARD_NAMES[c] for c in h] for h in s.hands],
            "scores": scores,
            "totals": list(s.totals),
        }]
        s.taken = None
        if s.round >= self.num_hands(s.options):
            best = min(s.totals)
            s.winners = [i for i, t in enumerate(s.totals) if t == best]
            s.to_move = None
            s.phase = "over"
            events.append({"type": "game_end", "totals": list(s.totals), "winners": list(s.winners)})
            return events
        s.round += 1
        s.dealer = (s.dealer + 1) % s.num_players
        self._deal(s)
        events.append({"type": "round_start", "round": s.round, "dealer": s.dealer,
                       "contract": contract_text(s.round), "up_card": CARD_NAMES[s.discard[-1]]})
        return events

    # -- views ----------------------------------------------------------------------

    def _observe(self, state: State, seat: int | None, obs: Observation) -> None:
        s = _s(state)
        sets, runs, run_size, deal = CONTRACTS[s.round]
        obs["contract"] = {"sets": sets, "runs": runs, "set_size": SET_SIZE, "run_size": run_size, "deal": deal,
                           "text": contract_text(s.round)}
        obs["turn"] = s.turn
        obs["hand"] = [CARD_NAMES[c] for c in s.hands[seat]] if seat is not None else []
        obs["hand_sizes"] = [len(h) for h in s.hands]
        obs["stock_size"] = len(s.stock)
        obs["discard"] = [CARD_NAMES[c] for c in s.discard]
        obs["discarder"] = s.discarder
        obs["known"] = [[CARD_NAMES[c] for c in sorted(k)] for k in s.known]
        obs["buys"] = list(s.buys)
        obs["down"] = [bool(d) for d in s.down]
        obs["melds"] = [_meld_json(m, o) for o, m in zip(s.meld_owner, self._melds(s), strict=True)]
        obs["taken"] = None if s.taken is None else CARD_NAMES[s.taken]
        obs["went_down_now"] = s.went_down_now
        obs["went_out"] = s.went_out
        zones = [hidden_zone("hand", len(s.hands[i]), i, s.known[i]) for i in range(s.num_players) if i != seat]
        zones.append(hidden_zone("stock", len(s.stock)))
        obs["hidden"] = zones

    def visible_cards(self, obs: Observation) -> list[Card]:
        cards = parse_cards(obs["hand"]) + parse_cards(obs["discard"])
        for m in obs["melds"]:
            cards += parse_cards(m["cards"])
        for zone in obs["hidden"]:
            cards += parse_cards(zone.get("known", []))
        return cards

    def _state_from_view(self, obs: Observation, zone_cards: list[list[Card]], seed: int) -> State:
        hands, others = hands_from_view(obs, zone_cards)
        stock = others.get("stock", [])
        s = ContractRummyState(
            **view_state_fields(obs, seed),
            hands=hands,
            stock=stock,
            discard=parse_cards(obs["discard"]),
            known=[parse_cards(k) for k in obs["known"]],
            down=[int(d) for d in obs["down"]],
            buys=list(obs["buys"]),
            turn=obs["turn"],
            discarder=obs["discarder"],
            taken=None if obs["taken"] is None else parse_card(obs["taken"]),
            went_down_now=obs["went_down_now"],
            went_out=obs["went_out"],
        )
        for m in obs["melds"]:
            cards = parse_cards(m["cards"])
            if m["kind"] == "set":
                self._add_meld(s, m["owner"], (-1, RANK_NUMBER[m["rank"]], tuple(cards)))
            else:
                first = parse_card(m["stands_for"][0])
                self._add_meld(s, m["owner"], (first // 13, first % 13 + 1, tuple(cards)))
        return s


_CARD_OF = {name: c for c, name in enumerate(CARD_NAMES)}
RANK_NUMBER = {r: i for i, r in enumerate("A23456789TJQK", start=1)}

_TAKE_DISCARD: Move = {"type": "take_discard"}
_DRAW: Move = {"type": "draw"}
_BUY: Move = {"type": "buy"}
_PASS: Move = {"type": "pass"}
_DISCARDS: tuple[Move, ...] = tuple({"type": "discard", "card": name} for name in CARD_NAMES)


def _s(state: State) -> ContractRummyState:
    assert isinstance(state, ContractRummyState)
    return state


# Changing a state in _play: lists are shared with the state apply() copied (copy on write), so a
# list is replaced by a changed copy, never changed in place.


def _hand_add(s: ContractRummyState, seat: int, card: Card) -> None:
    hands = s.hands[:]
    hand = hands[seat][:]
    insort(hand, card)
    hands[seat] = hand
    s.hands = hands


def _hand_remove(s: ContractRummyState, seat: int, card: Card) -> list[Card]:
    """Take ``card`` out of the hand; one known copy of it stops being known (identical cards are
    interchangeable: nobody can tell whether a copy left in the hand is the known one, so keeping it
    known would reveal a twin). Returns the new hand."""
    hands = s.hands[:]
    hand = hands[seat][:]
    hand.remove(card)
    hands[seat] = hand
    s.hands = hands
    known = s.known[seat]
    if card in known:
        all_known = s.known[:]
        all_known[seat] = known[:]
        all_known[seat].remove(card)
        s.known = all_known
    return hand


def _known_add(s: ContractRummyState, seat: int, card: Card) -> None:
    known = s.known[:]
    known[seat] = [*known[seat], card]
    s.known = known


def _move_card(move: Mapping[str, Any]) -> Card:
    if "card" not in move:
        raise InvalidMoveError(f'a {move["type"]} move needs a "card", e.g. {{"type": "{move["type"]}", "card": "7H"}}')
    return _card(move["card"])


def _card(token: Any) -> Card:
    try:
        return parse_card(token)
    except InvalidCardError as exc:
        raise InvalidMoveError(str(exc)) from exc


def _cards(tokens: Any) -> list[Card]:
    if not isinstance(tokens, list):
        raise InvalidMoveError('cards are given as a list like ["7H", "8H", "9H"]')
    return [_card(t) for t in tokens]


def _setup_int(setup: Mapping[str, Any], name: str, default: int, lo: int, hi: int) -> int:
    value = setup.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidSetupError(f"setup {name!r} must be an integer from {lo} to {hi}, not {value!r}")
    return value


def _meld_json(meld: TableMeld, owner: int) -> dict[str, Any]:
    suit, low, cards = meld
    if suit < 0:
        return {"owner": owner, "kind": "set", "rank": "A23456789TJQK"[low - 1],
                "cards": [CARD_NAMES[c] for c in cards]}
    return {"owner": owner, "kind": "run", "suit": SUITS[suit], "cards": [CARD_NAMES[c] for c in cards],
            "stands_for": [CARD_NAMES[c] for c in contracts.stands_for(meld)]}


# What each meld on the table would take, cached by the identity of the meld's card list: a meld's list is
# replaced (copy on write), never changed, when a card is laid off on it, and states share the lists of
# the melds that did not change. The entry keeps the list alive so that its id is not reused.
_WANTS: dict[int, tuple[list[Card], str, tuple[tuple[Card, Move], ...]]] = {}


def _meld_wants(s: ContractRummyState, i: int, limit: str) -> tuple[tuple[Card, Move], ...]:
    cards = s.meld_cards[i]
    entry = _WANTS.get(id(cards))
    if entry is not None and entry[0] is cards and entry[1] == limit:
        return entry[2]
    wants = []
    for c, how, end in contracts.meld_wants((s.meld_suit[i], s.meld_low[i], tuple(cards)), limit):
        if how == "add":
            move = {"type": "lay_off", "card": CARD_NAMES[c], "meld": i}
        elif how == "end":
            move = {"type": "lay_off", "card": CARD_NAMES[c], "meld": i, "end": end}
        else:
            move = {"type": "lay_off", "card": CARD_NAMES[c], "meld": i, "wild_to": end}
        wants.append((c, move))
    if len(_WANTS) >= 4096:
        _WANTS.clear()
    _WANTS[id(cards)] = (cards, limit, tuple(wants))
    return tuple(wants)


# The lay-offs of the whole table by card, cached by the identity of the table's meld_cards list, which
# is replaced whenever a meld is added or changed (always rebuilt in meld order: the listing order is a
# function of the state).
_TABLE_INDEX: dict[int, tuple[list[list[Card]], str, dict[Card, list[Move]]]] = {}


def _table_index(s: ContractRummyState) -> dict[Card, list[Move]]:
    limit = s.options["wild_limit"]
    table = s.meld_cards
    entry = _TABLE_INDEX.get(id(table))
    if entry is not None and entry[0] is table and entry[1] == limit:
        return entry[2]
    index: dict[Card, list[Move]] = {}
    for i in range(len(table)):
        for c, move in _meld_wants(s, i, limit):
            found = index.get(c)
            if found is None:
                index[c] = [move]
            else:
                found.append(move)
    if len(_TABLE_INDEX) >= 1024:
        _TABLE_INDEX.clear()
    _TABLE_INDEX[id(table)] = (table, limit, index)
    return index


def _derive_index(s: ContractRummyState, old_table: list[list[Card]], first: int, stop: int) -> None:
    """After melds ``first..stop-1`` were changed (a lay-off) or added (going down), derive the new
    table's index from the old table's if both it and the changed meld's old wants are cached: the same
    lists a full rebuild makes (by card; in meld order, then in :func:`engine.contracts.meld_wants`
    order), rebuilding only the lists of the cards those melds concern."""
    limit = s.options["wild_limit"]
    entry = _TABLE_INDEX.get(id(old_table))
    if entry is None or entry[0] is not old_table or entry[1] != limit:
        return
    old = entry[2]
    changed = first < len(old_table)
    touched: set[Card] = set()
    if changed:
        wants = _WANTS.get(id(old_table[first]))
        if wants is None or wants[0] is not old_table[first] or wants[1] != limit:
            return
        touched = {c for c, _ in wants[2]}
    index = dict(old)
    for c in touched:
        index[c] = [m for m in old[c] if m["meld"] != first]
    for i in range(first, stop):
        for c, move in _meld_wants(s, i, limit):
            mine = index.get(c)
            if mine is None:
                index[c] = [move]
            else:
                if c not in touched:
                    index[c] = mine = mine[:]  # lists are shared with the old index: copy before adding
                    touched.add(c)
                mine.append(move)
    for c in touched:
        moves = index[c]
        if not moves:
            del index[c]
        elif changed:
            moves.sort(key=_meld_of)  # stable: keeps each meld's own order
    if len(_TABLE_INDEX) >= 1024:
        _TABLE_INDEX.clear()
    _TABLE_INDEX[id(s.meld_cards)] = (s.meld_cards, limit, index)


def _meld_of(move: Move) -> int:
    meld: int = move["meld"]
    return meld


def _go_down_json(melds: contracts.GoDown) -> Move:
    return {"type": "go_down", "melds": [_meld_spec(m) for m in melds]}


@lru_cache(maxsize=1 << 14)
def _meld_spec(meld: TableMeld) -> dict[str, Any]:
    """A meld as a go_down move gives it (shared by the listed moves: read-only)."""
    suit, low, cards = meld
    if suit < 0:
        return {"kind": "set", "cards": [CARD_NAMES[c] for c in cards]}
    return {"kind": "run", "cards": [CARD_NAMES[c] for c in cards],
            "stands_for": [CARD_NAMES[contracts.position_card(suit, p)] for p in range(low, low + len(cards))]}


def listed_go_downs(hand: Sequence[Card], hand_no: int, options: Mapping[str, Any]) -> tuple[Move, ...]:
    """The go_down moves ``legal_moves`` lists for ``hand`` in hand ``hand_no`` under ``options`` (the
    ``wild_limit`` and ``contract_meld_size`` options; defaults for the others), with no card kept out."""
    limit = options.get("wild_limit", "at_least_one_natural")
    exact = options.get("contract_meld_size", "at_least") == "exact"
    return _go_down_moves(tuple(sorted(hand)), hand_no, limit, None, exact)


@lru_cache(maxsize=4096)
def _go_down_moves(hand: tuple[Card, ...], hand_no: int, limit: str, keep_out: Card | None,
                   exact: bool = False) -> tuple[Move, ...]:
    """The listed go_down moves of ``hand`` (see the module docstring for what is listed); ``exact``:
    the ``contract_meld_size`` option is ``exact`` (no run longer than the contract's in hands 1-6)."""
    sets, runs, run_size, _ = CONTRACTS[hand_no]
    if hand_no == 7:
        found = contracts.exact_go_downs(hand, limit, MAX_LISTED_GO_DOWNS, keep_out)
    else:
        found = contracts.minimal_go_downs(hand, sets, runs, SET_SIZE, run_size, limit, MAX_LISTED_GO_DOWNS,
                                           longer=not exact)
    return tuple(_go_down_json(g) for g in found)


GAME = register(ContractRummy())
