"""`e2b_cli.errors`: the one mapping from a failure to its message and exit status."""

from __future__ import annotations

import io
import json

import httpx
import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from e2b import (
    AuthenticationException,
    ConnectionException,
    InvalidArgumentException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxPauseRefusedException,
    ServiceBusyException,
    TimeoutException,
    UnexpectedResponseException,
)
from e2b.sandbox.envd_errors import rpc_exception
from e2b_cli.errors import (
    MEANINGS,
    CliError,
    CliUsageError,
    ClosedPipe,
    ExitStatus,
    exit_status_help,
    not_found,
    snapshot_not_found,
    to_cli_error,
)

URL = "https://api.e2b.app"


def convert(error: Exception) -> CliError:
    return to_cli_error(error, api_url=URL, request_timeout=30.0)


def test_exit_statuses_are_the_documented_ones() -> None:
    assert {s.name: int(s) for s in ExitStatus} == {
        "OK": 0,
        "FAILED": 1,
        "USAGE": 2,
        "NO_ANSWER": 3,
        "INTERRUPTED": 130,
        "CLOSED_PIPE": 141,
    }
    assert set(MEANINGS) == set(ExitStatus)
    help_text = exit_status_help()
    for status, meaning in MEANINGS.items():
        assert f"  {int(status):<3}  {meaning.split()[0]}" in help_text


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (SandboxPauseRefusedException("refused: agent"), ExitStatus.FAILED),
        (AuthenticationException("no key"), ExitStatus.USAGE),
        (AuthenticationException("bad key", status_code=401), ExitStatus.FAILED),
        (SandboxNotFoundException("gone", status_code=404), ExitStatus.FAILED),
        (NotFoundException("no such template", status_code=404), ExitStatus.FAILED),
        (ConnectionException("could not talk to the API"), ExitStatus.NO_ANSWER),
        (RateLimitException("slow down", status_code=429), ExitStatus.FAILED),
        (ServiceBusyException("busy", status_code=503), ExitStatus.FAILED),
        (InvalidArgumentException("bad", status_code=400), ExitStatus.FAILED),
        (TimeoutException("late"), ExitStatus.NO_ANSWER),
        (SandboxException("other", status_code=500), ExitStatus.FAILED),
        (httpx.ConnectError("refused"), ExitStatus.NO_ANSWER),
        (httpx.ConnectError("[Errno -2] Name or service not known"), ExitStatus.NO_ANSWER),
        (httpx.ReadTimeout("late"), ExitStatus.NO_ANSWER),
        (httpx.RemoteProtocolError("cut off"), ExitStatus.NO_ANSWER),
        (BrokenPipeError(), ExitStatus.CLOSED_PIPE),
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
    missing = SandboxNotFoundException("gone", status_code=404, error_code="sandbox_not_found")
    to_cli_error(missing, api_url=URL, request_timeout=30.0, sandbox_ids=("x",)).show(out)
    assert out.getvalue().splitlines() == [
        "Error: sandbox 'x' not found",
        "Run `e2b sandbox list` to see your team's sandboxes.",
    ]


def test_the_listing_hint_follows_only_a_named_sandbox_missing() -> None:
    # `e2b sandbox list` names no sandbox: its own failure must not send the user back to it.
    missing = SandboxNotFoundException("gone", status_code=404, error_code="sandbox_not_found")
    assert convert(missing).hint is None
    for other in (
        UnexpectedResponseException("the answer is not the API's: a proxy", status_code=404),
        NotFoundException("no such template", status_code=404, error_code="template_not_found"),
        InvalidArgumentException("bad", status_code=400),
        ServiceBusyException("busy", status_code=503),
    ):
        hint = to_cli_error(other, api_url=URL, request_timeout=30.0, sandbox_ids=("x",)).hint or ""
        assert "e2b sandbox list" not in hint, other


def test_a_value_the_sdk_refused_before_sending_is_a_usage_error() -> None:
    refused = convert(InvalidArgumentException("sandbox_id must not be empty: pass the sandbox id"))
    assert (type(refused), refused.exit_code) == (CliUsageError, ExitStatus.USAGE)
    assert refused.message == "sandbox_id must not be empty: pass the sandbox id"
    answered = convert(InvalidArgumentException("bad", status_code=400))
    assert answered.exit_code == ExitStatus.FAILED and answered.message.startswith("the API refused")


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (Code.UNAUTHENTICATED, "invalid username: 'nobodyxx'"),  # `exec -u nobodyxx`
        (Code.PERMISSION_DENIED, "permission denied"),
        (Code.INVALID_ARGUMENT, "cwd '/nonexistent' does not exist"),  # `exec -c /nonexistent`
    ],
)
def test_the_sandbox_s_refusal_is_a_failure_not_a_missing_key_or_a_usage_error(code: Code, message: str) -> None:
    # Mapped by the SDK as it maps envd's answers: no HTTP status, as the SDK's own refusals before sending.
    answer = rpc_exception(ConnectError(code, message))
    assert isinstance(answer, SandboxException) and answer.status_code is None
    refused = convert(answer)
    assert (type(refused), refused.exit_code) == (CliError, ExitStatus.FAILED)
    assert refused.message == f"the sandbox refused the request: {message}"
    assert refused.hint == "Check the user (-u) and the directory (-c): both must exist in the sandbox."
    assert refused.to_json() == {"error": {"status": None, "error_code": None, "message": refused.message}}
    assert convert(AuthenticationException("no key")).message == "no API key."  # the SDK's own: unchanged


