"""``cardtable play GAME``: a whole match against the AI in the terminal.

The match runs locally (engine + ai, no server): you hold seat 0, the AI the
others. Before each of your decisions the screen shows the game, the scores,
the table and your hand (sorted, grouped by suit, wild cards marked), then the
numbered legal moves. Type a number (or a card, when only one move uses it),
``h`` for the AI's hint with its explanation, ``q`` to quit. Every round ends
with its itemized scores and the game with the table of all rounds.

    cardtable play three-thirteen --players 3 --level 2 --seed 7
    cardtable play threezies -o max_turns_per_round=20
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from cli.textview import Renderer, Style, is_round_end, renderer_for, seat_names
from engine.errors import EngineError
from engine.game import Game, Move, State
from engine.registry import get_game

HUMAN = 0
HELP = "Type the number of a move, a card when only one move uses it, h for a hint, q to quit."


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


class TerminalMatch:
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

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out)
        self.out.flush()

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
        for event in events:
            if is_round_end(event):
                self.say("", *self.render.round_summary(event, self.names, after), "")
                continue
            line = self.render.describe_event(event, self.names, before)
            if line:
                self.say(line)

    def ask_human(self) -> Move:
        view = self.view(HUMAN)
        moves = self.game.legal_moves(self.state)
        self.show_choices(view, moves)
        while True:
            answer = self.read(f"Your move [1-{len(moves)}, h hint, q quit]> ")
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
        token = answer.upper().replace("10", "T")
        matching = [m for m in moves if m.get("card") == token or token in (m.get("cards") or [])]
        if len(matching) == 1:
            return matching[0]
        if len(matching) > 1:
            numbers = ", ".join(str(moves.index(m) + 1) for m in matching)
            self.say(self.style.bad(f"{answer!r} is in several moves ({numbers}): type the number."))
            return None
        self.say(self.style.bad(f"{answer!r} is not a move. {HELP}"))
        return None

    def hint(self, view: Mapping[str, Any], moves: Sequence[Move]) -> None:
        from engine.game import move_key

        self.say(self.style.dim("The AI is thinking about your hand…"))
        decision = self.decide(HUMAN, self.hint_level)
        index = {move_key(m): i for i, m in enumerate(moves, start=1)}
        number = index.get(move_key(decision.move))
        label = self.render.describe_move(decision.move, view)
        self.say(self.style.good(f"Hint: {number}) {label}" if number else f"Hint: {label}"))
        if decision.explanation:
            self.say(f"  {decision.explanation}")
        extras = []
        alternatives = list(decision.alternatives)
        if alternatives:
            extras.append(f"expected round margin {alternatives[0]['value']:+.1f}")
        if len(alternatives) > 1:
            extras.append(f"{decision.value:+.1f} over the next best")
        if decision.win_chance is not None:
            extras.append(f"win chance {decision.win_chance:.0%}")
        if decision.samples:
            extras.append(f"{decision.samples} sampled deals")
        extras.append(f"{decision.elapsed_ms:.0f} ms")
        self.say(self.style.dim("  " + " · ".join(extras)))
        for alt in alternatives[1:4]:
            alt_number = index.get(move_key(alt["move"]))
            self.say(self.style.dim(f"  also {alt_number}) {self.render.describe_move(alt['move'], view)}"
                                    f" (expected margin {alt['value']:+.1f})"))

    def read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        if not line:  # end of input
            self.say("")
            raise Quit
        return line.strip().lower()


# -- the command ---------------------------------------------------------------------------


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``play`` on the ``cardtable`` command's subparsers."""
    parser = subparsers.add_parser("play", help="play a match against the AI in the terminal",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser)
    parser.set_defaults(func=run)
    return parser


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="game id, e.g. three-thirteen (`cardtable games` lists them)")
    parser.add_argument("--players", type=int, default=None, help="number of players, you included "
                        "(default: the game's minimum)")
    parser.add_argument("--level", type=int, default=3, help="AI strength 1-5 (default 3)")
    parser.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    parser.add_argument("--hint-level", type=int, default=3, help="AI strength of the hints (default 3)")
    parser.add_argument("--time-ms", type=int, default=None, help="AI time budget per move")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a match option, e.g. -o max_turns_per_round=20 (repeatable)")


def run(args: argparse.Namespace) -> int:
    import secrets

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
    parser = argparse.ArgumentParser(prog="cardtable play", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
