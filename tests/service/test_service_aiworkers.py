"""AI worker processes (``cardtable ai-worker``) on a Redis of their own: a worker killed with SIGKILL in the
middle of an AI seat's turn (another worker takes the job over after the visibility timeout and plays the turn,
once), and workers that stop and start while moves keep coming."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from engine.registry import get_game
from tests.servers import RedisServer, pythonpath_env
from tests.service.helpers import bearer, create, make_app

ROOT = Path(__file__).resolve().parents[2]
TT = "three-thirteen"


class WorkerProcess:
    """One ``cardtable ai-worker`` this test started (and the only processes it signals)."""

    def __init__(self, redis_url: str, name: str, **env: str) -> None:
        self.name = name
        environ = {**pythonpath_env(), "REDIS_URL": redis_url, "LOG_LEVEL": "WARNING", **env}
        environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "cli.main", "ai-worker", "--name", name], cwd=ROOT,
                                     env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL: no goodbye, no acknowledgement
        self.proc.wait(10)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@pytest.fixture()
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.cleanup()


def wait_for(what: str, check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def human_turn(client: Any, mid: str, token: str, since: int, seat: int, timeout: float = 60) -> dict[str, Any]:
    """The seat's view once it is that seat's decision (long polls until then)."""
    deadline = time.monotonic() + timeout
    while True:
        view = client.get(f"/v1/matches/{mid}", query_string={"since": since, "wait": 5},
                          headers=bearer(token)).get_json()
        if view["view"]["to_move"] == seat:
            return dict(view)
        assert time.monotonic() < deadline, f"the AI seat's turn was not played (version {view['version']})"


def pending(client: redis.Redis) -> list[dict[str, Any]]:
    try:
        return list(client.xpending_range("ct:{ai}:jobs", "workers", min="-", max="+", count=10))
    except redis.ResponseError:  # no group yet
        return []


def test_a_worker_killed_mid_turn_loses_nothing_and_the_turn_is_played_once(own_redis: RedisServer) -> None:
    plain = redis.Redis.from_url(own_redis.url)
    first = WorkerProcess(own_redis.url, "first")
    second = None
    try:
        wait_for("the first worker to register", lambda: plain.zscore("ct:{ai}:workers", "first"))
        client = make_app(own_redis.url, rate_limit_enabled=False).test_client()
        # a level-5 AI seat moves first (seat 0: the dealer is seat 1) in round 11: a search of about a second
        # or more (a level is a fixed amount of work now: a round-1 hand would be decided in a few ms)
        hands = [["2C", "3C", "5D", "7D", "8H", "9S", "TC", "JD", "QH", "KS", "AS", "4H", "6S"],
                 ["2D", "3D", "5H", "7H", "8S", "9C", "TD", "JH", "QS", "KD", "AC", "4S", "6C"]]
        m = create(client, TT, players=[{"ai": {"level": 5}}, {"name": "me"}], seed=41,
                   setup={"round": 11, "hands": hands, "dealer": 1})
        assert m["ai_pending"] is True and m["version"] == 0
        mid, token = m["match_id"], m["seats"][1]["token"]
        taken = wait_for("the first worker to take the job", lambda: [p for p in pending(plain)
                                                                       if p["consumer"] == b"first"])
        entry = taken[0]["message_id"]
        first.kill()  # at once: the turn's two searches take about half a second each
        # killed mid-turn: before its draw was saved, or between the draw and the discard (a level's work is
        # fixed, not its time, so on a fast machine the draw may be in already)
        killed_at = client.get(f"/v1/matches/{mid}").get_json()["version"]
        assert killed_at in (0, 1), f"the whole turn was played before the kill (version {killed_at})"
        # the job is still pending under the dead worker's name; a new worker takes it over after the
        # visibility timeout (2 s here) and plays what is left of the AI seat's turn
        second = WorkerProcess(own_redis.url, "second", AI_VISIBILITY_TIMEOUT="2")
        view = human_turn(client, mid, token, 0, seat=1, timeout=120)
        assert view["version"] == 2  # draw and discard: the turn, once
        log = client.get(f"/v1/matches/{mid}/log").get_json()["entries"]
        assert [(e["version"], e["seat"], e["ai"]) for e in log] == [(1, 0, True), (2, 0, True)]
        # the worker saves the turn, then finishes the job (acknowledged, deleted, its cost released): the
        # human may see the turn a moment before the job is gone
        wait_for("the job to be finished", lambda: plain.xlen("ct:{ai}:jobs") == 0, timeout=30)
        taken_over = [p for p in pending(plain) if p["message_id"] == entry]
        assert not taken_over and plain.xlen("ct:{ai}:jobs") == 0  # done, acknowledged, deleted
        assert int(plain.get("ct:{ai}:cost") or 0) == 0
        # the stored state is the deal plus the logged moves: nothing played twice, nothing lost
        game = get_game(TT)
        stored = client.application.extensions["cardtable"].store.load(mid)
        start = game.from_setup(2, {"round": 11, "hands": hands, "dealer": 1}, {}, seed=41)
        assert game.to_json(game.replay(start, [e["move"] for e in log])) == json.loads(stored.state)
        # the human moves on, and the second worker plays the next turn
        r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                        json={"move": {"type": "draw", "source": "stock"}, "expected_version": 2})
        assert r.status_code == 200
    finally:
        first.stop()
        if second is not None:
            assert second.stop() == 0
        plain.close()


def test_workers_that_stop_and_start_again_leave_no_turn_behind(own_redis: RedisServer) -> None:
    plain = redis.Redis.from_url(own_redis.url)
    client = make_app(own_redis.url, rate_limit_enabled=False).test_client()
    workers = [WorkerProcess(own_redis.url, "w1")]
    try:
        m = create(client, TT, players=[{"name": "me"}, {"ai": {"level": 1}}], seed=42,
                   setup={"hands": [["2C", "7D", "KS"], ["4H", "9H", "QS"]], "dealer": 1})
        mid, token = m["match_id"], m["seats"][0]["token"]
        version = 0
        turns_left_queued = 0  # AI turns a stopped worker left in the queue, played by the next worker
        for turn in range(6):
            view = client.get(f"/v1/matches/{mid}", headers=bearer(token)).get_json()
            if view["status"] == "over":
                break
            for move in ({"type": "draw", "source": "stock"}, None):
                if move is None:
                    legal = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["moves"]
                    move = next(m for m in legal if m["type"] == "discard")
                r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                                json={"move": move, "expected_version": version})
                assert r.status_code == 200, r.get_json()
                version = r.get_json()["version"]
            assert r.get_json()["ai_pending"] is True
            if turn % 2 == 0:  # no worker at all while the AI seat's turn waits in the queue
                wait_for("the worker to be up", lambda: plain.zscore("ct:{ai}:workers", workers[-1].name))
                assert workers[-1].stop() == 0  # graceful: finishes the job in hand, leaves the live set
                wait_for("the worker to leave", lambda: plain.zscore("ct:{ai}:workers", workers[-1].name) is None)
                # it finished the decision in hand (and queued the next); nothing moves until a worker comes
                stopped_at = client.get(f"/v1/matches/{mid}").get_json()
                time.sleep(0.5)
                now = client.get(f"/v1/matches/{mid}").get_json()
                assert now["version"] == stopped_at["version"]
                if now["version"] < version + 2:  # (the worker may have played the whole turn before its stop)
                    assert now["view"]["to_move"] == 1
                    turns_left_queued += 1
                workers.append(WorkerProcess(own_redis.url, f"w{len(workers) + 1}"))
            view = human_turn(client, mid, token, version, seat=0)
            assert view["version"] == version + 2
            version = view["version"]
        log = client.get(f"/v1/matches/{mid}/log").get_json()["entries"]
        assert [e["version"] for e in log] == list(range(1, version + 1))
        assert [e["ai"] for e in log] == [False, False, True, True] * (version // 4)
        assert turns_left_queued >= 1
    finally:
        for worker in workers:
            worker.stop()
        plain.close()


def test_cardtable_ai_worker_needs_a_redis_url() -> None:
    env = {k: v for k, v in pythonpath_env().items() if k != "REDIS_URL"}
    out = subprocess.run([sys.executable, "-m", "cli.main", "ai-worker"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 2 and "REDIS_URL" in out.stderr
