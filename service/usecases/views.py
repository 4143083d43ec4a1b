"""What a seat (or a spectator, ``seat=None``) may see of a match: its view, its legal moves and the log.

Log entries (stored compactly, one per applied move)::

    {"v": version after the move, "s": seat, "m": move, "e": public events,
     "p": {seat: cards that entered that seat's hand}, "ai": 1 if an AI seat moved}

``p`` is exactly what that seat saw arrive (a card drawn from the stock, a new deal); it is shown only to
that seat, and to everyone once the match is over.
"""

from __future__ import annotations

from typing import Any

from service.store import MatchStore, StoredMatch
from service.usecases.loading import LoadedMatch


def public_seats(stored: StoredMatch) -> list[dict[str, Any]]:
    """Each seat's name, AI level (``null``: a person's) and whether it is still open (waiting for the player
    an invitation was made for)."""
    return [{"seat": i, "name": s.get("name"), "ai": s.get("ai"), "open": bool(s.get("open"))}
            for i, s in enumerate(stored.seats)]


def status_of(match: LoadedMatch) -> str:
    """``waiting`` (a seat is open: no moves yet), ``active`` or ``over``."""
    if match.state.is_over:
        return "over"
    return "waiting" if any(s.get("open") for s in match.stored.seats) else "active"


def entry_for(entry: dict[str, Any], seat: int | None, reveal: bool) -> dict[str, Any]:
    """One log entry as ``seat`` may see it."""
    out: dict[str, Any] = {
        "version": entry["v"],
        "seat": entry["s"],
        "move": entry["m"],
        "events": entry["e"],
        "ai": bool(entry.get("ai")),
    }
    private = entry.get("p") or {}
    if reveal:
        out["private"] = {str(k): v for k, v in private.items()}
    elif seat is not None and str(seat) in private:
        out["private"] = {str(seat): private[str(seat)]}
    return out


def flat_events(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The public events of log entries, each tagged with the version its move produced."""
    return [{**event, "version": entry["v"]} for entry in entries for event in entry["e"]]


def entries_between(store: MatchStore, match_id: str, since: int, until: int) -> list[dict[str, Any]]:
    """The log entries after version ``since`` up to ``until`` (a move saved meanwhile waits for the next read)."""
    _, entries = store.log(match_id, since)
    return [e for e in entries if e["v"] <= until]


def match_view(store: MatchStore, match: LoadedMatch, seat: int | None, since: int | None) -> dict[str, Any]:
    state, game = match.state, match.game
    body: dict[str, Any] = {
        "match_id": match.match_id,
        "game": game.info.id,
        "version": match.version,
        "state_id": match.state_id,
        "seat": seat,
        "status": status_of(match),
        "open_seats": [i for i, s in enumerate(match.stored.seats) if s.get("open")],
        "seats": public_seats(match.stored),
        "scores": game.scores(state),
        "view": game.observation(state, seat),
    }
    if since is not None:
        body["events"] = flat_events(entries_between(store, match.match_id, since, match.version))
    return body


def legal_moves_for(match: LoadedMatch, seat: int) -> dict[str, Any]:
    state = match.state
    playing = status_of(match) == "active"
    moves = match.game.legal_moves(state) if state.to_move == seat and playing else []
    return {"version": match.version, "state_id": match.state_id, "seat": seat, "to_move": state.to_move,
            "moves": moves}


def match_log(store: MatchStore, match: LoadedMatch, seat: int | None, since: int = 0) -> dict[str, Any]:
    """The log after version ``since`` as ``seat`` may see it (all of it once the match is over), up to the
    version that was loaded."""
    entries = entries_between(store, match.match_id, since, match.version)
    reveal = match.state.is_over
    out: dict[str, Any] = {
        "match_id": match.match_id,
        "game": match.game.info.id,
        "version": match.version,
        "status": "over" if reveal else "active",
        "seat": seat,
        "start": {"num_players": match.stored.start["num_players"], "options": match.stored.start["options"]},
        "entries": [entry_for(e, seat, reveal) for e in entries],
    }
    if reveal:
        out["start"]["seed"] = match.stored.start["seed"]
        out["start"]["setup"] = match.stored.start.get("setup")
    return out
