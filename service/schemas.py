"""Every request and response body of the API, as marshmallow schemas (the shapes of openapi.yaml).

Requests are checked here for their types and shapes (JSON integers, cards, lengths, the common fields of a
view or a state blob) before the engine sees them; what only a game knows (its player counts, options, card
counts, the fields of each move type) the engine checks next (``Game.check_view``, ``Game.from_json``,
``Game.apply``), with its own codes (``invalid_view``, ``invalid_state``, ``invalid_move``...).
"""

from __future__ import annotations

from typing import Any

from marshmallow import INCLUDE, RAISE, Schema, ValidationError, fields, validate, validates_schema

MAX_SEED = 2**62 - 1
MAX_PLAYERS = 16
MAX_VERSION = 2**31 - 1
MAX_INT = 2**63 - 1
#: More cards than any game's largest deck (Contract rummy: 4 decks and 16 jokers, 224 cards).
MAX_CARDS = 256
#: More rounds (deals) than any game can last.
MAX_ROUND = 10_000
#: A card as the engine reads it: canonical (``7H``, ``TS``, ``JK``), or with ``10`` and lower case.
CARD_PATTERN = r"^(?:[2-9TJQKAtjqka]|10)[CDHScdhs]$|^[Jj][Kk]$"


class Int(fields.Integer):
    """A JSON integer: ``3`` (or ``3.0``, the same JSON number), never ``"3"`` nor ``true``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _validated(self, value: Any) -> Any:
        if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_INT:
            value = int(value)
        return super()._validated(value)


class Bool(fields.Boolean):
    """A JSON ``true`` or ``false`` (not marshmallow's "yes", 1, "on"...)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class Scalar(fields.Field):
    """An option value: true/false, an integer or a short string."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, bool) or (isinstance(value, int) and abs(value) <= MAX_INT) \
                or (isinstance(value, str) and len(value) <= 40):
            return value
        raise ValidationError("An option value is true, false, an integer or a string of at most 40 characters.")


def card() -> fields.String:
    return fields.String(validate=validate.Regexp(CARD_PATTERN, error="Not a card: write rank A 2-9 T J Q K then "
                                                  "suit C D H S, e.g. 7H, TS, or JK for a joker."))


def options_field() -> fields.Dict:
    return fields.Dict(keys=fields.String(validate=validate.Length(1, 40)), values=Scalar(), load_default=None,
                       allow_none=True, validate=validate.Length(max=40))


class Strict(Schema):
    class Meta:
        unknown = RAISE


# -- views and state blobs: their common fields (the rest is the game's, checked by the engine) ----------------


class HiddenZone(Strict):
    zone = fields.String(required=True, validate=validate.Length(1, 40))
    size = Int(required=True, validate=validate.Range(0, MAX_CARDS))
    seat = Int(validate=validate.Range(0, MAX_PLAYERS - 1))
    known = fields.List(card(), validate=validate.Length(max=MAX_CARDS))


class Common(Schema):
    """The fields every view and every state blob has (``engine.game.State``); a game adds its own."""

    class Meta:
        unknown = INCLUDE

    game = fields.String(required=True, validate=validate.Length(1, 60))
    num_players = Int(required=True, validate=validate.Range(1, MAX_PLAYERS))
    options = fields.Dict(keys=fields.String(validate=validate.Length(1, 40)), values=Scalar(), required=True,
                          validate=validate.Length(max=40))
    round = Int(required=True, validate=validate.Range(1, MAX_ROUND))
    dealer = Int(required=True, validate=validate.Range(0, MAX_PLAYERS - 1))
    phase = fields.String(required=True, validate=validate.Length(0, 40))
    to_move = Int(required=True, allow_none=True, validate=validate.Range(0, MAX_PLAYERS - 1))
    ply = Int(required=True, validate=validate.Range(0, MAX_INT))
    turns_in_round = Int(required=True, validate=validate.Range(0, MAX_INT))
    totals = fields.List(Int(), required=True, validate=validate.Length(1, MAX_PLAYERS))
    round_scores = fields.List(fields.List(Int(), validate=validate.Length(1, MAX_PLAYERS)), required=True,
                               validate=validate.Length(max=MAX_ROUND))
    winners = fields.List(Int(validate=validate.Range(0, MAX_PLAYERS - 1)), required=True, allow_none=True,
                          validate=validate.Length(max=MAX_PLAYERS))


class ViewBody(Common):
    """A seat's view (``Game.observation``), as best-move takes it."""

    seat = Int(required=True, allow_none=True, validate=validate.Range(0, MAX_PLAYERS - 1))
    hand = fields.List(card(), required=True, validate=validate.Length(max=MAX_CARDS))
    hidden = fields.List(fields.Nested(HiddenZone), required=True, validate=validate.Length(max=MAX_PLAYERS + 4))


class StateBody(Common):
    """A state blob (``Game.to_json``): what the engine stores."""

    format = Int(required=True, validate=validate.Equal(1, error="This engine reads state format 1."))
    seed = Int(required=True, validate=validate.Range(0, MAX_SEED))
    chance = Int(required=True, validate=validate.Range(0, MAX_INT))


# -- moves: a type and its fields, which the engine checks (``Game.move_fields``: codes invalid_move/invalid_card) --


class MoveBody(Schema):
    class Meta:
        unknown = INCLUDE

    type = fields.String(required=True, validate=validate.Length(1, 40))


# -- requests ------------------------------------------------------------------


class AiSpec(Strict):
    level = Int(load_default=3, validate=validate.Range(1, 5))


class PlayerSpec(Strict):
    name = fields.String(load_default=None, allow_none=True, validate=validate.Length(1, 40))
    ai = fields.Nested(AiSpec, load_default=None, allow_none=True)
    #: a seat left open for someone else: the answer holds its invitation instead of its token
    open = Bool(load_default=False)

    @validates_schema
    def _open_is_a_person(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("open") and data.get("ai") is not None:
            raise ValidationError("an open seat waits for a person: it cannot have an AI", "open")


class CreateMatchRequest(Strict):
    game = fields.String(required=True, validate=validate.Length(1, 60))
    players = fields.List(fields.Nested(PlayerSpec), required=True, validate=validate.Length(1, MAX_PLAYERS))
    options = options_field()
    seed = Int(load_default=None, allow_none=True, validate=validate.Range(0, MAX_SEED))
    setup = fields.Dict(keys=fields.String(validate=validate.Length(1, 40)), load_default=None, allow_none=True,
                        validate=validate.Length(max=40))


class MoveRequest(Strict):
    move = fields.Nested(MoveBody, required=True)
    expected_version = Int(required=True, validate=validate.Range(0, MAX_VERSION))
    #: the ``state_id`` of the view the move was decided on: then the move applies to that very state only
    #: (absent when not sent, so that the fingerprint of a keyed move that does not send it stays the same)
    expected_state_id = fields.String(allow_none=True, validate=validate.Length(1, 64))


class AdvanceRequest(Strict):
    expected_version = Int(load_default=None, allow_none=True, validate=validate.Range(0, MAX_VERSION))


class ViewQuery(Strict):
    since = fields.Integer(load_default=None, validate=validate.Range(0, MAX_VERSION))
    #: a long poll: wait (seconds) until the match is past ``since``
    wait = fields.Float(load_default=None, validate=validate.Range(0, 30))


class WaitQuery(Strict):
    #: wait (seconds) for the AI seats that move next
    wait = fields.Float(load_default=None, validate=validate.Range(0, 10))


class EventsQuery(Strict):
    since = fields.Integer(load_default=None, validate=validate.Range(0, MAX_VERSION))
    #: a browser's EventSource cannot send headers: the seat token may come here (on this endpoint only)
    access_token = fields.String(load_default=None, validate=validate.Length(1, 200))


class HintQuery(Strict):
    level = fields.Integer(load_default=None, validate=validate.Range(1, 5))
    time_ms = fields.Integer(load_default=None, validate=validate.Range(1, None))


class AnalyzeRequest(Strict):
    hand = fields.List(fields.String(validate=validate.Length(1, 4)), required=True,
                       validate=validate.Length(0, 60))  # the engine names a bad card (invalid_card)
    round = Int(load_default=None, allow_none=True, validate=validate.Range(1, 100))
    options = options_field()


class StateRequest(Strict):
    state = fields.Nested(StateBody, required=True)


class ValidateRequest(Strict):
    state = fields.Nested(StateBody, required=True)
    move = fields.Nested(MoveBody, required=True)


class BestMoveRequest(Strict):
    view = fields.Nested(ViewBody, required=True)
    level = Int(load_default=None, allow_none=True, validate=validate.Range(1, 5))
    time_ms = Int(load_default=None, allow_none=True, validate=validate.Range(1, None))


# -- responses -----------------------------------------------------------------


class OptionInfo(Schema):
    name = fields.String()
    type = fields.String()
    default = fields.Raw()
    description = fields.String()
    choices = fields.List(fields.Raw())
    minimum = fields.Integer()
    maximum = fields.Integer()


class GameSummary(Schema):
    id = fields.String()
    name = fields.String()
    min_players = fields.Integer()
    max_players = fields.Integer()
    lower_score_wins = fields.Boolean()
    options = fields.List(fields.Nested(OptionInfo))


class GameDetail(GameSummary):
    summary = fields.String()
    rules_section = fields.String()
    rules = fields.String()
    rules_url = fields.String()


class GameList(Schema):
    games = fields.List(fields.Nested(GameSummary))


class SeatInfo(Schema):
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    ai = fields.Dict(allow_none=True)
    open = fields.Boolean()


class Invitation(Schema):
    code = fields.String()
    url = fields.String()
    seat = fields.Integer()
    match_id = fields.String()
    expires_at = fields.Integer()
    claim = fields.String()


class CreatedSeat(SeatInfo):
    token = fields.String(allow_none=True)
    invitation = fields.Nested(Invitation, allow_none=True)


class MatchCreated(Schema):
    match_id = fields.String()
    game = fields.String()
    version = fields.Integer()
    state_id = fields.String()
    status = fields.String()
    seats = fields.List(fields.Nested(CreatedSeat))
    view = fields.Dict()
    view_seat = fields.Integer(allow_none=True)
    ai_pending = fields.Boolean()


class Scores(Schema):
    totals = fields.List(fields.Integer())
    rounds = fields.List(fields.List(fields.Integer()))
    winners = fields.List(fields.Integer(), allow_none=True)


class MatchView(Schema):
    match_id = fields.String()
    game = fields.String()
    version = fields.Integer()
    state_id = fields.String()
    seat = fields.Integer(allow_none=True)
    status = fields.String()
    open_seats = fields.List(fields.Integer())
    seats = fields.List(fields.Nested(SeatInfo))
    scores = fields.Raw()
    view = fields.Dict()
    events = fields.List(fields.Dict())


class LegalMoves(Schema):
    version = fields.Integer()
    state_id = fields.String()
    seat = fields.Integer(allow_none=True)
    to_move = fields.Integer(allow_none=True)
    moves = fields.List(fields.Dict())


class MoveResult(Schema):
    version = fields.Integer()
    state_id = fields.String()
    events = fields.List(fields.Dict())
    view = fields.Dict()
    ai_pending = fields.Boolean()
    ai_error = fields.String()


class LogEntry(Schema):
    version = fields.Integer()
    seat = fields.Integer()
    move = fields.Dict(allow_none=True)  # null: a change of seats (its events say which)
    events = fields.List(fields.Dict())
    ai = fields.Boolean()
    private = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


class MatchLog(Schema):
    match_id = fields.String()
    game = fields.String()
    version = fields.Integer()
    status = fields.String()
    seat = fields.Integer(allow_none=True)
    start = fields.Dict()
    entries = fields.List(fields.Nested(LogEntry))


class Alternative(Schema):
    move = fields.Dict()
    value = fields.Float()


class Decision(Schema):
    move = fields.Dict()
    value = fields.Float()
    alternatives = fields.List(fields.Nested(Alternative))
    win_chance = fields.Float(allow_none=True)
    samples = fields.Integer()
    explanation = fields.String()
    elapsed_ms = fields.Float()
    level = fields.Integer()


class Hint(Decision):
    version = fields.Integer()
    seat = fields.Integer()


class StatelessLegalMoves(Schema):
    to_move = fields.Integer(allow_none=True)
    moves = fields.List(fields.Dict())


class ValidateResult(Schema):
    legal = fields.Boolean()
    state = fields.Dict()
    events = fields.List(fields.Dict())
    code = fields.String()
    detail = fields.String()


def load(schema: Schema, data: Any) -> Any:
    """``schema.load(data)``; a body that is not a JSON object is a validation error too."""
    if data is None:
        raise ValidationError({"_schema": ["the body must be a JSON object"]})
    return schema.load(data)