def test_a_sandbox_that_stopped_under_the_command_is_a_failure_not_a_timeout_of_ours() -> None:
    # Both are TimeoutExceptions, as in e2b 2.x: "raise --request-timeout" would be the wrong advice.
    for gone in (
        rpc_exception(ConnectError(Code.UNAVAILABLE, "sandbox s1 was not found")),
        rpc_exception(ConnectError(Code.CANCELED, "the sandbox was paused")),
    ):
        assert isinstance(gone, TimeoutException)
        converted = convert(gone)
        assert (converted.exit_code, converted.hint) == (
            ExitStatus.FAILED,
            "Run `e2b sandbox list` to see your team's sandboxes.",
        )
        assert converted.message.startswith(f"the sandbox stopped during the command: {gone.message.split(':')[0]}")
        assert "timeout=" not in converted.message and "set_timeout()" not in converted.message
    assert convert(TimeoutException("late")).exit_code == ExitStatus.NO_ANSWER  # a timeout of ours: unchanged


def test_a_sandbox_that_timed_out_is_advised_in_the_cli_s_words_not_the_sdk_s() -> None:
    error = rpc_exception(ConnectError(Code.UNAVAILABLE, "sandbox s1 was not found"))
    assert isinstance(error, Exception)
    gone = convert(error)
    assert gone.message == (
        "the sandbox stopped during the command: sandbox s1 was not found: the sandbox was killed, paused or "
        "reached its timeout: set a longer one with `--timeout` at create or `e2b sandbox timeout`"
    )


def test_network_failure_names_the_url() -> None:
    assert convert(httpx.ConnectError("")).message == f"could not reach the API at {URL}: ConnectError"


def test_timeout_says_how_long_it_waited_and_the_limit() -> None:
    converted = to_cli_error(TimeoutException("late"), api_url=URL, request_timeout=30.0, elapsed=30.04)
    assert converted.message == f"no answer from the API at {URL} (gave up after 30.0 s)."
    assert converted.hint == "Retry, or allow longer with --request-timeout SECONDS (now 30 s; 0 means no limit)."
    unlimited = to_cli_error(TimeoutException("late"), api_url=URL, request_timeout=None)
    assert unlimited.message == f"no answer from the API at {URL}."
    assert unlimited.hint is not None and "now no limit" in unlimited.hint


def test_unexpected_error_points_at_debug() -> None:
    converted = convert(RuntimeError("boom"))
    assert converted.message == "unexpected error: RuntimeError: boom"
    assert converted.hint is not None and "--debug" in converted.hint


def test_cli_error_passes_through() -> None:
    original = CliUsageError("x")
    assert convert(original) is original


def test_not_found_has_one_wording_whatever_the_api_said() -> None:
    api_error = SandboxNotFoundException(
        "no sandbox with id nope here", status_code=404, error_code="sandbox_not_found"
    )
    one = to_cli_error(api_error, api_url=URL, request_timeout=30.0, sandbox_ids=["nope"])
    assert one.message == "sandbox 'nope' not found"
    assert one.to_json() == {"error": {"status": 404, "error_code": "sandbox_not_found", "message": one.message}}
    assert not_found(["nope"]).message == one.message  # what `kill` raises itself
    assert not_found(["a", "b"]).message == "sandboxes 'a', 'b' not found"


@pytest.mark.parametrize(
    "error",
    [
        ServiceBusyException("the service is busy, retry later", status_code=503),
        RateLimitException("rate limited: too many requests", status_code=429),
        InvalidArgumentException("timeout: must be at most 86400", status_code=400),
    ],
)
def test_no_message_repeats_itself(error: SandboxException) -> None:
    converted = convert(error)
    assert converted.hint is not None

    def words(text: str) -> set[str]:
        return {w.strip(".,:;()").lower() for w in text.split() if len(w) > 4}

    assert not words(converted.hint) & words(error.message), (converted.message, converted.hint)


