"""Less Than Three's endgame solver (levels 4-5) against the engine's own rules, and how the search uses it."""

from __future__ import annotations

import random

import pytest

from ai import choose_move
from ai.evaluators.less_than_three import EVALUATOR, LessThanThreeEvaluator, solve_round, sweep_future
from engine.cards import CARD_NAMES, parse_cards
from engine.climbing import melds_in
from engine.games.less_than_three import LessThanThreeState
from engine.registry import get_game

GAME = get_game("less-than-three")
DECK = [c for c in range(52) if c % 13 < 10]  # A-10 of four suits (R2)


def _names(cards: list[int]) -> list[str]:
    return [CARD_NAMES[c] for c in cards]


def _mask(cards: list[str]) -> int:
    return sum(1 << c for c in parse_cards(cards))


def _referee_value(state: LessThanThreeState, seat: int) -> float:
    """Minimax over the engine's legal moves to the round's end: the seat's points minus the other's, plus
    what its extra sweep cards are worth over the rest of the game."""
    round_index = len(state.round_scores)
    values = []
    for move in GAME.legal_moves(state):
        after = GAME.apply(state, move)[0]
        if len(after.round_scores) > round_index:
            scores = after.round_scores[round_index]
            sweeps = after.sweeps
            v = scores[seat] - scores[1 - seat] + sweep_future(state.round) * (sweeps[seat] - sweeps[1 - seat])
        else:
            v = _referee_value(after, seat)
        values.append(v)
    return max(values) if state.to_move == seat else min(values)


def _random_position(rng: random.Random) -> LessThanThreeState:
    a, b = rng.randint(1, 4), rng.randint(1, 4)
    cards = rng.sample(DECK, a + b + 4)
    sweeps = [rng.randint(0, 2), rng.randint(0, 2)]
    spent = 4 - sum(sweeps)
    used = spent > 0 and rng.random() < 0.4
    # at most one sweep a round (R9): the round is late enough for the ones spent
    setup: dict[str, object] = {"hands": [_names(cards[:a]), _names(cards[a:a + b])],
                                "round": max(rng.randint(1, 6), spent + (not used)), "sweeps": sweeps,
                                "sweep_used": used, "dealer": rng.randint(0, 1)}
    if rng.random() < 0.5:
        setup["table"] = list(rng.choice(melds_in(cards[a + b:])).names)
    return GAME.from_setup(2, setup, seed=rng.randint(0, 999))


@pytest.mark.parametrize("seed", range(4))
def test_the_solver_agrees_with_a_minimax_over_the_engines_own_moves(seed: int) -> None:
    rng = random.Random(seed)
    solving = EVALUATOR.for_level(4)
    assert solving.solves and not EVALUATOR.for_level(3).solves
    for _ in range(40):
        state = _random_position(rng)
        for seat in (0, 1):
            leaf = solving.solve(GAME, state, seat)
            assert leaf is not None
            assert leaf.value == pytest.approx(_referee_value(state, seat)), (state.hands, state.table, seat)


def test_the_solver_sheds_out_knocks_and_passes_by_the_rules() -> None:
    # LT4: the last card played while the other holds 7 scores 5 + 7 (R11, R12)
    assert solve_round(_mask(["9S"]), _mask(["AC", "2C", "3D", "4D", "5H", "6H", "7S"]), 0, (0, 0), False,
                       6) == 12
    # a play leaving 1 or 2 cards may knock (R10): 2 against 5 scores the difference, 3; playing on would let
    # the other's pair of tens hold the lead and shed its hand
    assert solve_round(_mask(["2C", "3C", "4C", "8D", "9H"]),
                       _mask(["TS", "TH", "AD", "AH", "5S"]), 0, (0, 0), False, 6) >= 3
    # a single that can't be answered is passed (R7, R8): the mover then leads its last two cards as a run
    assert solve_round(_mask(["5D", "6D"]), _mask(["AS", "2H", "3C"]), _mask(["4S"]), (0, 0), False, 6) == 8


def test_a_sweep_card_kept_is_worth_its_future_value() -> None:
    # the responder answers the single 5 with its last card (5 + 2 points) and keeps the one sweep card it
    # holds more than the other: worth a point early in the game, nothing in the last round
    for round_no, future in ((1, 1.0), (5, 0.5), (6, 0.0)):
        assert sweep_future(round_no) == future
        v = solve_round(_mask(["9S"]), _mask(["AD", "2H"]), _mask(["5C"]), (1, 0), False, round_no)
        assert v == pytest.approx(5 + 2 + future)


def test_only_the_levels_above_the_default_solve_and_only_small_endgames() -> None:
    state = GAME.from_setup(2, {"hands": [["5C", "6C", "9D"], ["2D", "3H", "9S", "TS", "4C"]], "dealer": 0}, seed=1)
    assert EVALUATOR.solve(GAME, state, 0) is None  # level 3 plays its worlds out by the model policy
    ev = EVALUATOR.for_level(4)
    assert isinstance(ev, LessThanThreeEvaluator) and ev.solve_cards == 10
    assert ev.solve(GAME, state, 0) is not None
    big = GAME.new_match(2, seed=3)
    assert ev.solve(GAME, big, 0) is None  # 30 cards in the two hands
    # a turn limit the round could reach (C7: scored as it stands) is not in the solver: the world plays on
    limited = GAME.from_setup(2, {"hands": [["5C", "6C", "9D"], ["2D", "3H", "9S", "TS", "4C"]], "dealer": 0},
                              options={"max_turns_per_round": 10}, seed=1)
    assert ev.solve(GAME, limited, 0) is None


def test_level_4_plays_the_move_with_the_best_exact_value_over_the_unseen_hands() -> None:
    # 5 cards against 3 in the last round: each move's exact value averaged over 300 deals of the unseen cards
    # (the solver on each), against what level 4 searches (64 deals, solved once the hands are this small)
    state = GAME.from_setup(2, {"hands": [["5C", "2H", "TD", "AS", "7C"], ["AC", "3H", "4C"]], "dealer": 0,
                                "round": 6, "sweeps": [0, 0]}, seed=1)
    view = GAME.observation(state, 0)
    solving = EVALUATOR.for_level(4)
    rng = random.Random(7)
    exact: dict[str, float] = {}
    for _ in range(300):
        world = GAME.determinize(view, rng)
        for move in GAME.legal_moves(world):
            after = GAME.apply(world, move)[0]
            leaf = (solving.round_result(GAME, after, 0, 0) if after.round_scores else solving.solve(GAME, after, 0))
            assert leaf is not None
            exact[str(move)] = exact.get(str(move), 0.0) + leaf.value / 300
    ranked = sorted(exact, key=lambda m: -exact[m])
    assert exact[ranked[0]] > exact[ranked[1]] + 0.5  # a clear best move: 7C
    d = choose_move(GAME, view, level=4, seed=0)
    assert str(d.move) == ranked[0]
    assert d.alternatives[0]["value"] == pytest.approx(exact[ranked[0]], abs=0.75)
