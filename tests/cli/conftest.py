"""Fixtures for the CLI tests: the scripted API (`tests.mock_api`) and a runner.

The API is injected through `CliState(transport=...)`, the same seam the SDK
offers (`transport=`), so the whole SDK request path runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner, Result
from e2b_cli.main import cli
from e2b_cli.settings import CliState

from tests.mock_api import MockApi, error

SANDBOX_ID = "sbx_test123"
API_KEY = "e2b_test_key"
CONNECTION_ENV = ("E2B_API_KEY", "E2B_API_URL", "E2B_DOMAIN", "E2B_DEBUG", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE")


def sandbox_json(sandbox_id: str = SANDBOX_ID, *, state: str = "running", **extra: Any) -> dict[str, Any]:
    return {
        "sandboxID": sandbox_id,
        "templateID": "base",
        "clientID": "client",
        "state": state,
        "startedAt": "2025-01-02T03:04:05+00:00",
        "endAt": "2025-01-02T03:09:05+00:00",
        "cpuCount": 2,
        "memoryMB": 512,
        "diskSizeMB": 1024,
        "envdVersion": "0.2.0",
        "metadata": {"team": "qa"},
        **extra,
    }


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, sleeps: list[float]) -> None:
    for name in CONNECTION_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("E2B_API_KEY", API_KEY)
    # `sleeps`: the SDK backs off between retries of busy answers; tests need not wait.


@pytest.fixture
def api() -> MockApi:
    return MockApi()


@dataclass
class Invoke:
    api: MockApi

    def __call__(self, *args: str, env: dict[str, str | None] | None = None) -> Result:
        runner = CliRunner()
        return runner.invoke(cli, list(args), obj=CliState(transport=self.api.transport()), env=env)


@pytest.fixture
def run(api: MockApi) -> Iterator[Invoke]:
    yield Invoke(api)


def assert_clean_error(result: Result, exit_code: int, *, lines: Sequence[int] = (1, 2)) -> None:
    """A failure the way users must see it: stderr only, short, no traceback."""
    assert result.exit_code == exit_code, (result.exit_code, result.output, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) in lines, result.stderr
    assert isinstance(result.exception, SystemExit)


__all__ = ["API_KEY", "SANDBOX_ID", "Invoke", "MockApi", "assert_clean_error", "error", "sandbox_json"]
