"""Text rendering of views, moves and events for the terminal (``cardtable play`` and friends).

Everything here works from what a seat may know — a view (``game.observation``),
a move from ``legal_moves``, a public event — never from a full state, so the
terminal shows a player exactly what the API would show them.

The table is rendered generically from the view (any key a game adds is shown,
cards with suit symbols), and a few small per-game renderers, keyed by game id
in :data:`RENDERERS`, say things better where a generic line would be clumsy.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TextIO

from engine.cards import CARD_NAMES, JOKER, parse_card, rank_of, suit_of
from engine.errors import EngineError
from engine.game import Game

SUIT_SYMBOLS = ("♣", "♦", "♥", "♠")
SUIT_LETTERS = ("C", "D", "H", "S")
RANK_LABELS = {1: "A", 10: "10", 11: "J", 12: "Q", 13: "K"}
CARD_RE = re.compile(r"^(?:[2-9TJQKA][CDHS]|JK)$")

# Keys every view has (engine/game.py); the generic renderer shows the rest as the game's table.
COMMON_KEYS = frozenset({
    "game", "seat", "num_players", "options", "round", "dealer", "phase", "to_move", "ply",
    "turns_in_round", "totals", "round_scores", "winners", "hidden", "hand", "hand_sizes",
    "version", "events", "match_id",
})


def is_card(value: Any) -> bool:
    return isinstance(value, str) and CARD_RE.match(value) is not None


_SYMBOL_TO_LETTER = str.maketrans(dict(zip(SUIT_SYMBOLS, SUIT_LETTERS, strict=True)))
CARD_CODE_RE = re.compile(r"\b(?:[2-9TJQKA][CDHS]|JK)\b")


def card_from_input(token: str) -> str | None:
    """A card as a person types it — as shown (``2♣``, ``10♠``, a wild's ``5♠*``) or as a code (``KH``,
    ``10h``, ``kh``) — in the canonical notation (``2C``, ``TS``, ``KH``); None if it is no card."""
    text = token.strip().rstrip("*").translate(_SYMBOL_TO_LETTER)
    try:
        return CARD_NAMES[parse_card(text)]
    except EngineError:
        return None


def cards_from_input(answer: str) -> list[str] | None:
    """Every card of ``"5♠ 5♥"`` or ``"5s,5h"``; None unless every word is a card."""
    words = answer.replace(",", " ").split()
    cards = [card_from_input(w) for w in words]
    if not words or any(c is None for c in cards):
        return None
    return [c for c in cards if c is not None]


def wants_color(stream: TextIO) -> bool:
    """Colour only on a terminal that has it, and never when NO_COLOR is set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def can_print_symbols(stream: TextIO) -> bool:
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "".join(SUIT_SYMBOLS).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class Style:
    """ANSI colours (or none), and suit symbols (or letters where the terminal can't print them)."""

    def __init__(self, color: bool = False, symbols: bool = True) -> None:
        self.color = color
        self.symbols = symbols

    @classmethod
    def for_stream(cls, stream: TextIO) -> Style:
        return cls(color=wants_color(stream), symbols=can_print_symbols(stream))

    def paint(self, text: str, *codes: int) -> str:
        if not self.color or not codes:
            return text
        return "\x1b[" + ";".join(map(str, codes)) + "m" + text + "\x1b[0m"

    def bold(self, text: str) -> str:
        return self.paint(text, 1)

    def dim(self, text: str) -> str:
        return self.paint(text, 2)

    def title(self, text: str) -> str:
        return self.paint(text, 1, 36)

    def good(self, text: str) -> str:
        return self.paint(text, 32)

    def bad(self, text: str) -> str:
        return self.paint(text, 31)

    def card(self, name: str, wild: bool = False) -> str:
        """``7H`` → ``7♥`` (red on a colour terminal); a wild card gets a ``*``."""
        card = parse_card(name)
        if card == JOKER:
            text = "JK"
            codes: tuple[int, ...] = (1, 35)
        else:
            rank = RANK_LABELS.get(rank_of(card), str(rank_of(card)))
            suit = suit_of(card)
            text = rank + (SUIT_SYMBOLS[suit] if self.symbols else SUIT_LETTERS[suit])
            codes = (31,) if suit in (1, 2) else ()
        if wild and card != JOKER:
            text += "*"
            codes = (*codes, 1)
        return self.paint(text, *codes)


