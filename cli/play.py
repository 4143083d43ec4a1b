"""``cardtable play GAME``: a whole match against the AI in the terminal.

The match runs locally (engine + ai, no server): you hold seat 0, the AI the
others. Before each of your decisions the screen shows the game, the scores,
the table and your hand (sorted, grouped by suit, wild cards marked), then the
numbered legal moves. Type a number, or the card(s) of a move as shown or as
codes (``2♣``, ``2c``, ``10h``, ``5s 5h``), ``h`` for the AI's hint with its
explanation, ``q`` to quit. Every round ends with its itemized scores and the
game with the table of all rounds.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from cli.textview import Renderer, Style, cards_from_input, is_round_end, renderer_for, seat_names
from engine.errors import EngineError
from engine.game import Game, Move, State
from engine.registry import get_game

HUMAN = 0
DESCRIPTION = """\
Play a whole match against the AI in the terminal (no server needed): you hold seat 0, the AI the others.

Before each of your decisions the screen shows the scores, the table and your hand (sorted, grouped by
suit, wild cards marked *), then the numbered legal moves. Type a number, or the card(s) of a move as
shown or as codes (2♣, 2c, 10h, 5s 5h); h asks the AI for a hint and why; q quits."""
EPILOG = """\
examples:
  cardtable play three-thirteen --players 3 --level 2 --seed 7
  cardtable play --join http://127.0.0.1:8000/play/join#K5MBQECWCE --name Bea
  cardtable play --join K5MBQ-ECWCE --server http://127.0.0.1:8000
  cardtable play threezies -o max_turns_per_round=20
  cardtable play least-score -o threshold=50

The games and their player counts: cardtable games. Their rules and options (with defaults and ranges):
the rules pages of the service (make serve), http://127.0.0.1:8000/rules/GAME."""
HELP = ("Type the number of a move, or its card(s) as shown or as codes (2♣, 2c, 10h, 5s 5h), "
        "h for a hint, q to quit.")


