"""API-key auth as the spec defines it: `ApiKeyAuth`, an `X-API-Key` header.

Which keys are accepted is configured once per server: a fixed set (default
`DEV_API_KEY`, so a forgotten key is noticed as it would be in the cloud), or
any non-empty key for quick manual trials.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from starlette.requests import Request

from e2b_local_api.http.errors import ApiError

HEADER = "X-API-Key"
DEV_API_KEY = "e2b_local_dev_key"


@dataclass(frozen=True)
class AuthConfig:
    keys: frozenset[str] = frozenset({DEV_API_KEY})
    accept_any: bool = False

    def accepts(self, key: str) -> bool:
        if not key:
            return False
        if self.accept_any:
            return True
        # Constant-time compare: cheap, and the habit is worth keeping.
        return any(hmac.compare_digest(key.encode(), k.encode()) for k in self.keys)


def require_api_key(request: Request, config: AuthConfig) -> None:
    key = request.headers.get(HEADER)
    if key is None:
        raise ApiError(401, f"missing API key: send it in the {HEADER} header")
    if not config.accepts(key):
        raise ApiError(401, f"invalid API key in the {HEADER} header")
