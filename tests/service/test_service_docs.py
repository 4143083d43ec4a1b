"""The interactive docs at /docs in headless Chromium: rendered from the spec, usable, nothing from the internet."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from playwright.sync_api import sync_playwright
from werkzeug.serving import make_server

from tests.servers import RedisServer
from tests.service.helpers import make_app

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def base_url(redis_server: RedisServer) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, make_app(redis_server.url), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(10)


def test_docs_render_every_operation_and_send_requests(base_url: str) -> None:
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)"
    spec = yaml.safe_load(SPEC.read_text())
    operations = sum(1 for item in spec["paths"].values() for m in item if m in ("get", "post"))
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page()

            def only_local(route: Any) -> None:
                if route.request.url.startswith(base_url):
                    route.continue_()
                else:
                    outside.append(route.request.url)
                    route.abort()

            page.route("**/*", only_local)
            page.goto(base_url + "/docs")
            page.wait_for_selector("details.op")
            assert page.locator("details.op").count() == operations
            op = page.locator("details.op", has_text="/v1/games/{game}/analyze")
            op.locator("summary").click()
            op.locator("input").first.fill("three-thirteen")
            op.locator("textarea").fill('{"hand": ["7H", "8H", "9H", "9S", "9D", "9C"], "round": 4}')
            op.locator("button").click()
            page.wait_for_function("() => [...document.querySelectorAll('pre')].some(p => p.textContent"
                                   ".startsWith('200'))")
            assert '"score": 0' in (op.locator("pre").last.text_content() or "")
        finally:
            browser.close()
    assert outside == []
