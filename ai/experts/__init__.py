"""The expert baseline: a strong hand-written player for every game, deciding from its seat's view only.

``expert_player(game)`` is a fresh player for one seat of one game (it may remember what it saw during that
game): call it as ``player(game, view, rng) -> move``. One module per game family says how it plays:
:mod:`~ai.experts.rummy` (Three Thirteen, Threezies), :mod:`~ai.experts.contract_rummy`,
:mod:`~ai.experts.least_score`, :mod:`~ai.experts.less_than_three`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engine.game import Game, Move, Observation

Player = Callable[[Game, Observation, random.Random], Move]


def expert_player(game: Game) -> Player:
    """A fresh expert for one seat of one game of ``game``."""
    from ai.experts import contract_rummy, least_score, less_than_three, rummy

    makers: dict[str, Callable[[Game], Player]] = {
        "contract-rummy": contract_rummy.ContractRummyExpert,
        "least-score": least_score.LeastScoreExpert,
        "less-than-three": less_than_three.LessThanThreeExpert,
        "three-thirteen": rummy.RummyExpert,
        "threezies": rummy.RummyExpert,
    }
    try:
        return makers[game.info.id](game)
    except KeyError:
        raise ValueError(f"no expert for {game.info.id!r}") from None
