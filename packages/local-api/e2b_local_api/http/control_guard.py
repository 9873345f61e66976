"""Keep web pages off the `/_local/` control surface, which needs no API key.

A request that changes something must carry `Content-Type: application/json`, and one a browser
marks as cross-site (`Origin`, `Sec-Fetch-Site`) is refused; tools send neither header. Sound only
because `host_guard` already refused a foreign `Host`.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/http/control_guard.py".
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from e2b_local_api.http.errors import ApiError, error_response
from e2b_local_api.http.validation import media_type

__all__ = ["CONTROL_PREFIX", "ControlGuardMiddleware", "control_refusal"]

CONTROL_PREFIX = "/_local"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_SAME_SITE = frozenset({"same-origin", "none"})


def control_refusal(method: str, headers: dict[str, str], scheme: str) -> ApiError | None:
    """Why a request to the control surface is refused, or None; `headers` lower-cased."""
    origin = headers.get("origin")
    host = headers.get("host", "")
    if origin is not None and origin != f"{scheme}://{host}":
        return ApiError(403, f"cross-origin requests to {CONTROL_PREFIX}/ are refused (Origin: {origin})")
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in _SAME_SITE:
        return ApiError(403, f"cross-site requests to {CONTROL_PREFIX}/ are refused (Sec-Fetch-Site: {site})")
    if method not in _SAFE_METHODS and media_type(headers.get("content-type")) != "application/json":
        return ApiError(
            415,
            f"{method} {CONTROL_PREFIX}/... needs Content-Type: application/json (a JSON body, or none)",
        )
    return None


class ControlGuardMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] == "http" and (path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/")):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            refusal = control_refusal(scope["method"], headers, scope.get("scheme", "http"))
            if refusal is not None:
                await error_response(refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)
