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

What ``legal_moves`` lists for going down and laying off, and how, is told in
:mod:`engine.games.contract_rummy.listing`; the contracts, the points and the state are in
:mod:`engine.games.contract_rummy.rules`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from engine import contracts
from engine.cards import CARD_NAMES, CARD_OF_NAME, JOKER, Card, cards_str, parse_card, parse_cards, standard_deck
from engine.contracts import TableMeld
from engine.errors import (
    IllegalMoveError,
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
    chance_rng,
)
from engine.games.contract_rummy.checks import check_go_down, check_lay_off, move_card, parse_meld
from engine.games.contract_rummy.listing import derive_index, go_down_moves, listed_go_downs, table_index
from engine.games.contract_rummy.rules import (
    BUY,
    CARD_POINTS,
    CONTRACTS,
    DRAW,
    MAX_LISTED_GO_DOWNS,
    PLAY,
    SET_SIZE,
    ContractRummyState,
    card_points,
    contract_text,
    meld_json,
)
from engine.rummy import (
    MAX_ANALYZED_HAND,
    add_known,
    add_to_hand,
    deal,
    game_over_or_next_round,
    pile_cards_seen,
    pile_zones,
    piles_from_view,
    read_piles,
    restock,
    take_from_hand,
)
from engine.setup import cards_left_out, check_fields, setup_int, setup_totals
from engine.validation import CARD, CARDS, INDEX, MoveTable, choice, objects

#: The fields of each move type (``Game.move_fields``).
MOVE_FIELDS: MoveTable = {
    "take_discard": {}, "draw": {}, "buy": {}, "pass": {},
    "go_down": {"melds": objects(kind=choice("set", "run"), cards=CARDS, stands_for=CARDS)},
    "lay_off": {"card": CARD, "meld": INDEX, "end": choice("low", "high"), "wild_to": choice("low", "high")},
    "discard": {"card": CARD},
}


