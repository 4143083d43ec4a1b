"""/play with friends, in headless Chromium: one browser context per person (each its own sessionStorage, so
its own seat token), the host inviting, friends joining with the link, the waiting room, and a whole match
played from the event stream — both (or all three) screens checked after every move, with no polling loop.

The waiting room's screenshot goes to a temporary directory; ``make screenshot`` (``CARDTABLE_SCREENSHOTS=1``)
writes it to ``docs/screenshot-waiting-room.png`` for the README as well.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from tests.service import test_browser as _browser_tests
from tests.service.test_browser import READY, ROOT, watch_for_problems

# the browser tests' fixtures: a live service with AI workers, Debian's chromium, the screenshots' directory
base_url, browser, shots = _browser_tests.base_url, _browser_tests.browser, _browser_tests.shots

README_SCREENSHOT = ROOT / "docs" / "screenshot-waiting-room.png"
# the page said how leaving went (or why not)
SAID_SOMETHING = "() => ['#move-error', '#people-error'].some((s) => document.querySelector(s).textContent)"
# a page whose seat is to move (its moves enabled), or the end
SETTLED = """(version) => { const S = cardtable.S; return S.shownVersion >= version && !S.refreshing && !S.busy; }"""


class Person:
    """One player: a browser context of its own, its page, and every request it made."""

    def __init__(self, browser: Any, base_url: str, name: str, viewport: dict[str, int] | None = None) -> None:
        self.context = browser.new_context(viewport=viewport or {"width": 1000, "height": 900})
        self.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
        self.page: Page = self.context.new_page()
        self.name = name
        self.problems = watch_for_problems(self.page)
        self.requests: list[tuple[str, str]] = []
        self.page.on("request", lambda r: self.requests.append((r.method, r.url)))

    def state(self, expression: str) -> Any:
        return self.page.evaluate(f"() => cardtable.S.{expression}")

    def my_turn(self) -> bool:
        return bool(self.page.evaluate(READY)) and not self.page.locator("#winner").count()

    def close(self) -> None:
        self.context.close()


def host_a_match(host: Person, base_url: str, game: str, players: int, friends: int, seed: int,
                 options: dict[str, str]) -> None:
    page = host.page
    page.goto(base_url + "/play")
    page.wait_for_selector("body[data-ready=true]")
    page.select_option("#game-select", game)
    page.select_option("#players-select", str(players))
    page.select_option("#friends-select", str(friends))
    page.select_option("#level-select", "1")
    page.fill("#name-input", host.name)
    page.fill("#seed-input", str(seed))
    page.click("#options-box summary")
    for name, value in options.items():
        field = page.locator(f"#opt-{name}")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    page.click("#start-button")
    page.wait_for_selector("#waiting:not(.hidden) .invite .code")


def join(person: Person, url: str) -> None:
    page = person.page
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    assert page.is_visible("#join") and not page.is_visible("#setup")
    page.fill("#join-name", person.name)
    page.click("#join-button")
    page.wait_for_function("() => cardtable.S.token !== null && cardtable.S.shownVersion !== null")


def server_version(person: Person, base_url: str) -> int:
    """The match's version, asked of the server with the person's token (not by the page)."""
    mid, token = person.state("matchId"), person.state("token")
    answer = person.context.request.get(f"{base_url}/v1/matches/{mid}", headers={"Authorization": f"Bearer {token}"})
    assert answer.ok
    return int(answer.json()["version"])


def settle(people: list[Person], version: int) -> None:
    for person in people:
        person.page.wait_for_function(SETTLED, arg=version, timeout=60_000)


def check_screens(people: list[Person], base_url: str) -> None:
    """Every screen shows the server's latest version, the same scores and whose turn it is, and only the
    person whose turn it is has moves to click."""
    for _ in range(3):  # the AI may move while we look: settle on the version all screens have
        version = server_version(people[0], base_url)
        settle(people, version)
        if server_version(people[0], base_url) == version:
            break
    totals = {p.page.inner_text("#scoreboard tbody") for p in people}
    assert len(totals) == 1, totals
    over = [p.page.locator("#winner").count() for p in people]
    if any(over):
        assert all(over)
        return
    to_move = {p.state("view.to_move") for p in people}
    assert len(to_move) == 1, to_move
    seat = to_move.pop()
    for p in people:
        mine = p.state("seat") == seat
        assert p.page.locator("button.move").count() > 0 if mine else p.page.locator("button.move").count() == 0
        assert ("Your turn" in p.page.inner_text("#status")) == mine


def no_polling(people: list[Person]) -> None:
    for p in people:
        urls = [url for _, url in p.requests]
        assert not [u for u in urls if "/advance" in u or "wait=" in u], urls
        streams = [u for u in urls if "/events" in u]
        assert len(streams) <= 2, streams  # one per match (a joiner's, and one after a reload at most)
        reads = [u for m, u in p.requests if m == "GET" and "/v1/matches/" in u and "?since=" in u]
        assert len(reads) <= p.state("streamed") + 2, (len(reads), p.state("streamed"))
        assert not p.problems, p.problems


def test_two_people_and_an_ai_play_a_whole_least_score_match(browser: Any, base_url: str, shots: Path) -> None:
    host = Person(browser, base_url, "Ann")
    guest = Person(browser, base_url, "Bea")
    people = [host, guest]
    host_a_match(host, base_url, "least-score", players=3, friends=1, seed=8,
                 options={"threshold": "25", "max_turns_per_round": "10"})
    page = host.page
    # the waiting room: Ann joined, a friend's seat waiting with its link and code, an AI seat
    seats = page.locator("#waiting-seats li")
    assert seats.count() == 3
    assert "Ann (you)" in seats.nth(0).inner_text() and "joined" in seats.nth(0).inner_text()
    assert "waiting" in seats.nth(1).inner_text() and "AI level 1" in seats.nth(2).inner_text()
    code = page.get_attribute("#waiting-seats .code", "data-code")
    url = page.input_value("#waiting-seats .invite-link")
    assert code and url.endswith("/play/join#" + code)
    page.click("#waiting-seats .copy-link")
    page.wait_for_selector("#waiting-seats .copy-link:has-text('Copied!')")
    assert page.evaluate("() => navigator.clipboard.readText()") == url
    page.screenshot(path=str(shots / "screenshot-waiting-room.png"), full_page=True)
    if os.environ.get("CARDTABLE_SCREENSHOTS"):
        page.screenshot(path=str(README_SCREENSHOT), full_page=True)
    assert not page.is_visible("#match")
    # Bea opens the link in her own browser and joins: both screens leave the waiting room by the stream
    join(guest, url)
    for p in people:
        p.page.wait_for_selector("#match:not(.hidden)", timeout=30_000)
        assert not p.page.is_visible("#waiting")
    assert host.page.locator("#log li").filter(has_text="Bea joined").count() == 1
    assert [host.state("names"), guest.state("names")] == [["Ann", "Bea", "AI 2"]] * 2
    assert (host.state("seat"), guest.state("seat")) == (0, 1)
    check_screens(people, base_url)
    moves = {p.name: 0 for p in people}
    while not host.page.locator("#winner").count():
        assert sum(moves.values()) < 800, "the match should end"
        mover = next((p for p in people if p.my_turn()), None)
        assert mover is not None, "after settling, one of the people is to move"
        mover.page.locator("button.move").first.click()
        moves[mover.name] += 1
        check_screens(people, base_url)
    assert guest.page.locator("#winner").count() == 1
    assert host.page.inner_text("#final-scores") == guest.page.inner_text("#final-scores")
    assert min(moves.values()) >= 2, moves  # both people played
    assert host.page.locator("#final-scores tbody tr").count() >= 2  # a deal or more, and the totals
    assert host.page.locator("#log li").filter(has_text="AI 2").count() > 0  # the AI seat played too
    no_polling(people)
    # a rematch: Ann starts it; Bea's place and token arrive on her stream of the old match
    old = host.state("matchId")
    host.page.click("#rematch-button")
    guest.page.click("#rematch-join", timeout=30_000)
    for p in people:
        p.page.wait_for_function(f"() => cardtable.S.matchId !== {old!r} && cardtable.S.shownVersion !== null")
    assert host.state("matchId") == guest.state("matchId")
    names = host.state("names")
    assert sorted(names) == ["AI 2", "Ann", "Bea"]  # the same players (seated by the dealer rule: the service tests)
    assert names[host.state("seat")] == "Ann" and names[guest.state("seat")] == "Bea"
    check_screens(people, base_url)
    mover = next((p for p in people if p.my_turn()), None)
    if mover is not None:  # the rematch plays on
        mover.page.locator("button.move").first.click()
        check_screens(people, base_url)
    for p in people:
        p.close()


def test_three_people_start_a_contract_rummy_match(browser: Any, base_url: str, shots: Path) -> None:
    phone = {"width": 390, "height": 844}
    host = Person(browser, base_url, "Ann", phone)
    friends = [Person(browser, base_url, "Bea", phone), Person(browser, base_url, "Cy", phone)]
    people = [host, *friends]
    host_a_match(host, base_url, "contract-rummy", players=3, friends=2, seed=3,
                 options={"max_turns_per_round": "10"})
    links = host.page.locator("#waiting-seats .invite-link")
    assert links.count() == 2
    urls = [links.nth(i).input_value() for i in range(2)]
    join(friends[0], urls[0])
    # Bea waits with Ann for Cy: both waiting rooms say so
    for p in people[:2]:
        p.page.wait_for_function("() => document.querySelectorAll('#waiting-seats li.open').length === 1")
    assert "joined" in friends[0].page.inner_text("#waiting-seats li[data-seat='1']")
    assert friends[0].page.locator(".invite").count() == 0  # only the host has the invitations
    assert host.page.evaluate("() => document.documentElement.scrollWidth") <= phone["width"]
    host.page.screenshot(path=str(shots / "screenshot-waiting-room-phone.png"), full_page=True)
    join(friends[1], urls[1])
    for p in people:
        p.page.wait_for_selector("#match:not(.hidden)", timeout=30_000)
    check_screens(people, base_url)
    for _ in range(12):  # the first moves: draws, buys, discards, by whoever is to move
        mover = next((p for p in people if p.my_turn()), None)
        assert mover is not None
        mover.page.locator("button.move").first.click()
        check_screens(people, base_url)
    assert all(p.page.locator("#log li").count() >= 12 for p in people)
    no_polling(people)
    # waiting for a person: the others may ask for an AI to play for them, once the table waited long enough
    mover = next(p for p in people if p.my_turn())
    other = next(p for p in people if p is not mover)
    assert other.page.is_visible("#takeover-button") and mover.name in other.page.inner_text("#takeover-button")
    assert not mover.page.is_visible("#takeover-button")
    other.page.click("#takeover-button")
    other.page.wait_for_selector("#people-error:has-text('idle')")
    # Cy leaves: an AI plays Cy's seat from now on, and the others' screens say so
    cy = friends[1]
    cy.page.click("#leave-button")
    cy.page.wait_for_function(SAID_SOMETHING)
    assert "You left the table" in cy.page.inner_text("#move-error"), cy.page.inner_text("#people-error")
    assert cy.page.locator("button.move").count() == 0
    staying = [host, friends[0]]
    for p in staying:
        p.page.wait_for_selector("#log li:has-text('Cy left: an AI (level 3) plays the seat now')")
    check_screens(staying, base_url)
    for _ in range(4):
        mover = wait_for_a_mover(staying)
        mover.page.locator("button.move").first.click()
        check_screens(staying, base_url)
    for p in people:
        p.close()


def wait_for_a_mover(people: list[Person]) -> Person:
    for _ in range(300):
        mover = next((p for p in people if p.my_turn()), None)
        if mover is not None:
            return mover
        people[0].page.wait_for_timeout(100)
    raise AssertionError("nobody's turn came")
