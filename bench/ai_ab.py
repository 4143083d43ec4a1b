"""A/B of the AI's evaluator settings: the same duplicate deals for every variant, and paired differences.

    python bench/ai_ab.py --game three-thirteen --games 200 --variants base meld_bonus=0.5
    python bench/ai_ab.py --smoke --json                       # CI: one deal, two rounds

Each variant is the default level's AI with some of its evaluator's settings
overridden (``NAME=VALUE`` with a JSON value, several joined by commas;
``base`` overrides nothing). Every variant plays the same whole games as
``bench/ai_strength.py`` (duplicate deals, the AI in each seat in turn) against
the same ``--opponent``.

Why paired: a game's margin spreads by about 42 points in Three Thirteen, so
two separate 200-game runs only tell apart win rates about 0.1 apart. But the
rounds are dealt from the match seed whatever is played, and the baselines and
the AI are deterministic, so two variants' games are identical until they first
choose differently. The difference of their margins on the same deal and seat
is zero wherever they agree, and its interval is several times narrower than
either margin's. Reported per variant: ``bench/ai_strength.py``'s summary; and
for each variant after the first, the mean per-game difference from the first
in margin and in win share, with 95% intervals over deals.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_strength import _mean_ci, play_game, summarize, tuned_evaluator

from engine.registry import get_game


def parse_variant(text: str) -> dict[str, Any]:
    """``base`` -> {}; ``a=1,b=0.5`` -> {"a": 1, "b": 0.5}."""
    if text == "base":
        return {}
    out: dict[str, Any] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"a variant is base or NAME=VALUE[,NAME=VALUE...], not {text!r}")
        out[name] = json.loads(value)
    return out


def paired(results: list[dict[str, Any]], base: str, other: str) -> dict[str, Any]:
    """Per deal: the mean over its seats of ``other``'s margin (win share) minus ``base``'s."""
    by = {(r["variant"], r["deal"], r["parity"]): r for r in results}
    deals = sorted({r["deal"] for r in results})
    dm, dw = [], []
    for d in deals:
        pairs = [(by[(other, d, p)], by[(base, d, p)]) for p in (0, 1) if (other, d, p) in by and (base, d, p) in by]
        if pairs:
            dm.append(statistics.fmean(a["margin"] - b["margin"] for a, b in pairs))
            dw.append(statistics.fmean(a["win"] - b["win"] for a, b in pairs))
    m, mlo, mhi = _mean_ci(dm)
    w, wlo, whi = _mean_ci(dw)
    many = len(dm) > 1  # one deal has no interval
    return {"deals": len(dm), "deals_unchanged": sum(1 for x in dm if x == 0),
            "margin_diff": round(m, 2), "margin_diff_ci95": [round(mlo, 2), round(mhi, 2)] if many else None,
            "win_diff": round(w, 3), "win_diff_ci95": [round(wlo, 3), round(whi, 3)] if many else None}


def _run(task: tuple[str, tuple[Any, ...]]) -> dict[str, Any]:
    variant, inner = task
    return {**play_game(inner), "variant": variant}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="CI: one deal of two rounds, fast AI")
    parser.add_argument("--game", default="three-thirteen")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--opponent", default="greedy", choices=("random", "greedy"))
    parser.add_argument("--variants", nargs="+", default=["base"], help="base, or NAME=VALUE[,NAME=VALUE...]")
    parser.add_argument("--games", type=int, default=20, help="games per variant (two per duplicate deal)")
    parser.add_argument("--first-deal", type=int, default=1)
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--time-ms", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=0, help="stop each game after this many rounds (0: whole)")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    if args.smoke:
        args.games, args.rounds, args.time_ms = 2, 2, args.time_ms or 20
    variants = {v: parse_variant(v) for v in args.variants}
    for overrides in variants.values():
        try:
            tuned_evaluator(get_game(args.game), overrides)
        except (KeyError, ValueError) as exc:
            raise SystemExit(str(exc)) from None
    tasks = []
    for d in range(args.first_deal, args.first_deal + max(1, args.games // 2)):
        for parity in (0, 1):
            for name, overrides in variants.items():
                cfg = {"level": args.level, "time_ms": args.time_ms, "rounds": args.rounds, "options": {},
                       "evaluator": overrides}
                tasks.append((name, (args.game, args.players, args.opponent, d, parity, cfg)))
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) if args.workers > 1 else contextlib.nullcontext() as pool:
        results = list(pool.imap_unordered(_run, tasks) if pool is not None else map(_run, tasks))
    first = args.variants[0]
    out: dict[str, Any] = {"game": args.game, "players": args.players, "opponent": args.opponent,
                           "level": args.level, "rounds": args.rounds or "whole game", "variants": {}}
    for name in args.variants:
        entry = summarize([r for r in results if r["variant"] == name])
        if name != first:
            entry["versus_" + first] = paired(results, first, name)
        out["variants"][name] = entry
    out["seconds"] = round(time.perf_counter() - start, 1)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for name, s in out["variants"].items():
            line = (f"{name:30s} win {s['win_rate']:.3f} {s['win_rate_ci95']}  margin {s['margin']:+.2f} "
                    f"{s['margin_ci95']}")
            vs = s.get("versus_" + first)
            if vs:
                line += (f"  | vs {first}: margin {vs['margin_diff']:+.2f} {vs['margin_diff_ci95']}, "
                         f"win {vs['win_diff']:+.3f} {vs['win_diff_ci95']}")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
