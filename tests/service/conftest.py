"""Fixtures for the service tests: a real Redis server of our own (session-wide), and the app on top of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.servers import RedisServer
from tests.service.helpers import make_app


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.cleanup()


@pytest.fixture(scope="session")
def app(redis_server: RedisServer) -> Any:
    return make_app(redis_server.url)


@pytest.fixture()
def client(app: Any) -> Any:
    return app.test_client()
