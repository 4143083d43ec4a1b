"""The service's own failures, as domain errors: each has a stable ``code`` (the API's problem+json ``code``)
and a message for the client. They know nothing of HTTP: :mod:`service.errors` is the one place that turns
them (and the engine's errors) into answers.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """Base of the service's domain errors.

    ``errors`` names the request fields at fault (field → messages); ``retry_after`` says, in seconds, when
    trying again makes sense; ``extra`` holds more members of the problem (e.g. the current ``version``)."""

    code = "invalid_request"

    def __init__(self, detail: str, *, errors: dict[str, list[str]] | None = None,
                 retry_after: int | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors
        self.retry_after = retry_after
        self.extra = extra


class InvalidRequestError(ServiceError):
    code = "invalid_request"


class UnknownGameError(ServiceError):
    """A game id the registry does not know (named in the URL: not found; in a body: a field error)."""

    code = "unknown_game"


class MatchNotFoundError(ServiceError):
    code = "match_not_found"


class UnauthorizedError(ServiceError):
    """No seat token, or one that is not a seat token of this match. ``challenge`` is what the client is
    told to send (the ``WWW-Authenticate`` value)."""

    code = "unauthorized"

    def __init__(self, detail: str, challenge: str = 'Bearer realm="cardtable"') -> None:
        super().__init__(detail)
        self.challenge = challenge


class StaleVersionError(ServiceError):
    """The match is not at the state the request expected; ``current`` and ``state_id`` say where it is."""

    code = "stale_version"

    def __init__(self, detail: str, current: int, state_id: str | None = None) -> None:
        if state_id is None:
            super().__init__(detail, version=current)
        else:
            super().__init__(detail, version=current, state_id=state_id)
        self.current = current


class StoreTimeoutError(ServiceError):
    """The store did not confirm a write in time: it may or may not have been applied."""

    code = "store_timeout"


class IdempotencyKeyReusedError(ServiceError):
    code = "idempotency_key_reused"


class AiBusyError(ServiceError):
    """The AI queue holds as much work as it admits (in AI-seconds): nothing was queued or changed."""

    code = "ai_busy"


class RateLimitedError(ServiceError):
    """The caller's AI-time budget (per token or per client) is spent for now: nothing was queued or changed."""

    code = "rate_limited"


class AiUnavailableError(ServiceError):
    """The AI failed to decide, or no AI worker is there to decide."""

    code = "ai_unavailable"


class InvitationNotFoundError(ServiceError):
    """No open seat has this invitation code (a wrong code, or a match that is gone): says nothing more."""

    code = "invitation_not_found"


class InvitationExpiredError(ServiceError):
    code = "invitation_expired"


class SeatTakenError(ServiceError):
    """The seat was claimed already (an invitation works once)."""

    code = "seat_taken"


class MatchWaitingError(ServiceError):
    """A move (or an AI turn asked for) while seats are still open: the match has not begun."""

    code = "match_waiting"


class SeatNotIdleError(ServiceError):
    """A takeover asked for a seat that is not the one everyone waits for, or not for long enough yet."""

    code = "seat_not_idle"


class MatchNotOverError(ServiceError):
    """A rematch asked for before the match ended."""

    code = "match_not_over"
