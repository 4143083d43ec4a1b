"""A/B of the AI's evaluator settings: the same duplicate deals for every variant, and paired differences.

    python bench/ai_ab.py --game three-thirteen --games 200 --variants base meld_bonus=0.5
    python bench/ai_ab.py --smoke --json                       # CI: one deal, two rounds

Each variant is the default level's AI with some of its evaluator's settings
overridden (``NAME=VALUE`` with a JSON value, several joined by commas;
``base`` overrides nothing). Every variant plays the same whole games as
``bench/ai_strength.py`` (:mod:`ai.tournament`: duplicate deals, the AI in each seat in turn)
against the same ``--opponent``.

Why paired: a game's margin spreads by about 42 points in Three Thirteen, so
two separate 200-game runs only tell apart win rates about 0.1 apart. But the
rounds are dealt from the match seed whatever is played, and the baselines and
the AI are deterministic, so two variants' games are identical until they first
choose differently. The difference of their margins on the same deal and seat
is zero wherever they agree, and its interval is several times narrower than
either margin's. Reported per variant: ``bench/ai_strength.py``'s summary; and
for each variant after the first, the mean per-game difference from the first
in margin and in win share, with 95% intervals over deals. The games are played deal by deal across
the variants, so a run stopped early (Ctrl-C) reports every variant over about as many deals.

``reveal=true`` in a variant is not an evaluator setting: that variant's AI is shown the other seats' hands
(each hidden hand zone of its view filled from the real state, as if every card in it were known), so its
sampled deals all hold the real hands and only the stock is dealt. It measures what knowing the others'
hands would be worth, the most any opponent model could gain:

    python bench/ai_ab.py --game threezies --opponent expert --games 60 --variants base \
        'reveal=true,feed=1,feed_after_out=false'

``level=N`` in a variant is not an evaluator setting either: that variant plays at level ``N`` instead of
``--level`` (what a level's budget is worth against the same opponent, on the same deals):

    python bench/ai_ab.py --game contract-rummy --players 4 --opponent expert --games 100 --variants base level=4
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_strength import summarize

from ai.tournament import (
    Entrant,
    GameResult,
    GameTask,
    mean_interval,
    parse_entrant,
    play_all,
    play_game,
    schedule,
    stop_like_ctrl_c,
    tuned_evaluator,
)
from engine.cards import CARD_NAMES
from engine.game import Game, Observation, State
from engine.registry import get_game


@functools.cache
def reveals(spec: str) -> bool:
    """Whether the variant named ``spec`` is shown the other seats' hands."""
    return bool(parse_variant(spec).get("reveal"))


def revealed_view(game: Game, state: State, seat: int, entrant: Entrant) -> Observation:
    """The seat's view; for a ``reveal`` variant (its spec says so), with the others' hands shown as known."""
    view = game.observation(state, seat)
    if not entrant.is_ai or not reveals(entrant.spec) or not hasattr(state, "hands"):
        return view
    for zone in view["hidden"]:
        if zone.get("zone") == "hand" and "seat" in zone:
            cards = [CARD_NAMES[c] for c in sorted(state.hands[zone["seat"]])]
            zone["known"] = cards
            if isinstance(view.get("known"), list):
                view["known"][zone["seat"]] = cards
    return view


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


