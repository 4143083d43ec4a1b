"""Match ids, and seat tokens: made at random (or derived from a secret the client holds), stored only as
hashes, and checked in constant time."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import Any

from service.usecases.errors import UnauthorizedError


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(24)


def new_match_id() -> str:
    """A match id: random, public (it is in URLs), 96 bits."""
    return secrets.token_urlsafe(12)


def derived_token(secret: str, match_id: str, seat: int, purpose: str = "seat") -> str:
    """A seat token derived from a ``secret`` only its holder has, so that the same token can be given again
    without the server ever storing one (only their hashes are stored): from a creation's Idempotency-Key
    (``purpose`` "seat": a retried creation gets the same tokens), or from a player's token in the old match
    (``purpose`` "rematch")."""
    mac = hmac.new(secret.encode(), f"cardtable-{purpose}/{match_id}/{seat}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:24]).decode().rstrip("=")


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (the scheme in any case, any spaces around the
    token), ``None`` without a header; a header of another shape is refused."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise UnauthorizedError("use Authorization: Bearer <seat token>")
    return token


def seat_of(seats: Sequence[dict[str, Any]], token: str | None, *, required: bool) -> int | None:
    """The seat whose token is ``token``; ``None`` for no token (a spectator) unless ``required``.
    Tokens are compared by hash, every seat each time, so the time taken does not tell which seat matched."""
    if token is None:
        if required:
            raise UnauthorizedError("this endpoint needs a seat token: Authorization: Bearer <token>")
        return None
    digest = token_hash(token).encode()
    found = None
    for i, seat in enumerate(seats):
        stored = (seat.get("token_hash") or "").encode()
        if hmac.compare_digest(stored, digest) and stored:
            found = i
    if found is None:
        raise UnauthorizedError("the token is not a seat token of this match", challenge='Bearer error="invalid_token"')
    return found
