"""pause() and beta_pause() of Sandbox and AsyncSandbox, through the real HTTP stack.

Every reply goes through the retrying transport and then the generated
client's own response parsing; nothing below the SDK is mocked.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from e2b import (
    SANDBOX_PAUSE_REFUSED_ERROR_CODE,
    InvalidArgumentException,
    SandboxException,
    SandboxNotFoundException,
    SandboxPauseRefusedException,
    SandboxPauseResult,
    ServiceBusyException,
)

from tests.mock_api import MockApi

from .conftest import Flavour

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("sleeps")]

PAUSE = "/sandboxes/sbx-1/pause"
AGENT_REFUSAL = "pause refused: the guest agent did not answer the health check"
BUSY_REFUSAL = "pause refused: the node is too busy to take the snapshot"


def reply(status: int, body: Any = None) -> httpx.Response:
    if body is None:
        return httpx.Response(status)
    return httpx.Response(status, json=body)


def refusal(message: str) -> httpx.Response:
    return reply(503, {"code": 503, "message": message, "error_code": SANDBOX_PAUSE_REFUSED_ERROR_CODE})


async def pause(sdk: Flavour, api: MockApi, *, form: str = "class", **kwargs: Any) -> Any:
    if form == "class":
        return await sdk.call(sdk.cls.pause, "sbx-1", **kwargs, **api.opts())
    instance = sdk.cls("sbx-1")
    return await sdk.call(instance.pause, **kwargs, **api.opts())


@pytest.mark.parametrize(
    ("kwargs", "sent"),
    [
        ({}, {}),
        ({"force": True}, {"force": True}),
        ({"force": False}, {"force": False}),
        ({"mode": "filesystem"}, {"memory": False}),
        ({"mode": "full", "force": True}, {"memory": True, "force": True}),
    ],
    ids=["force-omitted", "force-true", "force-false", "filesystem-only", "memory-forced"],
)
async def test_only_the_options_passed_are_sent(
    sdk: Flavour, api: MockApi, kwargs: dict[str, Any], sent: dict[str, Any]
) -> None:
    api.on("POST", PAUSE, reply(200, {"forced": False}))
    await pause(sdk, api, **kwargs)
    assert api.body() == sent


@pytest.mark.parametrize("form", ["class", "instance"])
@pytest.mark.parametrize("forced", [True, False])
async def test_200_reports_what_the_api_did(sdk: Flavour, api: MockApi, form: str, forced: bool) -> None:
    api.on("POST", PAUSE, reply(200, {"forced": forced}))
    assert await pause(sdk, api, form=form, force=True) == SandboxPauseResult(paused=True, forced=forced)


async def test_forced_request_that_joined_a_normal_pause_reports_not_forced(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", PAUSE, reply(200, {"forced": False}))
    result = await pause(sdk, api, force=True)
    assert result == SandboxPauseResult(paused=True, forced=False)
    assert api.body() == {"force": True}


@pytest.mark.parametrize("form", ["class", "instance"])
async def test_204_from_an_older_api_is_a_normal_pause(sdk: Flavour, api: MockApi, form: str) -> None:
    api.on("POST", PAUSE, reply(204))
    assert await pause(sdk, api, form=form) == SandboxPauseResult(paused=True, forced=False)


@pytest.mark.parametrize("form", ["class", "instance"])
async def test_409_already_paused(sdk: Flavour, api: MockApi, form: str) -> None:
    api.on(
        "POST", PAUSE, reply(409, {"code": 409, "message": "already paused", "error_code": "sandbox_already_paused"})
    )
    result = await pause(sdk, api, form=form, force=True)
    assert result == SandboxPauseResult(paused=False, forced=False)
    assert result  # the migration hazard docs/users/sdk.md warns about: always truthy


@pytest.mark.parametrize("form", ["class", "instance"])
@pytest.mark.parametrize("message", [AGENT_REFUSAL, BUSY_REFUSAL], ids=["agent", "busy-node"])
async def test_refusal_after_exactly_one_request(sdk: Flavour, api: MockApi, form: str, message: str) -> None:
    api.on("POST", PAUSE, refusal(message))
    with pytest.raises(SandboxPauseRefusedException) as caught:
        await pause(sdk, api, form=form)
    error = caught.value
    assert isinstance(error, ServiceBusyException)
    assert str(error) == message  # verbatim: the SDK appends nothing
    assert (error.status_code, error.error_code) == (503, SANDBOX_PAUSE_REFUSED_ERROR_CODE)
    assert len(api.requests) == 1


async def test_forced_pause_that_cannot_be_pinned_is_refused_too(sdk: Flavour, api: MockApi) -> None:
    message = "pause refused: the forced pause could not be pinned to the sandbox's node"
    api.on("POST", PAUSE, refusal(message))
    with pytest.raises(SandboxPauseRefusedException, match="pinned"):
        await pause(sdk, api, force=True)


async def test_503_without_code_is_busy_after_the_retries(sdk: Flavour, api: MockApi, sleeps: list[float]) -> None:
    api.on("POST", PAUSE, reply(503, {"code": 503, "message": "try later"}))
    with pytest.raises(ServiceBusyException) as caught:
        await pause(sdk, api)
    assert type(caught.value) is ServiceBusyException
    assert (caught.value.status_code, caught.value.error_code, str(caught.value)) == (503, None, "try later")
    assert len(api.requests) == 4  # the first request and the transport's three retries
    assert len(sleeps) == 3


@pytest.mark.parametrize(
    "body",
    [b'[{"error_code": "sandbox_pause_refused"}]', b"", b"<html>bad gateway</html>", b'{"error_code": 7}'],
    ids=["json-list", "empty", "not-json", "non-string-code"],
)
async def test_malformed_503_is_plain_busy(sdk: Flavour, api: MockApi, body: bytes) -> None:
    api.on("POST", PAUSE, httpx.Response(503, content=body, headers={"content-type": "application/json"}))
    with pytest.raises(ServiceBusyException) as caught:
        await pause(sdk, api)
    assert type(caught.value) is ServiceBusyException
    assert (caught.value.status_code, caught.value.error_code) == (503, None)


async def test_force_with_a_filesystem_snapshot_is_refused_before_any_request(sdk: Flavour, api: MockApi) -> None:
    with pytest.raises(InvalidArgumentException, match="force=True needs a memory snapshot"):
        await pause(sdk, api, force=True, mode="filesystem")
    assert api.requests == []


async def test_400_keeps_its_status(sdk: Flavour, api: MockApi) -> None:
    message = "the snapshot cannot be taken as asked"
    api.on("POST", PAUSE, reply(400, {"code": 400, "message": message, "error_code": "invalid_request"}))
    with pytest.raises(InvalidArgumentException) as caught:
        await pause(sdk, api, force=True)
    assert isinstance(caught.value, SandboxException)
    assert (caught.value.status_code, caught.value.error_code, str(caught.value)) == (400, "invalid_request", message)


async def test_404_is_not_found(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", PAUSE, reply(404, {"code": 404, "message": "no sandbox", "error_code": "sandbox_not_found"}))
    with pytest.raises(SandboxNotFoundException) as caught:
        await pause(sdk, api, form="instance")
    assert caught.value.status_code == 404


@pytest.mark.parametrize("form", ["class", "instance"])
async def test_beta_pause_warns_and_returns_the_same_result(sdk: Flavour, api: MockApi, form: str) -> None:
    api.on("POST", PAUSE, reply(200, {"forced": True}))
    target = sdk.cls.beta_pause if form == "class" else sdk.cls("sbx-1").beta_pause
    args = ("sbx-1",) if form == "class" else ()
    with pytest.warns(DeprecationWarning, match="pause"):
        result = await sdk.call(target, *args, force=True, **api.opts())
    assert result == SandboxPauseResult(paused=True, forced=True)
    assert api.body() == {"force": True}


async def test_beta_pause_refusal_is_raised_as_for_pause(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", PAUSE, refusal(AGENT_REFUSAL))
    with pytest.warns(DeprecationWarning), pytest.raises(SandboxPauseRefusedException):
        await sdk.call(sdk.cls.beta_pause, "sbx-1", **api.opts())
    assert len(api.requests) == 1


async def test_request_carries_the_connection_settings(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", PAUSE, reply(200, {"forced": False}))
    await sdk.call(sdk.cls.pause, "sbx-1", headers={"X-Trace": "t1"}, **api.opts())
    request = api.requests[0]
    assert str(request.url) == "https://api.test/sandboxes/sbx-1/pause"
    assert request.headers["X-API-Key"] == "test-key"
    assert request.headers["X-Trace"] == "t1"
    assert json.loads(request.content) == {}