class ContractRummy(Game[ContractRummyState]):
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

    def cards_in_play(self, s: ContractRummyState) -> list[Card]:
        out = [c for h in s.hands for c in h]
        out += s.stock
        out += s.discard
        for m in s.meld_cards:
            out += m
        return out

    def score_bounds(self, state: ContractRummyState) -> tuple[int, int]:
        worst = card_points(self.deck(state.num_players, state.options))
        return 0, worst * self.num_hands(state.options)

    def _melds(self, s: ContractRummyState) -> list[TableMeld]:
        return [(su, lo, tuple(cs)) for su, lo, cs in zip(s.meld_suit, s.meld_low, s.meld_cards, strict=True)]

    def _invariant_problem(self, s: ContractRummyState) -> str | None:
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

    def _start_game(self, s: ContractRummyState) -> None:
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
        deal(s, self.deck(s.num_players, s.options), self.deal_size(s.round))
        self._reset_hand(s)

    def _setup(self, s: ContractRummyState, setup: Mapping[str, Any]) -> None:
        check_fields(setup, {"hands", "stock", "discard", "dealer", "round", "totals", "to_move", "melds", "buys"})
        n = s.num_players
        s.round = setup_int(setup, "round", 1, 1, self.num_hands(s.options))
        s.dealer = setup_int(setup, "dealer", 0, 0, n - 1)
        totals = setup_totals(setup, n)
        if totals is not None:
            s.totals = totals
        self._reset_hand(s)
        buys = setup.get("buys", [0] * n)
        if not (isinstance(buys, list) and len(buys) == n
                and all(isinstance(b, int) and not isinstance(b, bool) and b >= 0 for b in buys)):
            raise InvalidSetupError(f"buys must be a list of {n} non-negative integers")
        s.buys = list(buys)
        hands, stock_top_first, discard = read_piles(setup, n)
        limit = s.options["wild_limit"]
        for spec in setup.get("melds", []):
            if not isinstance(spec, Mapping) or not isinstance(spec.get("owner"), int) \
                    or not 0 <= spec["owner"] < n:
                raise InvalidSetupError('a setup meld is {"owner": seat, "kind": "set"|"run", "cards": [...]}')
            try:
                meld = parse_meld(spec, limit)
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
        on_table = [c for m in s.meld_cards for c in m]
        left = cards_left_out(self.deck(n, s.options),
                              [c for h in hands for c in h] + on_table + (stock_top_first or []) + (discard or []))
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
        s.turn = setup_int(setup, "to_move", (s.dealer + 1) % n, 0, n - 1)
        s.to_move = s.turn

    # -- moves ----------------------------------------------------------------

    def _legal_moves(self, s: ContractRummyState, seat: int) -> list[Move]:
        if s.phase == DRAW:
            return [_TAKE_DISCARD, _DRAW] if s.discard else [_DRAW]
        if s.phase == BUY:
            return [_BUY, _PASS]
        hand = s.hands[seat]
        opts = s.options
        moves: list[Move] = []
        if not s.down[seat]:
            keep_out = None
            if s.round == 7 and not opts["allow_rediscard"]:
                keep_out = s.taken
            moves.extend(go_down_moves(tuple(hand), s.round, opts["wild_limit"], keep_out,
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
        index = table_index(s)
        moves: list[Move] = []
        last = -1
        for c in hand:
            if c != last:
                last = c
                found = index.get(c)
                if found:
                    moves.extend(found)
        return moves

    def _read_move(self, s: ContractRummyState, seat: int, move: Mapping[str, Any]) -> Any:
        kind = move["type"]
        if kind == "discard":
            return ("discard", CARD_OF_NAME[move["card"]])
        if kind in ("draw", "take_discard", "buy", "pass"):
            return (kind, None)
        if kind == "lay_off":
            card, index = CARD_OF_NAME[move["card"]], move["meld"]
            meld = (s.meld_suit[index], s.meld_low[index], tuple(s.meld_cards[index]))
            where = move.get("wild_to") or move.get("end") or ""
            how = "replace" if "wild_to" in move else "end" if "end" in move else "add"
            for option in contracts.lay_off_options(meld, card, s.options["wild_limit"]):
                if option[0] == how and option[1] == where:
                    return ("lay_off", (card, index, option))
        if kind == "go_down":  # a listed go_down: runs in order with stands_for, sets in any order
            melds = []
            for spec in move["melds"]:
                cards = tuple(CARD_OF_NAME[n] for n in spec["cards"])
                if spec["kind"] == "set":
                    rank = next((c % 13 + 1 for c in cards if c != JOKER and c % 13 != 1), 2)
                    melds.append((-1, rank, tuple(sorted(cards))))
                else:
                    first = CARD_OF_NAME[spec["stands_for"][0]]
                    melds.append((first // 13, first % 13 + 1, cards))
            return ("go_down", tuple(melds))
        return self._check_move(s, seat, move)

    def _check_move(self, s: ContractRummyState, seat: int, move: Mapping[str, Any]) -> Any:
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
        hand = s.hands[seat]
        if kind == "discard":
            card = move_card(move)
            if card not in hand:
                raise IllegalMoveError(f"{CARD_NAMES[card]} is not in your hand")
            if card == self._forbidden_discard(s, hand):
                raise IllegalMoveError(f"{CARD_NAMES[card]} was just taken from the discard pile and may not be "
                                       "discarded in the same turn (C3)")
            return ("discard", card)
        if kind == "lay_off":
            return check_lay_off(s, seat, hand, move)
        return check_go_down(s, seat, hand, move)

    # -- playing ------------------------------------------------------------------

    def _play(self, s: ContractRummyState, seat: int, action: Any) -> list[Event]:
        kind, arg = action
        if kind == "take_discard":
            card = s.discard[-1]
            s.discard = s.discard[:-1]
            add_to_hand(s, seat, card)
            add_known(s, seat, card)
            s.taken = card
            s.phase = PLAY
            return [{"type": "take_discard", "seat": seat, "card": CARD_NAMES[card]}]
        if kind == "draw":
            events: list[Event] = [{"type": "draw", "seat": s.turn}]
            return events + self._next_buyer(s, s.turn)
        if kind == "pass":
            return [{"type": "pass", "seat": seat}, *self._next_buyer(s, seat)]
        if kind == "buy":
            return self._buy(s, seat)
        if kind == "discard":
            hand = take_from_hand(s, seat, arg)
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
                    take_from_hand(s, seat, c)
                self._add_meld(s, seat, meld)
            s.down = s.down[:]
            s.down[seat] = 1
            derive_index(s, old_table, len(old_table), len(s.meld_cards))
            s.went_down_now = True
            return [{"type": "go_down", "seat": seat,
                     "melds": [meld_json(m, seat) for m in arg]}]
        # lay_off
        card, index, (how, end, new) = arg
        hand = take_from_hand(s, seat, card)
        s.meld_low = s.meld_low[:]
        s.meld_low[index] = new[1]
        old_table = s.meld_cards
        s.meld_cards = s.meld_cards[:]
        s.meld_cards[index] = list(new[2])
        derive_index(s, old_table, index, index + 1)
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
            if len(s.discard) > 1:
                restock(s, events)
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
        add_to_hand(s, s.turn, card)
        s.taken = None
        s.phase = PLAY
        s.to_move = s.turn
        return events

    def _buy(self, s: ContractRummyState, buyer: int) -> list[Event]:
        card = s.discard[-1]
        s.discard = s.discard[:-1]
        add_to_hand(s, buyer, card)
        add_known(s, buyer, card)
        s.buys = s.buys[:]
        s.buys[buyer] += 1
        events: list[Event] = [{"type": "buy", "seat": buyer, "card": CARD_NAMES[card]}]
        penalty = self._draw_card(s, events)
        if penalty is None:
            return events + self._end_round(s, "stock_exhausted")
        add_to_hand(s, buyer, penalty)
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
        if game_over_or_next_round(s, s.round >= self.num_hands(s.options), events):
            return events
        self._deal(s)
        events.append({"type": "round_start", "round": s.round, "dealer": s.dealer,
                       "contract": contract_text(s.round), "up_card": CARD_NAMES[s.discard[-1]]})
        return events

    # -- analysis -------------------------------------------------------------------

    def _analyze(self, hand: list[Card], round_no: int | None, options: dict[str, Any]) -> dict[str, Any]:
        """Hand ``round_no``'s contract (default hand 1), the R9 points of ``hand``, and the ways to go
        down that ``legal_moves`` would list for it (the ``contract_meld_size`` option honoured)."""
        hand_no = self._analyzed_round(round_no, len(CONTRACTS), "hands")
        self._check_analyzed_length(hand, MAX_ANALYZED_HAND)
        ways = [[dict(m) for m in move["melds"]] for move in listed_go_downs(hand, hand_no, options)]
        return {
            "round": hand_no,
            "contract": contract_text(hand_no),
            "hand": [CARD_NAMES[c] for c in sorted(hand)],
            "score": card_points(hand),
            "can_go_down": bool(ways),
            "go_downs": ways,
        }

    # -- views ----------------------------------------------------------------------

    def _observe(self, s: ContractRummyState, seat: int | None, obs: Observation) -> None:
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
        obs["melds"] = [meld_json(m, o) for o, m in zip(s.meld_owner, self._melds(s), strict=True)]
        obs["taken"] = None if s.taken is None else CARD_NAMES[s.taken]
        obs["went_down_now"] = s.went_down_now
        obs["went_out"] = s.went_out
        obs["hidden"] = pile_zones(s, seat)

    def visible_cards(self, obs: Observation) -> list[Card]:
        cards = pile_cards_seen(obs)
        for m in obs["melds"]:
            cards += parse_cards(m["cards"])
        return cards

    def _state_from_view(self, obs: Observation, zone_cards: list[list[Card]], seed: int) -> ContractRummyState:
        s = ContractRummyState(
            **piles_from_view(obs, zone_cards, seed),
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


RANK_NUMBER = {r: i for i, r in enumerate("A23456789TJQK", start=1)}

_TAKE_DISCARD: Move = {"type": "take_discard"}
_DRAW: Move = {"type": "draw"}
_BUY: Move = {"type": "buy"}
_PASS: Move = {"type": "pass"}
_DISCARDS: tuple[Move, ...] = tuple({"type": "discard", "card": name} for name in CARD_NAMES)


GAME = ContractRummy()

__all__ = [
    "BUY",
    "CARD_POINTS",
    "CONTRACTS",
    "DRAW",
    "GAME",
    "MAX_LISTED_GO_DOWNS",
    "PLAY",
    "SET_SIZE",
    "ContractRummy",
    "ContractRummyState",
    "card_points",
    "contract_text",
    "listed_go_downs",
]
