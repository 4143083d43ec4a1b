"""The computer opponent: ``choose_move(game, view, level=3, time_ms=None, seed=0) -> Decision``.

Plays one seat from that seat's view only (``game.observation(state, seat)``),
by determinized expectimax over the cards it cannot see; see :mod:`ai.search`.
"""

from ai.search import LEVELS, Decision, Level, choose_move

__all__ = ["LEVELS", "Decision", "Level", "choose_move"]
