"""`e2b_cli.progress`: the SDK's retries said on stderr, unless `--quiet`."""

from __future__ import annotations

import logging
import re

import httpx
from e2b_cli.errors import ExitStatus
from e2b_cli.progress import RETRY_LOGGER

from tests.cli.conftest import SANDBOX_ID, Invoke, MockApi, error, sandbox_json

INFO = f"/sandboxes/{SANDBOX_ID}"
ANNOUNCEMENT = re.compile(r"busy \(503\), retrying in \d+\.\d s \((\d)/3\)")


def _busy_twice(api: MockApi) -> None:
    api.on("GET", INFO, error(503, "node busy"), error(503, "node busy"), httpx.Response(200, json=sandbox_json()))


def test_each_retry_is_announced_on_stderr(api: MockApi, run: Invoke) -> None:
    _busy_twice(api)
    result = run("sandbox", "info", SANDBOX_ID)
    assert result.exit_code == ExitStatus.OK
    lines = result.stderr.splitlines()
    assert [ANNOUNCEMENT.fullmatch(line) is not None for line in lines] == [True, True], lines
    assert [m.group(1) for m in map(ANNOUNCEMENT.fullmatch, lines) if m] == ["1", "2"]
    assert SANDBOX_ID in result.stdout  # stdout stays the command's own


def test_quiet_announces_nothing(api: MockApi, run: Invoke) -> None:
    for flag in ("--quiet", "-q"):
        _busy_twice(api)
        result = run(flag, "sandbox", "info", SANDBOX_ID)
        assert result.exit_code == ExitStatus.OK
        assert result.stderr == ""
    assert len(api.requests) == 6  # the retries happened, silently


def test_the_handler_leaves_with_the_command(api: MockApi, run: Invoke) -> None:
    logger = logging.getLogger(RETRY_LOGGER)
    handlers, level = list(logger.handlers), logger.level
    _busy_twice(api)
    assert run("sandbox", "info", SANDBOX_ID).exit_code == ExitStatus.OK
    assert (logger.handlers, logger.level) == (handlers, level)


def test_a_busy_answer_sent_once_is_not_called_retried(api: MockApi, run: Invoke) -> None:
    # Above the SDK's maximum Retry-After (60 s): the answer is returned after one request.
    once = httpx.Response(503, json={"code": 503, "message": "node busy"}, headers={"Retry-After": "120"})
    api.on("GET", INFO, once)
    result = run("sandbox", "info", SANDBOX_ID)
    assert len(api.requests) == 1
    assert result.exit_code == ExitStatus.FAILED
    assert result.stderr.splitlines() == ["Error: node busy", "Try again in a minute."]


def test_a_busy_answer_retried_says_how_often_quiet_or_not(api: MockApi, run: Invoke) -> None:
    for flags in ([], ["--quiet"]):
        api.requests.clear()
        api.on("GET", INFO, error(503, "node busy"))
        result = run(*flags, "sandbox", "info", SANDBOX_ID)
        assert len(api.requests) == 4  # the first request and the SDK's 3 retries
        assert result.stderr.splitlines()[-2:] == [
            "Error: node busy",
            "The request was retried 3 times already: try again in a minute.",
        ]
