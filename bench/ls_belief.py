"""How well the Least Score AI's sampled deals match the hands players really hold (the belief's calibration).

    python bench/ls_belief.py --games 3 --players 4                      # the AI's belief and declined=1 (minutes)
    python bench/ls_belief.py --games 12 --players 2 --variants base 'declined=1,declined_players=2'
    python bench/ls_belief.py --smoke --json                             # CI: one short game

Experts (:mod:`ai.experts.least_score`) play whole games from match seed ``1000 + g``. At every discard
decision of a seat that may declare, each other hand still in is looked at twice: its true total, and its
total in ``--samples`` deals the AI would sample from that seat's view (:meth:`LeastScoreEvaluator.deal`,
with each variant's settings: ``NAME=VALUE`` with a JSON value, as in ``bench/ai_ab.py``). Printed per
number of orbits played in the deal (turns over the players in, 6 and more together): how often a hand's total
is at most 3, 5, 8, 12 and 20 points, truly and in the sampled deals. A declare is decided where totals of 2-6
points meet, so the low end is what counts.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_ab import parse_variant

from ai.evaluators.least_score import EVALUATOR
from ai.tournament import chooser, parse_entrant
from engine.games.least_score import VALUE
from engine.registry import get_game

CUTS = (3, 5, 8, 12, 20)
MAX_ORBITS = 6


def calibrate(games: int, players: int, samples: int, variants: list[str]) -> dict[str, Any]:
    game = get_game("least-score")
    evaluators = {}
    for name in variants:
        ev = copy.copy(EVALUATOR)
        for key, value in parse_variant(name).items():
            if not hasattr(ev, key):
                raise SystemExit(f"LeastScoreEvaluator has no setting {key!r}")
            setattr(ev, key, value)
        evaluators[name] = ev
    true_at = defaultdict(lambda: [0] * len(CUTS))
    hands: defaultdict[int, int] = defaultdict(int)
    dealt_at = {name: defaultdict(lambda: [0.0] * len(CUTS)) for name in variants}
    for g in range(games):
        state = game.new_match(players, None, seed=1000 + g)
        seats = [chooser(parse_entrant("expert"), game) for _ in range(players)]
        rngs = [random.Random(f"ls-belief/{g}/{s}") for s in range(players)]
        deal_rng = random.Random(f"ls-belief/{g}")
        while not state.is_over:
            seat = state.to_move
            assert seat is not None
            view = game.observation(state, seat)
            if view["phase"] == "discard" and state.played[seat]:
                players_in = sum(1 for o in state.out if not o)
                orbits = min(view["turns_in_round"] // max(1, players_in), MAX_ORBITS)
                worlds = {name: [game.determinize(view, deal_rng, deal=ev.deal(game, view)) for _ in range(samples)]
                          for name, ev in evaluators.items()}
                for o in range(players):
                    if o == seat or state.out[o]:
                        continue
                    hands[orbits] += 1
                    total = sum(VALUE[c] for c in state.hands[o])
                    for i, cut in enumerate(CUTS):
                        true_at[orbits][i] += total <= cut
                    for name, ws in worlds.items():
                        for i, cut in enumerate(CUTS):
                            dealt_at[name][orbits][i] += sum(
                                sum(VALUE[c] for c in w.hands[o]) <= cut for w in ws) / samples
            move = seats[seat](game, view, rngs[seat])
            state, _ = game.apply(state, move, seat=seat)
    rows = []
    for orbits in sorted(hands):
        n = hands[orbits]
        rows.append({"orbits": orbits, "hands": n, "true": [round(x / n, 3) for x in true_at[orbits]],
                     **{name: [round(x / n, 3) for x in dealt_at[name][orbits]] for name in variants}})
    return {"games": games, "players": players, "samples": samples, "cuts": list(CUTS), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="CI: one game, few samples")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--samples", type=int, default=30, help="sampled deals per decision and variant")
    parser.add_argument("--variants", nargs="+", default=["base", "declined=1"],
                        help="base, or NAME=VALUE[,NAME=VALUE...] settings of the evaluator")
    args = parser.parse_args(argv)
    if args.smoke:
        args.games, args.samples = 1, 3
    out = calibrate(args.games, args.players, args.samples, args.variants)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"share of the other hands at most {', '.join(map(str, CUTS))} points: true, then each variant's deals")
    for row in out["rows"]:
        print(f"orbits {row['orbits']} ({row['hands']} hands): true {row['true']}  "
              + "  ".join(f"{name} {row[name]}" for name in args.variants))
    return 0


if __name__ == "__main__":
    sys.exit(main())
