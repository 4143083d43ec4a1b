"""Benchmarks of the AI worker tier and live updates, against real processes on a Redis of its own.

    python bench/ai_tier.py --json          # all three, full size
    python bench/ai_tier.py --smoke --json  # a quick run (CI)

* **queue round trip**: an AI job's trip through the queue without its search: ``AiWork.decide`` (admission,
  XADD, a worker's XREADGROUP, the search, the answer stored and published, the waiter woken) minus the
  search time the worker reports; level-1 hints, one at a time, against ``cardtable ai-worker`` processes.
  Goal: median <= 5 ms.
* **events across instances**: two gunicorn instances (1 worker each) on one Redis; an SSE subscriber on
  instance B, moves posted to instance A, one at a time: the time from the move's answer (at the client) to
  its event reaching the subscriber. Goal: p99 <= 50 ms.
* **HTTP workers' memory**: human-against-AI matches played through the API (the human's moves with
  ``wait``, the AI seats' turns by the AI workers) until 10,000 AI moves were played; the gunicorn workers'
  RSS after a warm-up and at the end. Goal: flat (within 20 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import Processes, free_port, service_env, worker_pids  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Stack:
    """Redis, AI workers and gunicorn instances this benchmark started (and stops: only these)."""

    def __init__(self, ai_workers: int) -> None:
        self.servers = Processes("cardtable-aitier-")
        self.url = self.servers.redis()
        self.env = service_env(self.url, RATE_LIMIT_ENABLED="0", REQUEST_LOG="0", LOG_LEVEL="WARNING")
        self.servers.ai_workers(ai_workers, self.env)

    def gunicorn(self, workers: int) -> tuple[int, subprocess.Popen[bytes]]:
        port = free_port()
        metrics = tempfile.mkdtemp(dir=self.servers.tmp)
        proc = self.servers.gunicorn(dict(self.env, CARDTABLE_WORKERS=str(workers), PROMETHEUS_MULTIPROC_DIR=metrics),
                                     port)
        return port, proc

    def close(self) -> None:
        self.servers.stop()


def call(port: int, method: str, path: str, body: Any = None, token: str | None = None,
         conn: http.client.HTTPConnection | None = None) -> tuple[int, Any]:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        if own:
            conn.close()


# -- the queue's round trip ------------------------------------------------------------------------------


def queue_round_trip(stack: Stack, jobs: int) -> dict[str, Any]:
    from engine.registry import get_game
    from service.aitier.budget import AiBudget
    from service.aitier.queue import JobQueue
    from service.config import Config
    from service.live import Notifier
    from service.store import connect
    from service.usecases.ai_work import AiWork

    client = connect(stack.url)
    config = Config(redis_url=stack.url, rate_limit_enabled=False)
    queue = JobQueue(client, capacity_per_worker=config.ai_queue_seconds_per_worker,
                     visibility_timeout=config.ai_visibility_timeout)
    ai = AiWork(queue, AiBudget(client, per_token_minute=60, per_client_minute=60, enabled=False), Notifier(client),
                config)
    deadline = time.monotonic() + 30
    while queue.live_workers() == 0:
        assert time.monotonic() < deadline, "no AI worker came up"
        time.sleep(0.1)
    game = get_game("three-thirteen")
    state = game.new_match(2, seed=5)
    view = json.loads(json.dumps(game.observation(state, state.to_move)))
    overheads, searches = [], []
    for i in range(jobs + 10):
        decided = ai.decide("hint", game, view, level=1, time_ms=None, seed=i, buckets=[])
        if i >= 10:  # the first jobs warm the workers up
            overheads.append((decided.round_trip - decided.search_seconds) * 1000)
            searches.append(decided.search_seconds * 1000)
    ai.notifier.close()
    return {"jobs": jobs, "median_ms": round(statistics.median(overheads), 3),
            "p90_ms": round(percentile(overheads, 0.9), 3), "p99_ms": round(percentile(overheads, 0.99), 3),
            "search_median_ms": round(statistics.median(searches), 3)}


# -- events across instances -----------------------------------------------------------------------------


def event_latency(stack: Stack, moves: int) -> dict[str, Any]:
    port_a, _ = stack.gunicorn(1)
    port_b, _ = stack.gunicorn(1)
    from engine.registry import get_game

    game = get_game("threezies")
    status, created = call(port_a, "POST", "/v1/matches", {"game": "threezies", "players": [{}, {}], "seed": 9,
                                                           "options": {"max_turns_per_round": 10000}})
    assert status == 201, created
    mid, tokens = created["match_id"], [s["token"] for s in created["seats"]]
    arrived: dict[int, float] = {}
    ready = threading.Event()

    def subscribe() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port_b, timeout=60)
        conn.request("GET", f"/v1/matches/{mid}/events", headers={"Authorization": f"Bearer {tokens[0]}"})
        response = conn.getresponse()
        while len(arrived) < moves:
            line = response.readline()
            if not line:
                break
            if line.startswith(b"id: "):
                version = int(line[4:])
                if version == 0:
                    ready.set()
                else:
                    arrived[version] = time.perf_counter()
        conn.close()

    reader = threading.Thread(target=subscribe, daemon=True)
    reader.start()
    assert ready.wait(30), "the event stream did not start"
    state = game.new_match(2, {"max_turns_per_round": 10000}, seed=9)
    answered: dict[int, float] = {}
    conn = http.client.HTTPConnection("127.0.0.1", port_a, timeout=30)
    for version in range(moves):
        seat = state.to_move
        assert seat is not None
        move = game.legal_moves(state)[0] if state.phase == "draw" else \
            {"type": "discard", "card": game.observation(state, seat)["hand"][-1]}
        status, answer = call(port_a, "POST", f"/v1/matches/{mid}/moves",
                              {"move": move, "expected_version": version}, tokens[seat], conn)
        answered[version + 1] = time.perf_counter()
        assert status == 200, answer
        state = game.apply(state, move, seat=seat)[0]
        time.sleep(0.005)
    conn.close()
    reader.join(30)
    latencies = [(arrived[v] - answered[v]) * 1000 for v in answered if v in arrived]
    return {"moves": moves, "received": len(latencies), "median_ms": round(statistics.median(latencies), 3),
            "p99_ms": round(percentile(latencies, 0.99), 3), "max_ms": round(max(latencies), 3)}


# -- HTTP workers' memory over AI-played moves -------------------------------------------------------------


def rss_over_ai_moves(stack: Stack, ai_moves: int, players: int = 8) -> dict[str, Any]:
    port, proc = stack.gunicorn(2)
    pids = worker_pids(proc.pid, 2)
    played = {"ai": 0}
    lock = threading.Lock()
    samples: list[tuple[int, float]] = []

    def player(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while played["ai"] < ai_moves:
            status, m = call(port, "POST", "/v1/matches?wait=10",
                             {"game": "three-thirteen", "players": [{"name": "me"}, {"ai": {"level": 1}}],
                              "seed": 1000 + i * 1000 + played["ai"]})
            assert status == 201, m
            mid, token, version = m["match_id"], m["seats"][0]["token"], m["version"]
            with lock:
                played["ai"] += version
            while played["ai"] < ai_moves:
                status, legal = call(port, "GET", f"/v1/matches/{mid}/legal-moves", token=token, conn=conn)
                if not legal["moves"]:
                    break  # over
                move = next((mv for mv in legal["moves"] if mv["type"] == "draw"), legal["moves"][-1])
                status, answer = call(port, "POST", f"/v1/matches/{mid}/moves?wait=10",
                                      {"move": move, "expected_version": legal["version"]}, token, conn)
                assert status == 200, answer
                with lock:
                    played["ai"] += answer["version"] - legal["version"] - 1
        conn.close()

    threads = [threading.Thread(target=player, args=(i,), daemon=True) for i in range(players)]
    started = time.monotonic()
    for t in threads:
        t.start()
    warm = min(1000, ai_moves // 10)
    while played["ai"] < warm:
        time.sleep(0.2)
    before = {pid: rss_mb(pid) for pid in pids}
    while any(t.is_alive() for t in threads):
        samples.append((played["ai"], sum(rss_mb(pid) for pid in pids)))
        time.sleep(1.0)
    after = {pid: rss_mb(pid) for pid in pids}
    return {"ai_moves": played["ai"], "seconds": round(time.monotonic() - started, 1),
            "rss_mb_after_warmup": {str(p): round(v, 1) for p, v in before.items()},
            "rss_mb_at_end": {str(p): round(v, 1) for p, v in after.items()},
            "growth_mb": round(max(after[p] - before[p] for p in pids), 1),
            "samples": [(n, round(mb, 1)) for n, mb in samples[:: max(1, len(samples) // 10)]]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="a quick run (CI)")
    parser.add_argument("--jobs", type=int, default=300, help="queue round trips measured")
    parser.add_argument("--moves", type=int, default=400, help="moves whose events are timed")
    parser.add_argument("--ai-moves", type=int, default=10_000, help="AI moves played for the memory check")
    parser.add_argument("--ai-workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", choices=["queue", "events", "rss"], default=None)
    args = parser.parse_args(argv)
    if args.smoke:
        args.jobs, args.moves, args.ai_moves = 30, 40, 200
    stack = Stack(args.ai_workers)
    result: dict[str, Any] = {}
    try:
        if args.only in (None, "queue"):
            result["queue_round_trip"] = queue_round_trip(stack, args.jobs)
        if args.only in (None, "events"):
            result["events_across_instances"] = event_latency(stack, args.moves)
        if args.only in (None, "rss"):
            result["http_worker_rss"] = rss_over_ai_moves(stack, args.ai_moves)
    finally:
        stack.close()
    result["config"] = {"ai_workers": args.ai_workers, "cpus": os.cpu_count(), "load_average": os.getloadavg()}
    goals = {}
    if "queue_round_trip" in result:
        goals["queue_round_trip_median<=5ms"] = result["queue_round_trip"]["median_ms"] <= 5
    if "events_across_instances" in result:
        goals["event_p99<=50ms"] = result["events_across_instances"]["p99_ms"] <= 50
    if "http_worker_rss" in result:
        goals["rss_flat_within_20mb"] = abs(result["http_worker_rss"]["growth_mb"]) <= 20
    result["goals"] = goals
    print(json.dumps(result, indent=2) if args.json else "\n".join(f"{k}: {v}" for k, v in result.items()))
    return 0


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    sys.exit(main())
