"""Fixtures for the CLI tests: a scripted API behind `httpx.MockTransport`, and a runner.

`FakeApi` answers each (method, path) with what a test scripted, records every
request, and is injected through `CliState(transport=...)`, the same seam the
SDK offers (`transport=`), so the whole SDK request path runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import e2b._http
import httpx
import pytest
from click.testing import CliRunner, Result
from e2b_cli.main import cli
from e2b_cli.settings import CliState

SANDBOX_ID = "sbx_test123"
API_KEY = "e2b_test_key"
CONNECTION_ENV = ("E2B_API_KEY", "E2B_API_URL", "E2B_DOMAIN", "E2B_DEBUG", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE")

Answer = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def sandbox_json(sandbox_id: str = SANDBOX_ID, *, state: str = "running", **extra: Any) -> dict[str, Any]:
    return {
        "sandboxID": sandbox_id,
        "templateID": "base",
        "state": state,
        "startedAt": "2025-01-02T03:04:05+00:00",
        "endAt": "2025-01-02T03:09:05+00:00",
        "cpuCount": 2,
        "memoryMB": 512,
        "envdVersion": "0.2.0",
        "metadata": {"team": "qa"},
        **extra,
    }


def error(status: int, message: str, error_code: str | None = None) -> httpx.Response:
    body: dict[str, Any] = {"code": status, "message": message}
    if error_code is not None:
        body["error_code"] = error_code
    return httpx.Response(status, json=body)


@dataclass
class FakeApi:
    answers: dict[tuple[str, str], list[Answer]] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)

    def on(self, method: str, path: str, *answers: Answer) -> FakeApi:
        """Answer `method path` with these, in turn; the last one repeats."""
        self.answers[(method, path)] = list(answers)
        return self

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        queue = self.answers.get((request.method, request.url.path))
        if not queue:
            return error(404, f"no route {request.method} {request.url.path}")
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return answer
        return answer(request)

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CONNECTION_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("E2B_API_KEY", API_KEY)
    # The SDK backs off between retries of busy answers; tests need not wait.
    monkeypatch.setattr(e2b._http, "retry_sleep", lambda _seconds: None)


@pytest.fixture
def api() -> FakeApi:
    return FakeApi()


@dataclass
class Invoke:
    api: FakeApi

    def __call__(self, *args: str, env: dict[str, str | None] | None = None) -> Result:
        runner = CliRunner()
        return runner.invoke(cli, list(args), obj=CliState(transport=self.api.transport), env=env)


@pytest.fixture
def run(api: FakeApi) -> Iterator[Invoke]:
    yield Invoke(api)


def assert_clean_error(result: Result, exit_code: int, *, lines: Sequence[int] = (1, 2)) -> None:
    """A failure the way users must see it: stderr only, short, no traceback."""
    assert result.exit_code == exit_code, (result.exit_code, result.output, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) in lines, result.stderr
    assert isinstance(result.exception, SystemExit)


__all__ = ["API_KEY", "SANDBOX_ID", "FakeApi", "Invoke", "assert_clean_error", "error", "sandbox_json"]
