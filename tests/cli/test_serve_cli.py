"""``cardtable serve``: gunicorn with service/gunicorn.conf.py and, without REDIS_URL, an embedded Redis."""

from __future__ import annotations

import json
import os
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


def test_cardtable_serve_runs_gunicorn_on_an_embedded_redis(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PROMETHEUS_MULTIPROC_DIR")}
    env["PYTHONPATH"] = str(ROOT)
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
