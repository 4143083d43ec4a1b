"""The one error hierarchy of the engine.

Every error has a stable ``code`` (the API's problem+json ``code``) and a
message that says what is wrong and which rule it breaks. Raising one never
leaves a half-changed state behind: ``apply`` works on a copy.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base of all engine errors."""

    code = "engine_error"


class InvalidCardError(EngineError, ValueError):
    code = "invalid_card"


class UnknownGameError(EngineError, KeyError):
    code = "unknown_game"

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class InvalidOptionError(EngineError, ValueError):
    code = "invalid_option"

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"option {option!r}: {message}")
        self.option = option


class InvalidSetupError(EngineError, ValueError):
    """An explicit starting position (RULES.md C8) that is not a legal position."""

    code = "invalid_setup"


class InvalidStateError(EngineError, ValueError):
    """A state blob that does not parse or is not consistent."""

    code = "invalid_state"


class InvalidViewError(EngineError, ValueError):
    """A view (a seat's observation, as the AI takes it) that the game could not have given."""

    code = "invalid_view"


class InvalidMoveError(EngineError, ValueError):
    """A move that is malformed: unknown type, missing field, bad card."""

    code = "invalid_move"


class IllegalMoveError(EngineError, ValueError):
    """A well-formed move that the rules forbid here; the message names the rule."""

    code = "illegal_move"


class NotYourTurnError(IllegalMoveError):
    code = "not_your_turn"


class GameOverError(IllegalMoveError):
    code = "game_over"
