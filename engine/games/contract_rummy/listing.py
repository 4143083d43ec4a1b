"""The moves ``legal_moves`` lists for going down and laying off in contract rummy, and their caches.

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

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from engine import contracts
from engine.cards import CARD_NAMES, Card
from engine.contracts import TableMeld
from engine.game import Move
from engine.games.contract_rummy.rules import CONTRACTS, MAX_LISTED_GO_DOWNS, SET_SIZE, ContractRummyState

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


def table_index(s: ContractRummyState) -> dict[Card, list[Move]]:
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


def derive_index(s: ContractRummyState, old_table: list[list[Card]], first: int, stop: int) -> None:
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
    return go_down_moves(tuple(sorted(hand)), hand_no, limit, None, exact)


@lru_cache(maxsize=4096)
def go_down_moves(hand: tuple[Card, ...], hand_no: int, limit: str, keep_out: Card | None,
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

