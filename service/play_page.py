"""The browser client at ``/play``: static files from ``service/static/play/`` (no build step).

The page talks to the public API only (``/v1/...``), like any third-party client;
this blueprint just serves its files.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory

PLAY_DIR = Path(__file__).resolve().parent / "static" / "play"

bp = Blueprint("play_page", __name__)


@bp.get("/play")
@bp.get("/play/")
def play_index() -> Response:
    return _send("index.html")


@bp.get("/play/<path:filename>")
def play_file(filename: str) -> Response:
    return _send(filename)


def _send(filename: str) -> Response:
    response = send_from_directory(PLAY_DIR, filename, max_age=0)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
