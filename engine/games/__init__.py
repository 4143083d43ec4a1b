"""One module per game; importing this package registers them all."""

from engine.games import contract_rummy, least_score, less_than_three, three_thirteen, threezies  # noqa: F401
