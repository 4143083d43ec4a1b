"""One module (or package) per game; :data:`GAMES` lists one instance of each, for ``engine.registry``."""

from engine.games import contract_rummy, least_score, less_than_three, three_thirteen, threezies

GAMES = (contract_rummy.GAME, least_score.GAME, less_than_three.GAME, three_thirteen.GAME, threezies.GAME)
