"""Less Than Three (RULES.md §1): a 2-player climbing/shedding game over 6 rounds.

Each round deals 15 cards to each player from a 40-card deck (A–10) and sets 10
aside unseen. The dealer leads any meld (single, set of 2–4, run of 2+); the
other player answers it (same kind, same size, strictly higher), sweeps it
(once per round in total, with one of the 2 sweep cards each player has for the
whole game) or passes; a pass discards the table and the player who did not
pass leads. Playing your last card sheds out (5 + the opponent's cards); after a
play that leaves you 1 or 2 cards you may knock, and the player holding fewer
cards scores the difference. The lower total deals the next round; after round
6 the higher total wins. The meld math is ``engine/climbing.py``.

Moves: ``{"type": "play", "cards": ["4C", "5C", "6C"], "knock": false}`` (a lead
or an answer; ``knock`` may be left out and means false), ``{"type": "pass"}``
and ``{"type": "sweep"}``. :meth:`LessThanThree.legal_moves` lists every
distinct meld in hand when leading (one deck, so no two identical melds) and
every answer when responding, each once with ``"knock": false`` and, when the
play would leave 1 or 2 cards, once more with ``"knock": true``.

Readings of the rules, written down where the text leaves a choice:

* **Table and discards.** ``table`` is the meld to beat; every other card
  played this round (beaten melds, passed and swept tables) is in
  ``discarded``, in play order. Both are public. A new deal starts both empty.
* **The 10 set-aside cards** stay unseen for the whole game, also at the end of
  a round (R4 "unused and unseen"): they are a hidden zone of every view. The
  ``round_end`` event does show both remaining hands, as counting them for the
  score would in play; a new deal follows at once, so this tells nothing
  about the game to come.
* **Sweep** (R9) is a response only, so it is never offered to a leader; a
  sweeper then leads and may not pass (R6). Both players' remaining sweep
  cards and "sweep used this round" are public; the flag resets each round.
* **Knock** (R10) is a flag on the play that leaves 1 or 2 cards. A play of
  the last card sheds out (R11) and can't also knock: ``knock: true`` is
  refused there, as on a play that leaves 3 or more cards.
* **Loop guard** (C7): every move (play, pass, sweep) is a turn. A round has at
  most about 60 turns anyway (every play sheds a card, every pass follows a
  play, one sweep per round), so only a low ``max_turns_per_round`` matters;
  a round that reaches it is scored "as it stands" as a knock by nobody: the
  player holding fewer cards scores the difference (R12), equal hands nothing.
* **Next dealer** (R13) is decided from the totals after the round just
  scored; equal totals: the player who did not deal that round.
* **first_dealer** (option): ``"random"`` (default, drawn from the seed) or a
  seat 0 / 1.
* Explicit positions (C8) give ``hands`` (1–15 cards each) and optionally
  ``table`` (a meld to answer: the seat to move then responds), ``discarded``,
  ``aside`` (10 cards), ``dealer``, ``round``, ``totals``, ``sweeps``,
  ``sweep_used`` and ``to_move`` (default: the dealer when leading, the other
  seat when a table is given). Cards given nowhere fill the aside (chosen from
  the seed) and then the discards, so a round always has 30 cards in play.

Speed: ``apply`` copies on write (``Game.copy_on_write``: the new state shares
every list it does not change with its input; nothing here changes a state's
list in place), and the
meld tables of ``engine/climbing.py`` are built once. ``bench/playouts.py``
reports ``less_than_three_actions_per_s`` and ``less_than_three_lead_moves_per_s``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import climbing
from engine.cards import CARD_NAMES, Card, parse_cards, standard_deck
from engine.climbing import ClimbMeld
from engine.errors import IllegalMoveError, InvalidMoveError, InvalidOptionError, InvalidSetupError
from engine.game import (
    MAX_TURNS_OPTION,
    Event,
    Game,
    GameInfo,
    Move,
    Observation,
    OptionSpec,
    State,
    card_field,
    chance_rng,
    hands_from_view,
    hidden_zone,
    list_field,
    require_field,
    view_state_fields,
)
from engine.registry import register
from engine.validation import BOOL, CARDS, MoveTable

#: The fields of each move type (``Game.move_fields``).
MOVE_FIELDS: MoveTable = {"play": {"cards": CARDS, "knock": BOOL}, "pass": {}, "sweep": {}}

LEAD, RESPOND, OVER = "lead", "respond", "over"
ROUNDS = 6
HAND_SIZE = 15
ASIDE_SIZE = 10
SWEEPS_PER_GAME = 2
SHED_BONUS = 5
LONGEST_MELD = 10  # the run A to 10
DECK: tuple[Card, ...] = tuple(standard_deck(1, ranks=range(1, 11)))
PLAY_EXAMPLE = '{"type": "play", "cards": ["4C", "5C", "6C"], "knock": false}'


class SeatOrRandomOption(OptionSpec):
    """An enum option whose choices mix ``"random"`` and seat numbers (``true`` is not seat 1)."""

    def check(self, value: Any) -> Any:
        if isinstance(value, bool):
            raise InvalidOptionError(self.name, f"must be one of {', '.join(map(str, self.choices or ()))}, "
                                                f"not {value!r}")
        return super().check(value)


@dataclass(eq=True)
class LessThanThreeState(State):
    """A Less Than Three state (plus the fields every state has)."""

    hands: list[list[Card]] = card_field(2)  # sorted
    aside: list[Card] = card_field(1)  # the 10 cards set aside, unseen (R4)
    table: list[Card] = card_field(1)  # the meld to beat; empty when leading
    discarded: list[Card] = card_field(1)  # every other card played this round, in play order
    sweeps: list[int] = list_field(1)  # sweep cards left per seat, for the whole game (R3)
    sweep_used: bool = False  # a sweep was used this round, by either player (R9)


class LessThanThree(Game):
    info = GameInfo(
        id="less-than-three",
        name="Less Than Three",
        min_players=2,
        max_players=2,
        rules_section="RULES.md §1",
        summary=(
            "A 2-player climbing game over 6 rounds with a 40-card deck (A-10): 15 cards each, 10 unseen. "
            "Lead a single, a set or a run; answer with the same kind and size, higher; sweep once a round; "
            "or pass. Shed out for 5 + the opponent's cards, or knock at 1-2 cards and the smaller hand scores "
            "the difference. Lower total deals; higher total after 6 rounds wins."
        ),
        options=(
            SeatOrRandomOption("first_dealer", "enum", "random",
                               "Who deals (and leads) round 1: random (from the seed), seat 0 or seat 1.",
                               choices=("random", 0, 1)),
            MAX_TURNS_OPTION,
        ),
        lower_score_wins=False,
    )
    state_class = LessThanThreeState
    move_fields = MOVE_FIELDS
    copy_on_write = True  # see _play

    # -- the deck and invariants ------------------------------------------------

    def deck(self, num_players: int, options: Mapping[str, Any]) -> list[Card]:
        return list(DECK)

    def cards_in_play(self, state: State) -> list[Card]:
        s = _s(state)
        return [*s.hands[0], *s.hands[1], *s.aside, *s.table, *s.discarded]

    def score_bounds(self, state: State) -> tuple[int, int]:
        # the best a round can give is a shed out against a full hand: 5 + 15
        return 0, ROUNDS * (SHED_BONUS + HAND_SIZE)

    def _invariant_problem(self, state: State) -> str | None:
        s = _s(state)
        if len(s.hands) != 2:
            return "Less Than Three has 2 hands"
        if not 1 <= s.round <= ROUNDS or s.dealer not in (0, 1):
            return f"round {s.round} or dealer {s.dealer} is out of range (R1)"
        if len(s.sweeps) != 2 or any(isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= SWEEPS_PER_GAME
                                     for n in s.sweeps):
            return f"sweeps {s.sweeps} must be two counts from 0 to {SWEEPS_PER_GAME} (R3)"
        if not isinstance(s.sweep_used, bool):
            return "sweep_used must be true or false"
        used = 2 * SWEEPS_PER_GAME - sum(s.sweeps)
        if s.sweep_used and used == 0:
            return "a sweep is marked used this round but both players hold all their sweep cards (R9)"
        if used > s.round - 1 + s.sweep_used:
            return f"{used} sweeps used by round {s.round}: at most one a round (R9)"
        if len(s.aside) != ASIDE_SIZE:
            return f"{len(s.aside)} cards are set aside; each round sets aside {ASIDE_SIZE} (R4)"
        in_round = len(s.hands[0]) + len(s.hands[1]) + len(s.table) + len(s.discarded)
        if in_round != 2 * HAND_SIZE:
            return f"hands, table and discards hold {in_round} cards; a round deals {2 * HAND_SIZE} (R4)"
        if s.is_over:
            return None if s.phase == OVER and not s.table else "a finished game has phase 'over' and no table"
        if any(not 1 <= len(h) <= HAND_SIZE for h in s.hands):
            return f"hand sizes {[len(h) for h in s.hands]} must be 1 to {HAND_SIZE} during a round (R4, R11)"
        if s.phase == LEAD:
            return "the table must be empty when leading (R8, R9)" if s.table else None
        if s.phase == RESPOND:
            return None if climbing.classify(s.table) else f"the table {_names(s.table)} is no meld (R5)"
        return f"phase {s.phase!r} is not lead or respond"

    # -- dealing ------------------------------------------------------------------

    def _start_game(self, state: State) -> None:
        s = _s(state)
        s.sweeps = [SWEEPS_PER_GAME, SWEEPS_PER_GAME]
        first = s.options["first_dealer"]
        s.dealer = chance_rng(s).randrange(2) if first == "random" else first
        self._deal(s)

    def _deal(self, s: LessThanThreeState) -> None:
        cards = list(DECK)
        chance_rng(s).shuffle(cards)
        s.hands = [sorted(cards[:HAND_SIZE]), sorted(cards[HAND_SIZE : 2 * HAND_SIZE])]
        s.aside = sorted(cards[2 * HAND_SIZE :])
        s.table = []
        s.discarded = []
        s.sweep_used = False
        s.turns_in_round = 0
        s.phase = LEAD
        s.to_move = s.dealer  # R6, R13: the dealer leads

    def _setup(self, state: State, setup: Mapping[str, Any]) -> None:
        s = _s(state)
        allowed = {"hands", "table", "discarded", "aside", "dealer", "round", "totals", "sweeps", "sweep_used",
                   "to_move"}
        extra = set(setup) - allowed
        if extra:
            raise InvalidSetupError(f"unknown setup fields {sorted(extra)}; allowed: {sorted(allowed)}")
        if "hands" not in setup:
            raise InvalidSetupError("a setup needs both hands, e.g. {\"hands\": [[\"5S\", \"5H\"], [\"6D\"]]}")
        s.round = _setup_int(setup, "round", 1, 1, ROUNDS)
        s.dealer = _setup_int(setup, "dealer", 0, 0, 1)
        s.totals = _setup_ints(setup, "totals", [0, 0], 0, ROUNDS * (SHED_BONUS + HAND_SIZE))
        s.sweeps = _setup_ints(setup, "sweeps", [SWEEPS_PER_GAME] * 2, 0, SWEEPS_PER_GAME)
        sweep_used = setup.get("sweep_used", False)
        if not isinstance(sweep_used, bool):
            raise InvalidSetupError("setup 'sweep_used' must be true or false")
        s.sweep_used = sweep_used
        try:
            hands = [parse_cards(h) for h in setup["hands"]]
            table = parse_cards(setup.get("table", []))
            discarded = parse_cards(setup["discarded"]) if "discarded" in setup else None
            aside = parse_cards(setup["aside"]) if "aside" in setup else None
        except (TypeError, AttributeError) as exc:
            raise InvalidSetupError("hands, table, discarded and aside are lists of cards like \"7H\"") from exc
        if len(hands) != 2:
            raise InvalidSetupError(f"Less Than Three has 2 hands, the setup gives {len(hands)}")
        for seat, hand in enumerate(hands):
            if not 1 <= len(hand) <= HAND_SIZE:
                raise InvalidSetupError(f"hand {seat} has {len(hand)} cards; a hand in play holds 1 to {HAND_SIZE}")
        if table and climbing.classify(table) is None:
            raise InvalidSetupError(f"the table {_names(table)} is no meld (R5)")
        rest = Counter(DECK)
        for card in [c for h in hands for c in h] + table + (discarded or []) + (aside or []):
            if rest[card] <= 0:
                raise InvalidSetupError(f"{CARD_NAMES[card]} is not in the 40-card deck or appears twice (R2)")
            rest[card] -= 1
        left = sorted(rest.elements())
        if aside is None:
            chance_rng(s).shuffle(left)
            aside, left = left[:ASIDE_SIZE], left[ASIDE_SIZE:]
        if discarded is None:
            discarded, left = left, []
        if left:
            raise InvalidSetupError("the setup gives the aside and the discards but leaves out "
                                    + " ".join(CARD_NAMES[c] for c in sorted(left)))
        s.hands = [sorted(h) for h in hands]
        s.table = sorted(table)
        s.discarded = discarded
        s.aside = sorted(aside)
        s.turns_in_round = 0
        s.phase = RESPOND if table else LEAD
        s.to_move = _setup_int(setup, "to_move", 1 - s.dealer if table else s.dealer, 0, 1)
        problem = self._invariant_problem(s)
        if problem:
            raise InvalidSetupError(problem)

    # -- moves ----------------------------------------------------------------------

    def _legal_moves(self, state: State) -> list[Move]:
        s = _s(state)
        seat: int = s.to_move  # type: ignore[assignment]
        hand = s.hands[seat]
        n = len(hand)
        if s.phase == LEAD:
            plays = climbing.melds_in(hand)
        else:
            plays = climbing.answers_in(hand, climbing.MELD_BY_MASK[_mask(s.table)])
        # fresh dicts and lists every time: callers own the moves they are given
        moves: list[Move] = [{"type": "play", "cards": list(m.names), "knock": False} for m in plays]
        if n <= LONGEST_MELD + 2:  # R10: a knock variant of each play that leaves 1 or 2 cards
            moves += [{"type": "play", "cards": list(m.names), "knock": True}
                      for m in plays if 0 < n - len(m.cards) < 3]
        if s.phase == RESPOND:
            if s.sweeps[seat] and not s.sweep_used:
                moves.append({"type": "sweep"})
            moves.append({"type": "pass"})
        return moves

    def _read_move(self, state: State, move: Mapping[str, Any]) -> Any:
        kind = move["type"]
        if kind == "play":
            return ("play", climbing.MELD_BY_NAMES[tuple(move["cards"])], move.get("knock", False))
        return (kind, None, False)

    def _check_move(self, state: State, move: Mapping[str, Any]) -> Any:
        s = _s(state)
        kind = move["type"]
        seat: int = s.to_move  # type: ignore[assignment]
        if kind == "play":
            return ("play", *self._check_play(s, seat, move))
        if kind == "pass":
            if s.phase != RESPOND:
                raise IllegalMoveError("the leader may not pass: play any meld (R6)")
            return ("pass", None, False)
        if kind == "sweep":
            if s.phase != RESPOND:
                raise IllegalMoveError("a sweep is a response: there is no meld on the table to sweep (R9)")
            if s.sweep_used:
                raise IllegalMoveError("a sweep was already used this round; only one per round, by either "
                                       "player (R9)")
            if not s.sweeps[seat]:
                raise IllegalMoveError(f"seat {seat} has no sweep card left; each player has 2 for the whole "
                                       "game (R3, R9)")
            return ("sweep", None, False)
        raise InvalidMoveError(f"unknown move type {kind!r}; {self.info.name} moves are play, pass, sweep")

    def _check_play(self, s: LessThanThreeState, seat: int, move: Mapping[str, Any]) -> tuple[ClimbMeld, bool]:
        tokens = require_field(move, "cards", list, PLAY_EXAMPLE)
        if not tokens:
            raise InvalidMoveError(f"a play needs at least one card, e.g. {PLAY_EXAMPLE}")
        cards = parse_cards(tokens)
        knock = move.get("knock", False)
        if not isinstance(knock, bool):
            raise InvalidMoveError(f"the 'knock' field of a play is true or false, e.g. {PLAY_EXAMPLE}")
        if len(set(cards)) != len(cards):
            raise IllegalMoveError(f"{_names(cards)} names a card twice")
        hand = s.hands[seat]
        missing = [c for c in cards if c not in hand]
        if missing:
            raise IllegalMoveError(f"{_names(missing)} {'is' if len(missing) == 1 else 'are'} not in your hand")
        meld = climbing.classify(cards)
        if meld is None:
            raise IllegalMoveError(
                f"{_names(cards)} is no meld: play a single, a set of 2-4 cards of one rank, or a run of 2 or more "
                "cards of one suit in sequence, aces low (R5)"
            )
        if s.phase == RESPOND:
            table = climbing.MELD_BY_MASK[_mask(s.table)]
            if not meld.beats(table):
                raise IllegalMoveError(f"{meld.describe()} does not answer the {table.describe()} on the table: "
                                       f"{_why_not(meld, table)} (R7)")
        left = len(hand) - len(cards)
        if knock and left == 0:
            raise IllegalMoveError("playing your last card sheds out and ends the round (R11): no knock")
        if knock and left > 2:
            raise IllegalMoveError(f"you may knock only after a play that leaves you 1 or 2 cards, this one "
                                   f"leaves {left} (R10)")
        return meld, knock

    # _play and what it calls replace every list they change, never change one in place (copy_on_write)
    def _play(self, state: State, action: Any) -> list[Event]:
        s = _s(state)
        kind, meld, knock = action
        seat: int = s.to_move  # type: ignore[assignment]
        s.turns_in_round += 1
        if kind == "play":
            mask = meld.mask
            hand = [c for c in s.hands[seat] if not mask >> c & 1]
            s.hands = [hand, s.hands[1]] if seat == 0 else [s.hands[0], hand]
            if s.table:
                s.discarded = s.discarded + s.table  # the beaten meld
            s.table = list(meld.cards)
            events: list[Event] = [{"type": "play", "seat": seat, "cards": list(meld.names), "meld": meld.kind,
                                    "knock": knock}]
            if not hand:
                return events + self._end_round(s, "shed_out", seat)  # R11
            if knock:
                return events + self._end_round(s, "knock", seat)  # R10
            s.phase = RESPOND
            s.to_move = 1 - seat
        else:
            s.discarded = s.discarded + s.table
            s.table = []
            s.phase = LEAD
            if kind == "pass":
                events = [{"type": "pass", "seat": seat}]
                s.to_move = 1 - seat  # R8: the player who did not pass leads
            else:
                s.sweeps = [n - (i == seat) for i, n in enumerate(s.sweeps)]
                s.sweep_used = True
                events = [{"type": "sweep", "seat": seat, "sweeps_left": s.sweeps[seat]}]  # R9: the sweeper leads
        if s.turns_in_round >= s.options["max_turns_per_round"]:
            return events + self._end_round(s, "turn_limit", None)  # C7
        return events

    def _end_round(self, s: LessThanThreeState, reason: str, seat: int | None) -> list[Event]:
        sizes = [len(h) for h in s.hands]
        scores = round_points(sizes, shed_out_by=seat if reason == "shed_out" else None)
        s.totals = [t + p for t, p in zip(s.totals, scores, strict=True)]
        s.round_scores = [*s.round_scores, scores]
        s.discarded = s.discarded + s.table
        s.table = []
        events: list[Event] = [{
            "type": "round_end",
            "round": s.round,
            "reason": reason,
            "seat": seat,
            "hand_sizes": sizes,
            "hands": [[CARD_NAMES[c] for c in h] for h in s.hands],
            "scores": scores,
            "totals": list(s.totals),
        }]
        if s.round >= ROUNDS:
            best = max(s.totals)  # R1: the higher total wins; equal totals share (C6)
            s.winners = [i for i, t in enumerate(s.totals) if t == best]
            s.to_move = None
            s.phase = OVER
            events.append({"type": "game_end", "totals": list(s.totals), "winners": list(s.winners)})
            return events
        s.dealer = next_dealer(s.totals, s.dealer)
        s.round += 1
        self._deal(s)
        events.append({"type": "round_start", "round": s.round, "dealer": s.dealer})
        return events

    # -- views ------------------------------------------------------------------------

    def _observe(self, state: State, seat: int | None, obs: Observation) -> None:
        s = _s(state)
        obs["hand"] = [CARD_NAMES[c] for c in s.hands[seat]] if seat is not None else []
        obs["hand_sizes"] = [len(h) for h in s.hands]
        obs["table"] = [CARD_NAMES[c] for c in s.table]
        meld = climbing.MELD_BY_MASK[_mask(s.table)] if s.table else None
        obs["table_meld"] = None if meld is None else {"kind": meld.kind, "size": meld.size, "rank": meld.rank}
        obs["discarded"] = [CARD_NAMES[c] for c in s.discarded]
        obs["sweeps"] = list(s.sweeps)
        obs["sweep_used"] = s.sweep_used
        obs["aside_size"] = len(s.aside)
        zones = [hidden_zone("hand", len(s.hands[i]), i) for i in range(2) if i != seat]
        zones.append(hidden_zone("aside", len(s.aside)))
        obs["hidden"] = zones

    def visible_cards(self, obs: Observation) -> list[Card]:
        return parse_cards(obs["hand"]) + parse_cards(obs["table"]) + parse_cards(obs["discarded"])

    def _state_from_view(self, obs: Observation, zone_cards: list[list[Card]], seed: int) -> State:
        hands, others = hands_from_view(obs, zone_cards)
        aside = sorted(others.get("aside", []))
        return LessThanThreeState(
            **view_state_fields(obs, seed),
            hands=hands,
            aside=aside,
            table=parse_cards(obs["table"]),
            discarded=parse_cards(obs["discarded"]),
            sweeps=list(obs["sweeps"]),
            sweep_used=obs["sweep_used"],
        )


# -- scoring, pure ------------------------------------------------------------------------


def round_points(hand_sizes: list[int], shed_out_by: int | None = None) -> list[int]:
    """A round's points from the hand sizes at its end (R12).

    Shed out: the shedder scores 5 + the cards in the other hand. Otherwise (a
    knock, or the loop guard): the player holding fewer cards scores the
    difference, whoever knocked; equal hands score nothing.

    >>> round_points([2, 5]), round_points([1, 2]), round_points([2, 2]), round_points([0, 7], shed_out_by=0)
    ([3, 0], [1, 0], [0, 0], [12, 0])
    """
    a, b = hand_sizes
    if shed_out_by is not None:
        points = [0, 0]
        points[shed_out_by] = SHED_BONUS + hand_sizes[1 - shed_out_by]
        return points
    return [b - a, 0] if a < b else [0, a - b]


def next_dealer(totals: list[int], dealer: int) -> int:
    """Who deals and leads the next round (R13): the lower total; equal totals, the player who did not
    deal the round just played.

    >>> next_dealer([3, 0], 0), next_dealer([0, 0], 0), next_dealer([0, 3], 0)
    (1, 1, 0)
    """
    if totals[0] != totals[1]:
        return 0 if totals[0] < totals[1] else 1
    return 1 - dealer


# -- helpers ------------------------------------------------------------------------------


def _s(state: State) -> LessThanThreeState:
    assert isinstance(state, LessThanThreeState)
    return state


def _mask(cards: list[Card]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _names(cards: list[Card]) -> str:
    return " ".join(CARD_NAMES[c] for c in cards)


def _why_not(meld: ClimbMeld, table: ClimbMeld) -> str:
    if meld.kind != table.kind:
        return f"an answer is the same kind of meld ({table.kind}, not {meld.kind}); a pair and a 2-card run never " \
               "answer each other"
    if meld.size != table.size:
        return f"an answer has the same number of cards ({table.size}, not {meld.size})"
    return f"an answer ranks strictly higher ({meld.rank} is not above {table.rank})"


def _setup_int(setup: Mapping[str, Any], name: str, default: int, lo: int, hi: int) -> int:
    value = setup.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidSetupError(f"setup {name!r} must be an integer from {lo} to {hi}, not {value!r}")
    return value


def _setup_ints(setup: Mapping[str, Any], name: str, default: list[int], lo: int, hi: int) -> list[int]:
    value = setup.get(name, default)
    if not (isinstance(value, list) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi for v in value)):
        raise InvalidSetupError(f"setup {name!r} must be a list of 2 integers from {lo} to {hi}, not {value!r}")
    return list(value)


def parse_play(text: str, knock: bool = False) -> Move:
    """A play move from card text: ``parse_play("4c 5c 6c")`` → ``{"type": "play", "cards": ["4C", "5C", "6C"],
    "knock": False}`` (canonical, sorted: the form :meth:`LessThanThree.legal_moves` lists)."""
    return {"type": "play", "cards": [CARD_NAMES[c] for c in sorted(parse_cards(text))], "knock": knock}


GAME = register(LessThanThree())
