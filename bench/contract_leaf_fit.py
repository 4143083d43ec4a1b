"""Fit the contract rummy leaf's tables (:class:`ai.evaluators.contract_rummy.FittedLeaf`) on expert self-play.

    python bench/contract_leaf_fit.py --deals 400            # prints FITTED_LEAF's tables (minutes)
    python bench/contract_leaf_fit.py --deals 2 --json       # a quick look

Four experts (:mod:`ai.experts.contract_rummy`) play single hands: deal ``d`` of hand ``h`` is shuffled from
``"leaf-fit/{d}/{h}"``, for every hand 1-7. Each time a seat is about to draw, every seat's position is
recorded (down or not; the cards still missing, by the AI's own count, or once down the cards that fit no
meld on the table; the other players already down; its card count and points) with the score that seat ends
the hand with. The tables are ratios of sums over those positions, by cell:

* not down: the end score over ``n / 2 + points / 17`` (about one unit per average card), by cards missing
  (0-5 and more) and others down (0-2 and more); hand 7 in a row of its own;
* down: the end score over the points of the cards that fit no meld, by those cards (1-3 and more) and
  others down.

A cell with fewer than 30 positions takes its neighbour's value; each table is made non-decreasing in both
directions (more missing, more players down: never a better outlook).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai import baselines
from ai.evaluators.contract_rummy import _layable, effective_missing
from bench.contract_hands import deal_hand
from engine.games import contract_rummy as cr
from engine.registry import get_game

MIN_CELL = 30


def play_hand(deal: int, round_no: int) -> list[tuple[str, int, int, float, int]]:
    """One hand of four experts: (table, row, column, x, end score) for every seat at every draw."""
    game = get_game("contract-rummy")
    state = deal_hand(game, deal, round_no, "leaf-fit", deal)
    assert isinstance(state, cr.ContractRummyState)
    players = [baselines.player("expert", game) for _ in range(4)]
    rngs = [random.Random(f"leaf-fit/{deal}/{round_no}/{s}") for s in range(4)]
    seen: list[tuple[int, str, int, int, float]] = []
    while not state.round_scores and not state.is_over:
        if state.phase == cr.DRAW:
            layable = _layable(state) if state.meld_cards else ()
            downs = sum(1 for d in state.down if d)
            for seat, hand in enumerate(state.hands):
                others = downs - bool(state.down[seat])
                if state.down[seat]:
                    unfit = [c for c in hand if c not in layable]
                    if unfit:
                        seen.append((seat, "down", len(unfit), others, float(cr.card_points(unfit))))
                else:
                    table = "hand7" if round_no == 7 else "not_down"
                    seen.append((seat, table, effective_missing(hand, round_no), others if round_no != 7 else 0,
                                 len(hand) / 2 + cr.card_points(hand) / 17.0))
        seat = state.to_move
        assert seat is not None
        move = players[seat](game, game.observation(state, seat), rngs[seat])
        state = game.apply(state, move, seat=seat)[0]
        assert isinstance(state, cr.ContractRummyState)
    scores = state.round_scores[0]
    return [(table, row, col, x, scores[seat]) for seat, table, row, col, x in seen]


SHAPES = {"not_down": (range(6), range(3)), "hand7": (range(6), range(1)), "down": (range(1, 4), range(3))}


def fit(deals: int, first: int = 0) -> dict[str, Any]:
    sums: dict[tuple[str, int, int], list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for deal in range(first, first + deals):
        for round_no in range(1, 8):
            for table, row, col, x, score in play_hand(deal, round_no):
                rows, cols = SHAPES[table]
                cell = sums[(table, min(row, rows[-1]), min(col, cols[-1]))]
                cell[0] += 1
                cell[1] += score
                cell[2] += x
    out: dict[str, Any] = {"positions": int(sum(c[0] for c in sums.values())), "hands": deals * 7}
    for table, (rows, cols) in SHAPES.items():
        values: list[list[float]] = []
        for r in rows:
            line: list[float] = []
            for c in cols:
                n, score, x = sums[(table, r, c)]
                v = score / x if n >= MIN_CELL and x else (line[-1] if line else values[-1][0] if values else 0.0)
                if line:
                    v = max(v, line[-1])
                if values:
                    v = max(v, values[-1][len(line)])
                line.append(round(v, 2))
            values.append(line)
        out[table] = values
        out[f"{table}_positions"] = [[int(sums[(table, r, c)][0]) for c in cols] for r in rows]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--first-deal", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    out = fit(args.deals, args.first_deal)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key} = {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
