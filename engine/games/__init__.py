"""One module per game; importing this package registers them all."""

from engine.games import three_thirteen, threezies  # noqa: F401
