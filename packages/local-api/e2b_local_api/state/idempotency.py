"""`Idempotency-Key` on create: a retried create answers the sandbox the first one made.

The same key with another body is refused (409 `idempotency_key_reused`, nothing created). Keys
are the team's, bodies compare as JSON values, and keys are kept until the server is reset.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/state/idempotency.py".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from e2b_local_api.http.errors import IDEMPOTENCY_KEY_REUSED, ApiError, bad_request

HEADER = "Idempotency-Key"
MAX_LENGTH = 255  # the spec's maxLength for the header

T = TypeVar("T")


def key_from(headers: Mapping[str, str]) -> str | None:
    """The request's idempotency key; an over-long one is a 400 naming the header.

    An empty value is schema-valid (the spec sets no minimum length) but names
    no request: it is taken as no key at all.
    """
    key = headers.get(HEADER)
    if not key:
        return None
    if len(key) > MAX_LENGTH:
        raise bad_request(f"{HEADER}: expected at most {MAX_LENGTH} characters, got {len(key)}")
    return key


def fingerprint(body: Mapping[str, Any]) -> str:
    """What "the same body" compares: the canonical JSON of the parsed object."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def team_of(api_key: str) -> str:
    """The team an API key acts for; a digest, so the key itself is not kept in the table."""
    return hashlib.sha256(api_key.encode()).hexdigest()


@dataclass(frozen=True)
class _Remembered(Generic[T]):
    fingerprint: str
    result: T


class IdempotencyKeys(Generic[T]):
    """The results of keyed requests per (team, key); the store uses it under its lock."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], _Remembered[T]] = {}

    def replay(self, team: str, key: str, body_fingerprint: str) -> T | None:
        """The earlier result for this key, None if the key is new; 409 if it came with another body."""
        seen = self._seen.get((team, key))
        if seen is None:
            return None
        if seen.fingerprint != body_fingerprint:
            raise ApiError(
                409,
                f"{HEADER}: {key!r} was used before with a different request body; use a new key for a new request",
                IDEMPOTENCY_KEY_REUSED,
            )
        return seen.result

    def remember(self, team: str, key: str, body_fingerprint: str, result: T) -> None:
        self._seen[(team, key)] = _Remembered(body_fingerprint, result)

    def clear(self) -> None:
        self._seen.clear()
