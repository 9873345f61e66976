"""`e2b sandbox ...` against real servers on 127.0.0.1 that answer 404s which are not the API's.

The local API server under a wrong path prefix (`/v1`) and a plain web server's
HTML 404 page: neither is "sandbox not found", `kill` does not report a sandbox
gone, and no hint sends the user to `e2b sandbox list`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result
from e2b_cli.errors import ExitStatus
from e2b_cli.main import cli
from e2b_cli.settings import CliState
from e2b_local_api import DEV_API_KEY

from tests.wrong_url_servers import html_404_server, local_api

from .conftest import assert_clean_error


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with local_api() as url:
        yield url


def e2b(url: str, *args: str) -> Result:
    # No transport in the state: the SDK's own HTTP stack, over a real socket.
    return CliRunner().invoke(cli, list(args), obj=CliState(), env={"E2B_API_URL": url, "E2B_API_KEY": DEV_API_KEY})


def _not_the_api(result: Result, request: str) -> None:
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr.startswith(f"Error: the answer is not the API's: {request} answered 404 ")
    assert "not found" not in result.stderr and "e2b sandbox list" not in result.stderr


@pytest.mark.parametrize(
    ("args", "request_line"),
    [
        (["sandbox", "list"], "GET {url}/v2/sandboxes"),
        (["sandbox", "info", "i123"], "GET {url}/sandboxes/i123"),
        (["sandbox", "kill", "i123"], "DELETE {url}/sandboxes/i123"),
        (["sandbox", "create"], "POST {url}/sandboxes"),
    ],
    ids=["list", "info", "kill", "create"],
)
def test_a_wrong_path_prefix_is_not_a_missing_sandbox(server_url: str, args: list[str], request_line: str) -> None:
    wrong = f"{server_url}/v1"
    _not_the_api(e2b(wrong, *args), request_line.format(url=wrong))


def test_kill_of_a_missing_sandbox_at_the_right_url_still_says_so(server_url: str) -> None:
    created = e2b(server_url, "sandbox", "create")
    assert created.exit_code == ExitStatus.OK, created.output
    sandbox_id = created.stdout.strip()
    _not_the_api(
        e2b(f"{server_url}/v1", "sandbox", "kill", sandbox_id), f"DELETE {server_url}/v1/sandboxes/{sandbox_id}"
    )
    assert e2b(server_url, "sandbox", "kill", sandbox_id).exit_code == ExitStatus.OK  # it was still running
    gone = e2b(server_url, "sandbox", "kill", sandbox_id)
    assert_clean_error(gone, ExitStatus.FAILED)
    assert gone.stderr.splitlines() == [
        f"Error: sandbox {sandbox_id!r} not found",
        "Run `e2b sandbox list` to see your team's sandboxes.",
    ]


def test_a_web_server_s_html_404_is_not_a_missing_sandbox() -> None:
    with html_404_server() as (url, paths):
        result = e2b(url, "sandbox", "info", "i123")
    assert_clean_error(result, ExitStatus.FAILED, lines=(1,))
    assert result.stderr == (
        f"Error: the answer is not the API's: GET {url}/sandboxes/i123 answered 404 with text/html; charset=utf-8, "
        "not JSON: is the API URL right, or is a proxy answering?\n"
    )
    assert paths == ["GET /sandboxes/i123"]
