"""Keep web pages off the `/_local/` control surface, which needs no API key.

A page open in the developer's browser can send "simple" cross-origin requests
without asking first: a form POST (`text/plain`, url-encoded, multipart) or a
`fetch` without a body. So here every request that changes something must
carry `Content-Type: application/json` (which a browser only sends cross-origin
after a CORS preflight this server never grants), and a request that a browser
marks as coming from another site (`Origin` other than this server's,
`Sec-Fetch-Site` other than `same-origin`/`none`) is refused outright.
Tools (curl, httpx, the tests) send neither header. Comparing the `Origin`
with the request's own `Host` is sound only because `host_guard` has already
refused any `Host` that is not this server's address (DNS rebinding).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from e2b_local_api.errors import ApiError, error_response
from e2b_local_api.validation import media_type

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
