"""e2b._config: connection settings from options and the environment."""

from __future__ import annotations

import pytest
from e2b import ConnectionConfig, InvalidArgumentException
from e2b._config import MAX_REQUEST_TIMEOUT

pytestmark = pytest.mark.usefixtures("clean_env")


def test_defaults() -> None:
    config = ConnectionConfig()
    assert (config.api_url, config.domain, config.debug, config.api_key) == (
        "https://api.e2b.app",
        "e2b.app",
        False,
        None,
    )
    assert config.request_timeout == 30.0
    assert config.headers == {}


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("E2B_API_KEY", "env-key")
    monkeypatch.setenv("E2B_DOMAIN", "example.dev")
    config = ConnectionConfig()
    assert (config.api_key, config.api_url) == ("env-key", "https://api.example.dev")
    monkeypatch.setenv("E2B_API_URL", "https://override.test")
    assert ConnectionConfig().api_url == "https://override.test"


def test_options_beat_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("E2B_API_KEY", "env-key")
    monkeypatch.setenv("E2B_API_URL", "https://env.test")
    config = ConnectionConfig(api_key="opt-key", api_url="https://opt.test")
    assert (config.api_key, config.api_url) == ("opt-key", "https://opt.test")


def test_debug_means_a_local_api(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ConnectionConfig(debug=True).api_url == "http://localhost:3000"
    monkeypatch.setenv("E2B_DEBUG", "true")
    assert ConnectionConfig().api_url == "http://localhost:3000"
    assert ConnectionConfig(debug=True, api_url="http://x.test").api_url == "http://x.test"


def test_zero_timeout_means_no_limit() -> None:
    assert ConnectionConfig(request_timeout=0).request_timeout is None
    assert ConnectionConfig(request_timeout=5).request_timeout == 5


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e308, 10**400, MAX_REQUEST_TIMEOUT + 1, -1])
def test_a_timeout_no_clock_can_wait_is_refused(value: float) -> None:
    """Waits that long overflow pyqwest's durations and a lock's timeout: refused before any request."""
    with pytest.raises(InvalidArgumentException, match="request_timeout must be a number of seconds from 0"):
        ConnectionConfig(request_timeout=value)
    assert ConnectionConfig(request_timeout=MAX_REQUEST_TIMEOUT).request_timeout == MAX_REQUEST_TIMEOUT


def test_merged_overrides_only_what_is_given() -> None:
    base = ConnectionConfig(api_key="k", domain="d.test", headers={"A": "1"}, request_timeout=0)
    merged = base.merged(request_timeout=3, api_key=None)
    assert (merged.api_key, merged.domain, merged.headers, merged.request_timeout) == ("k", "d.test", {"A": "1"}, 3)
    assert base.merged().request_timeout is None


def test_repr_hides_the_key() -> None:
    assert "secret" not in repr(ConnectionConfig(api_key="secret"))
