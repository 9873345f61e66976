"""Exit statuses, and the one mapping from a failure to what the user reads.

Every failure ends as a `CliError`: one line saying what went wrong and, when
there is something to do about it, a second line saying what. The top-level
handler (`e2b_cli.main.E2BGroup.invoke`) turns whatever a command raised into
one with `to_cli_error`; it is shown on stderr, or as a JSON object on stdout
when the command was given `--json`. No traceback is shown unless `--debug`
is given. Each failure has one wording, whichever command met it.
"""

from __future__ import annotations

import enum
import sys
import textwrap
from collections.abc import Sequence
from typing import IO, Any, ClassVar

import click
from e2b import (
    AuthenticationException,
    ConnectionException,
    InvalidArgumentException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxNotRunningException,
    SandboxPauseRefusedException,
    ServiceBusyException,
    TimeoutException,
)
from e2b._exceptions import connect_code

from e2b_cli import output
from e2b_cli.stdio import OutputError

__all__ = [
    "MEANINGS",
    "CliError",
    "CliUsageError",
    "ClosedPipe",
    "ExitStatus",
    "NoAnswer",
    "exit_status_help",
    "missing_api_key",
    "not_found",
    "snapshot_not_found",
    "to_cli_error",
]


class ExitStatus(enum.IntEnum):
    """The documented exit statuses of every `e2b` command; `MEANINGS` says what each means."""

    OK = 0
    FAILED = 1
    USAGE = 2
    NO_ANSWER = 3
    INTERRUPTED = 130
    CLOSED_PIPE = 141


# The one table: `e2b --help` renders it, and a test checks docs/users/cli.md's against it.
MEANINGS: dict[ExitStatus, str] = {
    ExitStatus.OK: "success (pausing a sandbox that is already paused included)",
    ExitStatus.FAILED: (
        "the API answered no: a refused pause, an unknown sandbox or snapshot, a rejected API key, busy, rate limited, "
        "an invalid request, the sandbox's refusal (an unknown user, a missing directory), a sandbox that stopped "
        "during the command (killed, paused), an answer that is not the API's (a proxy's page), or output that could "
        "not be written (a full disk, a closed stdout)"
    ),
    ExitStatus.USAGE: (
        "usage error: an unknown command or option, a bad value (a malformed --api-url, time or sandbox id, "
        "an API key with a control character included), no API key"
    ),
    ExitStatus.NO_ANSWER: "no answer: connection refused, unknown host, network failure, timeout",
    ExitStatus.INTERRUPTED: "interrupted (Ctrl-C)",
    ExitStatus.CLOSED_PIPE: "stdout was closed early (`| head`); nothing is printed, as with other Unix tools",
}


def exit_status_help() -> str:
    """The exit status table of `e2b --help` (click's `\\b` keeps its lines as they are)."""
    rows = [
        textwrap.fill(meaning, width=76, initial_indent=f"  {int(status):<3}  ", subsequent_indent=" " * 7)
        for status, meaning in MEANINGS.items()
    ]
    return "\b\nExit status:\n" + "\n".join(rows)


class CliError(click.ClickException):
    """A failure as the user sees it: `message` and an optional `hint`; exit status 1.

    `verbatim` prints the message alone, exactly as given: a refused pause is
    the API's own one-line message, so that scripts can match it. `status`
    and `error_code` are the API's, when it answered; with `as_json` the
    error is printed on stdout as `{"error": {"status", "error_code", "message"}}`.
    """

    exit_code: ClassVar[int] = ExitStatus.FAILED

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        verbatim: bool = False,
        status: int | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.hint = hint
        self.verbatim = verbatim
        self.status = status
        self.error_code = error_code
        self.as_json = False

    def to_json(self) -> dict[str, Any]:
        return {"error": {"status": self.status, "error_code": self.error_code, "message": self.message}}

    def show(self, file: IO[Any] | None = None) -> None:
        if self.as_json:
            output.print_json(self.to_json(), file=file)
            return
        output.print_error(self.message, self.hint, verbatim=self.verbatim, file=file)


