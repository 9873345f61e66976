"""`e2b_cli.settings`: connection flags over the SDK's environment variables."""

from __future__ import annotations

import json

import httpx
import pytest
from e2b_cli.errors import CliError, ExitStatus
from e2b_cli.settings import CliState

from tests.cli.conftest import API_KEY, SANDBOX_ID, Invoke, MockApi

PAUSE = f"/sandboxes/{SANDBOX_ID}/pause"


@pytest.fixture(autouse=True)
def pausable(api: MockApi) -> None:
    api.on("POST", PAUSE, httpx.Response(200, json={"forced": False}))


def test_environment_is_used(api: MockApi, run: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("E2B_API_URL", "http://127.0.0.1:4000")
    assert run("sandbox", "pause", SANDBOX_ID).exit_code == ExitStatus.OK
    request = api.requests[0]
    assert str(request.url) == f"http://127.0.0.1:4000{PAUSE}"
    assert request.headers["X-API-Key"] == API_KEY


def test_domain_derives_the_url(api: MockApi, run: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("E2B_DOMAIN", "example.test")
    run("sandbox", "pause", SANDBOX_ID)
    assert api.requests[0].url.host == "api.example.test"
    run("--domain", "other.test", "sandbox", "pause", SANDBOX_ID)
    assert api.requests[1].url.host == "api.other.test"


def test_flags_beat_environment(api: MockApi, run: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("E2B_API_URL", "http://127.0.0.1:4000")
    result = run("--api-key", "flag-key", "--api-url", "http://127.0.0.1:5000", "sandbox", "pause", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK
    assert api.requests[0].headers["X-API-Key"] == "flag-key"
    assert api.requests[0].url.port == 5000


def test_flags_after_the_command_beat_flags_before(api: MockApi, run: Invoke) -> None:
    result = run("--api-key", "outer", "sandbox", "pause", SANDBOX_ID, "--api-key", "inner")
    assert result.exit_code == ExitStatus.OK
    assert api.requests[0].headers["X-API-Key"] == "inner"


def test_key_flag_without_environment(api: MockApi, run: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E2B_API_KEY")
    assert run("sandbox", "pause", SANDBOX_ID, "--api-key", "k").exit_code == ExitStatus.OK


def test_empty_key_is_missing(run: Invoke) -> None:
    assert run("sandbox", "pause", SANDBOX_ID, "--api-key", "", env={"E2B_API_KEY": ""}).exit_code == ExitStatus.USAGE


def test_params_leave_unset_options_to_the_sdk() -> None:
    assert CliState().params() == {}
    state = CliState(api_key="k", request_timeout=0)
    assert state.params() == {"api_key": "k", "request_timeout": 0}


def test_api_params_require_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("E2B_API_KEY")
    with pytest.raises(CliError) as raised:
        CliState().api_params()
    assert raised.value.exit_code == ExitStatus.USAGE
    assert CliState(api_key="k").api_params() == {"api_key": "k"}


def test_request_timeout_is_validated(run: Invoke) -> None:
    assert run("--request-timeout", "-1", "sandbox", "list").exit_code == ExitStatus.USAGE
    for value in ("inf", "1e308", "31536001"):  # more than a year: a wait no clock below can take
        assert run("--request-timeout", value, "sandbox", "list").exit_code == ExitStatus.USAGE


@pytest.mark.parametrize(
    "url", ["notaurl", "ftp://x", "http://", "https://:80", "http://host:99999", "http://host:port"]
)
@pytest.mark.parametrize("where", ["flag", "environment"])
def test_a_malformed_api_url_is_a_usage_error(
    api: MockApi, run: Invoke, monkeypatch: pytest.MonkeyPatch, url: str, where: str
) -> None:
    if where == "flag":
        result = run("sandbox", "pause", SANDBOX_ID, "--api-url", url)
    else:
        monkeypatch.setenv("E2B_API_URL", url)
        result = run("sandbox", "pause", SANDBOX_ID)
    assert result.exit_code == ExitStatus.USAGE, result.stderr
    first, hint = result.stderr.splitlines()
    assert first == f"Error: invalid API URL {url!r}: expected http:// or https:// and a host, e.g. https://api.e2b.app"
    assert "--api-url or E2B_API_URL" in hint
    assert api.requests == []


def test_a_malformed_api_url_with_json(api: MockApi, run: Invoke) -> None:
    result = run("sandbox", "pause", SANDBOX_ID, "--json", "--api-url", "ftp://x")
    assert result.exit_code == ExitStatus.USAGE
    assert result.stderr == ""
    error = json.loads(result.stdout)["error"]
    assert (error["status"], error["error_code"]) == (None, None) and "invalid API URL" in error["message"]


def test_the_api_url_setting_is_the_one_the_sdk_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    assert CliState().api_url_setting() == "https://api.e2b.app"
    monkeypatch.setenv("E2B_DOMAIN", "example.test")
    assert CliState().api_url_setting() == "https://api.example.test"
    assert CliState(domain="other.test").api_url_setting() == "https://api.other.test"
    monkeypatch.setenv("E2B_API_URL", "notaurl")
    assert CliState().api_url_setting() == "notaurl"  # unchecked: config() says what is wrong with it
    assert CliState(api_url="http://127.0.0.1:1").api_url_setting() == "http://127.0.0.1:1"
    with pytest.raises(CliError) as raised:
        CliState().config()
    assert raised.value.exit_code == ExitStatus.USAGE


def test_a_failure_is_worded_even_when_the_settings_are_wrong() -> None:
    from e2b_cli.main import _where

    assert _where(CliState(api_url="ftp://x")) == (None, None)
    assert _where(CliState(api_url="http://127.0.0.1:1", request_timeout=5)) == ("http://127.0.0.1:1", 5)
