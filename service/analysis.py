"""The stateless ``analyze`` endpoint's work: the best arrangement of a hand, for any game.

A game may define ``analyze(hand, round_no=..., options=...) -> dict`` (its own
analysis: Least Score's hand total and discard groups, Less Than Three's melds
by type); rummy games that expose ``meld_rules(options, round)`` get the generic
rummy analysis here, from ``engine.melds``: melds (with what each wild stands
for), deadwood, score, and the discards that go out.
"""

from __future__ import annotations

from collections import Counter
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
    if len(hand) > MAX_RUMMY_HAND:
        raise ApiError("invalid_hand", f"a hand of {len(hand)} cards is longer than any {game.info.name} hand",
                       errors={"hand": [f"at most {MAX_RUMMY_HAND} cards"]})
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