class Quit(Exception):
    """The player typed q (or the input ended)."""


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``["max_turns_per_round=10", "aces=high_or_low"]`` → options (values read as JSON where they parse)."""
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"option {pair!r} must look like name=value, e.g. max_turns_per_round=20")
        try:
            options[name.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            options[name.strip()] = raw
    return options


class Prompting:
    """Asking a person at a terminal for a move: the screen, the numbered legal moves, and the answer read as
    a number or as the card(s) of a move (shared by the local match and a seat joined on a server)."""

    out: TextIO
    stdin: TextIO
    style: Style
    render: Renderer
    names: list[str]

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out)
        self.out.flush()

    def hint(self, view: Mapping[str, Any], moves: Sequence[Move]) -> None:
        raise NotImplementedError

    def ask(self, view: Mapping[str, Any], moves: Sequence[Move]) -> Move:
        self.show_choices(view, moves)
        numbers = "1" if len(moves) == 1 else f"1-{len(moves)}"
        while True:
            answer = self.read(f"Your move [{numbers}, h hint, q quit]> ")
            if answer in ("q", "quit", "exit"):
                raise Quit
            if answer in ("h", "hint", "?h"):
                self.hint(view, moves)
                continue
            if answer in ("?", "help"):
                self.say(HELP)
                continue
            if answer in ("", "l", "list"):
                self.show_choices(view, moves)
                continue
            chosen = self.pick(answer, moves, view)
            if chosen is not None:
                return chosen

    def show_choices(self, view: Mapping[str, Any], moves: Sequence[Move]) -> None:
        self.say("", *self.render.screen(view, self.names), "Your legal moves:")
        for i, move in enumerate(moves, start=1):
            self.say(f"  {i:>2}) {self.render.describe_move(move, view)}")

    def pick(self, answer: str, moves: Sequence[Move], view: Mapping[str, Any]) -> Move | None:
        """The move the answer names, or None after saying what is wrong with it."""
        if answer.isdigit():
            n = int(answer)
            if 1 <= n <= len(moves):
                return moves[n - 1]
            self.say(self.style.bad(f"There is no move {n}: choose a number from 1 to {len(moves)}."))
            return None
        typed = cards_from_input(answer)
        if typed is None:
            self.say(self.style.bad(f"{answer!r} is not a move. {HELP}"))
            return None
        wanted = Counter(typed)
        shown = [Counter(self.render.move_cards(m, view)) for m in moves]
        matching = [m for m, cards in zip(moves, shown, strict=True) if not wanted - cards]
        exact = [m for m, cards in zip(moves, shown, strict=True) if cards == wanted]
        if len(exact) == 1 and len(matching) > 1:
            matching = exact  # "5s" plays the single 5♠ rather than a pair or a run with it
        if len(matching) == 1:
            return matching[0]
        label = " ".join(self.render.value(c, view) for c in typed)
        if matching:
            numbers = ", ".join(str(moves.index(m) + 1) for m in matching)
            self.say(self.style.bad(f"{label} is in several moves ({numbers}): type the number."))
        else:
            self.say(self.style.bad(f"No move uses {label}: choose a number from the list."))
        return None

    def read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        if not line:  # end of input
            self.say("")
            raise Quit
        return line.strip().lower()


class TerminalMatch(Prompting):
    """One match between a person at a terminal (seat 0) and AI seats."""

    def __init__(
        self,
        game: Game,
        players: int,
        level: int,
        seed: int,
        options: Mapping[str, Any] | None = None,
        time_ms: int | None = None,
        hint_level: int = 3,
        stdin: TextIO = sys.stdin,
        stdout: TextIO = sys.stdout,
    ) -> None:
        self.game = game
        self.level = level
        self.seed = seed
        self.time_ms = time_ms
        self.hint_level = hint_level
        self.stdin = stdin
        self.out = stdout
        self.style = Style.for_stream(stdout)
        self.render: Renderer = renderer_for(game, self.style)
        self.state: State = game.new_match(players, options, seed=seed)
        self.names = seat_names(players, HUMAN)

    # -- output -------------------------------------------------------------------------

    def view(self, seat: int | None = HUMAN) -> dict[str, Any]:
        return self.game.observation(self.state, seat)

    # -- the AI -------------------------------------------------------------------------

    def decide(self, seat: int, level: int | None = None) -> Any:
        from ai import choose_move

        view = self.view(seat)
        return choose_move(self.game, view, level=level or self.level, time_ms=self.time_ms,
                           seed=self.seed * 1_000_003 + self.state.ply)

    # -- the loop -------------------------------------------------------------------------

    def run(self) -> int:
        self.say(self.style.title(f"{self.game.info.name} — you against {len(self.names) - 1} AI "
                                  f"(level {self.level}), seed {self.seed}"),
                 self.style.dim(self.game.info.summary), self.style.dim(HELP))
        try:
            while not self.state.is_over:
                seat = self.state.to_move
                assert seat is not None
                move = self.ask_human() if seat == HUMAN else self.decide(seat).move
                self.play(move)
        except (Quit, KeyboardInterrupt):
            self.say("", "You quit. Scores so far: "
                     + " · ".join(f"{n} {t}" for n, t in zip(self.names, self.state.totals, strict=True)))
            return 0
        self.say("", *self.render.game_summary(self.game.scores(self.state), self.names))
        return 0

    def play(self, move: Move) -> None:
        before = self.view(HUMAN)
        self.state, events = self.game.apply(self.state, move)
        after = self.view(HUMAN)
        drawn = self.drawn_cards(before, after, events)
        for event in events:
            if is_round_end(event):
                self.say("", *self.render.round_summary(event, self.names, after), "")
                continue
            if drawn and event.get("seat") == HUMAN and event.get("type") in ("draw", "pick") \
                    and "card" not in event and "cards" not in event:
                event = {**event, "card": drawn.pop(0)}  # the card only you saw: "You drew 7♥ from the stock"
            line = self.render.describe_event(event, self.names, before)
            if line:
                self.say(line)
        for card in drawn:  # e.g. contract rummy: your stock card arrives once the others chose not to buy
            self.say(f"You drew {self.render.value(card, after)} from the stock")

    @staticmethod
    def drawn_cards(before: Mapping[str, Any], after: Mapping[str, Any], events: Sequence[Mapping[str, Any]],
                    ) -> list[str]:
        """The cards that came into your hand unseen by the others (from the stock or the deck): the cards
        the hand gained that no event names. Nothing when the round changed (a new deal)."""
        if before.get("round") != after.get("round") or any(is_round_end(e) for e in events):
            return []
        gained = Counter(after.get("hand") or []) - Counter(before.get("hand") or [])
        for event in events:
            if event.get("seat") == HUMAN:
                named = [event["card"]] if isinstance(event.get("card"), str) else []
                gained -= Counter(named + [c for c in event.get("cards") or [] if isinstance(c, str)])
        return sorted(gained.elements())

    def ask_human(self) -> Move:
        return self.ask(self.view(HUMAN), self.game.legal_moves(self.state))

    def hint(self, view: Mapping[str, Any], moves: Sequence[Move]) -> None:
        from engine.game import move_key

        self.say(self.style.dim("The AI is thinking about your hand…"))
        decision = self.decide(HUMAN, self.hint_level)
        index = {move_key(m): i for i, m in enumerate(moves, start=1)}
        number = index.get(move_key(decision.move))
        label = self.render.describe_move(decision.move, view)
        self.say(self.style.good(f"Hint: {number}) {label}" if number else f"Hint: {label}"))
        if decision.explanation:
            self.say(f"  {self.render.text(decision.explanation, view)}")
        extras = []
        alternatives = list(decision.alternatives)
        if alternatives:
            extras.append(f"expected round margin {alternatives[0]['value']:+.1f}")
        if len(alternatives) > 1:
            extras.append(f"{decision.value:+.1f} over the next best")
        if decision.win_chance is not None:
            extras.append(f"win chance {decision.win_chance:.0%}")
        if decision.samples:
            extras.append(f"{decision.samples} sampled deal{'s' if decision.samples != 1 else ''}")
        extras.append(f"{decision.elapsed_ms:.0f} ms")
        self.say(self.style.dim("  " + " · ".join(extras)))
        for alt in alternatives[1:4]:
            alt_number = index.get(move_key(alt["move"]))
            self.say(self.style.dim(f"  also {alt_number}) {self.render.describe_move(alt['move'], view)}"
                                    f" (expected margin {alt['value']:+.1f})"))


# -- the command ---------------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``play`` on the ``cardtable`` command's subparsers."""
    parser = subparsers.add_parser("play", help="play a match against the AI in the terminal",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser)
    parser.set_defaults(func=run)
    return parser


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", nargs="?", help="game id, e.g. three-thirteen (cardtable games lists them)")
    parser.add_argument("--players", type=int, default=None, help="number of players, you included "
                        "(default: the game's minimum)")
    parser.add_argument("--level", type=int, default=3, help="AI strength 1-5 (default 3)")
    parser.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    parser.add_argument("--hint-level", type=int, default=3, help="AI strength of the hints (default 3)")
    parser.add_argument("--time-ms", type=int, default=None,
                        help="AI time budget per move, in ms (default: the level's own)")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a match option, e.g. -o max_turns_per_round=20 (repeatable)")
    parser.add_argument("--join", metavar="URL_OR_CODE", default=None,
                        help="take the seat a friend invited you to on a server: the invitation link, or its code "
                             "with --server (no GAME then)")
    parser.add_argument("--server", metavar="URL", default=None,
                        help="the server of --join CODE, e.g. http://127.0.0.1:8000")
    parser.add_argument("--name", default=None, help="your name at the table (with --join)")


def run(args: argparse.Namespace) -> int:
    import secrets

    if args.join is not None:
        if args.game is not None:
            print("cardtable play: --join takes the game from the invitation: give no GAME", file=sys.stderr)
            return 2
        from cli import join

        return join.run(args.server, args.join, args.name)
    if args.game is None:
        print("cardtable play: which game? e.g. cardtable play three-thirteen (or --join an invitation)",
              file=sys.stderr)
        return 2
    try:
        game = get_game(args.game)
        options = parse_options(args.option)
        players = args.players if args.players is not None else game.info.min_players
        seed = args.seed if args.seed is not None else secrets.randbelow(1_000_000)
        match = TerminalMatch(game, players, args.level, seed, options, time_ms=args.time_ms,
                              hint_level=args.hint_level)
    except (EngineError, ValueError) as exc:
        print(f"cardtable play: {exc}", file=sys.stderr)
        return 2
    return match.run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardtable play", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
