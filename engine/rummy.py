"""What the rummy games share: hands, a stock and a discard pile (:class:`RummyState`) and the moves of
cards between them, and :class:`RummyRounds`, the base of the games played in rounds whose hands
score their minimum deadwood (RULES.md C5) under each round's :class:`~engine.melds.MeldRules`
(Three Thirteen and Threezies).

Piles: a stock is stored top-last (``stock[-1]`` is the top card) and a discard pile bottom-first
(``discard[-1]`` is the top); setups give the stock top-first as RULES.md C8 says. Hands are sorted.
A card is ``known`` to be in a hand once every player saw it go there (taken from the discard
pile, bought); the helpers below replace every list they change (copy on write, see
:meth:`engine.game.Game.apply`).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from engine import melds
from engine.cards import CARD_NAMES, Card, parse_cards
from engine.errors import InvalidSetupError
from engine.game import (
    Event,
    Game,
    Observation,
    State,
    card_field,
    chance_rng,
    hands_from_view,
    hidden_zone,
    view_state_fields,
)

#: No game deals more cards than this to one hand (the solver is exact, and exponential: an analysis
#: of a longer hand is refused).
MAX_ANALYZED_HAND = 24


@dataclass(eq=True)
class RummyState(State):
    """The piles of a rummy game (plus the fields every state has)."""

    hands: list[list[Card]] = card_field(2)  # each sorted
    stock: list[Card] = card_field(1)  # top card last
    discard: list[Card] = card_field(1)  # top card last
    known: list[list[Card]] = card_field(2)  # per seat: cards all players know are in that hand


@dataclass(eq=True)
class RummyRoundsState(RummyState):
    """A Three Thirteen / Threezies state (plus the piles)."""

    taken: Card | None = None  # the card taken from the discard pile this turn (C3)
    went_out: int | None = None
    last_turns: int = 0  # players still to take their last turn after someone went out


R = TypeVar("R", bound=RummyState)


# ---------------------------------------------------------------------------
# Moving cards (copy on write)


def deal(state: RummyState, cards: list[Card], size: int) -> None:
    """Shuffle ``cards`` with the state's chance, deal ``size`` to each seat and turn the next one up
    to start the discard pile (C1); the rest is the stock."""
    chance_rng(state).shuffle(cards)
    n = state.num_players
    state.hands = [sorted(cards[i * size : (i + 1) * size]) for i in range(n)]
    rest = cards[n * size :]
    state.discard = [rest.pop()]
    state.stock = rest


def restock(state: RummyState, events: list[Event]) -> None:
    """C4: shuffle the discard pile but its top card into a new stock (a ``reshuffle`` event)."""
    stock = state.discard[:-1]
    chance_rng(state).shuffle(stock)
    state.stock = stock
    state.discard = state.discard[-1:]
    events.append({"type": "reshuffle", "cards": len(stock)})


def add_to_hand(state: RummyState, seat: int, card: Card) -> None:
    """``card`` into ``seat``'s hand, in order."""
    hand = state.hands[seat][:]
    insort(hand, card)
    hands = state.hands[:]
    hands[seat] = hand
    state.hands = hands


def take_from_hand(state: RummyState, seat: int, card: Card) -> list[Card]:
    """``card`` out of ``seat``'s hand; returns the hand left. One known copy of it stops being known:
    identical cards are interchangeable, so nobody can tell whether a copy left in the hand is the
    known one (keeping it known would reveal a twin)."""
    hand = state.hands[seat][:]
    hand.remove(card)
    hands = state.hands[:]
    hands[seat] = hand
    state.hands = hands
    known = state.known[seat]
    if known and card in known:
        known = known[:]
        known.remove(card)
        all_known = state.known[:]
        all_known[seat] = known
        state.known = all_known
    return hand


def add_known(state: RummyState, seat: int, card: Card) -> None:
    """Every player saw ``card`` go into ``seat``'s hand."""
    known = state.known[:]
    known[seat] = [*known[seat], card]
    state.known = known


def read_piles(setup: Mapping[str, Any], num_players: int) -> tuple[list[list[Card]], list[Card] | None,
                                                                    list[Card] | None]:
    """A setup's ``hands`` (one per seat), ``stock`` (top first) and ``discard`` (bottom first); None for
    a pile it leaves out."""
    try:
        hands = [parse_cards(h) for h in setup.get("hands", [])]
        stock_top_first = parse_cards(setup["stock"]) if "stock" in setup else None
        discard = parse_cards(setup["discard"]) if "discard" in setup else None
    except (TypeError, AttributeError) as exc:
        raise InvalidSetupError('hands, stock and discard are lists of cards like "7H"') from exc
    if len(hands) != num_players:
        raise InvalidSetupError(f"setup needs {num_players} hands, got {len(hands)}")
    return hands, stock_top_first, discard