class CliUsageError(CliError):
    """A failure the user fixes on their side before anything is sent (no API key, a bad URL); exit status 2.

    Unlike click's `UsageError` it prints no usage line: the hint says what to do.
    """

    exit_code: ClassVar[int] = ExitStatus.USAGE


class NoAnswer(CliError):
    """No answer came: connection refused, unknown host, network failure, timeout; exit status 3."""

    exit_code: ClassVar[int] = ExitStatus.NO_ANSWER


class ClosedPipe(CliError):
    """Whoever read stdout went away (`| head`): nothing more to say, to anyone."""

    exit_code: ClassVar[int] = ExitStatus.CLOSED_PIPE

    def __init__(self) -> None:
        super().__init__("stdout was closed")

    def show(self, file: IO[Any] | None = None) -> None:
        pass


NO_KEY_HINT = "Set the E2B_API_KEY environment variable or pass --api-key."
SANDBOX_REFUSED_HINT = "Check the user (-u) and the directory (-c): both must exist in the sandbox."
LIST_HINT = "Run `e2b sandbox list` to see your team's sandboxes."
SNAPSHOT_LIST_HINT = "Run `e2b sandbox snapshot list` to see your team's snapshots."


def missing_api_key() -> CliError:
    return CliUsageError("no API key.", NO_KEY_HINT)


def not_found(sandbox_ids: Sequence[str], status: int | None = 404, error_code: str | None = None) -> CliError:
    """The one wording of "no such sandbox", for every command."""
    names = ", ".join(repr(s) for s in sandbox_ids)
    message = f"sandbox {names} not found" if len(sandbox_ids) == 1 else f"sandboxes {names} not found"
    return CliError(message, LIST_HINT, status=status, error_code=error_code)


def snapshot_not_found(snapshot_id: str, status: int | None = 404, error_code: str | None = None) -> CliError:
    """The one wording of "no such snapshot"."""
    return CliError(f"snapshot {snapshot_id!r} not found", SNAPSHOT_LIST_HINT, status=status, error_code=error_code)


def _unreachable(api_url: str | None, reason: str) -> CliError:
    return NoAnswer(
        f"could not reach the API at {api_url}: {reason}",
        "Check your network connection, and --api-url / --domain (E2B_API_URL / E2B_DOMAIN).",
    )


def _innermost(error: BaseException) -> str:
    # The HTTP stack nests its causes ("error sending request for url (...): client
    # error (Connect): tcp connect error: Connection refused"): the last one says it.
    return str(error).rsplit(": ", 1)[-1] or type(error).__name__


def _timeout_error(api_url: str | None, request_timeout: float | None, elapsed: float | None) -> CliError:
    # The time actually waited, measured here: true whatever the stack underneath did.
    waited = f" (gave up after {elapsed:.1f} s)" if elapsed is not None else ""
    limit = f"now {request_timeout:g} s" if request_timeout else "now no limit"
    return NoAnswer(
        f"no answer from the API at {api_url}{waited}.",
        f"Retry, or allow longer with --request-timeout SECONDS ({limit}; 0 means no limit).",
    )


# The SDK's advice for a sandbox that ended under a call, in the SDK's words (envd_errors._GONE).
SDK_TIMEOUT_ADVICE = "set a longer timeout with `timeout=` at create or `set_timeout()`"
CLI_TIMEOUT_ADVICE = "set a longer one with `--timeout` at create or `e2b sandbox timeout`"


def _api_error(error: SandboxException, message: str, hint: str | None = None) -> CliError:
    # A user of the CLI has options and commands, not the SDK's keywords and methods.
    message = message.replace(SDK_TIMEOUT_ADVICE, CLI_TIMEOUT_ADVICE)
    return CliError(message, hint, status=error.status_code, error_code=error.error_code)


def _sandbox_refused(error: SandboxException) -> CliError:
    # envd in the sandbox answered no (`exec -u nobody`, `connect -c /nonexistent`): the request was
    # sent, so it is not a usage error, and the API key has nothing to do with it.
    return _api_error(error, f"the sandbox refused the request: {error.message}", SANDBOX_REFUSED_HINT)


