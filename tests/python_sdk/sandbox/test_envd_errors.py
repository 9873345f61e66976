"""The mapping of envd's failures to the SDK's exceptions, without a server."""

from __future__ import annotations

import asyncio

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from e2b import (
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
from e2b._exceptions import connect_code
from e2b.sandbox import envd_errors
from pyqwest import ReadError


def wrapped(code: Code, message: str, cause: BaseException) -> ConnectError:
    error = ConnectError(code, message)
    error.__cause__ = cause
    return error


def test_a_cancelled_task_stays_cancelled() -> None:
    cancelled = asyncio.CancelledError()
    assert envd_errors.rpc_exception(wrapped(Code.CANCELED, "x", cancelled)) is cancelled


def test_a_dropped_connection_asks_for_a_probe_and_its_answer_decides() -> None:
    dropped = wrapped(Code.UNAVAILABLE, "reset", ReadError("reset"))
    assert envd_errors.needs_probe(dropped)
    assert type(envd_errors.rpc_exception(dropped, sandbox_running=False)) is SandboxNotRunningException
    assert type(envd_errors.rpc_exception(dropped, sandbox_running=True)) is SandboxUnreachableException
    assert type(envd_errors.rpc_exception(dropped)) is SandboxUnreachableException


def test_the_proxy_s_words_decide_without_a_probe() -> None:
    gone = ConnectError(Code.UNAVAILABLE, "sandbox abc was not found")
    closed = ConnectError(Code.UNAVAILABLE, "port is not open")
    assert not envd_errors.needs_probe(gone) and not envd_errors.needs_probe(closed)
    assert type(envd_errors.rpc_exception(gone)) is SandboxNotRunningException
    assert type(envd_errors.rpc_exception(closed)) is SandboxUnreachableException
    assert envd_errors.needs_probe(ConnectError(Code.UNAVAILABLE, "stream ended"))


def test_a_client_deadline_is_a_timeout_not_a_probe() -> None:
    late = wrapped(Code.DEADLINE_EXCEEDED, "Request timed out", TimeoutError())
    assert not envd_errors.needs_probe(late)
    assert type(envd_errors.rpc_exception(late)) is TimeoutException


def test_an_answer_that_cannot_be_decoded_is_not_envd_s() -> None:
    garbage = wrapped(Code.UNAVAILABLE, "bad varint", ValueError("bad varint"))
    assert not envd_errors.needs_probe(garbage)
    error = envd_errors.rpc_exception(garbage)
    assert type(error) is UnexpectedResponseException and "not envd's" in str(error)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (Code.NOT_FOUND, FileNotFoundException),
        (Code.INVALID_ARGUMENT, InvalidArgumentException),
        (Code.PERMISSION_DENIED, AuthenticationException),
        (Code.RESOURCE_EXHAUSTED, RateLimitException),
        (Code.ABORTED, SandboxException),
    ],
)
def test_codes_with_a_file_not_found_class(code: Code, expected: type) -> None:
    error = envd_errors.rpc_exception(ConnectError(code, "m"), not_found=FileNotFoundException)
    assert type(error) is expected
    assert isinstance(error.__cause__, ConnectError)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (Code.UNAUTHENTICATED, AuthenticationException),  # envd's "invalid username"
        (Code.INVALID_ARGUMENT, InvalidArgumentException),  # envd's "cwd ... does not exist"
        (Code.PERMISSION_DENIED, AuthenticationException),
        (Code.NOT_FOUND, NotFoundException),
        (Code.ABORTED, SandboxException),
    ],
)
def test_envd_s_answer_carries_its_connect_code(code: Code, expected: type) -> None:
    # envd's refusals have no HTTP status, as the SDK's own refusals before sending have none: the code tells.
    error = envd_errors.rpc_exception(ConnectError(code, "m"))
    assert type(error) is expected and isinstance(error, SandboxException) and error.status_code is None
    assert connect_code(error) == code.value


def test_no_connect_code_without_envd_s_answer() -> None:
    # The SDK's own refusals, and whatever connectrpc raised itself, are not envd's answers.
    assert connect_code(InvalidArgumentException("cmd must be a non-empty str (got '')")) is None
    assert connect_code(AuthenticationException("no API key: pass api_key=...")) is None
    assert connect_code(envd_errors.http_exception(400, b'{"message": "bad path"}')) is None
    for not_an_answer in (
        wrapped(Code.DEADLINE_EXCEEDED, "Request timed out", TimeoutError()),
        wrapped(Code.UNAVAILABLE, "reset", ReadError("reset")),
        wrapped(Code.UNAVAILABLE, "bad varint", ValueError("bad varint")),
    ):
        assert connect_code(envd_errors.rpc_exception(not_an_answer)) is None, not_an_answer
    assert connect_code(ValueError("not the SDK's")) is None


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, b'{"message": "bad path"}', InvalidArgumentException),
        (401, b"", AuthenticationException),
        (404, b'{"message": "no file"}', NotFoundException),
        (429, b"", RateLimitException),
        (502, b'{"message": "sandbox x was not found"}', SandboxNotRunningException),
        (502, b"<html>bad gateway</html>", SandboxUnreachableException),
        (507, b'{"message": "disk full"}', NotEnoughSpaceException),
        (500, b"oops", SandboxException),
    ],
)
def test_http_statuses(status: int, body: bytes, expected: type) -> None:
    error = envd_errors.http_exception(status, body)
    assert type(error) is expected and error.status_code == status


def test_health_answers() -> None:
    assert envd_errors.health_state(204, b"") is True
    assert envd_errors.health_state(502, b'{"message": "sandbox x was not found"}') is False
    assert envd_errors.health_state(500, b"") is None
    with pytest.raises(SandboxUnreachableException):
        envd_errors.health_state(502, b"port is not open")
