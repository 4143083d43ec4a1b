"""Stored bytes per match at mid-game, for every registered game, through the service's Redis store.

    python bench/match_bytes.py --json

For each game and player count (the minimum and the maximum), a match is first played to its end with
the engine alone (the greedy baseline of ``ai/baselines.py`` for every seat, so rounds end the way real
ones do) to learn its length; then the same match is played through the API (Flask test client, a real
``redis-server`` of its own) to half that length, and the match's keys are measured:
``redis_bytes`` is Redis' ``MEMORY USAGE`` of the match hash and the log list (the state blob, seats,
start, log tail, and the zlib-compressed log chunks), ``payload_bytes`` the values themselves.
Goal: <= 32 KB for 8-player contract rummy.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import Processes  # noqa: E402

MAX_PLIES = 20_000


def _policy() -> Any:
    from ai.baselines import greedy_move

    def choose(game: Any, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return dict(greedy_move(game, view, rng))

    return choose


def measure(client: Any, game: Any, n: int, seed: int, choose: Any) -> dict[str, Any]:
    rng = random.Random(seed)
    state = game.new_match(n, seed=seed)
    plies = 0
    while not state.is_over and plies < MAX_PLIES:
        view = game.observation(state, state.to_move)
        state, _ = game.apply(state, choose(game, view, rng))
        plies += 1
    full_rounds = state.round
    r = client.post("/v1/matches", json={"game": game.info.id, "players": [{} for _ in range(n)], "seed": seed})
    created = r.get_json()
    mid, tokens = created["match_id"], [s["token"] for s in created["seats"]]
    rng = random.Random(seed)
    version = created["version"]
    for _ in range(plies // 2):
        seat = client.get(f"/v1/matches/{mid}").get_json()["view"]["to_move"]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        view = client.get(f"/v1/matches/{mid}", headers=auth).get_json()["view"]
        r = client.post(f"/v1/matches/{mid}/moves", headers=auth,
                        json={"move": choose(game, view, rng), "expected_version": version})
        assert r.status_code == 200, r.get_json()
        version = r.get_json()["version"]
    store = client.application.extensions["cardtable"].store
    stored = store.load(mid)
    return {
        "players": n,
        "full_game_plies": plies,
        "full_game_rounds": full_rounds,
        "measured_at_version": version,
        "round": json.loads(stored.state)["round"],
        "state_blob_bytes": len(stored.state),
        "payload_bytes": store.payload_bytes(mid),
        "redis_bytes": store.stored_bytes(mid),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--games", default="", help="comma-separated game ids (default: all)")
    args = parser.parse_args(argv)

    from engine.registry import all_games
    from service.app import create_app

    servers = Processes("cardtable-bytes-")
    try:
        url = servers.redis()
        client = create_app({"redis_url": url, "request_log": False, "log_level": "WARNING"}).test_client()
        choose = _policy()
        results: dict[str, list[dict[str, Any]]] = {}
        wanted = {g for g in args.games.split(",") if g}
        for game in all_games():
            if wanted and game.info.id not in wanted:
                continue
            sizes = sorted({game.info.min_players, game.info.max_players})
            results[game.info.id] = [measure(client, game, n, args.seed, choose) for n in sizes]
    finally:
        servers.stop()
    cr = [r for r in results.get("contract-rummy", []) if r["players"] == 8]
    out: dict[str, Any] = {"games": results}
    if cr:
        out["contract_rummy_8p_mid_game_bytes"] = cr[0]["redis_bytes"]
        out["goal_contract_rummy_8p<=32KB"] = cr[0]["redis_bytes"] <= 32 * 1024
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for game_id, rows in results.items():
            for row in rows:
                print(f"{game_id:16s} {row['players']} players: {row['redis_bytes']:7d} B in Redis "
                      f"({row['payload_bytes']} B of values) at version {row['measured_at_version']}, "
                      f"round {row['round']}/{row['full_game_rounds']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
