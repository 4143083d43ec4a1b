"""The pages for people: the landing page at ``/``, the browser client at ``/play``, the rules of each game at
``/rules/<game>``, and the favicon.

``/play`` is static files from ``service/static/play/`` (no build step) that talk to the public API only
(``/v1/...``), like any third-party client. ``/`` is a page linking everything (a small JSON index for a
client that asks for JSON rather than HTML). The rules pages render each game's rules for players
(:attr:`engine.game.GameInfo.rules`, Markdown kept with the game) as HTML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Response, jsonify, render_template, request, send_from_directory, url_for

from engine.errors import UnknownGameError
from engine.game import Game
from engine.registry import all_games, get_game
from service.rendering import markdown_html

STATIC = Path(__file__).resolve().parent / "static"
PLAY_DIR = STATIC / "play"

bp = Blueprint("play_page", __name__, template_folder="templates")


def _game_card(game: Game) -> dict[str, Any]:
    info = game.info
    return {"id": info.id, "name": info.name, "players": info.players_text, "summary": info.summary,
            "lower_score_wins": info.lower_score_wins, "rules_url": url_for("play_page.rules_page", game_id=info.id)}


@bp.get("/")
def index() -> Any:
    """The landing page; JSON clients (``Accept`` preferring application/json, or no HTML) get an index."""
    accept = request.accept_mimetypes
    games = [_game_card(g) for g in all_games()]
    if accept["text/html"] > accept["application/json"]:
        response = Response(render_template("index.html", games=games), mimetype="text/html")
    else:
        response = jsonify({
            "name": "cardtable",
            "description": "Rules engine and computer opponent for five card games",
            "links": {"play": "/play", "docs": "/docs", "openapi": "/openapi.yaml", "games": "/v1/games",
                      "rules": {g["id"]: g["rules_url"] for g in games},
                      "healthz": "/healthz", "readyz": "/readyz", "metrics": "/metrics"},
        })
    response.headers["Vary"] = "Accept"
    return response


@bp.get("/rules")
@bp.get("/rules/")
def rules_index() -> str:
    return render_template("rules_index.html", games=[_game_card(g) for g in all_games()], missing=None)


@bp.get("/rules/<game_id>")
def rules_page(game_id: str) -> Any:
    try:
        game = get_game(game_id)
    except UnknownGameError:
        page = render_template("rules_index.html", games=[_game_card(g) for g in all_games()], missing=game_id)
        return Response(page, status=404, mimetype="text/html")
    info = game.info
    others = [_game_card(g) for g in all_games() if g.info.id != info.id]
    return render_template("rules.html", id=info.id, name=info.name, players=info.players_text, others=others,
                           rules_html=markdown_html(info.rules))


@bp.get("/favicon.ico")
@bp.get("/favicon.svg")
def favicon() -> Response:
    response = send_from_directory(STATIC, "favicon.svg", mimetype="image/svg+xml", max_age=86400)
    return response


@bp.get("/play")
@bp.get("/play/")
def play_index() -> Response:
    return _send("index.html")


@bp.get("/play/join")
def join_page() -> Response:
    """The page an invitation link opens (``/play/join#CODE``: the code stays in the fragment, never sent)."""
    return _send("index.html")


@bp.get("/play/<path:filename>")
def play_file(filename: str) -> Response:
    return _send(filename)


def _send(filename: str) -> Response:
    response = send_from_directory(PLAY_DIR, filename, max_age=0)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response
