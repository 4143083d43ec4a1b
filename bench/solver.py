"""Throughput of the minimum-deadwood solver (engine/melds/) on fresh random hands.

    python bench/solver.py --json            # ~15 s
    python bench/solver.py --smoke --json    # CI: ~1-2 s

Prints one JSON object of hands per second (median over repetitions; every repetition
gets its own freshly dealt hands, so no cache can answer twice):

* ``random10_hands_per_s``: min_deadwood, 10 cards from one 52-card deck, no wild.
* ``wild13_hands_per_s``: min_deadwood, 13 cards, Three Thirteen round 11 (kings wild).
* ``best_discard11_per_s``: best_discard, 11 cards (10 dealt + 1 drawn), Three Thirteen round 8 (tens wild).
* extras: ``best_discard11_nowild_per_s``, ``two_decks13_hands_per_s`` (round 11, two decks),
  ``aces_high13_hands_per_s`` (round 11, aces high or low), ``contract12_hands_per_s``
  (contract rummy rules, 12 cards from two decks and four jokers), ``arrangement13_per_s``
  (best_arrangement, round 11), and ``tables_build_s`` (building a new rules' tables, not in smoke).

Fixed seeds; the hands are dealt and the solver's tables built (``melds.prepare``) before the
clock starts (``--smoke`` lets them fill lazily during a short warm-up instead). Rates are per
second of process CPU time, which other jobs on a shared machine disturb less than wall-clock time.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import melds
from engine.cards import standard_deck
from engine.melds import MeldRules, rummy_values


def tt_rules(round_no: int, aces: str = "low") -> MeldRules:
    return MeldRules(aces=aces, wild_ranks=frozenset({round_no + 2}),
                     values=rummy_values(ace=15 if aces == "high_or_low" else 1))


CONTRACT = MeldRules(min_set=3, min_run=4, aces="high_or_low", wild_ranks=frozenset({2}),
                     wild_limit="at_least_one_natural", values=rummy_values(ace=15, joker=25, two=20, low=5))


def deal(rng: random.Random, deck: list[int], size: int, count: int) -> list[list[int]]:
    return [rng.sample(deck, size) for _ in range(count)]


# name -> (function, rules, deck, hand size, hands per repetition at full length)
CASES: dict[str, tuple[Callable[[Sequence[int], MeldRules], object], MeldRules, list[int], int, int]] = {
    "random10_hands_per_s": (melds.min_deadwood, MeldRules(), standard_deck(), 10, 60_000),
    "wild13_hands_per_s": (melds.min_deadwood, tt_rules(11), standard_deck(), 13, 20_000),
    "best_discard11_per_s": (melds.best_discard, tt_rules(8), standard_deck(), 11, 20_000),
    "best_discard11_nowild_per_s": (melds.best_discard, MeldRules(), standard_deck(), 11, 20_000),
    "aces_high13_hands_per_s": (melds.min_deadwood, tt_rules(11, "high_or_low"), standard_deck(), 13, 20_000),
    "two_decks13_hands_per_s": (melds.min_deadwood, tt_rules(11), standard_deck(2), 13, 2_000),
    "contract12_hands_per_s": (melds.min_deadwood, CONTRACT, standard_deck(2, jokers=4), 12, 500),
    "arrangement13_per_s": (melds.best_arrangement, tt_rules(11), standard_deck(), 13, 1_000),
}


def rate(fn: Callable[[Sequence[int], MeldRules], object], rules: MeldRules, hands: list[list[int]]) -> float:
    """Hands per second of CPU time (the process's, so other jobs on the machine count less)."""
    start = time.process_time()
    for h in hands:
        fn(h, rules)
    return len(hands) / (time.process_time() - start)


def tables_build_seconds() -> float:
    """Time to build all tables of a rules object never seen before (melds.prepare)."""
    rules = MeldRules(wild_ranks=frozenset({5}), values=rummy_values(ace=2, joker=21))
    start = time.process_time()
    melds.prepare(rules)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="a very short run (CI)")
    parser.add_argument("--repeats", type=int, default=None, help="repetitions per figure (default 5; smoke 3)")
    parser.add_argument("--scale", type=float, default=None, help="fraction of the default hands per repetition")
    parser.add_argument("--only", default="", help="comma-separated figure names")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.smoke else 5)
    scale = args.scale or (0.02 if args.smoke else 1.0)
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    out: dict[str, float] = {}
    if not args.only and not args.smoke:
        out["tables_build_s"] = round(tables_build_seconds(), 3)
    for index, name in enumerate(names):
        fn, rules, deck, size, count = CASES[name]
        rng = random.Random(1000 + index)
        n = max(20, int(count * scale))
        if not args.smoke:
            melds.prepare(rules)  # build the rules' tables outside the clock (smoke: lazily, below)
        for h in deal(rng, deck, size, 200):
            fn(h, rules)
        rates = [rate(fn, rules, deal(rng, deck, size, n)) for _ in range(repeats)]
        out[name] = round(statistics.median(rates), 1)
        if not args.json:
            print(f"{name:32s} {out[name]:12,.0f}   (runs: {', '.join(f'{r:,.0f}' for r in rates)})")
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
