"""Three Thirteen (RULES.md §2): 11 rounds of rummy with a rotating wild rank.

Round k (1..11) deals k+2 cards and makes rank k+2 wild (3s … Ks). A turn is a
draw (stock top or discard top) then a discard, or a discard that goes out when
the remaining cards are fully melded. After someone goes out every other player
takes one more turn; then each hand scores its minimum deadwood (C5).

Threezies (§3) is the same flow with fewer rounds, one deck and aces high or
low: ``engine/games/threezies.py`` subclasses this module's game.

Readings of the rules, written down where the text leaves a choice:

* The stock is stored top-last and the discard pile bottom-first (see
  :mod:`engine.rummy`); setups give the stock top-first as RULES.md C8 says.
* C3 with several decks: after taking a card from the discard pile, no card of
  that same value may be discarded in the same turn (identical cards are
  interchangeable, so discarding a twin would be the same discard).
* A player on a last turn after someone went out may not "go out" again: the
  hand is scored either way (R8: a fully melded hand scores 0).
* The whole discard pile is public (every card in it was shown face up); after
  a reshuffle (C4) its cards are back in the unseen stock.
* The turn counter of C7 counts completed turns (draw + discard).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine import melds
from engine.cards import CARD_NAMES, CARD_OF_NAME, Card, parse_card, standard_deck
from engine.errors import IllegalMoveError, InvalidMoveError, InvalidOptionError, InvalidSetupError
from engine.game import (
    MAX_TURNS_OPTION,
    Event,
    GameInfo,
    Move,
    Observation,
    OptionSpec,
    chance_rng,
)
from engine.rummy import (
    RummyRounds,
    RummyRoundsState,
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
from engine.validation import CARD, MoveTable, choice

#: The fields of each move type (``Game.move_fields``).
MOVE_FIELDS: MoveTable = {
    "draw": {"source": choice("stock", "discard")},
    "discard": {"card": CARD},
    "go_out": {"card": CARD},
}

DRAW, DISCARD = "draw", "discard"


class ThreeThirteen(RummyRounds[RummyRoundsState]):
    info = GameInfo(
        id="three-thirteen",
        name="Three Thirteen",
        min_players=2,
        max_players=8,
        rules_section="RULES.md §2",
        summary=(
            "11 rounds of rummy; round k deals k+2 cards and rank k+2 is wild (3s … kings). Draw from the "
            "stock or the discard pile, then discard; go out when the rest of your hand is all sets and runs. "
            "Everyone else gets one more turn. Deadwood counts A=1, 2-10 face, J/Q/K 10. Lowest total wins."
        ),
        options=(
            OptionSpec("decks", "int", 0, "Number of 52-card decks; 0 means ceil(players / 2).", minimum=0, maximum=4),
            OptionSpec("jokers_per_deck", "int", 0, "Jokers added per deck; always wild, 20 points unmatched.",
                       minimum=0, maximum=2),
            OptionSpec("aces", "enum", "low", "low: aces low only; high_or_low: an ace is high or low in a run "
                       "and scores 15 unmatched.", choices=("low", "high_or_low")),
            OptionSpec("allow_rediscard", "bool", False,
                       "Allow discarding the card just taken from the discard pile in the same turn."),
            MAX_TURNS_OPTION,
        ),
    )
    state_class = RummyRoundsState
    move_fields = MOVE_FIELDS
    rounds = 11
    #: the rule numbers its errors cite (RULES.md §2, listed at the end of the players' rules); Threezies numbers
    #: the same rules its own way
    rule_deal, rule_turn, rule_go_out, rule_last_turn = "R2", "R3", "R6", "R7"

    def __init__(self) -> None:
        self._rules_cache: dict[tuple[str, int], melds.MeldRules] = {}

    # -- rules per round ------------------------------------------------------

    def deal_size(self, round_no: int) -> int:
        return round_no + 2

    def wild_rank(self, round_no: int) -> int:
        return round_no + 2

    def num_decks(self, num_players: int, options: Mapping[str, Any]) -> int:
        return options.get("decks") or -(-num_players // 2)

    def meld_rules(self, options: Mapping[str, Any], round_no: int) -> melds.MeldRules:
        aces = options.get("aces", "low")
        key = (aces, round_no)
        rules = self._rules_cache.get(key)
        if rules is None:
            rules = self._rules_cache[key] = _meld_rules(aces, self.wild_rank(round_no), self._ace_penalty(options))
        return rules

    def _ace_penalty(self, options: Mapping[str, Any]) -> int:
        return 15 if options.get("aces") == "high_or_low" else 1

    def deck(self, num_players: int, options: Mapping[str, Any]) -> list[Card]:
        packs = self.num_decks(num_players, options)
        return standard_deck(packs, jokers=packs * options.get("jokers_per_deck", 0))

    def _check_option_combination(self, options: dict[str, Any], num_players: int) -> None:
        need = num_players * self.deal_size(self.rounds) + 2
        have = len(self.deck(num_players, options))
        if have < need:
            raise InvalidOptionError(
                "decks",
                f"{have} cards are too few for {num_players} players: the last round deals "
                f"{num_players * self.deal_size(self.rounds)} cards plus the up card and a stock",
            )

    def cards_in_play(self, s: RummyRoundsState) -> list[Card]:
        out = [c for h in s.hands for c in h]
        out += s.stock
        out += s.discard
        return out

    def score_bounds(self, state: RummyRoundsState) -> tuple[int, int]:
        worst = max(self.meld_rules(state.options, 1).values)
        return 0, sum(self.deal_size(r) * worst for r in range(1, self.rounds + 1))

    def _invariant_problem(self, s: RummyRoundsState) -> str | None:
        if s.is_over:
            return None
        if s.phase not in (DRAW, DISCARD):
            return f"phase {s.phase!r} is not draw or discard"
        if len(s.known) != s.num_players:  # a draw from the discard pile adds to the drawing seat's entry
            return f"known lists {len(s.known)} seats' cards, not one entry per seat ({s.num_players})"
        n = self.deal_size(s.round)
        for seat, hand in enumerate(s.hands):
            want = n + 1 if (seat == s.to_move and s.phase == DISCARD) else n
            if len(hand) != want:
                return f"hand {seat} holds {len(hand)} cards; round {s.round} wants {want} ({self.rule_deal})"
        if s.went_out is not None and not 0 < s.last_turns < s.num_players:
            return "last_turns is out of range"
        return None

    # -- dealing ----------------------------------------------------------------

    def _start_game(self, s: RummyRoundsState) -> None:
        s.dealer = chance_rng(s).randrange(s.num_players)
        self._deal(s)

    def _deal(self, s: RummyRoundsState) -> None:
        deal(s, self.deck(s.num_players, s.options), self.deal_size(s.round))
        s.known = [[] for _ in range(s.num_players)]
        s.taken = None
        s.went_out = None
        s.last_turns = 0
        s.turns_in_round = 0
        s.phase = DRAW
        s.to_move = (s.dealer + 1) % s.num_players

    def _setup(self, s: RummyRoundsState, setup: Mapping[str, Any]) -> None:
        check_fields(setup, {"hands", "stock", "discard", "rest", "dealer", "round", "totals", "to_move"})
        s.round = setup_int(setup, "round", 1, 1, self.rounds)
        s.dealer = setup_int(setup, "dealer", 0, 0, s.num_players - 1)
        totals = setup_totals(setup, s.num_players)
        if totals is not None:
            s.totals = totals
        n = self.deal_size(s.round)
        if "hands" not in setup:
            if "stock" in setup or "discard" in setup:
                raise InvalidSetupError("a setup that gives the stock or the discard pile must give the hands too")
            self._deal(s)  # round, dealer and totals as given; the cards from the seed
            s.to_move = setup_int(setup, "to_move", s.to_move or 0, 0, s.num_players - 1)
            return
        hands, stock_top_first, discard = read_piles(setup, s.num_players)
        for seat, hand in enumerate(hands):
            if len(hand) != n:
                raise InvalidSetupError(
                    f"round {s.round} deals {n} cards ({self.rule_deal}), but hand {seat} has {len(hand)}")
        left = cards_left_out(self.deck(s.num_players, s.options),
                              [c for h in hands for c in h] + (stock_top_first or []) + (discard or []))
        chance_rng(s).shuffle(left)
        stock = (stock_top_first or [])[::-1]
        discard = discard or []
        # The cards the setup leaves out, shuffled from the seed, go under the stock (default)
        # or under the discard pile ("rest": "discard", to set up a short stock).
        if setup.get("rest", "stock") == "stock":
            stock = left + stock
        elif setup["rest"] == "discard":
            discard = left + discard
        else:
            raise InvalidSetupError('setup "rest" must be "stock" or "discard"')
        if not discard:
            discard = [stock.pop()]  # C1: the up card
        s.hands = [sorted(h) for h in hands]
        s.stock = stock
        s.discard = discard
        s.known = [[] for _ in range(s.num_players)]
        s.phase = DRAW
        s.turns_in_round = 0
        s.to_move = setup_int(setup, "to_move", (s.dealer + 1) % s.num_players, 0, s.num_players - 1)

    # -- moves --------------------------------------------------------------------

    def _legal_moves(self, s: RummyRoundsState, seat: int) -> list[Move]:
        if s.phase == DRAW:
            if s.discard:
                return [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
            return [{"type": "draw", "source": "stock"}]
        hand = s.hands[seat]
        forbidden = None if s.options["allow_rediscard"] else s.taken
        names = CARD_NAMES
        # dict.fromkeys: each distinct card once (the hand is sorted)
        moves: list[Move] = [{"type": "discard", "card": names[c]} for c in dict.fromkeys(hand) if c != forbidden]
        if s.went_out is None:
            for c in melds.go_out_discards(hand, self.meld_rules(s.options, s.round)):
                if c != forbidden:
                    moves.append({"type": "go_out", "card": names[c]})
        return moves

    def _read_move(self, s: RummyRoundsState, seat: int, move: Mapping[str, Any]) -> Any:
        kind = move["type"]
        if kind == "draw":
            return ("draw", move["source"])
        name = move["card"]
        card = CARD_OF_NAME.get(name)
        return (kind, parse_card(name) if card is None else card)

    def _check_move(self, s: RummyRoundsState, seat: int, move: Mapping[str, Any]) -> Any:
        kind = move["type"]
        if kind == "draw":
            source = move.get("source")
            if source not in ("stock", "discard"):
                raise InvalidMoveError('a draw needs "source": "stock" or "discard"')
            if s.phase != DRAW:
                raise IllegalMoveError(f"you have already drawn this turn: discard a card ({self.rule_turn})")
            if source == "discard" and not s.discard:
                raise IllegalMoveError("the discard pile is empty: draw from the stock (C2)")
            return ("draw", source)
        if kind in ("discard", "go_out"):
            if "card" not in move:
                raise InvalidMoveError(f'a {kind} move needs a "card", e.g. {{"type": "{kind}", "card": "7H"}}')
            card = parse_card(move["card"])
            if s.phase != DISCARD:
                raise IllegalMoveError("draw first: a turn is a draw from the stock or the discard pile, "
                                       f"then a discard ({self.rule_turn})")
            hand = s.hands[seat]
            if card not in hand:
                raise IllegalMoveError(f"{CARD_NAMES[card]} is not in your hand")
            if card == s.taken and not s.options.get("allow_rediscard"):
                raise IllegalMoveError(
                    f"{CARD_NAMES[card]} was just taken from the discard pile and may not be discarded "
                    "in the same turn (C3)"
                )
            if kind == "go_out":
                if s.went_out is not None:
                    raise IllegalMoveError(
                        f"seat {s.went_out} has already gone out: this is your last turn, just discard "
                        f"({self.rule_last_turn})"
                    )
                rest = list(hand)
                rest.remove(card)
                rules = self.meld_rules(s.options, s.round)
                if not melds.is_fully_melded(rest, rules):
                    left = melds.best_arrangement(rest, rules)
                    raise IllegalMoveError(
                        f"cannot go out discarding {CARD_NAMES[card]}: "
                        f"{' '.join(CARD_NAMES[c] for c in left.deadwood)} would be in no set or run "
                        f"({self.rule_go_out})"
                    )
            return (kind, card)
        raise InvalidMoveError(f"unknown move type {kind!r}; {self.info.name} moves are draw, discard, go_out")

    # _play and what it calls replace every list they change (copy on write: see Game.apply)
    def _play(self, s: RummyRoundsState, seat: int, action: Any) -> list[Event]:
        kind, card = action
        if kind == "draw":
            return self._draw(s, seat, card)
        hand = take_from_hand(s, seat, card)
        s.discard = [*s.discard, card]
        s.taken = None
        events: list[Event] = [{"type": kind, "seat": seat, "card": CARD_NAMES[card]}]
        s.turns_in_round += 1
        if kind == "go_out":
            s.went_out = seat
            s.last_turns = s.num_players - 1
            arrangement = melds.best_arrangement(hand, self.meld_rules(s.options, s.round))
            events[0]["melds"] = [m.to_json() for m in arrangement.melds]
        elif s.went_out is not None:
            s.last_turns -= 1
        if s.went_out is not None and s.last_turns == 0:
            return events + self._end_round(s, "went_out")
        if s.turns_in_round >= s.options["max_turns_per_round"]:
            return events + self._end_round(s, "turn_limit")
        s.phase = DRAW
        s.to_move = (seat + 1) % s.num_players
        return events

    def _draw(self, s: RummyRoundsState, seat: int, source: str) -> list[Event]:
        events: list[Event]
        if source == "discard":
            card = s.discard[-1]
            s.discard = s.discard[:-1]
            s.taken = card
            add_known(s, seat, card)
            events = [{"type": "draw", "seat": seat, "source": "discard", "card": CARD_NAMES[card]}]
        else:
            events = []
            if not s.stock:
                restock(s, events)
                if not s.stock:
                    return events + self._end_round(s, "stock_exhausted")
            card = s.stock[-1]
            s.stock = s.stock[:-1]
            s.taken = None
            events.append({"type": "draw", "seat": seat, "source": "stock"})
        add_to_hand(s, seat, card)
        s.phase = DISCARD
        return events

    def _end_round(self, s: RummyRoundsState, reason: str) -> list[Event]:
        rules = self.meld_rules(s.options, s.round)
        arrangements = [melds.best_arrangement(h, rules) for h in s.hands]
        scores = [a.score for a in arrangements]
        s.totals = [t + pts for t, pts in zip(s.totals, scores, strict=True)]
        s.round_scores = [*s.round_scores, scores]
        event: Event = {
            "type": "round_end",
            "round": s.round,
            "reason": reason,
            "went_out": s.went_out,
            "hands": [[CARD_NAMES[c] for c in h] for h in s.hands],
            "melds": [[m.to_json() for m in a.melds] for a in arrangements],
            "deadwood": [[CARD_NAMES[c] for c in a.deadwood] for a in arrangements],
            "scores": scores,
            "totals": list(s.totals),
        }
        events = [event]
        if game_over_or_next_round(s, s.round >= self.rounds, events):
            return events
        self._deal(s)
        events.append({"type": "round_start", "round": s.round, "dealer": s.dealer,
                       "wild_rank": self.wild_rank(s.round), "up_card": CARD_NAMES[s.discard[-1]]})
        return events

    # -- views ----------------------------------------------------------------------

    def _observe(self, s: RummyRoundsState, seat: int | None, obs: Observation) -> None:
        obs["hand"] = [CARD_NAMES[c] for c in s.hands[seat]] if seat is not None else []
        obs["hand_sizes"] = [len(h) for h in s.hands]
        obs["stock_size"] = len(s.stock)
        obs["discard"] = [CARD_NAMES[c] for c in s.discard]
        obs["wild_rank"] = self.wild_rank(s.round)
        obs["known"] = [[CARD_NAMES[c] for c in sorted(k)] for k in s.known]
        obs["taken"] = None if s.taken is None else CARD_NAMES[s.taken]
        obs["went_out"] = s.went_out
        obs["last_turns"] = s.last_turns
        obs["hidden"] = pile_zones(s, seat)

    def visible_cards(self, obs: Observation) -> list[Card]:
        return pile_cards_seen(obs)

    def _state_from_view(self, obs: Observation, zone_cards: list[list[Card]], seed: int) -> RummyRoundsState:
        return RummyRoundsState(
            **piles_from_view(obs, zone_cards, seed),
            taken=None if obs["taken"] is None else parse_card(obs["taken"]),
            went_out=obs["went_out"],
            last_turns=obs["last_turns"],
        )


def _meld_rules(aces: str, wild_rank: int, ace_value: int) -> melds.MeldRules:
    return melds.MeldRules(
        min_set=3,
        min_run=3,
        aces=aces,
        wild_ranks=frozenset({wild_rank}),
        jokers_wild=True,
        wild_limit="none",
        values=melds.rummy_values(ace=ace_value, joker=20),
    )


GAME = ThreeThirteen()
