"""``cardtable play --join URL_OR_CODE --server URL``: take a seat a friend invited you to, and play it in the
terminal against the server (the other people and the AI seats play wherever they are).

The invitation is claimed once (``POST /v1/invitations/{code}/claim``: the seat's token); then the match's
event stream (``GET /v1/matches/{id}/events``) says when anyone moved, and the terminal shows what happened,
reads the seat's view again and, on your turn, its legal moves: typed as in ``cardtable play`` (a number, or
the card(s) of a move). Standard library only (urllib, http.client); the stream resumes after a drop with
``Last-Event-ID``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import queue
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from cli.play import HELP, Prompting, Quit
from cli.textview import Style, is_round_end, renderer_for
from engine.game import Move
from engine.registry import get_game


class ServerError(Exception):
    """An answer the server refused (its problem's detail and ``code``), or a server that cannot be reached
    (code ``unreachable``)."""

    def __init__(self, detail: str, code: str | None = None) -> None:
        super().__init__(detail)
        self.code = code


def parse_invitation(value: str, server: str | None) -> tuple[str, str]:
    """``(server, code)`` from an invitation link (``http://host/play/join#CODE``) or a bare code and ``server``."""
    value = value.strip()
    if "://" in value:
        parts = urllib.parse.urlsplit(value)
        code = parts.fragment or parts.path.rstrip("/").rsplit("/", 1)[-1]
        return (server or f"{parts.scheme}://{parts.netloc}").rstrip("/"), code
    if not server:
        raise ValueError("a bare invitation code needs --server URL (or give the whole invitation link)")
    return server.rstrip("/"), value


class Api:
    """The few calls the terminal needs, with the seat token once it has one."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.token: str | None = None

    def call(self, method: str, path: str, body: Any = None, *, idempotency_key: str | None = None) -> Any:
        """One API call. A POST with an ``idempotency_key`` is sent once more if the connection fails or the
        store timed out (503 ``store_timeout``): the server answers the copy with its first answer, so a move
        is never played twice."""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        tries = 2 if idempotency_key else 1
        for attempt in range(1, tries + 1):
            try:
                return self._send(request)
            except ServerError as exc:
                if attempt == tries or exc.code not in ("store_timeout", "unreachable"):
                    raise
                time.sleep(1)
        raise AssertionError("unreachable")

    def _send(self, request: urllib.request.Request) -> Any:
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as exc:
            try:
                problem = json.loads(exc.read())
            except ValueError:
                problem = {}
            raise ServerError(problem.get("detail") or f"the server answered {exc.code}", problem.get("code")) from None
        except (urllib.error.URLError, OSError) as exc:
            raise ServerError(f"cannot reach {self.server}: {exc}", "unreachable") from None


class Stream(threading.Thread):
    """Reads the match's event stream into a queue (``(version, entry)``), reconnecting after a drop."""

    def __init__(self, server: str, path: str, token: str, since: int) -> None:
        super().__init__(daemon=True, name="cardtable-events")
        self.url = urllib.parse.urlsplit(server)
        self.path, self.token, self.last = path, token, since
        self.events: queue.Queue[tuple[int, dict[str, Any]]] = queue.Queue()
        self.stopped = False

    def run(self) -> None:
        while not self.stopped:
            with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
                self._read()
            time.sleep(1.0)

    def _read(self) -> None:
        kind = http.client.HTTPSConnection if self.url.scheme == "https" else http.client.HTTPConnection
        conn = kind(self.url.netloc, timeout=60)
        try:
            conn.request("GET", f"{self.path}?since={self.last}", headers={
                "Authorization": f"Bearer {self.token}", "Accept": "text/event-stream",
                "Last-Event-ID": str(self.last)})
            answer = conn.getresponse()
            if answer.status != 200:
                return
            event: dict[str, str] = {}
            while not self.stopped:
                line = answer.readline()
                if not line:
                    return
                text = line.decode().rstrip("\r\n")
                if text:
                    name, _, value = text.partition(":")
                    event[name] = value[1:] if value.startswith(" ") else value
                    continue
                if event.get("event") == "move" and "id" in event:
                    self.last = int(event["id"])
                    self.events.put((self.last, json.loads(event["data"])))
                event = {}
        finally:
            conn.close()


class RemoteMatch(Prompting):
    """One seat of a match on a server, played at a terminal."""

    def __init__(self, server: str, code: str, name: str | None, stdin: TextIO = sys.stdin,
                 stdout: TextIO = sys.stdout) -> None:
        self.api = Api(server)
        self.code, self.name = code, name
        self.stdin, self.out = stdin, stdout
        self.style = Style.for_stream(stdout)

    def run(self) -> int:
        seat = self.api.call("POST", f"/v1/invitations/{urllib.parse.quote(self.code)}/claim",
                             {"name": self.name} if self.name else {})
        self.api.token, self.seat, self.match_id = seat["token"], seat["seat"], seat["match_id"]
        self.game = get_game(seat["game"])
        self.render = renderer_for(self.game, self.style)
        self.say(self.style.title(f"{self.game.info.name}: you joined as {seat['name']} (seat {self.seat})"),
                 self.style.dim(HELP))
        self.stream = Stream(self.api.server, f"/v1/matches/{self.match_id}/events", seat["token"], seat["version"])
        self.stream.start()
        self.shown = seat["version"]
        waiting_for: Any = None
        try:
            while True:
                match = self.api.call("GET", f"/v1/matches/{self.match_id}")
                self.names = [("You" if s["seat"] == self.seat else s["name"]) for s in match["seats"]]
                view, version = match["view"], match["version"]
                if match["status"] == "over":
                    self.say("", *self.render.game_summary(match["scores"], self.names))
                    return 0
                if match["status"] == "waiting":
                    waiting = ("waiting", tuple(match["open_seats"]))
                    if waiting != waiting_for:
                        self.say(self.style.dim("Waiting for players: seat"
                                                f"{'s' if len(match['open_seats']) > 1 else ''} "
                                                + ", ".join(str(s) for s in match["open_seats"]) + " not taken yet…"))
                    waiting_for = waiting
                elif view["to_move"] == self.seat:
                    waiting_for = None
                    self.my_turn(view, version)
                    continue
                elif waiting_for != ("turn", view["to_move"], version):
                    waiting_for = ("turn", view["to_move"], version)
                    self.say(self.style.dim(f"Waiting for {self.names[view['to_move']]}…"))
                self.next_events(view)
        except (Quit, KeyboardInterrupt):
            self.say("", "You left the table (your seat stays yours: the others may hand it to an AI).")
            return 0
        finally:
            self.stream.stopped = True

    def next_events(self, view: dict[str, Any]) -> None:
        """Wait for the stream's next entries and tell what happened."""
        while True:  # in short waits, so that Ctrl-C is handled at once
            with contextlib.suppress(queue.Empty):
                entries = [self.stream.events.get(timeout=0.5)]
                break
        while not self.stream.events.empty():
            entries.append(self.stream.events.get_nowait())
        for version, entry in entries:
            if version <= self.shown:
                continue
            self.shown = version
            for event in entry.get("events") or []:
                self.tell(event, view)

    def tell(self, event: dict[str, Any], view: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "seat_claimed":
            self.say(self.style.good(f"{event['name']} joined"))
        elif kind in ("seat_resigned", "seat_taken_over"):
            self.say(f"{self.names[event['seat']]}'s seat is played by an AI (level {event['level']}) now")
        elif kind == "rematch":
            self.say("A rematch is ready (join it from the browser or with its invitation).")
        elif is_round_end(event):
            self.say("", *self.render.round_summary(event, self.names, view), "")
        else:
            line = self.render.describe_event(event, self.names, view)
            if line:
                self.say(line)

    def my_turn(self, view: dict[str, Any], version: int) -> None:
        legal = self.api.call("GET", f"/v1/matches/{self.match_id}/legal-moves")
        moves = legal["moves"]
        if not moves or legal.get("version") != version:  # someone moved meanwhile: the next read says so
            self.next_events(view)
            return
        move = self.ask(view, moves)
        body = {"move": move, "expected_version": version}
        if legal.get("state_id"):
            body["expected_state_id"] = legal["state_id"]  # played on the state these moves were listed for
        try:
            self.api.call("POST", f"/v1/matches/{self.match_id}/moves", body, idempotency_key=str(uuid.uuid4()))
        except ServerError as exc:
            self.say(self.style.bad(str(exc)))
        self.next_events(view)

    def hint(self, view: Mapping[str, Any], moves: Sequence[Move]) -> None:
        self.say(self.style.dim("The AI is thinking about your hand…"))
        try:
            hint = self.api.call("GET", f"/v1/matches/{self.match_id}/hint")
        except ServerError as exc:
            self.say(self.style.bad(str(exc)))
            return
        number = next((i for i, m in enumerate(moves, start=1) if m == hint["move"]), None)
        label = self.render.describe_move(hint["move"], view)
        self.say(self.style.good(f"Hint: {number}) {label}" if number else f"Hint: {label}"))
        if hint.get("explanation"):
            self.say(f"  {self.render.text(hint['explanation'], view)}")


def run(server: str | None, join: str, name: str | None) -> int:
    try:
        base, code = parse_invitation(join, server)
        return RemoteMatch(base, code, name).run()
    except (ValueError, ServerError) as exc:
        print(f"cardtable play: {exc}", file=sys.stderr)
        return 2
