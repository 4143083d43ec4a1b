"""Every request and response body of the API, as marshmallow schemas (the shapes of openapi.yaml).

Game-specific parts (a view, a move, a state blob, options) are JSON objects
whose contents the engine checks; these schemas check everything around them.
"""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate

MAX_SEED = 2**62 - 1
MAX_PLAYERS = 16
MAX_VERSION = 2**31 - 1


class Strict(Schema):
    class Meta:
        unknown = RAISE


# -- requests ------------------------------------------------------------------


class AiSpec(Strict):
    level = fields.Integer(load_default=3, validate=validate.Range(1, 5), strict=True)


class PlayerSpec(Strict):
    name = fields.String(load_default=None, allow_none=True, validate=validate.Length(1, 40))
    ai = fields.Nested(AiSpec, load_default=None, allow_none=True)


class CreateMatchRequest(Strict):
    game = fields.String(required=True, validate=validate.Length(1, 60))
    players = fields.List(fields.Nested(PlayerSpec), required=True, validate=validate.Length(1, MAX_PLAYERS))
    options = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)
    seed = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(0, MAX_SEED))
    setup = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)


class MoveRequest(Strict):
    move = fields.Dict(keys=fields.String(), required=True)
    expected_version = fields.Integer(required=True, strict=True, validate=validate.Range(0, MAX_VERSION))


class AdvanceRequest(Strict):
    expected_version = fields.Integer(load_default=None, allow_none=True, strict=True,
                                      validate=validate.Range(0, MAX_VERSION))


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
                       validate=validate.Length(0, 60))
    round = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(1, 100))
    options = fields.Dict(keys=fields.String(), load_default=None, allow_none=True)


class StateRequest(Strict):
    state = fields.Dict(keys=fields.String(), required=True)


class ValidateRequest(Strict):
    state = fields.Dict(keys=fields.String(), required=True)
    move = fields.Dict(keys=fields.String(), required=True)


class BestMoveRequest(Strict):
    view = fields.Dict(keys=fields.String(), required=True)
    level = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(1, 5))
    time_ms = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(1, None))


# -- responses -----------------------------------------------------------------


class Problem(Schema):
    type = fields.String()
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    code = fields.String()
    errors = fields.Dict(keys=fields.String(), values=fields.List(fields.String()))


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


class GameList(Schema):
    games = fields.List(fields.Nested(GameSummary))


class SeatInfo(Schema):
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    ai = fields.Dict(allow_none=True)


class CreatedSeat(SeatInfo):
    token = fields.String(allow_none=True)


class MatchCreated(Schema):
    match_id = fields.String()
    game = fields.String()
    version = fields.Integer()
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
    seat = fields.Integer(allow_none=True)
    status = fields.String()
    seats = fields.List(fields.Nested(SeatInfo))
    scores = fields.Raw()
    view = fields.Dict()
    events = fields.List(fields.Dict())


class LegalMoves(Schema):
    version = fields.Integer()
    seat = fields.Integer(allow_none=True)
    to_move = fields.Integer(allow_none=True)
    moves = fields.List(fields.Dict())


class MoveResult(Schema):
    version = fields.Integer()
    events = fields.List(fields.Dict())
    view = fields.Dict()
    ai_pending = fields.Boolean()
    ai_error = fields.String()


class LogEntry(Schema):
    version = fields.Integer()
    seat = fields.Integer()
    move = fields.Dict()
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


class Health(Schema):
    status = fields.String()
    checks = fields.Dict()


def load(schema: Schema, data: Any) -> Any:
    """``schema.load(data)``; a body that is not a JSON object is a validation error too."""
    if data is None:
        raise ValidationError({"_schema": ["the body must be a JSON object"]})
    return schema.load(data)

