"""The SDK's exceptions and the one place that maps an API answer to them.

Every exception derives from `SandboxException` and carries the HTTP `status_code` (None when no
answer arrived) and the body's `error_code` when the API sent one. The mapping reads the status and
the `error_code`, never the endpoint; an answer that is not the API's (a 404 without `error_code`,
a page that is not JSON) is `UnexpectedResponseException`.

How it works, and why: docs/maintainers/packages.md, "packages/python-sdk/e2b/_exceptions.py".
"""

from __future__ import annotations

import json
import reprlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from e2b.api.error_codes import SANDBOX_PAUSE_REFUSED_ERROR_CODE

# The code the API gives a missing sandbox; any other 404 code is about something else.
SANDBOX_NOT_FOUND_ERROR_CODE = "sandbox_not_found"
# A 409 that is the caller's mistake, not the sandbox's state: the key named another request.
IDEMPOTENCY_KEY_REUSED_ERROR_CODE = "idempotency_key_reused"

if TYPE_CHECKING:  # httpx costs most of an import of e2b; the SDK loads it on first use
    import httpx

__all__ = [
    "AuthenticationException",
    "ConnectionException",
    "FileNotFoundException",
    "InvalidArgumentException",
    "NotEnoughSpaceException",
    "NotFoundException",
    "RateLimitException",
    "SandboxException",
    "SandboxNotFoundException",
    "SandboxNotRunningException",
    "SandboxPauseRefusedException",
    "SandboxUnreachableException",
    "ServiceBusyException",
    "TemplateException",
    "TimeoutException",
    "UnexpectedResponseException",
    "api_exception_from_code",
    "brief",
    "connect_code",
    "handle_api_exception",
    "is_json_media_type",
    "not_json_message",
    "not_the_api",
]


class SandboxException(Exception):
    """Base of every exception the SDK raises.

    `status_code` is the HTTP status of the API's answer, or None when there
    was none (a timeout, a missing API key). `error_code` is the body's
    machine-readable reason when the API sent one; compare it with the
    constants in `e2b.api.error_codes`, it is an open set.
    """

    message: str
    """What went wrong, as `str(error)` says it."""
    status_code: int | None
    """The HTTP status of the API's answer; None when there was none, or envd's answer had none (a Connect error)."""
    error_code: str | None
    """The answer's machine-readable reason (`e2b.api.error_codes`); None when the API sent none."""
    # envd's Connect code ("unauthenticated", ...) when this reports envd's own error answer, set by
    # `e2b.sandbox.envd_errors.rpc_exception`. Such an answer has no HTTP status, like the SDK's own
    # refusal before sending: this tells the two apart (`connect_code`). Not public: no name of e2b 2.x.
    _connect_code: str | None = None

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.error_code = error_code


class InvalidArgumentException(SandboxException):
    """The request is invalid: the SDK refused a value before sending it, or the API answered 400.

    For example `force=True` together with `mode="filesystem"`: a forced pause
    only exists for memory snapshots. The message names the field.
    """


class AuthenticationException(SandboxException):
    """The API key is missing or was rejected (401)."""


class NotFoundException(SandboxException):
    """No such resource for this team (404): a template or a snapshot."""


class SandboxNotFoundException(NotFoundException):
    """No such sandbox for this team, or it was already killed (404)."""


class ConnectionException(SandboxException):
    """No answer from the API at all: it could not be reached or the connection broke.

    The message names the URL the SDK used; check `api_url` (`E2B_API_URL`),
    `domain` (`E2B_DOMAIN`) and the network. `status_code` is None.
    """


class UnexpectedResponseException(SandboxException):
    """An answer that is not the API's, whatever its status said: nothing of it is believed.

    A 2xx body of another shape than the spec's (a missing or mistyped field,
    an unknown enum value, JSON nested too deeply to parse, bytes that are not
    UTF-8, a number out of range), a body that is not JSON at all (a proxy's
    page, any status but the busy ones), a 404 without the API's `error_code`
    (a path the API does not have: a wrong `api_url`), or a body larger than
    the SDK reads (`e2b._http.MAX_ANSWER_BYTES`, 16 MiB). Its message starts
    with "the answer is not the API's: " and names what was wrong (for an error
    page, the request's method and URL), cut to a few hundred characters.
    `status_code` is the answer's status when it is known.
    """


