"""HTTP details of issue 17's row 8: OPTIONS answers no text/html, and gunicorn's control socket is not one path
shared by every gunicorn of a user (stopping one removed it for the others)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.servers import RedisServer
from tests.service.helpers import make_app
from tests.service.live import Gunicorn


def test_options_is_204_with_allow_and_no_content_type(redis_server: RedisServer) -> None:
    client = make_app(redis_server.url, cors_origins="https://example.org").test_client()
    for path, allowed in (("/v1/games", {"GET", "HEAD", "OPTIONS"}), ("/v1/matches", {"POST", "OPTIONS"}),
                          ("/v1/games/threezies/best-move", {"POST", "OPTIONS"})):
        r = client.options(path, headers={"Origin": "https://example.org"})
        assert r.status_code == 204 and r.get_data() == b""
        assert "Content-Type" not in r.headers
        assert {m.strip() for m in r.headers["Allow"].split(",")} == allowed
        assert r.headers["Access-Control-Allow-Origin"] == "https://example.org"
    r = client.options("/no/such/route")
    assert r.status_code == 404 and r.mimetype == "application/problem+json"


def test_no_shared_control_socket_and_each_server_may_have_its_own(redis_server: RedisServer, tmp_path: Path) -> None:
    home, runtime = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    runtime.mkdir()
    env: dict[str, Any] = {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    plain = Gunicorn(redis_server.url, tmp_path, 1, **env)
    own = [Gunicorn(redis_server.url, tmp_path, 1, CARDTABLE_CONTROL_SOCKET=str(tmp_path / f"{name}.ctl"), **env)
           for name in ("a", "b")]
    try:
        # gunicorn's default would be $XDG_RUNTIME_DIR/gunicorn.ctl (else ~/.gunicorn/gunicorn.ctl), for all three
        assert not (runtime / "gunicorn.ctl").exists() and not (home / ".gunicorn" / "gunicorn.ctl").exists()
        assert all((tmp_path / f"{name}.ctl").exists() for name in ("a", "b"))
        assert own[0].stop() == 0
        assert not (tmp_path / "a.ctl").exists() and (tmp_path / "b.ctl").exists()
    finally:
        for server in (plain, *own):
            server.stop()
    assert os.listdir(runtime) == [] and not (home / ".gunicorn").exists()
