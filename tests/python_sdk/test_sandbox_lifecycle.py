"""create, connect, kill, list, get_info and set_timeout of Sandbox and AsyncSandbox."""

from __future__ import annotations

import datetime
from typing import Any

import httpx
import pytest
from e2b import SandboxException, SandboxInfo, SandboxNotFoundException

from tests.mock_api import MockApi

from .conftest import Flavour

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("sleeps")]

WIRE_SANDBOX = {"sandboxID": "sbx-1", "templateID": "base", "envdVersion": "0.2.0"}
STARTED = "2025-01-01T00:00:00+00:00"
ENDS = "2025-01-01T00:05:00+00:00"


def listed(sandbox_id: str, state: str = "running") -> dict[str, Any]:
    return {
        "sandboxID": sandbox_id,
        "templateID": "base",
        "state": state,
        "startedAt": STARTED,
        "endAt": ENDS,
        "cpuCount": 2,
        "memoryMB": 512,
        "metadata": {"user": "abc"},
    }


async def test_create_sends_the_template_and_returns_a_sandbox(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", "/sandboxes", httpx.Response(201, json=WIRE_SANDBOX))
    sbx = await sdk.call(sdk.cls.create, "base", 60, metadata={"user": "abc"}, envs={"A": "1"}, **api.opts())
    assert isinstance(sbx, sdk.cls)
    assert (sbx.sandbox_id, sbx.template_id, sbx.envd_version) == ("sbx-1", "base", "0.2.0")
    assert api.body() == {
        "templateID": "base",
        "timeout": 60,
        "metadata": {"user": "abc"},
        "envVars": {"A": "1"},
    }


async def test_instance_calls_reuse_the_settings_it_was_created_with(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", "/sandboxes", httpx.Response(201, json=WIRE_SANDBOX))
    api.on("POST", "/sandboxes/sbx-1/timeout", httpx.Response(204))
    sbx = await sdk.call(sdk.cls.create, **api.opts())
    await sdk.call(sbx.set_timeout, 120)
    assert api.requests[-1].headers["X-API-Key"] == "test-key"
    assert api.body() == {"timeout": 120}


@pytest.mark.parametrize("status", [200, 201], ids=["running", "resumed"])
async def test_connect_class_form(sdk: Flavour, api: MockApi, status: int) -> None:
    api.on("POST", "/sandboxes/sbx-1/connect", httpx.Response(status, json=WIRE_SANDBOX))
    sbx = await sdk.call(sdk.cls.connect, "sbx-1", **api.opts())
    assert isinstance(sbx, sdk.cls)
    assert sbx.sandbox_id == "sbx-1"
    assert api.body() == {"timeout": 300}


async def test_connect_reboot_after_a_forced_pause(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", "/sandboxes/sbx-1/connect", httpx.Response(201, json=WIRE_SANDBOX))
    sbx = sdk.cls("sbx-1")
    assert await sdk.call(sbx.connect, 30, on_resume="reboot", **api.opts()) is sbx
    assert api.body() == {"timeout": 30, "on_resume": "reboot"}


@pytest.mark.parametrize("form", ["class", "instance"])
async def test_kill(sdk: Flavour, api: MockApi, form: str) -> None:
    api.on("DELETE", "/sandboxes/sbx-1", httpx.Response(204))
    fn = sdk.cls.kill if form == "class" else sdk.cls("sbx-1").kill
    args = ("sbx-1",) if form == "class" else ()
    assert await sdk.call(fn, *args, **api.opts()) is True


async def test_kill_of_a_missing_sandbox_is_false(sdk: Flavour, api: MockApi) -> None:
    api.on("DELETE", "/sandboxes/sbx-1", httpx.Response(404, json={"code": 404, "message": "gone"}))
    assert await sdk.call(sdk.cls.kill, "sbx-1", **api.opts()) is False


async def test_get_info(sdk: Flavour, api: MockApi) -> None:
    api.on("GET", "/sandboxes/sbx-1", httpx.Response(200, json={**listed("sbx-1", "paused"), "envdVersion": "0.2.0"}))
    info = await sdk.call(sdk.cls("sbx-1").get_info, **api.opts())
    assert info == SandboxInfo(
        sandbox_id="sbx-1",
        template_id="base",
        state="paused",
        started_at=datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC),
        end_at=datetime.datetime(2025, 1, 1, 0, 5, tzinfo=datetime.UTC),
        cpu_count=2,
        memory_mb=512,
        metadata={"user": "abc"},
        envd_version="0.2.0",
    )


async def test_get_info_of_a_missing_sandbox(sdk: Flavour, api: MockApi) -> None:
    api.on("GET", "/sandboxes/sbx-1", httpx.Response(404, json={"code": 404, "message": "no such sandbox"}))
    with pytest.raises(SandboxNotFoundException, match="no such sandbox"):
        await sdk.call(sdk.cls.get_info, "sbx-1", **api.opts())


async def test_set_timeout_class_form(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", "/sandboxes/sbx-1/timeout", httpx.Response(204))
    assert await sdk.call(sdk.cls.set_timeout, "sbx-1", 45, **api.opts()) is None
    assert api.body() == {"timeout": 45}


async def test_list_follows_the_next_token(sdk: Flavour, api: MockApi) -> None:
    api.on(
        "GET",
        "/v2/sandboxes",
        httpx.Response(200, json=[listed("a"), listed("b")], headers={"X-Next-Token": "page-2"}),
        httpx.Response(200, json=[listed("c", "paused")]),
    )
    paginator = sdk.cls.list(state=["running", "paused"], limit=2, metadata={"user": "abc"}, **api.opts())
    assert api.requests == []  # nothing is fetched before next_items()
    first = await sdk.call(paginator.next_items)
    assert [s.sandbox_id for s in first] == ["a", "b"]
    assert (paginator.has_next, paginator.next_token) == (True, "page-2")
    second = await sdk.call(paginator.next_items)
    assert [(s.sandbox_id, s.state) for s in second] == [("c", "paused")]
    assert (paginator.has_next, paginator.next_token) == (False, None)
    params = [dict(r.url.params) for r in api.requests]
    assert params[0] == {"state": "running,paused", "limit": "2", "metadata": "user=abc"}
    assert params[1] == {**params[0], "nextToken": "page-2"}
    with pytest.raises(SandboxException, match="no more pages"):
        await sdk.call(paginator.next_items)