class RateLimitException(SandboxException):
    """Too many requests from this team (429), even after the SDK's retries."""


class TimeoutException(SandboxException):
    """No answer arrived within `request_timeout`; `status_code` is None."""


class ServiceBusyException(SandboxException):
    """The API could not serve the request right now (503).

    The SDK's transport has already retried it with backoff where a retry made
    sense; catching this means the service stayed busy.
    """


class SandboxPauseRefusedException(ServiceBusyException):
    """The API refused to pause the sandbox, which keeps running (503).

    `error_code` is `SANDBOX_PAUSE_REFUSED_ERROR_CODE` and the message is the
    API's own, unchanged, because it names the reason. There are several:

    - the guest agent did not answer the health check: `pause(force=True)`
      skips that check;
    - the node is too busy to take the snapshot: retry later;
    - a forced pause could not be pinned to the sandbox's node: retry later.

    The SDK does not retry a refusal: it answers after exactly one request so
    that the caller decides. A forced snapshot's memory may not resume; if it
    does not, `Sandbox.connect(sandbox_id, on_resume="reboot")` cold-boots the
    sandbox from the disk state of the snapshot.

    It is a `ServiceBusyException`, so code catching busy answers keeps
    catching refusals.
    """

    def __init__(self, message: str, *, status_code: int | None = 503) -> None:
        super().__init__(message, status_code=status_code, error_code=SANDBOX_PAUSE_REFUSED_ERROR_CODE)


def connect_code(error: BaseException) -> str | None:
    """envd's Connect code (`"unauthenticated"`, `"invalid_argument"`) when `error` is its answer to a call.

    None for everything else: the SDK's own refusal before sending, an HTTP answer, no answer.
    """
    return error._connect_code if isinstance(error, SandboxException) else None


# --- the data plane's (sbx.commands, sbx.files, sbx.pty) -----------------------


class FileNotFoundException(NotFoundException):
    """No such file or folder in the sandbox."""


class SandboxNotRunningException(TimeoutException):
    """The sandbox is not running any more: killed, paused or past its timeout, possibly during the call.

    A `TimeoutException`, as in e2b 2.x, so code catching timeouts of long
    calls catches it too. A command it interrupted may still run if the
    sandbox is resumed.
    """


class SandboxUnreachableException(TimeoutException):
    """envd in the sandbox could not be reached and the sandbox's state is unknown.

    Its network may be down or envd not up yet; `get_info()` says whether the
    sandbox is running.
    """


class NotEnoughSpaceException(SandboxException):
    """The sandbox's disk has no room for the write (507)."""


class TemplateException(SandboxException):
    """The sandbox's envd is too old for the feature asked: rebuild its template to get a newer one."""


NOT_THE_API = "the answer is not the API's: "
# What reading an answer of another shape than the spec's raises, in the generated parser or
# the SDK's own mapping: a missing key or index, a wrong type, a bad value (JSON that does not
# parse, bytes that are not UTF-8, an unknown enum value, a 5,000-digit integer), a missing
# attribute, a number out of range (a timestamp of 1e300), nesting too deep for the parser.
SHAPE_ERRORS: tuple[type[Exception], ...] = (
    LookupError,
    TypeError,
    ValueError,
    AttributeError,
    ArithmeticError,
    RecursionError,
)
# How much of what was wrong a message repeats: the value came from the answer, whatever its size.
MAX_DETAIL = 400
_brief = reprlib.Repr()
_brief.maxlevel = 3
_brief.maxstring = _brief.maxother = 120
_brief.maxdict = _brief.maxlist = 6


def brief(value: object) -> str:
    """A short repr of a value from an answer: bounded in length and depth, whatever the value is."""
    try:
        return _brief.repr(value)
    except Exception:  # a value whose repr fails says nothing more
        return f"<{type(value).__name__}>"


def not_the_api(detail: str, *, status_code: int | None = None) -> UnexpectedResponseException:
    """The exception for an answer that is not the API's; `detail` says why (it is cut to `MAX_DETAIL`)."""
    if len(detail) > MAX_DETAIL:
        detail = detail[: MAX_DETAIL - 3] + "..."
    return UnexpectedResponseException(NOT_THE_API + detail, status_code=status_code)


