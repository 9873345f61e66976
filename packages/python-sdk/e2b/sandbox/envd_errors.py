"""How a failed call to envd becomes the SDK's exception: one table for Connect codes, one for /files statuses.

Some failures do not say whether the sandbox is still there: the connection
dropped mid-stream, or an `unavailable` that is not the proxy's "was not
found". For those the caller probes `/health` first and passes what it
learned as `sandbox_running` (None: unknown); the mapping itself does no I/O,
so both flavours share it. A `CancelledError` that connectrpc wrapped (the
caller's task was cancelled, Ctrl-C in `asyncio.run`) is handed back as it
was, so cancelling keeps asyncio's meaning.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from pyqwest import ReadError, RemoteProtocolError, StreamError, WriteError

from e2b._exceptions import (
    AuthenticationException,
    FileNotFoundException,
    InvalidArgumentException,
    NotEnoughSpaceException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotRunningException,
    SandboxUnreachableException,
    TimeoutException,
    UnexpectedResponseException,
)

__all__ = [
    "HEALTH_PROBE_TIMEOUT",
    "ended_before_start",
    "health_state",
    "http_exception",
    "needs_probe",
    "rpc_exception",
    "start_too_late",
    "transport_exception",
    "unreachable",
]

# The proxy's words for a sandbox it does not know, and for one whose envd port is closed.
SANDBOX_NOT_FOUND_MESSAGE = "was not found"
SANDBOX_PORT_NOT_OPEN_MESSAGE = "port is not open"
# The /health probe after a failure: short, since it only decides which exception to raise.
HEALTH_PROBE_TIMEOUT = 5.0

# pyqwest raises ConnectionError/TimeoutError (OSError) before the connection is up and its own
# errors after; connectrpc wraps them with the original as __cause__.
_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (OSError, ReadError, WriteError, StreamError, RemoteProtocolError)

_GONE = (
    "the sandbox was killed, paused or reached its timeout: "
    "set a longer timeout with `timeout=` at create or `set_timeout()`"
)
_UNKNOWN_STATE = "the sandbox could not be reached and its state is unknown; `get_info()` tells whether it runs"


def _unavailable(message: str) -> SandboxException:
    if SANDBOX_NOT_FOUND_MESSAGE in message:
        return SandboxNotRunningException(f"{message}: {_GONE}")
    if SANDBOX_PORT_NOT_OPEN_MESSAGE in message:
        return SandboxUnreachableException(
            f"{message}: the sandbox runs but envd in it cannot be reached (is its network down?)"
        )
    return SandboxUnreachableException(f"{message}: {_UNKNOWN_STATE}")


_BY_CODE: dict[Code, Callable[[str], SandboxException]] = {
    Code.INVALID_ARGUMENT: InvalidArgumentException,
    Code.UNAUTHENTICATED: AuthenticationException,
    Code.PERMISSION_DENIED: AuthenticationException,
    Code.NOT_FOUND: NotFoundException,
    Code.UNAVAILABLE: _unavailable,
    Code.RESOURCE_EXHAUSTED: lambda m: RateLimitException(f"{m}: too many requests to the sandbox, retry later"),
    Code.CANCELED: lambda m: TimeoutException(
        f"{m}: the request was cancelled in flight by the server or a proxy, as when the sandbox is paused or killed"
    ),
    Code.DEADLINE_EXCEEDED: lambda m: TimeoutException(
        f"{m}: the call outlasted its `timeout` (how long a command or watch may run) or `request_timeout`; "
        "pass a longer one, or 0 for no limit"
    ),
}


def start_too_late(what: str, timeout: float) -> TimeoutException:
    """A stream whose first event did not come within `request_timeout` (both flavours' `first_item`)."""
    return TimeoutException(
        f"{what}: no answer within request_timeout ({timeout:g} s); pass a longer one, or 0 for no limit"
    )


def ended_before_start(what: str) -> UnexpectedResponseException:
    """A stream that ended before its first event: whatever answered, it was not envd."""
    return UnexpectedResponseException(f"{what}: the answer is not envd's: its stream ended before its first event")


def is_transport_failure(error: BaseException) -> bool:
    """The connection failed or dropped: not an answer of envd's. A client-side deadline is an answer."""
    return (
        isinstance(error, ConnectError)
        and error.code is not Code.DEADLINE_EXCEEDED
        and isinstance(error.__cause__, _TRANSPORT_ERRORS)
    )


def _is_garbage(error: ConnectError) -> bool:
    """connectrpc wraps any other failure of its own (a body it cannot decode) the same way: not envd's."""
    cause = error.__cause__
    return cause is not None and not isinstance(
        cause, (*_TRANSPORT_ERRORS, asyncio.CancelledError, TimeoutError, ConnectError)
    )


def needs_probe(error: BaseException) -> bool:
    """Whether the answer leaves the sandbox's state open, so that a /health probe should decide."""
    if not isinstance(error, ConnectError):
        return False
    if is_transport_failure(error):
        return True
    return (
        error.code is Code.UNAVAILABLE
        and not _is_garbage(error)
        and SANDBOX_NOT_FOUND_MESSAGE not in error.message
        and SANDBOX_PORT_NOT_OPEN_MESSAGE not in error.message
    )


def rpc_exception(
    error: BaseException,
    *,
    sandbox_running: bool | None = None,
    not_found: type[NotFoundException] = NotFoundException,
) -> BaseException:
    """The exception to raise for `error` from a Connect call; `not_found` is the class for `not_found`."""
    if not isinstance(error, ConnectError):
        return error
    if isinstance(error.__cause__, asyncio.CancelledError):
        return error.__cause__
    if sandbox_running is False and needs_probe(error):
        return _chained(SandboxNotRunningException(f"{error.message}: {_GONE}, during the request"), error)
    if is_transport_failure(error):
        return _chained(SandboxUnreachableException(f"{error.message}: the connection to the sandbox dropped"), error)
    if _is_garbage(error):
        return _chained(
            UnexpectedResponseException(f"the answer is not envd's: {type(error.__cause__).__name__}: {error.message}"),
            error,
        )
    if error.code is Code.NOT_FOUND:
        exception: SandboxException = not_found(error.message)
    else:
        make = _BY_CODE.get(error.code)
        exception = (
            make(error.message) if make is not None else SandboxException(f"{error.code.value}: {error.message}")
        )
    if error.__cause__ is None:
        # Read from envd's answer (or its proxy's): not the SDK's own refusal, though neither has an HTTP
        # status. With a cause, connectrpc raised it itself (a client-side deadline): no answer.
        exception._connect_code = error.code.value
    return _chained(exception, error)


def _chained(exception: SandboxException, cause: BaseException) -> SandboxException:
    exception.__cause__ = cause
    exception.__suppress_context__ = True
    return exception


def unreachable(error: BaseException, probe_error: BaseException) -> BaseException:
    """The request and the /health probe after it both failed: the state of the sandbox is unknown."""
    if isinstance(probe_error, SandboxException):
        return _chained(probe_error, error)
    return _chained(
        SandboxUnreachableException(
            f"{_describe(error)}; the health probe failed too ({probe_error}): {_UNKNOWN_STATE}"
        ),
        error,
    )


def transport_exception(error: BaseException, sandbox_running: bool | None) -> BaseException:
    """A request to envd's HTTP API that got no answer, once a /health probe said what it could."""
    if sandbox_running is False:
        return _chained(SandboxNotRunningException(f"{_describe(error)}: {_GONE}, during the request"), error)
    return _chained(SandboxUnreachableException(f"{_describe(error)}: the connection to the sandbox failed"), error)


def _describe(error: BaseException) -> str:
    return error.message if isinstance(error, ConnectError) else str(error) or type(error).__name__


def _message(body: bytes) -> str:
    """An error answer's `message`, else its text, cut short."""
    text = body[:2000].decode("utf-8", "replace")
    try:
        value = json.loads(body)
    except ValueError:
        return text.strip() or "(no message)"
    message = value.get("message") if isinstance(value, dict) else None
    if isinstance(message, str):
        return message
    return text.strip() or "(no message)"


def http_exception(
    status: int, body: bytes, *, not_found: type[NotFoundException] = NotFoundException
) -> SandboxException:
    """The exception for an error status of envd's HTTP API (/files, /health)."""
    message = _message(body)
    if status == 400:
        return InvalidArgumentException(message, status_code=status)
    if status in (401, 403):
        return AuthenticationException(message, status_code=status)
    if status == 404:
        return not_found(message, status_code=status)
    if status == 429:
        return RateLimitException(f"{message}: too many requests to the sandbox, retry later", status_code=status)
    if status == 502:
        error = _unavailable(message)
        error.status_code = status
        return error
    if status == 507:
        return NotEnoughSpaceException(message, status_code=status)
    return SandboxException(f"envd answered {status}: {message}", status_code=status)


def health_state(status: int, body: bytes) -> bool | None:
    """What a /health answer says: True running, False gone, None unknown; a closed port raises."""
    if 200 <= status < 300:
        return True
    if status == 502:
        error = _unavailable(_message(body))
        if isinstance(error, SandboxNotRunningException):
            return False
        raise error
    return None


# The file-specific not-found class, for `files.*` calls.
FILE_NOT_FOUND = FileNotFoundException
