"""The computer opponent: ``choose_move(game, view, level=3, time_ms=None, seed=0) -> Decision``.

Plays one seat from that seat's view only (``game.observation(state, seat)``),
by determinized expectimax over the cards it cannot see, with a work budget per
level (so a decision depends on ``(view, level, seed)`` only); see :mod:`ai.search`.
``warm_up()`` builds the AI's tables at start-up (the AI worker calls it).
"""

from ai.search import LEVELS, Decision, Level, choose_move, warm_up

__all__ = ["LEVELS", "Decision", "Level", "choose_move", "warm_up"]
