"""Fixtures for the service tests: a real Redis server of our own (session-wide) with an AI worker serving its
queue (on a thread of the test process: the same worker code and the same Redis queue as a worker process),
and the app on top of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.servers import RedisServer
from tests.service.helpers import local_ai_workers, make_app


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    workers = local_ai_workers(server.url)
    yield server
    workers.stop()
    server.cleanup()


@pytest.fixture(scope="session")
def app(redis_server: RedisServer) -> Any:
    return make_app(redis_server.url)


@pytest.fixture()
def client(app: Any) -> Any:
    return app.test_client()
