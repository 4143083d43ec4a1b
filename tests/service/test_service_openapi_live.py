"""schemathesis against the live server: gunicorn with service/gunicorn.conf.py on a real Redis, driven over
HTTP from the ``/openapi.yaml`` it serves. Valid requests (generated from the schemas) get answers that match
the document, status, media type, headers and body; invalid ones (the schemas negated) are refused with a 4xx;
nothing is a 5xx. Requests aim at a live match and its seat tokens now and then, so that success paths are
reached too."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from engine.registry import all_games
from tests.servers import RedisServer
from tests.service.live import Gunicorn

CONFORMS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
            response_headers_conformance]
REFUSES = [not_a_server_error, negative_data_rejection, content_type_conformance]
EXAMPLES = 300  # per generation mode, spread over every operation
GAME_IDS = [g.info.id for g in all_games()]


@pytest.fixture(scope="module")
def live(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    server = Gunicorn(redis_server.url, tmp_path_factory.mktemp("openapi-live"), 2, RATE_LIMIT_ENABLED="false",
                      EVENTS_MAX_SECONDS="0.5", LONG_POLL_MAX_SECONDS="0.2", AI_MAX_LEVEL="1")  # streams end soon
    base = f"http://127.0.0.1:{server.port}"
    try:
        session = requests.Session()
        created = session.post(base + "/v1/matches", json={"game": "three-thirteen", "players": [{}, {}],
                                                           "seed": 3}).json()
        yield {"base": base, "session": session, "match_id": created["match_id"],
               "tokens": [s["token"] for s in created["seats"]], "calls": Counter()}
        session.close()
    finally:
        assert server.stop() == 0, server.log_path.read_text()[-3000:]


def aim(case: Any, live: dict[str, Any]) -> None:
    """Every other request to a match operation goes to the live match, two in three of those with one of its seat
    tokens; three in four game requests to a real game; half of the creations to a real game with two players."""
    digest = hashlib.sha256(repr((case.path_parameters, case.query, case.body)).encode()).digest()
    if case.path_parameters and "game" in case.path_parameters and digest[3] % 4:
        case.path_parameters["game"] = GAME_IDS[digest[4] % len(GAME_IDS)]
    if case.operation.path == "/v1/matches" and isinstance(case.body, dict) and digest[5] % 2:
        # a creation that can succeed: a real game, two of the generated players (open seats among them)
        players = [p for p in case.body.get("players") or [] if isinstance(p, dict)][:2]
        case.body = {"game": "least-score", "players": players + [{}] * (2 - len(players)),
                     **{k: v for k, v in case.body.items() if k == "seed"}}
    if case.path_parameters and "match_id" in case.path_parameters:
        # counted per operation, not drawn: every operation on a match reaches the live match with a seat
        # token on its first call and every few calls after, however few examples it gets
        calls = live["calls"]
        n = calls[case.operation.path]
        calls[case.operation.path] += 1
        if n % 2 == 0:
            case.path_parameters["match_id"] = live["match_id"]
            if (n // 2) % 3 != 2:
                case.headers = {**(case.headers or {}), "Authorization": f"Bearer {live['tokens'][digest[2] % 2]}"}


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
def test_the_live_server_answers_as_its_openapi_yaml_says(live: dict[str, Any], mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_url(live["base"] + "/openapi.yaml")
    seen: Counter[tuple[str, int]] = Counter()
    checks = CONFORMS if mode == GenerationMode.POSITIVE else REFUSES

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=schema.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        aim(case, live)
        response = case.call(base_url=live["base"], session=live["session"])
        seen[(case.operation.path, response.status_code)] += 1
        # a body over 1 MB is refused with 413 (schemathesis's list of refusals leaves 413 out)
        case.validate_response(response, checks=CONFORMS if response.status_code == 413 else checks)

    run()
    reached = {path for path, _ in seen}
    # every operation (those without parameters or a body have no invalid form)
    assert len(reached) >= (17 if mode == GenerationMode.POSITIVE else 10), repr(sorted(seen.items()))
    if mode == GenerationMode.POSITIVE:
        ok = {path for (path, status) in seen if status < 300}
        assert {"/v1/games", "/v1/games/{game}", "/v1/matches", "/v1/matches/{match_id}"} <= ok, \
            repr(sorted(seen.items()))


def test_the_served_document_is_the_repository_s_and_matches_its_own_schema(live: dict[str, Any]) -> None:
    """GET /openapi.yaml answered YAML that its own response schema (a string) did not describe."""
    schema = schemathesis.openapi.from_url(live["base"] + "/openapi.yaml")
    for path, media in (("/openapi.yaml", "application/yaml"), ("/openapi.json", "application/json")):
        case = schema[path]["GET"].Case()
        response = case.call(base_url=live["base"], session=live["session"])
        case.validate_response(response, checks=CONFORMS)
        assert live["session"].get(live["base"] + path).headers["Content-Type"].startswith(media)
    served = live["session"].get(live["base"] + "/openapi.yaml")
    assert served.text == (Path(__file__).resolve().parents[2] / "openapi.yaml").read_text()
