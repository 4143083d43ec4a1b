"""Reading and checking the moves of a contract rummy turn that carry cards: go_down (R6), lay_off (R7),
and the cards of a move. Each rejection names the rule."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from engine import contracts
from engine.cards import CARD_NAMES, Card, cards_str, parse_card
from engine.contracts import TableMeld
from engine.errors import IllegalMoveError, InvalidCardError, InvalidMoveError
from engine.games.contract_rummy.rules import CONTRACTS, SET_SIZE, ContractRummyState, contract_text


def parse_meld(spec: Any, limit: str) -> TableMeld:
    """A meld of a go_down move (or a setup), read and checked (R3): IllegalMoveError names the rule."""
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


def check_go_down(s: ContractRummyState, seat: int, hand: list[Card], move: Mapping[str, Any]) -> Any:
    """The action of a go_down move of ``seat`` holding ``hand``: exactly the contract, all at once (R6)."""
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
    melds = [parse_meld(m, limit) for m in specs]
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


def check_lay_off(s: ContractRummyState, seat: int, hand: list[Card], move: Mapping[str, Any]) -> Any:
    """The action of a lay_off move of ``seat`` holding ``hand`` (R7)."""
    card = move_card(move)
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


def move_card(move: Mapping[str, Any]) -> Card:
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