_BY_STATUS: dict[int, type[SandboxException]] = {
    400: InvalidArgumentException,
    401: AuthenticationException,
    404: SandboxNotFoundException,
    429: RateLimitException,
    503: ServiceBusyException,
}


@dataclass(frozen=True)
class _ErrorFields:
    message: str | None = None
    error_code: str | None = None


def _decode(body: object) -> object:
    if isinstance(body, bytes | bytearray | str):
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            return None
    return body


def _error_fields(body: object) -> _ErrorFields:
    """The `Error` fields of a body, or none at all when it is not a trustworthy `Error`.

    A body that is not JSON, is not an object, or whose `error_code` is not a
    string is something other than the API's error (a proxy page, a broken
    gateway), so neither of its fields is believed.
    """
    value = _decode(body)
    if not isinstance(value, dict):
        return _ErrorFields()
    code = value.get("error_code")
    if code is not None and not isinstance(code, str):
        return _ErrorFields()
    message = value.get("message")
    return _ErrorFields(message if isinstance(message, str) else None, code)


def api_exception_from_code(status: int, body: object) -> SandboxException:
    """The exception for an API answer with `status` and `body`.

    `body` is the raw body (bytes or str, parsed here) or an already-decoded
    JSON value. Anything malformed falls back to the status alone.
    """
    fields = _error_fields(body)
    message = fields.message or f"the API answered {status}"
    if status == 503 and fields.error_code == SANDBOX_PAUSE_REFUSED_ERROR_CODE:
        return SandboxPauseRefusedException(message, status_code=status)
    cls = _BY_STATUS.get(status, SandboxException)
    if status == 404 and fields.error_code not in (None, SANDBOX_NOT_FOUND_ERROR_CODE):
        cls = NotFoundException
    if status == 409 and fields.error_code == IDEMPOTENCY_KEY_REUSED_ERROR_CODE:
        cls = InvalidArgumentException
    return cls(message, status_code=status, error_code=fields.error_code)


def is_json_media_type(content_type: str | None) -> bool:
    """`application/json` or an `application/...+json` type, parameters ignored (the transport asks too)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def not_json_message(status: int, content_type: str | None, request: str | None = None) -> str:
    """What to say about an answer that is not JSON: a proxy's or captive portal's page, a wrong URL."""
    kind = content_type or "no content type"
    who = "the API" if request is None else request
    return f"{who} answered {status} with {kind}, not JSON: is the API URL right, or is a proxy answering?"


# Busy answers mean the same whoever sent them, a gateway or a load balancer: wait and retry.
BUSY_STATUSES = frozenset({429, 502, 503, 504})


def _request_line(response: httpx.Response) -> str:
    """`METHOD URL` of the request answered, without its query (long) or credentials."""
    try:
        request = response.request
    except RuntimeError:  # a response built by hand, in a test
        return "the request"
    url = request.url
    return f"{request.method} {url.scheme}://{url.netloc.decode('ascii', 'replace')}{url.path}"


def handle_api_exception(response: httpx.Response) -> SandboxException:
    """The exception for a read error `httpx.Response`; the caller raises it.

    Only the API's own error is mapped by its status: an answer that is not
    JSON (a proxy's HTML page) or a 404 without the API's `error_code` (a
    path the API does not have) is `UnexpectedResponseException` naming the
    request, so that the message points at the URL or the proxy, not at a
    sandbox.
    """
    status = response.status_code
    content_type = response.headers.get("content-type")
    if response.content and not is_json_media_type(content_type):
        if status in BUSY_STATUSES:
            cls = _BY_STATUS.get(status, SandboxException)
            return cls(not_json_message(status, content_type), status_code=status)
        return not_the_api(not_json_message(status, content_type, _request_line(response)), status_code=status)
    error = api_exception_from_code(status, response.content)
    if status == 404 and error.error_code is None:
        return not_the_api(
            f"{_request_line(response)} answered 404 without the API's error_code: the API has no such path, "
            "so is the API URL right (api_url, E2B_API_URL), or did a proxy answer?",
            status_code=status,
        )
    return error
