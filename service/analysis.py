"""The stateless ``analyze`` endpoint's work: the best arrangement of a hand, for any game.

A game may define ``analyze(hand, round_no=..., options=...) -> dict`` (its own
analysis); rummy games that expose ``meld_rules(options, round)`` get the generic
rummy analysis here, from ``engine.melds``: melds (with what each wild stands
for), deadwood, score, and the discards that go out. Until the other games grow
an ``analyze`` hook, :data:`ADAPTERS` builds theirs from their engine modules'
public functions: Least Score's hand total and legal discard groups, Less Than
Three's melds by type, Contract rummy's contract, points and ways to go down.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from engine.cards import CARD_NAMES, Card, parse_cards
from engine.game import Game
from service.errors import ApiError

MAX_RUMMY_HAND = 24  # the solver is exact, and exponential: no game deals more than this


def analyze(game: Game, hand_names: list[str], round_no: int | None, options: dict[str, Any] | None
            ) -> dict[str, Any]:
    hand = parse_cards(hand_names)
    opts = game.check_options(options)
    _check_multiset(game, hand, opts)
    hook = getattr(game, "analyze", None)
    if callable(hook):
        result: dict[str, Any] = hook(hand, round_no=round_no, options=opts)
        return {"game": game.info.id, **result}
    if hasattr(game, "meld_rules"):
        return _rummy(game, hand, round_no, opts)
    adapter = ADAPTERS.get(game.info.id)
    if adapter is not None:
        return {"game": game.info.id, **adapter(hand, round_no, opts)}
    raise ApiError("analysis_unsupported", f"{game.info.name} has no hand analysis yet")


def _check_multiset(game: Game, hand: list[Card], opts: dict[str, Any]) -> None:
    deck = Counter(game.deck(game.info.max_players, opts))
    for card, n in Counter(hand).items():
        if n > deck[card]:
            raise ApiError("invalid_hand", f"{CARD_NAMES[card]} appears {n} times; {game.info.name}'s biggest "
                           f"deck holds {deck[card]}", errors={"hand": [f"too many {CARD_NAMES[card]}"]})


def _rummy(game: Any, hand: list[Card], round_no: int | None, opts: dict[str, Any]) -> dict[str, Any]:
    from engine import melds

    rounds = int(getattr(game, "rounds", 1))
    round_no = 1 if round_no is None else round_no
    if not 1 <= round_no <= rounds:
        raise ApiError("invalid_request", f"{game.info.name} has rounds 1 to {rounds}, not {round_no}",
                       errors={"round": [f"must be from 1 to {rounds}"]})
    # the solver is exponential in the hand's length: no longer than a hand of the game (dealt, plus a draw)
    longest = min(MAX_RUMMY_HAND, max(game.deal_size(r) for r in range(1, rounds + 1)) + 1) \
        if hasattr(game, "deal_size") else MAX_RUMMY_HAND
    if len(hand) > longest:
        raise ApiError("invalid_hand", f"a hand of {len(hand)} cards is longer than any {game.info.name} hand",
                       errors={"hand": [f"at most {longest} cards"]})
    rules = game.meld_rules(opts, round_no)
    best = melds.best_arrangement(hand, rules)
    go_out = []
    for card in sorted(set(hand)):
        rest = list(hand)
        rest.remove(card)
        if melds.is_fully_melded(rest, rules):
            go_out.append(CARD_NAMES[card])
    out: dict[str, Any] = {
        "game": game.info.id,
        "round": round_no,
        "hand": [CARD_NAMES[c] for c in sorted(hand)],
        "melds": [_meld_json(m) for m in best.melds],
        "deadwood": [CARD_NAMES[c] for c in best.deadwood],
        "score": best.score,
        "fully_melded": not best.deadwood,
        "can_go_out": bool(go_out),
        "go_out_discards": go_out,
    }
    wild_rank = getattr(game, "wild_rank", None)
    if callable(wild_rank):
        out["wild_rank"] = wild_rank(round_no)
    return out


def _meld_json(meld: Any) -> dict[str, Any]:
    return {
        "kind": meld.kind,
        "cards": [CARD_NAMES[c] for c in meld.cards],
        "stands_for": [CARD_NAMES[c] if isinstance(c, int) else c for c in getattr(meld, "stands_for", ())],
    }


# -- analyses built from the engine's public functions, until the games define ``analyze`` -----------


def _least_score(hand: list[Card], round_no: int | None, opts: dict[str, Any]) -> dict[str, Any]:
    from engine.games.least_score import hand_total, legal_groups

    groups = legal_groups(hand, bool(opts.get("sequence_same_suit")))
    return {
        "hand": [CARD_NAMES[c] for c in sorted(hand)],
        "total": hand_total(hand),
        "groups": [[CARD_NAMES[c] for c in g] for g in groups],
    }


def _less_than_three(hand: list[Card], round_no: int | None, opts: dict[str, Any]) -> dict[str, Any]:
    from engine.climbing import KINDS, melds_in

    if len(set(hand)) != len(hand):
        raise ApiError("invalid_hand", "Less Than Three uses one deck: a card cannot appear twice",
                       errors={"hand": ["duplicate cards"]})
    melds = melds_in(hand)
    return {
        "hand": [CARD_NAMES[c] for c in sorted(hand)],
        "melds": {kind: [{"cards": list(m.names), "rank": m.rank} for m in melds if m.kind == kind]
                  for kind in KINDS},
    }


def _contract_rummy(hand: list[Card], round_no: int | None, opts: dict[str, Any]) -> dict[str, Any]:
    from engine.games.contract_rummy import CONTRACTS, card_points, contract_text, listed_go_downs

    hand_no = 1 if round_no is None else round_no
    if hand_no not in CONTRACTS:
        raise ApiError("invalid_request", f"Contract rummy has hands 1 to {len(CONTRACTS)}, not {hand_no}",
                       errors={"round": [f"must be from 1 to {len(CONTRACTS)}"]})
    if len(hand) > MAX_RUMMY_HAND:
        raise ApiError("invalid_hand", f"a hand of {len(hand)} cards is longer than any Contract rummy hand",
                       errors={"hand": [f"at most {MAX_RUMMY_HAND} cards"]})
    # the same ways legal_moves lists (one code path: the contract_meld_size option is honoured here too)
    ways = [[dict(m) for m in move["melds"]] for move in listed_go_downs(hand, hand_no, opts)]
    return {
        "round": hand_no,
        "contract": contract_text(hand_no),
        "hand": [CARD_NAMES[c] for c in sorted(hand)],
        "score": card_points(hand),
        "can_go_down": bool(ways),
        "go_downs": ways,
    }


ADAPTERS: dict[str, Callable[[list[Card], int | None, dict[str, Any]], dict[str, Any]]] = {
    "least-score": _least_score,
    "less-than-three": _less_than_three,
    "contract-rummy": _contract_rummy,
}
