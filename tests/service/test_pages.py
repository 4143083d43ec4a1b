"""The pages for people (issue 18 items 9, 10, 13): the landing page at ``/``, the rules of each game for players
(``GET /v1/games/{game}`` and ``/rules/{game}``), ``/docs`` with its Markdown rendered, and the favicon."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from engine.registry import all_games

GAME_IDS = [g.info.id for g in all_games()]
RULE_NUMBERS = re.compile(r"RULES\.md|§|\b(?:R|C|TT|TZ|CR|LS|LT)\d+\b")


def test_the_landing_page_links_everything_a_person_needs(client: Any) -> None:
    page = client.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})  # a browser
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    for link in ("/play", "/docs", "/healthz", "/readyz", "/metrics", "/openapi.yaml", "/v1/games",
                 *(f"/rules/{g}" for g in GAME_IDS)):
        assert f'href="{link}"' in html, link
    assert page.headers["Vary"] == "Accept"


@pytest.mark.parametrize("accept", ["application/json", "*/*", None])
def test_json_clients_get_a_small_index(client: Any, accept: str | None) -> None:
    answer = client.get("/", headers={"Accept": accept} if accept else {})
    assert answer.status_code == 200 and answer.mimetype == "application/json"
    links = answer.get_json()["links"]
    assert {"play", "docs", "openapi", "games", "healthz", "readyz", "metrics"} <= set(links)
    assert set(links["rules"]) == set(GAME_IDS)
    for url in [v for k, v in links.items() if k != "rules"] + list(links["rules"].values()):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_each_game_serves_its_rules_for_players(client: Any, game_id: str) -> None:
    detail = client.get(f"/v1/games/{game_id}").get_json()
    rules, url = detail["rules"], detail["rules_url"]
    assert url == f"/rules/{game_id}"
    assert rules.startswith(f"# {detail['name']}\n")
    # written for players, not the spec: rule numbers only in the closing list that errors refer to
    body, listed, numbers = rules.partition("\n## Rule numbers\n")
    assert listed and not RULE_NUMBERS.search(body), RULE_NUMBERS.search(body)
    assert "RULES.md" not in numbers and "§" not in numbers
    # every option, with its default, is in the rules' options table, and nothing else is
    table = rules.split("\n## Options\n", 1)[1]
    rows = re.findall(r"^\| `(\w+)` \| `?([^|`]+?)`? \|", table, flags=re.M)
    assert [name for name, _ in rows] == [o["name"] for o in detail["options"]]
    for (name, default), option in zip(rows, detail["options"], strict=True):
        assert default == json.dumps(option["default"]).strip('"'), name
    page = client.get(url)
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert f"<h1>{detail['name']}</h1>" in html and "<table>" in html and "<h2>Options</h2>" in html
    assert f'href="/play?game={game_id}"' in html


def test_option_descriptions_cite_no_rule_numbers(client: Any) -> None:
    for game in client.get("/v1/games").get_json()["games"]:
        for option in game["options"]:
            assert not RULE_NUMBERS.search(option["description"]), (game["id"], option)


def test_an_unknown_game_has_no_rules_page(client: Any) -> None:
    page = client.get("/rules/poker")
    assert page.status_code == 404 and page.mimetype == "text/html"
    assert "There is no game called" in page.get_data(as_text=True)
    assert client.get("/rules").status_code == 200


def test_docs_show_the_descriptions_as_html_and_there_is_a_favicon(client: Any) -> None:
    html = client.get("/docs").get_data(as_text=True)
    found = re.search(r'<script type="application/json" id="descriptions">(.*?)</script>', html, flags=re.S)
    assert found is not None
    rendered = json.loads(found.group(1))
    assert "<strong>Errors</strong>" in rendered["info"] and "**Errors**" not in rendered["info"]
    assert "<code>" in rendered["POST /v1/matches"]
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
    assert 'rel="icon"' in html
