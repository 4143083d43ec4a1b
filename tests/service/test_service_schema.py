"""The API against its contract: openapi.yaml is a valid OpenAPI 3.1 document that documents every route,
and schemathesis drives the live app from it (bounded examples) — no 5xx, every response as documented."""

from __future__ import annotations

import atexit
import hashlib
import re
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.servers import RedisServer
from tests.service.helpers import create, local_ai_workers, make_app

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
SEEN: Counter[tuple[str, int]] = Counter()
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          response_headers_conformance]


def test_openapi_yaml_is_a_valid_openapi_3_1_document() -> None:
    from schemathesis.specs.openapi.definitions import OPENAPI_31

    document = yaml.safe_load(SPEC.read_text())
    assert document["openapi"].startswith("3.1")
    jsonschema_rs.validator_for(OPENAPI_31).validate(document)
    # every schema in it is a valid JSON Schema (2020-12, the 3.1 dialect) whose references resolve
    for name, schema in document["components"]["schemas"].items():
        jsonschema_rs.meta.validate(schema)
        jsonschema_rs.Draft202012Validator({**document, "$ref": f"#/components/schemas/{name}"})

def test_every_route_is_documented(app: Any) -> None:
    document = yaml.safe_load(SPEC.read_text())
    documented = {(re.sub(r"{\w+}", "{}", path), method) for path, item in document["paths"].items()
                  for method in item if method in ("get", "post", "put", "delete", "patch")}
    served = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or (rule.endpoint.startswith("play_page.") and rule.rule != "/"):
            continue  # the pages for people (/play, /rules/..., the favicon) are not part of the API
        path = re.sub(r"<\w+>", "{}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            served.add((path, method.lower()))
    assert served == documented


# schemathesis needs the app when tests are collected, so this module owns a Redis server of its own
# (its lazy from_fixture loader does not work with this pytest); it stops when the session ends.
_redis = RedisServer().start()
atexit.register(_redis.cleanup)
atexit.register(local_ai_workers(_redis.url).stop)  # the hints and best moves need an AI worker
_app = make_app(_redis.url, events_max_seconds=0.5, long_poll_max_seconds=0.2)  # streams and polls end soon
schema = schemathesis.openapi.from_wsgi("/openapi.yaml", _app)


@pytest.fixture(scope="module")
def live() -> dict[str, Any]:
    """A live match to aim generated requests at now and then (random ids only ever reach 404s)."""
    match = create(_app.test_client(), "three-thirteen", 2, seed=3)
    return {"match_id": match["match_id"], "tokens": [s["token"] for s in match["seats"]]}


@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_live_app_conforms_to_openapi_yaml(case: Any, live: dict[str, Any]) -> None:
    # aim half of the match requests at a live match, with one of its seat tokens
    digest = hashlib.sha256(repr((case.path_parameters, case.query, case.body)).encode()).digest()
    if case.path_parameters and "match_id" in case.path_parameters and digest[0] % 2:
        case.path_parameters["match_id"] = live["match_id"]
        if digest[1] % 3:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {live['tokens'][digest[2] % 2]}"}
    response = case.call()
    SEEN[(case.operation.path, response.status_code)] += 1
    case.validate_response(response, checks=CHECKS)


def test_the_generated_requests_reached_success_and_error_paths() -> None:
    """Runs after the generated tests: they must have reached real answers, not only 404s and 422s."""
    ok = {path for (path, status), n in SEEN.items() if status < 300}
    errors = {status for (_, status) in SEEN if status >= 400}
    assert {"/v1/games", "/v1/matches", "/v1/matches/{match_id}", "/v1/matches/{match_id}/legal-moves",
            "/v1/matches/{match_id}/log"} <= ok, sorted(SEEN)
    assert {401, 404, 422} <= errors, sorted(SEEN)


HANDS = {"least-score": "7H 8D 9S KC KD", "less-than-three": "5S 5H 6H 7H", "contract-rummy": "7S 7H 7D QC QD JK 4C"}


def test_the_success_paths_of_every_game_match_the_spec() -> None:
    """Generated requests rarely build a valid move or hand: walk each game's success paths on purpose."""
    from engine.registry import all_games

    def call(path: str, method: str, params: dict[str, Any], token: str | None = None, **kw: Any) -> Any:
        operation = schema[path][method]
        case = operation.Case(path_parameters=params, media_type="application/json" if "body" in kw else None,
                              headers={"Authorization": f"Bearer {token}"} if token else None, **kw)
        response = case.call()
        case.validate_response(response, checks=CHECKS)
        assert response.status_code < 300, (path, response.text)
        return response.json()

    for game in all_games():
        gid = game.info.id
        call("/v1/games/{game}", "GET", {"game": gid})
        call("/v1/games/{game}/analyze", "POST", {"game": gid}, body={"hand": HANDS.get(gid, "7H 8H 9H KS").split()})
        created = call("/v1/matches", "POST", {}, body={"game": gid, "players": [{}] * game.info.min_players,
                                                        "seed": 4})
        mid = created["match_id"]
        seat = created["view"]["to_move"]
        token = created["seats"][seat]["token"]
        call("/v1/matches/{match_id}", "GET", {"match_id": mid}, token, query={"since": 0})
        moves = call("/v1/matches/{match_id}/legal-moves", "GET", {"match_id": mid}, token)["moves"]
        call("/v1/matches/{match_id}/hint", "GET", {"match_id": mid}, token, query={"level": 1, "time_ms": 20})
        state = game.to_json(game.new_match(game.info.min_players, seed=4))
        view = game.observation(game.from_json(state), state["to_move"])
        call("/v1/games/{game}/legal-moves", "POST", {"game": gid}, body={"state": state})
        call("/v1/games/{game}/validate", "POST", {"game": gid}, body={"state": state, "move": moves[0]})
        call("/v1/games/{game}/best-move", "POST", {"game": gid}, body={"view": view, "level": 1, "time_ms": 20})
        call("/v1/matches/{match_id}/moves", "POST", {"match_id": mid}, token,
             body={"move": moves[0], "expected_version": created["version"]})
        call("/v1/matches/{match_id}/advance", "POST", {"match_id": mid}, body={})
        call("/v1/matches/{match_id}/log", "GET", {"match_id": mid}, token)
