"""``cardtable serve``: gunicorn with service/gunicorn.conf.py and, without REDIS_URL, an embedded Redis."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.read()


def children_running(parent: int, word: str) -> list[int]:
    """The processes whose parent is ``parent`` and whose command line holds ``word``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and word in cmdline:
            found.append(int(entry))
    return found


def test_cardtable_games_lists_every_game() -> None:
    from engine.registry import all_games

    out = subprocess.run([sys.executable, "-m", "cli.main", "games"], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert [line.split(":")[0] for line in out.splitlines()] == [g.info.id for g in all_games()]
    assert "less-than-three: Less Than Three (2 players)" in out.splitlines()  # not "(2-2 players)"
    assert "three-thirteen: Three Thirteen (2-8 players)" in out.splitlines()


def test_cardtable_serve_runs_gunicorn_on_an_embedded_redis(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PROMETHEUS_MULTIPROC_DIR")}
    env["PYTHONPATH"] = str(ROOT)
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--port", str(port), "--workers", "2"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    ai_workers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if _get(base + "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.2)
        body = json.dumps({"game": "threezies", "players": [{}, {}]}).encode()
        req = urllib.request.Request(base + "/v1/matches", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status == 201
            match_id = json.loads(r.read())["match_id"]
        # the AI workers serve started play an AI seat that moves first (the answer waits for it)
        body = json.dumps({"game": "three-thirteen", "players": [{"ai": {"level": 1}}, {"name": "me"}],
                           "setup": {"dealer": 1}}).encode()
        req = urllib.request.Request(base + "/v1/matches?wait=10", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            created = json.loads(r.read())
            assert created["version"] == 2 and created["ai_pending"] is False and created["view"]["to_move"] == 1
        for _ in range(6):  # spread over both workers: every worker reads the same Redis
            assert _get(f"{base}/v1/matches/{match_id}")[0] == 200
        metrics = _get(base + "/metrics")[1].decode()
        assert 'cardtable_http_requests_total{endpoint="/v1/matches/<match_id>",method="GET",status="200"} 6.0' \
            in metrics  # summed over the workers (multiprocess mode)
        ai_workers = children_running(proc.pid, "ai-worker")
        assert len(ai_workers) == os.cpu_count()  # one per core
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.returncode == 0, stderr
    assert all(not Path(f"/proc/{pid}").exists() for pid in ai_workers)  # stopped with the server
    assert "REDIS_URL is not set; embedded Redis at unix://" in stderr


def test_where_serve_listens_flags_then_cardtable_bind_then_the_default() -> None:
    from cli.main import resolve_bind

    assert resolve_bind(None, None, None) == "127.0.0.1:8000"
    assert resolve_bind(None, None, "") == "127.0.0.1:8000"
    assert resolve_bind(None, None, "0.0.0.0:9000") == "0.0.0.0:9000"  # the Dockerfile's ENV
    assert resolve_bind(None, None, "unix:/run/ct.sock") == "unix:/run/ct.sock"
    assert resolve_bind(None, 8123, "0.0.0.0:9000") == "0.0.0.0:8123"  # a flag overrides its own half
    assert resolve_bind("10.0.0.1", None, "0.0.0.0:9000") == "10.0.0.1:9000"
    assert resolve_bind("::1", 8123, None) == "[::1]:8123"
    assert resolve_bind(None, 8123, "unix:/run/ct.sock") == "127.0.0.1:8123"


def test_serve_help_gives_the_defaults_and_the_environment() -> None:
    out = subprocess.run([sys.executable, "-m", "cli.main", "serve", "--help"], capture_output=True, text=True,
                         cwd=ROOT, check=True, env={**os.environ, "COLUMNS": "120"}).stdout
    assert "else 127.0.0.1" in out and "else 8000" in out
    for name in ("CARDTABLE_BIND", "CARDTABLE_WORKERS", "REDIS_URL", "AI_MAX_LEVEL=5", "CARDTABLE_HEADER_TIMEOUT",
                 "XDG_DATA_HOME"):
        assert name in out, name


TWO_SERVERS = r"""
set -u
ready() {  # wait for /readyz on port $1
  for _ in $(seq 150); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz")" = 200 ] && return 0
    sleep 0.2
  done
  echo "port $1 never became ready"; exit 3
}
# A listens where CARDTABLE_BIND says; B is told the same but its --port wins
CARDTABLE_BIND=127.0.0.1:$P1 "$CT" serve --workers 1 2>a.log &
A=$!
CARDTABLE_BIND=127.0.0.1:$P1 "$CT" serve --port "$P2" --workers 1 2>b.log &
B=$!
ready "$P1"; ready "$P2"
MATCH=$(curl -s -X POST "http://127.0.0.1:$P2/v1/matches" -H 'Content-Type: application/json' \
  -d '{"game": "threezies", "players": [{}, {}]}' | sed 's/.*"match_id":"\([^"]*\)".*/\1/')
kill -TERM "$A"; wait "$A"; echo "A stopped with $?"
echo "B readyz $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/readyz")"
echo "B match $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/v1/matches/$MATCH")"
kill -TERM "$B"; wait "$B"; echo "B stopped with $?"
echo "the script is still alive"
"""


def test_two_servers_from_one_script_in_one_folder_each_own_their_redis(tmp_path: Path) -> None:
    """Issue 18 item 3: two `cardtable serve` started by one script in one folder, stopped one after the other.

    Each has its own embedded Redis with its data in a per-port directory under XDG_DATA_HOME (never in the
    folder), the first to stop leaves the other serving, and stopping them signals nothing but what each
    started: the script goes on to its last line (the script runs in a session of its own, so a regression
    that signals the process group kills the script, not the test)."""
    script = tmp_path / "two.sh"
    script.write_text(TWO_SERVERS)
    folder = tmp_path / "folder"
    folder.mkdir()
    p1, p2 = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PROMETHEUS_MULTIPROC_DIR",
                                                             "CARDTABLE_BIND")}
    env.update({"PYTHONPATH": str(ROOT), "XDG_DATA_HOME": str(tmp_path / "data"), "P1": str(p1), "P2": str(p2),
                "CT": str(Path(sys.executable).parent / "cardtable")})
    done = subprocess.run(["bash", str(script)], cwd=folder, env=env, capture_output=True, text=True, timeout=120,
                          start_new_session=True)
    logs = "\n".join(f"{name}:\n{(folder / name).read_text()}" for name in ("a.log", "b.log")
                     if (folder / name).exists())
    assert done.returncode == 0, f"{done.returncode}\n{done.stdout}\n{done.stderr}\n{logs}"
    assert done.stdout.splitlines() == ["A stopped with 0", "B readyz 200", "B match 200", "B stopped with 0",
                                        "the script is still alive"], done.stdout + logs
    assert sorted(p.name for p in folder.iterdir()) == ["a.log", "b.log"]  # no data file in the folder
    for port, log in ((p1, "a.log"), (p2, "b.log")):
        data = tmp_path / "data" / "cardtable" / f"redis-{port}"
        assert (data / "dump.rdb").exists()  # saved at the stop, for the next start on that port
        assert f"data in {data / 'dump.rdb'}" in (folder / log).read_text()


def test_cardtable_state_prints_a_blob_or_a_view_for_the_stateless_endpoints() -> None:
    from engine.registry import get_game

    def state(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cli.main", "state", *args], capture_output=True, text=True,
                              cwd=ROOT)

    game = get_game("three-thirteen")
    blob = json.loads(state("three-thirteen", "--seed", "42").stdout)
    assert blob == game.to_json(game.new_match(2, None, seed=42))
    moved = json.loads(state("three-thirteen", "--seed", "42", "--move", '{"type": "draw", "source": "stock"}',
                             "-o", "aces=high_or_low").stdout)
    assert moved["phase"] == "discard" and moved["options"]["aces"] == "high_or_low"
    view = json.loads(state("three-thirteen", "--seed", "42", "--view").stdout)
    assert view == game.observation(game.new_match(2, None, seed=42), 0)
    bad = state("three-thirteen", "--move", '{"type": "discard", "card": "KS"}')
    assert bad.returncode == 2 and "cardtable state:" in bad.stderr and "Traceback" not in bad.stderr


def test_the_dockerfile_entrypoint_clears_the_metrics_and_listens_where_cardtable_bind_says(tmp_path: Path) -> None:
    """The image's ENTRYPOINT, run here as the container would run it (no Docker engine on these machines):
    it passes no --host/--port, so the Dockerfile's CARDTABLE_BIND decides, and it empties the Prometheus
    metrics directory before the server starts (a previous run's files would be summed into /metrics)."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    entry = json.loads(re.search(r"^ENTRYPOINT (\[.*\])$", dockerfile, flags=re.M).group(1))  # type: ignore[union-attr]
    assert "--port" not in entry and "--host" not in entry
    assert re.search(r"CARDTABLE_BIND=0\.0\.0\.0:8000", dockerfile)
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    (metrics / "counter_99999.db").write_bytes(b"stale")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL",)}
    env.update({"PROMETHEUS_MULTIPROC_DIR": str(metrics), "CARDTABLE_BIND": f"127.0.0.1:{port}",
                "XDG_DATA_HOME": str(tmp_path / "data"), "PYTHONPATH": str(ROOT),
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    proc = subprocess.Popen([*entry, "--workers", "1"], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if _get(f"http://127.0.0.1:{port}/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the entrypoint's server did not come up"
            time.sleep(0.2)
        assert not (metrics / "counter_99999.db").exists()
        assert _get(f"http://127.0.0.1:{port}/metrics")[0] == 200
    finally:
        proc.send_signal(signal.SIGTERM)  # the shell exec'd cardtable serve: this pid is the server's
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else ""
