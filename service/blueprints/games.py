"""``/v1/games``: the registered games and their options."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, url_for

from engine.registry import all_games
from service.schemas import GameDetail, GameList
from service.usecases.loading import game_by_id as game_or_404

bp = Blueprint("games", __name__)
_list = GameList()
_detail = GameDetail()


@bp.get("/v1/games")
def list_games() -> Any:
    return _list.dump({"games": [g.info.to_json() for g in all_games()]})


@bp.get("/v1/games/<game_id>")
def get_game(game_id: str) -> Any:
    game = game_or_404(game_id)
    info = game.info.to_json()
    info["summary"] = game.info.summary
    info["rules_section"] = game.info.rules_section
    info["rules"] = game.info.rules
    info["rules_url"] = url_for("play_page.rules_page", game_id=game.info.id)
    return _detail.dump(info)