def paired(results: dict[str, list[GameResult]], base: str, other: str, lower_score_wins: bool) -> dict[str, Any]:
    """Per deal: the mean over its seatings of ``other``'s margin (win share) minus ``base``'s."""
    by = {(name, r.seed, r.shift): r for name, rs in results.items() for r in rs}
    deals = sorted({r.seed for rs in results.values() for r in rs})
    shifts = sorted({r.shift for rs in results.values() for r in rs})
    dm, dw = [], []
    for d in deals:
        pairs = [(by[(other, d, s)], by[(base, d, s)]) for s in shifts if (other, d, s) in by and (base, d, s) in by]
        if pairs:
            dm.append(statistics.fmean(a.margin(0, lower_score_wins) - b.margin(0, lower_score_wins)
                                       for a, b in pairs))
            dw.append(statistics.fmean(a.share(0) - b.share(0) for a, b in pairs))
    if not dm:
        return {"deals": 0}
    m, mlo, mhi = mean_interval(dm)
    w, wlo, whi = mean_interval(dw)
    return {"deals": len(dm), "deals_unchanged": sum(1 for x in dm if x == 0),
            "margin_diff": round(m, 2),
            "margin_diff_ci95": None if mlo is None or mhi is None else [round(mlo, 2), round(mhi, 2)],
            "win_diff": round(w, 3),
            "win_diff_ci95": None if wlo is None or whi is None else [round(wlo, 3), round(whi, 3)]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="CI: one deal of two rounds, fast AI")
    parser.add_argument("--game", default="three-thirteen")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--opponent", default="greedy", choices=("random", "greedy", "expert"))
    parser.add_argument("--variants", nargs="+", default=["base"], help="base, or NAME=VALUE[,NAME=VALUE...]")
    parser.add_argument("--games", type=int, default=20, help="games per variant (N per duplicate deal)")
    parser.add_argument("--first-deal", type=int, default=1)
    parser.add_argument("--level", type=int, default=3)
    parser.add_argument("--time-ms", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=0, help="stop each game after this many rounds (0: whole)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--progress", action="store_true", help="print each finished game to stderr (JSON)")
    args = parser.parse_args(argv)
    stop_like_ctrl_c()  # SIGINT (even in the background) and SIGTERM stop the run; the report counts the games finished
    if args.smoke:
        args.games, args.rounds, args.time_ms = args.players, 2, args.time_ms or 20
    game = get_game(args.game)
    # each variant's evaluator settings (``reveal`` and ``level`` are not: revealed_view reads the first from the
    # variant's name, the second sets the variant's level)
    variants = {v: {k: x for k, x in parse_variant(v).items() if k not in ("reveal", "level")}
                for v in args.variants}
    for overrides in variants.values():
        try:
            tuned_evaluator(game, overrides)
        except (KeyError, ValueError) as exc:
            raise SystemExit(str(exc)) from None
    opponent = parse_entrant(args.opponent)
    names = list(variants)
    per_variant: list[list[GameTask]] = []
    for name, overrides in variants.items():
        level = parse_variant(name).get("level", args.level)
        try:
            entrant = parse_entrant(f"ai:{level}", args.time_ms)
        except ValueError as exc:
            raise SystemExit(f"variant {name!r}: {exc}") from None
        ai = dataclasses.replace(entrant, spec=name,
                                 evaluator=tuple(sorted(overrides.items())))
        lineup = [ai] + [opponent] * (args.players - 1)
        per_variant.append(schedule(args.game, lineup, max(args.players, args.games), first_seed=args.first_deal,
                                    rounds=args.rounds))
    # game by game, every variant's game of a deal and seat next to the others': a run stopped early (Ctrl-C)
    # still has paired games
    tasks: list[GameTask] = []
    for same_game in zip(*per_variant, strict=True):
        for task in same_game:
            tasks.append(dataclasses.replace(task, index=len(tasks)))
    variant_of = {t.index: t.entrants[0].spec for t in tasks}
    lineups = {t.entrants[0].spec: list(t.entrants) for t in tasks}
    start = time.perf_counter()
    results: dict[str, list[GameResult]] = {name: [] for name in names}
    try:
        for r in play_all(tasks, workers=args.workers, play=functools.partial(play_game, view_of=revealed_view)):
            results[variant_of[r.index]].append(r)
            if args.progress:  # a stopped run still leaves its finished games on stderr
                print(json.dumps({"variant": variant_of[r.index], "deal": r.seed, "shift": r.shift,
                                  "totals": r.totals, "winners": r.winners, "seating": r.seating}),
                      file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print("stopped: the report counts the games finished", file=sys.stderr)
    first = names[0]
    lower = game.info.lower_score_wins
    out: dict[str, Any] = {"game": args.game, "players": args.players, "opponent": args.opponent,
                           "level": args.level, "rounds": args.rounds or "whole game", "variants": {}}
    for name in names:
        if not results[name]:
            continue
        entry = summarize(results[name], lineups[name], lower)
        if name != first:
            entry["versus_" + first] = paired(results, first, name, lower)
        out["variants"][name] = entry
    out["seconds"] = round(time.perf_counter() - start, 1)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for name, s in out["variants"].items():
            line = (f"{name:30s} win {s['win_rate']:.3f} {s['win_rate_ci95']}  margin {s['margin']:+.2f} "
                    f"{s['margin_ci95']}")
            vs = s.get("versus_" + first)
            if vs and vs.get("deals"):
                line += (f"  | vs {first}: margin {vs['margin_diff']:+.2f} {vs['margin_diff_ci95']}, "
                         f"win {vs['win_diff']:+.3f} {vs['win_diff_ci95']}")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
