"""The sandbox calls against real servers on 127.0.0.1: which 404 is the API's, and the key a file gave.

The local API server is reached at its root and under a wrong path prefix
(`/v1`, where it answers its JSON "no such path" 404 without an `error_code`);
a plain web server answers an HTML 404 page. Only the API's own
`sandbox_not_found` means "no such sandbox": anything else is
`UnexpectedResponseException` naming the request, and `kill()` raises it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from e2b import (
    AuthenticationException,
    SandboxNotFoundException,
    UnexpectedResponseException,
)
from e2b_local_api import DEV_API_KEY

from tests.wrong_url_servers import html_404_server, local_api

from .conftest import Flavour

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("clean_env")]


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with local_api() as url:
        yield url


@pytest.fixture
def html_404() -> Iterator[tuple[str, list[str]]]:
    with html_404_server() as served:
        yield served


def _not_the_api(error: BaseException, request: str) -> None:
    assert type(error) is UnexpectedResponseException, repr(error)
    assert not isinstance(error, SandboxNotFoundException)
    assert error.status_code == 404 and error.error_code is None
    assert error.message.startswith(f"the answer is not the API's: {request} answered 404 ")
    assert "is the API URL right" in error.message and "proxy" in error.message


async def test_a_wrong_path_prefix_is_not_a_missing_sandbox(sdk: Flavour, server_url: str) -> None:
    wrong = {"api_key": DEV_API_KEY, "api_url": f"{server_url}/v1"}
    with pytest.raises(UnexpectedResponseException) as created:
        await sdk.call(sdk.cls.create, **wrong)
    _not_the_api(created.value, f"POST {server_url}/v1/sandboxes")
    with pytest.raises(UnexpectedResponseException) as info:
        await sdk.call(sdk.cls.get_info, "i123", **wrong)
    _not_the_api(info.value, f"GET {server_url}/v1/sandboxes/i123")


async def test_kill_raises_for_a_404_that_is_not_the_api_s(sdk: Flavour, server_url: str) -> None:
    right = {"api_key": DEV_API_KEY, "api_url": server_url}
    sandbox = await sdk.call(sdk.cls.create, **right)
    try:
        with pytest.raises(UnexpectedResponseException) as killed:
            await sdk.call(sdk.cls.kill, sandbox.sandbox_id, api_key=DEV_API_KEY, api_url=f"{server_url}/v1")
        _not_the_api(killed.value, f"DELETE {server_url}/v1/sandboxes/{sandbox.sandbox_id}")
        # Cleanup code that trusted a False would have left it running: it is.
        assert (await sdk.call(sdk.cls.get_info, sandbox.sandbox_id, **right)).state == "running"
    finally:
        assert await sdk.call(sdk.cls.kill, sandbox.sandbox_id, **right) is True
    # The API's own sandbox_not_found, and only it, is a False.
    assert await sdk.call(sdk.cls.kill, sandbox.sandbox_id, **right) is False
    with pytest.raises(SandboxNotFoundException) as missing:
        await sdk.call(sdk.cls.get_info, sandbox.sandbox_id, **right)
    assert missing.value.error_code == "sandbox_not_found"


async def test_a_web_server_s_html_404_is_not_a_missing_sandbox(sdk: Flavour, html_404: tuple[str, list[str]]) -> None:
    url, paths = html_404
    for call, request in (
        (sdk.cls.get_info, f"GET {url}/sandboxes/i123"),
        (sdk.cls.kill, f"DELETE {url}/sandboxes/i123"),
        (sdk.cls.pause, f"POST {url}/sandboxes/i123/pause"),
    ):
        with pytest.raises(UnexpectedResponseException) as raised:
            await sdk.call(call, "i123", api_key="k", api_url=url)
        assert type(raised.value) is UnexpectedResponseException
        assert raised.value.message == (
            f"the answer is not the API's: {request} answered 404 with text/html; charset=utf-8, not JSON: "
            "is the API URL right, or is a proxy answering?"
        )
    assert paths == ["GET /sandboxes/i123", "DELETE /sandboxes/i123", "POST /sandboxes/i123/pause"]


@pytest.mark.parametrize("ending", ["\n", "\r\n", " \t\n"])
async def test_a_key_read_from_a_file_loses_its_line_break(
    sdk: Flavour, server_url: str, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    # open("key").read() and a CRLF .env both end the key with a line break, which no header can carry.
    sandbox = await sdk.call(sdk.cls.create, api_key=DEV_API_KEY + ending, api_url=server_url)
    monkeypatch.setenv("E2B_API_KEY", DEV_API_KEY + ending)
    assert await sdk.call(sdk.cls.kill, sandbox.sandbox_id, api_url=server_url) is True
    # What is left is sent as it is: a key the API does not know is still rejected by the API.
    with pytest.raises(AuthenticationException) as rejected:
        await sdk.call(sdk.cls.get_info, "i123", api_key="e2b_other" + ending, api_url=server_url)
    assert rejected.value.status_code == 401