def game_over_or_next_round(state: State, last_round: bool, events: list[Event]) -> bool:
    """After a round is scored: once the ``last_round`` is over the lowest total wins, ties shared (C6; a
    ``game_end`` event) and this returns True; otherwise the next round begins with the next dealer (the
    caller deals it)."""
    if last_round:
        best = min(state.totals)
        state.winners = [i for i, t in enumerate(state.totals) if t == best]
        state.to_move = None
        state.phase = "over"
        events.append({"type": "game_end", "totals": list(state.totals), "winners": list(state.winners)})
        return True
    state.round += 1
    state.dealer = (state.dealer + 1) % state.num_players
    return False


# ---------------------------------------------------------------------------
# Views of the piles


def pile_zones(state: RummyState, seat: int | None) -> list[dict[str, Any]]:
    """The hidden zones of ``seat``'s view of the piles: the other hands (with their known cards), the stock."""
    zones = [hidden_zone("hand", len(state.hands[i]), i, state.known[i])
             for i in range(state.num_players) if i != seat]
    zones.append(hidden_zone("stock", len(state.stock)))
    return zones


def pile_cards_seen(obs: Observation) -> list[Card]:
    """The cards of the piles a view shows or locates: its own hand, the discard pile, the known cards."""
    cards = parse_cards(obs["hand"]) + parse_cards(obs["discard"])
    for zone in obs["hidden"]:
        cards += parse_cards(zone.get("known", []))
    return cards


def piles_from_view(obs: Observation, zone_cards: list[list[Card]], seed: int) -> dict[str, Any]:
    """For ``_state_from_view``: the fields every state has and the piles, rebuilt from a view and the
    cards dealt into its hidden zones."""
    hands, others = hands_from_view(obs, zone_cards)
    return {**view_state_fields(obs, seed), "hands": hands, "stock": others.get("stock", []),
            "discard": parse_cards(obs["discard"]), "known": [parse_cards(k) for k in obs["known"]]}


# ---------------------------------------------------------------------------
# Games of rounds scored by minimum deadwood


class RummyRounds(Game[R]):
    """A rummy game of :attr:`rounds` rounds whose hands score their minimum deadwood (C5) under the
    round's :meth:`meld_rules`, with a wild rank per round. The AI's rummy evaluators and the text view
    ask :meth:`meld_rules` of any game that is one of these."""

    rounds: ClassVar[int]

    def deal_size(self, round_no: int) -> int:
        """The cards dealt to each hand in round ``round_no``."""
        raise NotImplementedError

    def wild_rank(self, round_no: int) -> int:
        """The rank (1..13) that is wild in round ``round_no``."""
        raise NotImplementedError

    def meld_rules(self, options: Mapping[str, Any], round_no: int) -> melds.MeldRules:
        """What counts as a meld, and what deadwood costs, in round ``round_no`` with ``options``."""
        raise NotImplementedError

    def _analyze(self, hand: list[Card], round_no: int | None, options: dict[str, Any]) -> dict[str, Any]:
        """A best arrangement of ``hand`` in round ``round_no`` (default 1): melds (what each wild stands
        for), deadwood, score, and the discards that go out (R6)."""
        round_no = self._analyzed_round(round_no, self.rounds)
        # the solver is exponential in the hand's length: no longer than a hand of the game (dealt, plus a draw)
        longest = min(MAX_ANALYZED_HAND, max(self.deal_size(r) for r in range(1, self.rounds + 1)) + 1)
        self._check_analyzed_length(hand, longest)
        rules = self.meld_rules(options, round_no)
        best = melds.best_arrangement(hand, rules)
        go_out = [CARD_NAMES[c] for c in melds.go_out_discards(hand, rules)]
        return {
            "round": round_no,
            "hand": [CARD_NAMES[c] for c in sorted(hand)],
            "melds": [m.to_json() for m in best.melds],
            "deadwood": [CARD_NAMES[c] for c in best.deadwood],
            "score": best.score,
            "fully_melded": not best.deadwood,
            "can_go_out": bool(go_out),
            "go_out_discards": go_out,
            "wild_rank": self.wild_rank(round_no),
        }


def rummy_rounds(game: Game[Any]) -> RummyRounds[Any]:
    """``game`` as a :class:`RummyRounds` game (Three Thirteen, Threezies), for code that asks its
    :meth:`~RummyRounds.meld_rules` or :meth:`~RummyRounds.deal_size`; a ``TypeError`` for any other game."""
    if not isinstance(game, RummyRounds):
        raise TypeError(f"{game.info.id} is not a rummy-rounds game (it has no meld_rules per round)")
    return game