# Past tenses of move and event types, so that narration reads "You drew", "AI 1 drew".
PAST = {
    "draw": "drew", "discard": "discarded", "pick": "picked", "play": "played", "pass": "passed",
    "sweep": "swept", "declare": "declared", "knock": "knocked", "go_out": "went out", "buy": "bought",
    "go_down": "went down", "lay_off": "laid off", "take": "took",
}


# Event fields that list seats (shown as names), not one value per seat.
SEAT_LIST_KEYS = frozenset({"knocked_out", "winners"})


def is_round_end(event: Mapping[str, Any]) -> bool:
    """A round's (or deal's, or hand's) end event: ``round_end``, ``deal_end``... (not ``game_end``)."""
    kind = str(event.get("type", ""))
    return kind.endswith("_end") and kind != "game_end"


def seat_names(num_players: int, human: int | None) -> list[str]:
    return ["You" if seat == human else f"AI {seat}" for seat in range(num_players)]


def _words(key: str) -> str:
    return key.replace("_", " ")


class Renderer:
    """The generic renderer: works for any game from its view alone."""

    def __init__(self, game: Game, style: Style) -> None:
        self.game = game
        self.style = style

    # -- cards ------------------------------------------------------------------

    def is_wild(self, card: str, view: Mapping[str, Any]) -> bool:
        if card == "JK":
            return True
        wild_rank = view.get("wild_rank")
        return isinstance(wild_rank, int) and rank_of(parse_card(card)) == wild_rank

    def cards(self, cards: Sequence[str], view: Mapping[str, Any]) -> str:
        return " ".join(self.style.card(c, self.is_wild(c, view)) for c in cards) if cards else "—"

    def value(self, value: Any, view: Mapping[str, Any]) -> str:
        """Any JSON value of a view, with cards shown as cards."""
        if is_card(value):
            return self.style.card(value, self.is_wild(value, view))
        if isinstance(value, list):
            if value and all(is_card(v) for v in value):
                return self.cards(value, view)
            if not value:
                return "—"
            return "  ".join(self.value(v, view) for v in value)
        if isinstance(value, Mapping):
            if "cards" in value:
                return self.meld(value, view)
            return ", ".join(f"{_words(k)} {self.value(v, view)}" for k, v in value.items())
        if value is None:
            return "—"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, str | int | float):
            return str(value)
        return json.dumps(value)

    def meld(self, meld: Mapping[str, Any], view: Mapping[str, Any]) -> str:
        cards = list(meld.get("cards", []))
        stands = list(meld.get("stands_for", []))
        shown = []
        for i, c in enumerate(cards):
            text = self.style.card(c, self.is_wild(c, view))
            if self.is_wild(c, view) and i < len(stands) and stands[i] and stands[i] != c:
                text += self.style.dim("=" + self.style.card(stands[i]))
            shown.append(text)
        return "[" + " ".join(shown) + "]"

    def hand_groups(self, cards: Sequence[str], view: Mapping[str, Any]) -> list[list[str]]:
        """The hand sorted and grouped by suit, wild cards in a group of their own at the end."""
        wild = sorted((c for c in cards if self.is_wild(c, view)), key=parse_card)
        by_suit: list[list[str]] = [[], [], [], []]
        for c in sorted((c for c in cards if not self.is_wild(c, view)), key=parse_card):
            by_suit[suit_of(parse_card(c))].append(c)
        groups = [g for g in by_suit if g]
        if wild:
            groups.append(wild)
        return groups

    # -- screen parts -------------------------------------------------------------

    def rounds_total(self) -> int | None:
        rounds = getattr(self.game, "rounds", None)
        return rounds if isinstance(rounds, int) else None

    def header(self, view: Mapping[str, Any]) -> str:
        total = self.rounds_total()
        parts = [self.game.info.name, f"round {view['round']}" + (f" of {total}" if total else "")]
        parts += self.header_extra(view)
        return self.style.title(" · ".join(parts))

    def header_extra(self, view: Mapping[str, Any]) -> list[str]:
        return []

    def scores_line(self, view: Mapping[str, Any], names: Sequence[str]) -> str:
        hint = "lower is better" if self.game.info.lower_score_wins else "higher is better"
        cells = [f"{names[s]} {self.style.bold(str(t))}" for s, t in enumerate(view["totals"])]
        return "Scores  " + " · ".join(cells) + self.style.dim(f"  ({hint})")

    def players_line(self, view: Mapping[str, Any], names: Sequence[str]) -> str:
        cells = []
        for seat, size in enumerate(view.get("hand_sizes", [])):
            mark = "▶ " if seat == view.get("to_move") else ""
            dealer = " (dealer)" if seat == view.get("dealer") else ""
            cells.append(f"{mark}{names[seat]}: {size} cards{dealer}")
        return "Players " + " · ".join(cells)

    def known_lines(self, view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
        """The cards the view knows other seats hold (taken from the discard pile, in the rummy games)."""
        cells = [f"{names[s]} holds {self.cards(k, view)}" for s, k in enumerate(view.get("known") or [])
                 if k and s != view.get("seat")]
        return ["Known   " + " · ".join(cells)] if cells else []

    def table_lines(self, view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
        """Every game-specific key of the view; per-seat lists are shown per seat."""
        lines = []
        n = view["num_players"]
        for key, value in view.items():
            if key in COMMON_KEYS or key in self.skip_keys:
                continue
            if isinstance(value, list) and len(value) == n and n > 1 and all(isinstance(v, list) for v in value):
                cells = [f"{names[s]} {self.value(v, view)}" for s, v in enumerate(value) if v]
                if cells:
                    lines.append(f"{_words(key).capitalize()}: " + " · ".join(cells))
                continue
            lines.append(f"{_words(key).capitalize()}: {self.value(value, view)}")
        return lines

    skip_keys: ClassVar[frozenset[str]] = frozenset()
    round_word: ClassVar[str] = "Round"  # what the game calls a round ("Hand" in Contract rummy)

    def hand_lines(self, view: Mapping[str, Any]) -> list[str]:
        groups = self.hand_groups(view.get("hand", []), view)
        sep = self.style.dim(" │ ")
        line = sep.join(" ".join(self.style.card(c, self.is_wild(c, view)) for c in g) for g in groups)
        return [f"Your hand ({len(view.get('hand', []))}): {line or '—'}"]

    def screen(self, view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
        rule = self.style.dim("─" * 64)
        lines = [rule, self.header(view), self.scores_line(view, names), self.players_line(view, names)]
        lines += self.table_lines(view, names)
        lines += self.hand_lines(view)
        return lines

    def text(self, text: str, view: Mapping[str, Any]) -> str:
        """Free text (a hint's explanation) with its card codes shown as the screen shows cards (``KH`` → ``K♥``)."""
        return CARD_CODE_RE.sub(lambda m: self.style.card(m.group(0), self.is_wild(m.group(0), view)), text)

    # -- moves and events ---------------------------------------------------------

    def move_cards(self, move: Mapping[str, Any], view: Mapping[str, Any]) -> list[str]:
        """The cards a move shows (what a player may type to choose it)."""
        cards = [move["card"]] if is_card(move.get("card")) else []
        cards += [c for c in move.get("cards") or [] if is_card(c)]
        for meld in move.get("melds") or []:
            if isinstance(meld, Mapping):
                cards += [c for c in meld.get("cards") or [] if is_card(c)]
        return cards

    def describe_move(self, move: Mapping[str, Any], view: Mapping[str, Any]) -> str:
        parts = [_words(str(move.get("type", "?")))]
        for key, value in move.items():
            if key == "type":
                continue
            if isinstance(value, bool):
                if value:
                    parts.append(f"and {_words(key)}")
            elif key in ("card", "cards"):
                parts.append(self.value(value, view))
            elif key == "source":
                parts.append(f"from the {value}")
            else:
                parts.append(f"{_words(key)} {self.value(value, view)}")
        return " ".join(parts)

    def describe_event(self, event: Mapping[str, Any], names: Sequence[str], view: Mapping[str, Any]) -> str | None:
        """One line of narration in the past tense (so "You" and "AI 1" read alike), or None to stay quiet."""
        kind = str(event.get("type", "?"))
        who = names[event["seat"]] if isinstance(event.get("seat"), int) else None
        if is_round_end(event) or kind == "game_end":
            return None  # shown as summaries
        if kind == "draw" and event.get("card") and event.get("source") == "discard":
            return f"{who} took {self.value(event['card'], view)} from the discard pile"
        if kind == "go_out":
            melds = event.get("melds") or []
            shown = " ".join(self.meld(m, view) for m in melds)
            return self.style.bold(f"{who} went out") + f", discarding {self.value(event.get('card'), view)}" + (
                f": {shown}" if shown else "")
        if kind == "take_discard":
            return f"{who} took {self.value(event.get('card'), view)} from the discard pile"
        if kind == "go_down":
            shown = " ".join(self.meld(m, view) for m in event.get("melds") or [])
            return self.style.bold(f"{who} went down") + f": {shown}"
        if kind == "reshuffle":
            return f"The discards were shuffled into a new stock ({event.get('cards')} cards)"
        if kind.endswith("_start"):
            dealer = event.get("dealer")
            extra = [f"{_words(k)} {self.value(v, view)}" for k, v in event.items()
                     if k not in ("type", "round", "dealer", "seat")]
            head = f"{_words(kind[:-6]).capitalize()} {event.get('round', '')} begins".replace("  ", " ")
            if isinstance(dealer, int):
                head += f", {names[dealer]} dealt"
            return self.style.bold(head) + (": " + ", ".join(extra) if extra else "")
        parts = [who or "", PAST.get(kind, _words(kind))]
        for key in ("card", "cards"):
            if key in event:
                parts.append(self.value(event[key], view))
        if "source" in event:
            parts.append(f"from the {event['source']}")
        elif kind == "draw":
            parts.append("from the stock")
        for key, value in event.items():
            if key in ("type", "seat", "card", "cards", "source", "version"):
                continue
            if isinstance(value, bool):
                if value:
                    parts.append(f"and {_words(key)}")
            else:
                parts.append(f"({_words(key)} {self.value(value, view)})")
        return " ".join(p for p in parts if p)

    def round_summary(self, event: Mapping[str, Any], names: Sequence[str], view: Mapping[str, Any]) -> list[str]:
        """The itemized scores of a finished round (or deal), from its end event and the view's totals."""
        n = len(names)
        kind = str(event["type"])[:-4]
        word = self.round_word if kind == "round" else _words(kind).capitalize()
        title = f"{word} {event.get('round', '?')} is over"
        lines = [self.style.title(title) + self._reason(event, names)]
        shown = {"type", "round", "reason", "went_out", "seat", "scores", "totals", "melds", "deadwood", "hands",
                 "version"}
        melds = event.get("melds")
        deadwood = event.get("deadwood")
        hands = event.get("hands")
        per_seat = [k for k, v in event.items() if k not in shown and k not in SEAT_LIST_KEYS
                    and isinstance(v, list) and len(v) == n]
        notes = [f"{_words(k)}: {self._seats_or_value(v, names, view)}" for k, v in event.items()
                 if k not in shown and k not in per_seat and v is not None and v is not False and v != []]
        if notes:
            lines.append("  " + " · ".join(notes))
        width = max(len(name) for name in names)
        for seat, name in enumerate(names):
            parts = [f"  {name:<{width}}"]
            if isinstance(melds, list) and seat < len(melds):
                parts.append("melds " + (" ".join(self.meld(m, view) for m in melds[seat]) or "—"))
            if isinstance(deadwood, list) and seat < len(deadwood):
                parts.append("left " + self.itemized(deadwood[seat], view))
            elif isinstance(hands, list) and seat < len(hands):
                parts.append("hand " + self.value(hands[seat], view))
            for key in per_seat:
                parts.append(f"{_words(key)} {self.value(event[key][seat], view)}")
            scores = event.get("scores")
            if isinstance(scores, list) and seat < len(scores):
                parts.append(f"scores {self.style.bold(str(scores[seat]))}")
            totals = event.get("totals") or view.get("totals")
            if isinstance(totals, list) and seat < len(totals):
                parts.append(f"total {totals[seat]}")
            lines.append("  ".join(parts))
        return lines

    def _seats_or_value(self, value: Any, names: Sequence[str], view: Mapping[str, Any]) -> str:
        """Seat numbers as names (``declarer: AI 1``, ``knocked out: You, AI 2``)."""
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
            return names[value]
        if isinstance(value, list) and value and all(isinstance(v, int) and 0 <= v < len(names) for v in value):
            return ", ".join(names[v] for v in value)
        return self.value(value, view)

    def itemized(self, cards: Sequence[str], view: Mapping[str, Any]) -> str:
        return self.value(list(cards), view)

    def _reason(self, event: Mapping[str, Any], names: Sequence[str]) -> str:
        out = event.get("went_out")
        if isinstance(out, int):
            return f" — {names[out]} went out"
        reason = event.get("reason")
        if not reason:
            return ""
        seat = event.get("seat")
        by = f" ({names[seat]})" if isinstance(seat, int) and 0 <= seat < len(names) else ""
        return f" — {_words(str(reason))}{by}"

    def game_summary(self, scores: Mapping[str, Any], names: Sequence[str]) -> list[str]:
        """Every round's score per seat, the totals and the winners."""
        rounds: list[list[int]] = scores.get("rounds", [])
        totals: list[int] = scores.get("totals", [])
        winners = scores.get("winners") or []
        width = max(6, *(len(n) for n in names))
        head = "Round " + "".join(f"{n:>{width + 2}}" for n in names)
        lines = [self.style.title("Game over"), head]
        for r, row in enumerate(rounds, start=1):
            lines.append(f"{r:>5} " + "".join(f"{v:>{width + 2}}" for v in row))
        lines.append("Total " + "".join(self.style.bold(f"{t:>{width + 2}}") for t in totals))
        if winners:
            who = " and ".join(names[w] for w in winners)
            verb = "win" if len(winners) > 1 or (winners and names[winners[0]] == "You") else "wins"
            lines.append(self.style.good(f"{who} {verb}!"))
        return lines


class RummyRoundsRenderer(Renderer):
    """Three Thirteen and Threezies: stock, discard pile, the round's wild rank, and your best melds."""

    skip_keys = frozenset({"stock_size", "discard", "wild_rank", "known", "taken", "went_out", "last_turns"})

    def header_extra(self, view: Mapping[str, Any]) -> list[str]:
        rank = view.get("wild_rank")
        label = RANK_LABELS.get(rank, str(rank)) if isinstance(rank, int) else "?"
        return [f"{label}s wild", f"{len(view.get('hand', []) or [])} cards in hand"]

    def table_lines(self, view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
        discard = view.get("discard", [])
        top = self.value(discard[-1], view) if discard else "—"
        lines = [f"Table   stock {view.get('stock_size', 0)} cards · discard pile top {self.style.bold(top)}"
                 + self.style.dim(f" ({len(discard)} in the pile)")]
        lines += self.known_lines(view, names)
        out = view.get("went_out")
        if isinstance(out, int):
            lines.append(self.style.bad(f"{names[out]} went out: everyone else has one last turn "
                                        f"({view.get('last_turns', 0)} to go)"))
        return lines

    def hand_lines(self, view: Mapping[str, Any]) -> list[str]:
        lines = super().hand_lines(view)
        arrangement = self._arrangement(view.get("hand", []), view)
        if arrangement is not None:
            melds, deadwood, score = arrangement
            shown = " ".join(self.meld(m, view) for m in melds) or "—"
            lines.append(self.style.dim("  best melds ") + shown + self.style.dim(" · deadwood ")
                         + self.cards(deadwood, view) + self.style.dim(f" = {score}"))
        return lines

    def _arrangement(
        self, hand: Sequence[str], view: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], list[str], int] | None:
        meld_rules = getattr(self.game, "meld_rules", None)
        if meld_rules is None or not hand:
            return None
        try:
            from engine import melds

            rules = meld_rules(view["options"], view["round"])
            best = melds.best_arrangement([parse_card(c) for c in hand], rules)
        except (ImportError, EngineError, AttributeError, KeyError):
            return None
        shown = [{"kind": m.kind, "cards": [CARD_NAMES[c] for c in m.cards],
                  "stands_for": [CARD_NAMES[c] for c in m.stands_for]} for m in best.melds]
        return shown, [CARD_NAMES[c] for c in best.deadwood], best.score

    def round_summary(self, event: Mapping[str, Any], names: Sequence[str], view: Mapping[str, Any]) -> list[str]:
        # the view has moved on to the next round: show the finished round with its own wild rank
        ended = event.get("round")
        wild_rank = getattr(self.game, "wild_rank", None)
        if isinstance(ended, int) and wild_rank is not None:
            view = {**view, "round": ended, "wild_rank": wild_rank(ended)}
        return super().round_summary(event, names, view)

    def itemized(self, cards: Sequence[str], view: Mapping[str, Any]) -> str:
        """``K♣ 10 + 2♦ 2 = 12`` — each card left over with its points."""
        if not cards:
            return "—"
        values = None
        meld_rules = getattr(self.game, "meld_rules", None)
        if meld_rules is not None:
            try:
                values = meld_rules(view["options"], view["round"]).values
            except (EngineError, AttributeError, KeyError):
                values = None
        if values is None:
            return self.cards(cards, view)
        items = [(c, values[parse_card(c)]) for c in cards]
        text = " + ".join(f"{self.value(c, view)} {v}" for c, v in items)
        return f"{text} = {sum(v for _, v in items)}"

    def move_cards(self, move: Mapping[str, Any], view: Mapping[str, Any]) -> list[str]:
        if move.get("type") == "draw" and move.get("source") == "discard" and view.get("discard"):
            return [view["discard"][-1]]
        return super().move_cards(move, view)

    def describe_move(self, move: Mapping[str, Any], view: Mapping[str, Any]) -> str:
        kind = move.get("type")
        if kind == "draw":
            if move.get("source") == "discard" and view.get("discard"):
                return f"take {self.value(view['discard'][-1], view)} from the discard pile"
            return "draw from the stock"
        if kind == "go_out":
            return self.style.good("go out") + f", discarding {self.value(move.get('card'), view)}"
        if kind == "discard":
            return f"discard {self.value(move.get('card'), view)}"
        return super().describe_move(move, view)


class LeastScoreRenderer(Renderer):
    """Least Score: the floor you may pick from, this turn's discards, the deck, who is out, your hand total."""

    skip_keys = frozenset({"hand_total", "floor", "discarded", "dead", "dead_size", "deck_size", "out", "played",
                           "known"})

    def header_extra(self, view: Mapping[str, Any]) -> list[str]:
        threshold = view.get("options", {}).get("threshold")
        return [f"deal {view['round']}"] + ([f"out over {threshold}"] if threshold else [])

    def header(self, view: Mapping[str, Any]) -> str:
        return self.style.title(" · ".join([self.game.info.name, *self.header_extra(view)]))

    def table_lines(self, view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
        dead = view.get("dead_size", len(view.get("dead", [])))
        lines = [f"Table   floor {self.cards(view.get('floor', []), view)}"
                 + self.style.dim(" (pick any one)")
                 + f" · deck {view.get('deck_size', 0)} cards · dead {dead}"]
        if view.get("discarded"):
            lines.append(f"        your discards this turn {self.cards(view['discarded'], view)}")
        out = [names[s] for s, o in enumerate(view.get("out", [])) if o]
        if out:
            lines.append(self.style.bad("Out     " + ", ".join(out)))
        lines += self.known_lines(view, names)
        return lines + super().table_lines(view, names)

    def hand_lines(self, view: Mapping[str, Any]) -> list[str]:
        lines = super().hand_lines(view)
        lines.append(self.style.dim("  hand total ") + self.style.bold(str(view.get("hand_total", "?"))))
        return lines

    def describe_move(self, move: Mapping[str, Any], view: Mapping[str, Any]) -> str:
        if move.get("type") == "pick":
            if move.get("source") == "floor":
                return f"pick up {self.value(move.get('card'), view)} from the floor"
            return "pick up the top of the deck"
        if move.get("type") == "declare":
            return self.style.good("declare") + f" (your total is {view.get('hand_total', '?')})"
        return super().describe_move(move, view)


class LessThanThreeRenderer(Renderer):
    """Less Than Three: the meld to beat, sweeps left, and cards played this round."""

    skip_keys = frozenset({"table", "table_meld", "discarded", "sweeps", "sweep_used", "aside_size"})

    def header_extra(self, view: Mapping[str, Any]) -> list[str]:
        phase = view.get("phase")
        mine = view.get("to_move") == view.get("seat")
        if phase == "lead":
            return ["you lead" if mine else "the other player leads"]
        if phase == "respond":
            return ["answer, sweep or pass" if mine else "the other player answers"]
        return [_words(str(phase))] if phase else []

    def table_lines(self, view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
        table = view.get("table") or []
        meld = view.get("table_meld")
        beat = ""
        if isinstance(meld, Mapping):
            beat = f" ({meld.get('kind')})" if meld.get("size") == 1 else f" ({meld.get('kind')} of {meld.get('size')})"
        lines = [f"Table   to beat {self.cards(table, view)}{beat}" if table else "Table   empty: lead any meld"]
        sweeps = view.get("sweeps") or []
        used = " · a sweep was used this round" if view.get("sweep_used") else ""
        lines.append("Sweeps  " + " · ".join(f"{names[s]} {n}" for s, n in enumerate(sweeps)) + used)
        played = view.get("discarded") or []
        if played:
            count = f"{len(played)} card{'s' if len(played) != 1 else ''}"
            lines.append(self.style.dim(f"Played  {count} this round: ") + self.cards(played, view))
        return lines + super().table_lines(view, names)

    def describe_move(self, move: Mapping[str, Any], view: Mapping[str, Any]) -> str:
        if move.get("type") == "play":
            text = f"play {self.value(move.get('cards'), view)}"
            return text + (self.style.good(" and knock") if move.get("knock") else "")
        return super().describe_move(move, view)


class ContractRummyRenderer(Renderer):
    """Contract rummy: the hand's contract, the melds on the table by owner, who is down, buys, the buy window."""

    skip_keys = frozenset({"contract", "turn", "stock_size", "discard", "discarder", "known", "buys", "down",
                           "melds", "taken", "went_down_now", "went_out"})
    round_word = "Hand"

    def is_wild(self, card: str, view: Mapping[str, Any]) -> bool:
        return card == "JK" or rank_of(parse_card(card)) == 2  # R1: 2s and jokers

    def header_extra(self, view: Mapping[str, Any]) -> list[str]:
        contract = view.get("contract") or {}
        return [f"hand {view['round']} of 7", str(contract.get("text", "")), "2s and jokers wild"]

    def header(self, view: Mapping[str, Any]) -> str:
        return self.style.title(" · ".join([self.game.info.name, *self.header_extra(view)]))

    def table_lines(self, view: Mapping[str, Any], names: Sequence[str]) -> list[str]:
        discard = view.get("discard", [])
        top = self.value(discard[-1], view) if discard else "—"
        lines = [f"Table   stock {view.get('stock_size', 0)} cards · discard pile top {self.style.bold(top)}"
                 + self.style.dim(f" ({len(discard)} in the pile)")]
        turn = view.get("turn")
        if view.get("phase") == "buy" and isinstance(turn, int):
            lines.append(self.style.bad(f"Buying: {names[turn]} drew from the stock; "
                                        f"{top} is for sale (with a penalty card)"))
        melds = view.get("melds") or []
        for seat, name in enumerate(names):
            own = [(i, m) for i, m in enumerate(melds) if m.get("owner") == seat]
            if own:
                shown = " ".join(f"{i}:{self.meld(m, view)}" for i, m in own)
                lines.append(f"Down    {name}: {shown}")
        buys = view.get("buys") or []
        if any(buys):
            lines.append("Buys    " + " · ".join(f"{names[s]} {b}" for s, b in enumerate(buys)))
        lines += self.known_lines(view, names)
        return lines + super().table_lines(view, names)

    def move_cards(self, move: Mapping[str, Any], view: Mapping[str, Any]) -> list[str]:
        kind = move.get("type")
        discard = view.get("discard") or []
        if discard and (kind in ("take_discard", "buy") or (kind == "pass" and view.get("phase") == "buy")):
            return [discard[-1]]
        return super().move_cards(move, view)

    def describe_move(self, move: Mapping[str, Any], view: Mapping[str, Any]) -> str:
        kind = move.get("type")
        discard = view.get("discard") or []
        top = self.value(discard[-1], view) if discard else "the discard"
        if kind == "take_discard":
            return f"take {top} from the discard pile"
        if kind == "draw":
            return "draw from the stock (the others may buy the discard)"
        if kind == "buy":
            return f"buy {top} (and take a penalty card from the stock)"
        if kind == "pass" and view.get("phase") == "buy":
            return f"pass (don't buy {top})"
        if kind == "go_down":
            return self.style.good("go down") + ": " + " ".join(self.meld(m, view) for m in move.get("melds", []))
        if kind == "lay_off":
            melds = view.get("melds") or []
            index = move.get("meld")
            target = melds[index] if isinstance(index, int) and 0 <= index < len(melds) else None
            where = f" on {self.meld(target, view)}" if target else f" on meld {index}"
            how = ""
            if move.get("end"):
                how = f" ({move['end']} end)"
            elif move.get("wild_to"):
                how = f" (the wild moves to the {move['wild_to']} end)"
            return f"lay off {self.value(move.get('card'), view)}{where}{how}"
        return super().describe_move(move, view)


RENDERERS: dict[str, type[Renderer]] = {
    "three-thirteen": RummyRoundsRenderer,
    "threezies": RummyRoundsRenderer,
    "least-score": LeastScoreRenderer,
    "less-than-three": LessThanThreeRenderer,
    "contract-rummy": ContractRummyRenderer,
}


def renderer_for(game: Game, style: Style) -> Renderer:
    return RENDERERS.get(game.info.id, Renderer)(game, style)