def _busy_hint(retried: int, advice: str) -> str:
    """What to do about a busy answer; "retried" only when the SDK re-sent a request of this command.

    Not every busy answer is retried: `retries=0`, a `Retry-After` beyond the
    SDK's maximum, a `Should-Retry: false`, or no time left before the deadline
    each end the call after one request.
    """
    if retried <= 0:
        return f"{advice[0].upper()}{advice[1:]}."
    times = "once" if retried == 1 else f"{retried} times"
    return f"The request was retried {times} already: {advice}."


def to_cli_error(
    error: BaseException,
    *,
    api_url: str | None,
    request_timeout: float | None,
    elapsed: float | None = None,
    sandbox_ids: Sequence[str] = (),
    retried: int = 0,
) -> CliError:
    """The `CliError` for whatever a command raised; the single place exit statuses are chosen.

    `sandbox_ids` are the ids the command was given, so that "not found" reads
    the same from every command; `elapsed` is how long the command had run;
    `retried` how many times the SDK re-sent one of its requests (the
    `e2b.retries` records counted by `e2b_cli.progress`).
    """
    if isinstance(error, CliError):
        return error
    if isinstance(error, BrokenPipeError):
        return ClosedPipe()
    if isinstance(error, OutputError):  # not ours to report as unexpected: a full disk, a closed stdout (`>&-`)
        return CliError(f"could not write to {error.stream}: {error.strerror}")
    if isinstance(error, SandboxPauseRefusedException):
        # The API's message names the reason (agent unresponsive, node busy, ...): print it unchanged.
        return CliError(error.message, verbatim=True, status=error.status_code, error_code=error.error_code)
    # envd's refusals have no HTTP status, as the SDK's own before sending have none: its Connect code tells.
    if isinstance(error, AuthenticationException | InvalidArgumentException) and connect_code(error) is not None:
        return _sandbox_refused(error)
    if isinstance(error, AuthenticationException):
        if error.status_code is None:
            return missing_api_key()
        return _api_error(
            error,
            f"the API rejected the API key: {error.message}",
            "Check E2B_API_KEY or --api-key, and that --api-url / --domain point at the right API.",
        )
    if isinstance(error, SandboxNotFoundException):
        if sandbox_ids:
            return not_found(sandbox_ids, error.status_code, error.error_code)
        # No sandbox named (`e2b sandbox list` itself): the listing hint would send the user in a circle.
        return _api_error(error, error.message)
    if isinstance(error, RateLimitException):
        return _api_error(error, error.message, _busy_hint(retried, "wait a little, then try again"))
    if isinstance(error, ServiceBusyException):
        return _api_error(error, error.message, _busy_hint(retried, "try again in a minute"))
    if isinstance(error, InvalidArgumentException):
        if error.status_code is None:
            # The SDK refused a value before sending anything: the user's to fix, like click's own.
            return CliUsageError(error.message, "Fix that value; nothing was sent.")
        return _api_error(error, f"the API refused the request as invalid: {error.message}", "Check the arguments.")
    # A `TimeoutException` as in e2b 2.x, but no timeout of ours: the sandbox ended (killed, paused, past its
    # timeout) under the call, or envd cancelled the call for that reason.
    if isinstance(error, SandboxNotRunningException) or (
        isinstance(error, TimeoutException) and connect_code(error) == "canceled"
    ):
        return _api_error(error, f"the sandbox stopped during the command: {error.message}", LIST_HINT)
    # httpx is what the SDK runs on; when no command loaded it, no error can be one of its.
    httpx = sys.modules.get("httpx")
    if isinstance(error, TimeoutException) or (httpx is not None and isinstance(error, httpx.TimeoutException)):
        return _timeout_error(api_url, request_timeout, elapsed)
    if isinstance(error, ConnectionException):
        # The SDK's message ends with its own advice; the transport's error it wraps says what happened.
        cause = error.__cause__
        return _unreachable(api_url, _innermost(cause) if cause is not None else error.message)
    if isinstance(error, SandboxException):
        return _api_error(error, error.message)
    if httpx is not None and isinstance(error, httpx.TransportError):
        return _unreachable(api_url, _innermost(error))
    return CliError(
        f"unexpected error: {type(error).__name__}: {error}",
        "Run the command again with --debug to see the traceback, and report it.",
    )
