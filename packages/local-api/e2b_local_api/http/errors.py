"""The spec's `Error` body, and the exception that carries it out of a handler.

Every non-2xx answer of the public API goes through `ApiError`, so each one is
built from the generated `Error` model and cannot drift from the spec.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from e2b_local_api.wire.models import Error

# The documented codes (x-error-codes on Error.error_code) this server sends.
INVALID_REQUEST = "invalid_request"
SANDBOX_NOT_FOUND = "sandbox_not_found"
SANDBOX_ALREADY_PAUSED = "sandbox_already_paused"
SANDBOX_PAUSE_REFUSED = "sandbox_pause_refused"
SANDBOX_NOT_RUNNING = "sandbox_not_running"
TEMPLATE_NOT_FOUND = "template_not_found"
IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"


class ApiError(Exception):
    """An answer other than success; raised anywhere, rendered by `error_response`."""

    def __init__(self, status: int, message: str, error_code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_code = error_code

    def to_model(self) -> Error:
        return Error(code=self.status, message=self.message, error_code=self.error_code)


def error_response(error: ApiError, headers: dict[str, str] | None = None) -> Response:
    body = error.to_model().model_dump(mode="json", exclude_none=True)
    return JSONResponse(body, status_code=error.status, headers=headers)


async def handle_api_error(request: Request, exc: Exception) -> Response:
    """Starlette exception handler for `ApiError`."""
    assert isinstance(exc, ApiError)
    return error_response(exc)


def bad_request(message: str) -> ApiError:
    return ApiError(400, message, INVALID_REQUEST)


def not_found(sandbox_id: str) -> ApiError:
    return ApiError(404, f"sandbox {sandbox_id!r} not found", SANDBOX_NOT_FOUND)


def not_running(sandbox_id: str, doing: str) -> ApiError:
    """409 for requests that need a running sandbox (fork, network update, refresh) on a paused one."""
    return ApiError(
        409,
        f"sandbox {sandbox_id!r} is paused; {doing} needs a running sandbox (connect resumes it)",
        SANDBOX_NOT_RUNNING,
    )


def template_not_found(template: str) -> ApiError:
    return ApiError(
        404, f"template {template!r} not found: no template or snapshot has this id or name", TEMPLATE_NOT_FOUND
    )
