"""Exit statuses, and the one mapping from a failure to what the user reads.

Every failure ends as a `CliError`: one line saying what went wrong and, when
there is something to do about it, a second line saying what. The top-level
handler (`e2b_cli.main.E2BGroup.invoke`) turns whatever a command raised into
one with `to_cli_error`; click prints it on stderr and exits with its status.
No traceback is shown unless `--debug` is given.
"""

from __future__ import annotations

import enum
from typing import IO, Any, ClassVar

import click
import httpx
from e2b import (
    AuthenticationException,
    InvalidArgumentException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxPauseRefusedException,
    ServiceBusyException,
    TimeoutException,
)

from e2b_cli import output

__all__ = ["CliError", "CliUsageError", "ExitStatus", "missing_api_key", "to_cli_error"]


class ExitStatus(enum.IntEnum):
    """The documented exit statuses of every `e2b` command."""

    OK = 0
    """The command did what it was asked (a sandbox that was already paused counts)."""
    FAILED = 1
    """The API said no (refused pause, unknown sandbox, rejected key, busy, rate
    limited, invalid request), or no answer came (network failure, timeout)."""
    USAGE = 2
    """The command line is wrong (unknown option, bad value), or there is no API key."""


class CliError(click.ClickException):
    """A failure as the user sees it: `message` and an optional `hint`; exit status 1.

    `verbatim` prints the message alone, exactly as given: a refused pause is
    the API's own one-line message, so that scripts can match it.
    """

    exit_code: ClassVar[int] = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None, *, verbatim: bool = False) -> None:
        super().__init__(message)
        self.hint = hint
        self.verbatim = verbatim

    def show(self, file: IO[Any] | None = None) -> None:
        output.print_error(self.message, self.hint, verbatim=self.verbatim, file=file)


class CliUsageError(CliError):
    """A failure the user fixes on their side before anything is sent (no API key); exit status 2.

    Unlike click's `UsageError` it prints no usage line: the hint says what to do.
    """

    exit_code: ClassVar[int] = ExitStatus.USAGE


NO_KEY_HINT = "Set the E2B_API_KEY environment variable or pass --api-key."


def missing_api_key() -> CliError:
    return CliUsageError("no API key.", NO_KEY_HINT)


def _timeout_error(api_url: str | None, request_timeout: float | None) -> CliError:
    within = f" within {request_timeout:g} s" if request_timeout else ""
    return CliError(
        f"no answer from the API at {api_url}{within}.",
        "Retry, or allow longer with --request-timeout SECONDS (0 means no limit).",
    )


def to_cli_error(error: Exception, *, api_url: str | None, request_timeout: float | None) -> CliError:
    """The `CliError` for whatever a command raised; the single place exit statuses are chosen."""
    if isinstance(error, CliError):
        return error
    if isinstance(error, SandboxPauseRefusedException):
        # The API's message names the reason (agent unresponsive, node busy, ...): print it unchanged.
        return CliError(error.message, verbatim=True)
    if isinstance(error, AuthenticationException):
        if error.status_code is None:
            return missing_api_key()
        return CliError(
            f"the API rejected the API key: {error.message}",
            "Check E2B_API_KEY or --api-key, and that --api-url / --domain point at the right API.",
        )
    if isinstance(error, SandboxNotFoundException):
        return CliError(error.message, "Run `e2b sandbox list` to see your team's sandboxes.")
    if isinstance(error, RateLimitException):
        return CliError(error.message, "Your team sent too many requests: wait a little, then retry.")
    if isinstance(error, ServiceBusyException):
        return CliError(error.message, "The API is busy: retry later.")
    if isinstance(error, InvalidArgumentException):
        return CliError(error.message, "The API rejected the request as invalid: check the arguments (see --help).")
    if isinstance(error, TimeoutException | httpx.TimeoutException):
        return _timeout_error(api_url, request_timeout)
    if isinstance(error, SandboxException):
        return CliError(error.message)
    if isinstance(error, httpx.TransportError):
        reason = str(error) or type(error).__name__
        return CliError(
            f"could not reach the API at {api_url}: {reason}",
            "Check your network connection, and --api-url / --domain (E2B_API_URL / E2B_DOMAIN).",
        )
    return CliError(
        f"unexpected error: {type(error).__name__}: {error}",
        "Run the command again with --debug to see the traceback, and report it.",
    )
