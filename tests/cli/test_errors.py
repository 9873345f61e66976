"""`e2b_cli.errors`: the one mapping from a failure to its message and exit status."""

from __future__ import annotations

import io

import httpx
import pytest
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
from e2b_cli.errors import CliError, CliUsageError, ExitStatus, to_cli_error

URL = "https://api.e2b.app"


def convert(error: Exception) -> CliError:
    return to_cli_error(error, api_url=URL, request_timeout=30.0)


def test_exit_statuses_are_the_documented_ones() -> None:
    assert {s.name: int(s) for s in ExitStatus} == {"OK": 0, "FAILED": 1, "USAGE": 2}


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (SandboxPauseRefusedException("refused: agent"), ExitStatus.FAILED),
        (AuthenticationException("no key"), ExitStatus.USAGE),
        (AuthenticationException("bad key", status_code=401), ExitStatus.FAILED),
        (SandboxNotFoundException("gone", status_code=404), ExitStatus.FAILED),
        (RateLimitException("slow down", status_code=429), ExitStatus.FAILED),
        (ServiceBusyException("busy", status_code=503), ExitStatus.FAILED),
        (InvalidArgumentException("bad", status_code=400), ExitStatus.FAILED),
        (TimeoutException("late"), ExitStatus.FAILED),
        (SandboxException("other", status_code=500), ExitStatus.FAILED),
        (httpx.ConnectError("refused"), ExitStatus.FAILED),
        (httpx.ReadTimeout("late"), ExitStatus.FAILED),
        (RuntimeError("bug"), ExitStatus.FAILED),
    ],
)
def test_every_failure_has_a_status(error: Exception, status: ExitStatus) -> None:
    assert convert(error).exit_code == status


def test_refusal_is_verbatim_without_hint() -> None:
    converted = convert(SandboxPauseRefusedException("pause refused: node busy"))
    assert converted.verbatim
    assert converted.message == "pause refused: node busy"
    assert converted.hint is None
    out = io.StringIO()
    converted.show(out)
    assert out.getvalue() == "pause refused: node busy\n"


def test_error_and_hint_lines() -> None:
    out = io.StringIO()
    convert(SandboxNotFoundException("sandbox 'x' not found", status_code=404)).show(out)
    assert out.getvalue().splitlines() == [
        "Error: sandbox 'x' not found",
        "Run `e2b sandbox list` to see your team's sandboxes.",
    ]


def test_network_failure_names_the_url() -> None:
    assert convert(httpx.ConnectError("")).message == f"could not reach the API at {URL}: ConnectError"


def test_timeout_without_limit() -> None:
    converted = to_cli_error(TimeoutException("late"), api_url=URL, request_timeout=None)
    assert converted.message == f"no answer from the API at {URL}."


def test_unexpected_error_points_at_debug() -> None:
    converted = convert(RuntimeError("boom"))
    assert converted.message == "unexpected error: RuntimeError: boom"
    assert converted.hint is not None and "--debug" in converted.hint


def test_cli_error_passes_through() -> None:
    original = CliUsageError("x")
    assert convert(original) is original