def test_json_errors_go_to_stdout_as_one_object() -> None:
    converted = convert(SandboxPauseRefusedException("pause refused: node busy"))
    converted.as_json = True
    out = io.StringIO()
    converted.show(out)
    assert json.loads(out.getvalue()) == {
        "error": {"status": 503, "error_code": "sandbox_pause_refused", "message": "pause refused: node busy"}
    }
    local = convert(httpx.ConnectError("refused"))
    assert local.to_json()["error"]["status"] is None and local.to_json()["error"]["error_code"] is None


def test_a_closed_pipe_prints_nothing() -> None:
    out = io.StringIO()
    ClosedPipe().show(out)
    assert out.getvalue() == ""


def test_network_failure_says_the_innermost_cause_once() -> None:
    nested = (
        "Request failed: error sending request for url (http://127.0.0.1:9/v2/sandboxes): "
        "client error (Connect): tcp connect error: Connection refused (os error 111)"
    )
    converted = convert(httpx.ConnectError(nested))
    assert converted.message == f"could not reach the API at {URL}: Connection refused (os error 111)"


SDK_ADVICE = "; check api_url (E2B_API_URL), domain (E2B_DOMAIN) and the network"


def _connection_exception(cause: Exception | None) -> ConnectionException:
    detail = str(cause) if cause is not None else "cut off"
    error = ConnectionException(f"could not talk to the API at {URL}: {detail}{SDK_ADVICE}")
    error.__cause__ = cause
    return error


def test_the_sdk_s_connection_failure_reads_as_the_transport_s() -> None:
    nested = "error sending request for url (http://127.0.0.1:9/v2/sandboxes): tcp connect error: Connection refused"
    from_sdk = convert(_connection_exception(httpx.ConnectError(nested)))
    assert from_sdk.exit_code == ExitStatus.NO_ANSWER
    assert from_sdk.message == f"could not reach the API at {URL}: Connection refused"
    assert from_sdk.message == convert(httpx.ConnectError(nested)).message  # the same wording as before the SDK's
    assert from_sdk.hint is not None and "--api-url" in from_sdk.hint
    assert from_sdk.to_json()["error"] == {"status": None, "error_code": None, "message": from_sdk.message}


def test_a_connection_failure_without_a_cause_keeps_the_sdk_s_message() -> None:
    converted = convert(_connection_exception(None))
    assert converted.exit_code == ExitStatus.NO_ANSWER
    assert converted.message.startswith(f"could not reach the API at {URL}: could not talk to the API")
    assert len(converted.message.splitlines()) == 1


def test_not_found_other_than_a_sandbox_keeps_the_api_s_message() -> None:
    converted = to_cli_error(
        NotFoundException("template 'py' not found", status_code=404, error_code="template_not_found"),
        api_url=URL,
        request_timeout=30.0,
        sandbox_ids=["sbx_1"],
    )
    assert converted.message == "template 'py' not found"  # not "sandbox 'sbx_1' not found"
    assert converted.to_json()["error"]["error_code"] == "template_not_found"


def test_snapshot_not_found_has_one_wording() -> None:
    error = snapshot_not_found("team/ready:default")
    assert error.exit_code == ExitStatus.FAILED
    assert error.message == "snapshot 'team/ready:default' not found"
    assert error.hint == "Run `e2b sandbox snapshot list` to see your team's snapshots."
    assert error.to_json() == {"error": {"status": 404, "error_code": None, "message": error.message}}


BUSY = ServiceBusyException("busy", status_code=503)


@pytest.mark.parametrize(
    ("error", "retried", "hint"),
    [
        (ServiceBusyException("busy", status_code=503), 0, "Try again in a minute."),
        (BUSY, 1, "The request was retried once already: try again in a minute."),
        (BUSY, 3, "The request was retried 3 times already: try again in a minute."),
        (RateLimitException("slow down", status_code=429), 0, "Wait a little, then try again."),
        (
            RateLimitException("slow down", status_code=429),
            2,
            "The request was retried 2 times already: wait a little, then try again.",
        ),
    ],
)
def test_a_busy_answer_is_called_retried_only_when_it_was(error: SandboxException, retried: int, hint: str) -> None:
    converted = to_cli_error(error, api_url=URL, request_timeout=30.0, retried=retried)
    assert (converted.message, converted.hint) == (error.message, hint)


def test_an_answer_that_is_not_the_api_s_is_a_failure_not_an_unexpected_error() -> None:
    error = UnexpectedResponseException("the answer is not the API's: RecursionError: ...", status_code=200)
    converted = convert(error)
    assert (converted.exit_code, converted.message, converted.hint) == (
        ExitStatus.FAILED,
        "the answer is not the API's: RecursionError: ...",
        None,
    )
    assert converted.status == 200
