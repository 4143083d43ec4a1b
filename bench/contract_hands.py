"""Contract rummy, single hands on duplicate deals: the AI (a variant of its evaluator) against three baselines.

    python bench/contract_hands.py --deals 6 --out hands.jsonl                       # hands 1-7, every seat
    python bench/contract_hands.py --deals 6 --hands 7 --variants 'leaf_model="stuck"'

Whole matches spread too much to tell small changes apart quickly, and the hands differ (hand 7 goes down
whole). Here deal ``d`` of hand ``h`` is shuffled from ``"contract-hands/{d}/{h}"`` and played once with the
AI in each seat (4 players), the others ``--opponent`` (default expert); one hand only. Per hand: the AI's
score against the others' mean (margin, positive is good), its share of the hand's win (lowest score), whether
it went out, its buys and the others' (mean), and its discards of a wild before going down. With ``--out``
each hand is written as a JSON line, with the AI's decisions that differ from the expert's on the same view.
Variants are ``NAME=VALUE`` (JSON values, several joined by ``;``) as in ``bench/ai_ab.py``; the printed
summary pairs each variant with the first on the same deal, hand and seat.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai import baselines
from ai.search import search
from ai.tournament import tuned_evaluator
from engine.cards import CARD_NAMES, parse_card
from engine.contracts.table import is_wild
from engine.registry import get_game

Task = tuple[str, dict[str, Any], int, int, int, str]


def deal_hand(game: Any, deal: int, round_no: int, label: str, seed: int) -> Any:
    """Hand ``round_no`` of a 4-player match dealt alone: the deck shuffled by ``label``/deal/hand, the
    dealer ``deal % 4``, one card face up; the state's own randomness from ``seed``."""
    deck = list(game.deck(4, game.check_options({}, 4)))
    random.Random(f"{label}/{deal}/{round_no}").shuffle(deck)
    k = game.deal_size(round_no)
    hands = [[CARD_NAMES[c] for c in deck[i * k:(i + 1) * k]] for i in range(4)]
    rest = [CARD_NAMES[c] for c in deck[4 * k:]]
    return game.from_setup(4, {"round": round_no, "dealer": deal % 4, "hands": hands, "discard": [rest[0]],
                               "stock": rest[1:]}, seed=seed)


def play(task: Task) -> dict[str, Any]:
    variant, overrides, deal, round_no, ai_seat, opponent = task
    game = get_game("contract-rummy")
    state = deal_hand(game, deal, round_no, "contract-hands", 7919 * deal + round_no)
    evaluator = tuned_evaluator(game, overrides)
    knobs: dict[str, Any] = {"evaluator": evaluator} if evaluator is not None else {}
    players = [baselines.player(opponent, game) for _ in range(4)]
    expert = baselines.player("expert", game)
    rngs = [random.Random(f"contract-hands/{deal}/{round_no}/{s}") for s in range(4)]
    buys, wilds, differ, ms = [0] * 4, 0, [], []
    while not state.round_scores and not state.is_over:
        seat = state.to_move
        assert seat is not None
        view = game.observation(state, seat)
        if seat == ai_seat:
            t0 = time.perf_counter()
            move = search(game, view, seed=rngs[seat].getrandbits(31), **knobs).move
            ms.append((time.perf_counter() - t0) * 1000)
            other = expert(game, view, random.Random(0))
            if other != move:
                differ.append({"phase": view["phase"], "hand": view["hand"], "down": view["down"],
                               "top": view["discard"][-1] if view["discard"] else None, "ai": move, "expert": other})
            if move["type"] == "discard" and not view["down"][seat] and is_wild(parse_card(move["card"])):
                wilds += 1
        else:
            move = players[seat](game, view, rngs[seat])
        buys[seat] += move["type"] == "buy"
        state = game.apply(state, move, seat=seat)[0]
    scores = list(state.round_scores[0])
    others = [scores[s] for s in range(4) if s != ai_seat]
    low = min(scores)
    return {"variant": variant, "deal": deal, "round": round_no, "seat": ai_seat, "scores": scores,
            "margin": statistics.fmean(others) - scores[ai_seat],
            "win": 1 / scores.count(low) if scores[ai_seat] == low else 0.0,
            "out": scores[ai_seat] == 0, "others_out": sum(s == 0 for s in others) / 3,
            "buys": buys[ai_seat], "others_buys": (sum(buys) - buys[ai_seat]) / 3, "wild_discards": wilds,
            "ms_max": max(ms, default=0.0), "differ": differ}


def parse_variant(text: str) -> dict[str, Any]:
    if text == "base":
        return {}
    out = {}
    for part in text.split(";"):
        name, _, value = part.partition("=")
        out[name] = json.loads(value)
    return out


def interval(xs: list[float]) -> str:
    half = 1.96 * statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else float("nan")
    return f"{statistics.fmean(xs):+.2f} [{statistics.fmean(xs) - half:+.2f}, {statistics.fmean(xs) + half:+.2f}]"


def summary(results: list[dict[str, Any]], variants: list[str]) -> None:
    by = {v: [r for r in results if r["variant"] == v] for v in variants}
    for v, rs in by.items():
        if not rs:
            continue
        print(f"{v}: {len(rs)} hands, win share {statistics.fmean(r['win'] for r in rs):.3f}, margin "
              f"{interval([r['margin'] for r in rs])}, out {statistics.fmean(r['out'] for r in rs):.2f} (others "
              f"{statistics.fmean(r['others_out'] for r in rs):.2f}), buys "
              f"{statistics.fmean(r['buys'] for r in rs):.2f} (others "
              f"{statistics.fmean(r['others_buys'] for r in rs):.2f}), wild discards "
              f"{sum(r['wild_discards'] for r in rs)}")
        for h in sorted({r["round"] for r in rs}):
            hr = [r for r in rs if r["round"] == h]
            print(f"  hand {h}: {len(hr)}, win {statistics.fmean(r['win'] for r in hr):.3f}, margin "
                  f"{statistics.fmean(r['margin'] for r in hr):+.1f}, out {statistics.fmean(r['out'] for r in hr):.2f}")
    first = {(r["deal"], r["round"], r["seat"]): r for r in by[variants[0]]}
    for v in variants[1:]:
        pairs = [(r, first[(r["deal"], r["round"], r["seat"])]) for r in by[v]
                 if (r["deal"], r["round"], r["seat"]) in first]
        if len(pairs) > 1:
            margins = [a["margin"] - b["margin"] for a, b in pairs]
            print(f"{v} - {variants[0]}: {len(pairs)} hands, margin {interval(margins)},"
                  f" win share {interval([a['win'] - b['win'] for a, b in pairs])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", nargs="+", default=["base"])
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--first-deal", type=int, default=0)
    parser.add_argument("--hands", default="1,2,3,4,5,6,7")
    parser.add_argument("--opponent", default="expert", choices=("random", "greedy", "expert"))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default=None, help="write each hand as a JSON line")
    args = parser.parse_args(argv)
    tasks: list[Task] = [(v, parse_variant(v), d, h, s, args.opponent)
                         for d in range(args.first_deal, args.first_deal + args.deals)
                         for h in map(int, args.hands.split(",")) for s in range(4) for v in args.variants]
    results = []
    out = open(args.out, "w") if args.out else None  # noqa: SIM115
    try:
        with Pool(args.workers) as pool:
            for r in pool.imap_unordered(play, tasks):
                results.append(r)
                if out:
                    out.write(json.dumps(r) + "\n")
                    out.flush()
    finally:
        if out:
            out.close()
    summary(results, args.variants)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
