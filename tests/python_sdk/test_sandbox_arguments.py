"""Nothing is silently dropped: unknown keywords, bad values, settings, failures that are not answers."""

from __future__ import annotations

import datetime
import socket
from collections.abc import Callable, Iterator
from typing import Any, cast

import httpx
import pytest
from e2b import (
    ConnectionException,
    InvalidArgumentException,
    SandboxException,
    SandboxQuery,
    ServiceBusyException,
)
from e2b._transport import default_async_transport, default_transport

from tests.mock_api import MockApi

from .conftest import Flavour

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.usefixtures("sleeps"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

WIRE_SANDBOX = {"sandboxID": "sbx-1", "templateID": "base", "clientID": "c", "envdVersion": "0.2.0"}

# Every call, in each form it has, with the arguments it needs: (name, call(cls, **kwargs)).
CALLS: list[tuple[str, Callable[[Any, dict[str, Any]], Any]]] = [
    ("create", lambda cls, kw: cls.create("base", **kw)),
    ("connect (class)", lambda cls, kw: cls.connect("sbx-1", **kw)),
    ("connect (instance)", lambda cls, kw: cls("sbx-1").connect(**kw)),
    ("kill (class)", lambda cls, kw: cls.kill("sbx-1", **kw)),
    ("kill (instance)", lambda cls, kw: cls("sbx-1").kill(**kw)),
    ("get_info (class)", lambda cls, kw: cls.get_info("sbx-1", **kw)),
    ("get_info (instance)", lambda cls, kw: cls("sbx-1").get_info(**kw)),
    ("get_metrics", lambda cls, kw: cls.get_metrics("sbx-1", **kw)),
    ("set_timeout", lambda cls, kw: cls("sbx-1").set_timeout(30, **kw)),
    ("update_network", lambda cls, kw: cls.update_network("sbx-1", {}, **kw)),
    ("fork", lambda cls, kw: cls("sbx-1").fork(**kw)),
    ("create_snapshot", lambda cls, kw: cls.create_snapshot("sbx-1", **kw)),
    ("list_snapshots (class)", lambda cls, kw: cls.list_snapshots(**kw)),
    ("list_snapshots (instance)", lambda cls, kw: cls("sbx-1").list_snapshots(**kw)),
    ("delete_snapshot", lambda cls, kw: cls.delete_snapshot("snap", **kw)),
    ("pause (class)", lambda cls, kw: cls.pause("sbx-1", **kw)),
    ("pause (instance)", lambda cls, kw: cls("sbx-1").pause(**kw)),
    ("beta_pause", lambda cls, kw: cls("sbx-1").beta_pause(**kw)),
    ("list", lambda cls, kw: cls.list(**kw)),
]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[name for name, _ in CALLS])
@pytest.mark.parametrize("keyword", ["mode_", "strict", "idempotency_keys", "retry"])
async def test_an_unknown_keyword_is_a_type_error_before_any_request(
    sdk: Flavour, api: MockApi, name: str, call: Callable[[Any, dict[str, Any]], Any], keyword: str
) -> None:
    with pytest.raises(TypeError, match=repr(keyword)):
        await sdk.call(call, sdk.cls, {keyword: 1, **api.opts()})
    assert api.requests == []


async def test_a_paginator_page_refuses_unknown_keywords_too(sdk: Flavour, api: MockApi) -> None:
    paginator = sdk.cls.list(**api.opts())
    with pytest.raises(TypeError, match="'orderr'"):
        await sdk.call(paginator.next_items, orderr="asc")
    assert api.requests == []


BAD_VALUES: list[tuple[str, Callable[[Any, dict[str, Any]], Any], str]] = [
    ("fork count 0", lambda cls, kw: cls("s").fork(count=0, **kw), "count"),
    ("fork count 21", lambda cls, kw: cls("s").fork(count=21, **kw), "count"),
    ("bad CIDR", lambda cls, kw: cls.create(network={"deny_out": ["10.0.0.0/33"]}, **kw), "deny_out"),
    ("domain in deny", lambda cls, kw: cls.create(network={"deny_out": ["example.com"]}, **kw), "deny_out"),
    ("unknown network key", lambda cls, kw: cls.create(network={"dns_servers": ["1.1.1.1"]}, **kw), "dns_servers"),
    (
        "filesystem auto-pause with auto_resume",
        lambda cls, kw: cls.create(
            lifecycle={"on_timeout": {"action": "pause", "mode": "filesystem"}, "auto_resume": True}, **kw
        ),
        "auto_resume",
    ),
    (
        "auto_resume with kill",
        lambda cls, kw: cls.create(lifecycle={"on_timeout": "kill", "auto_resume": True}, **kw),
        "auto_resume",
    ),
    ("bad on_timeout", lambda cls, kw: cls.create(lifecycle={"on_timeout": "sleep"}, **kw), "on_timeout"),
    ("negative timeout", lambda cls, kw: cls.create(timeout=-1, **kw), "timeout"),
    ("metadata not str", lambda cls, kw: cls.create(metadata={"n": 1}, **kw), "metadata"),
    ("empty idempotency key", lambda cls, kw: cls.create(idempotency_key="", **kw), "idempotency_key"),
    ("long idempotency key", lambda cls, kw: cls.create(idempotency_key="k" * 256, **kw), "idempotency_key"),
    ("bad state", lambda cls, kw: cls.list(SandboxQuery(state=[cast(Any, "stopped")]), **kw), "query.state"),
    ("bad order", lambda cls, kw: cls.list(order="newest", **kw), "order"),
    ("limit 0", lambda cls, kw: cls.list(limit=0, **kw), "limit"),
    ("limit 101", lambda cls, kw: cls.list_snapshots(limit=101, **kw), "limit"),
    (
        "started_after str",
        lambda cls, kw: cls.list(SandboxQuery(started_after=cast(Any, "2025")), **kw),
        "started_after",
    ),
    ("bad mode", lambda cls, kw: cls.create_snapshot("s", mode="memory", **kw), "mode"),
    ("bad on_resume", lambda cls, kw: cls.connect("s", on_resume="memory", **kw), "on_resume"),
    ("retries -1", lambda cls, kw: cls.kill("s", retries=-1, **kw), "retries"),
    ("request_timeout str", lambda cls, kw: cls.kill("s", request_timeout="5", **kw), "request_timeout"),
    ("api_url without scheme", lambda cls, kw: cls.kill("s", **{**kw, "api_url": "localhost:3000"}), "api_url"),
]


@pytest.mark.parametrize(("name", "call", "field"), BAD_VALUES, ids=[name for name, _, _ in BAD_VALUES])
async def test_a_bad_value_names_its_field_before_any_request(
    sdk: Flavour, api: MockApi, name: str, call: Callable[[Any, dict[str, Any]], Any], field: str
) -> None:
    with pytest.raises(InvalidArgumentException, match=field):
        await sdk.call(call, sdk.cls, api.opts())
    assert api.requests == []


# Every call that puts a sandbox id in its path (or query), in each form: call(cls, sandbox_id, **kwargs).
ID_CALLS: list[tuple[str, Callable[..., Any]]] = [
    ("get_info", lambda cls, sid, kw: cls.get_info(sid, **kw)),
    ("kill", lambda cls, sid, kw: cls.kill(sid, **kw)),
    ("connect", lambda cls, sid, kw: cls.connect(sid, **kw)),
    ("pause", lambda cls, sid, kw: cls.pause(sid, **kw)),
    ("get_metrics", lambda cls, sid, kw: cls.get_metrics(sid, **kw)),
    ("set_timeout", lambda cls, sid, kw: cls.set_timeout(sid, 30, **kw)),
    ("update_network", lambda cls, sid, kw: cls.update_network(sid, {}, **kw)),
    ("fork", lambda cls, sid, kw: cls.fork(sid, **kw)),
    ("create_snapshot", lambda cls, sid, kw: cls.create_snapshot(sid, **kw)),
    ("list_snapshots", lambda cls, sid, kw: cls.list_snapshots(sid, **kw)),
    ("instance", lambda cls, sid, kw: cls(sid).kill(**kw)),
]
# Each would name another path, start a query or a fragment, or hold what no id holds.
BAD_SANDBOX_IDS = [
    "",
    "i1/pause",
    "i1?x=1",
    "i1#x",
    "..",
    "i1 ",
    " i1",
    "i1\n",
    "i1\r\n",
    "i1\x00",
    "i1\x1b[2J",
    "i1%2F",
]


@pytest.mark.parametrize(("name", "call"), ID_CALLS, ids=[name for name, _ in ID_CALLS])
@pytest.mark.parametrize("sandbox_id", BAD_SANDBOX_IDS)
async def test_a_malformed_sandbox_id_is_refused_before_any_request(
    sdk: Flavour, api: MockApi, name: str, call: Callable[..., Any], sandbox_id: str
) -> None:
    with pytest.raises(InvalidArgumentException) as refused:
        await sdk.call(call, sdk.cls, sandbox_id, api.opts())
    assert type(refused.value) is InvalidArgumentException and refused.value.status_code is None
    assert refused.value.message.startswith("sandbox_id ")
    assert refused.value.message.isprintable()  # the id is shown escaped
    assert api.requests == []


@pytest.mark.parametrize("snapshot_id", ["", "snap?x", "snap#x", "..", "team/snap name", "snap\n", "snap\x1b[2J"])
async def test_a_malformed_snapshot_id_is_refused_before_any_request(
    sdk: Flavour, api: MockApi, snapshot_id: str
) -> None:
    with pytest.raises(InvalidArgumentException, match=r"^snapshot_id "):
        await sdk.call(sdk.cls.delete_snapshot, snapshot_id, **api.opts())
    assert api.requests == []


async def test_a_namespaced_snapshot_id_is_still_one_segment(sdk: Flavour, api: MockApi) -> None:
    api.on("DELETE", "/templates/team/snap:v1", httpx.Response(204))
    assert await sdk.call(sdk.cls.delete_snapshot, "team/snap:v1", **api.opts()) is True
    with pytest.raises(InvalidArgumentException, match=r"^snapshot_id 'team/snap:v1 '"):
        await sdk.call(sdk.cls.delete_snapshot, "team/snap:v1 ", **api.opts())


PLUS_14 = datetime.timezone(datetime.timedelta(hours=14))
MINUS_14 = datetime.timezone(datetime.timedelta(hours=-14))
SECRET = "e2b_0123456789abcdef"
# Values no request can carry, each the caller's: (name, call, the field the message names).
UNSENDABLE: list[tuple[str, Callable[[Any, dict[str, Any]], Any], str]] = [
    (
        "started_after before year 1 in UTC",
        lambda cls, kw: cls.list(SandboxQuery(started_after=datetime.datetime(1, 1, 1, tzinfo=PLUS_14)), **kw),
        "query.started_after",
    ),
    (
        "started_after after year 9999 in UTC",
        lambda cls, kw: cls.list(SandboxQuery(started_after=datetime.datetime.max.replace(tzinfo=MINUS_14)), **kw),
        "query.started_after",
    ),
    (
        "metrics start before year 1",
        lambda cls, kw: cls.get_metrics("s", start=datetime.datetime(1, 1, 1, tzinfo=PLUS_14), **kw),
        "start",
    ),
    (
        "lone surrogate in a metadata value",
        lambda cls, kw: cls.list(SandboxQuery(metadata={"k": "\ud800"}), **kw),
        "query.metadata",
    ),
    (
        "lone surrogate in a metadata key",
        lambda cls, kw: cls.list(SandboxQuery(metadata={"\udcff": "v"}), **kw),
        "query.metadata",
    ),
    (
        "lone surrogate in template",
        lambda cls, kw: cls.list(SandboxQuery(template="base\ud800"), **kw),
        "query.template",
    ),
    ("lone surrogate in create metadata", lambda cls, kw: cls.create(metadata={"k": "\ud800"}, **kw), "metadata"),
    ("lone surrogate in envs", lambda cls, kw: cls.create(envs={"K": "\udfff"}, **kw), "envs"),
    ("lone surrogate in template id", lambda cls, kw: cls.create("base\ud800", **kw), "template"),
    ("api_key with a NUL", lambda cls, kw: cls.kill("s", **{**kw, "api_key": SECRET + "\x00"}), "api_key"),
    (
        "api_key with an inner line break",
        lambda cls, kw: cls.kill("s", **{**kw, "api_key": "e2b_\n" + SECRET}),
        "api_key",
    ),
    ("api_key not ASCII", lambda cls, kw: cls.kill("s", **{**kw, "api_key": SECRET + "\u00e9"}), "api_key"),
    (
        "header value with CRLF",
        lambda cls, kw: cls.kill("s", headers={"X-Trace": SECRET + "\r\nX-Injected: 1"}, **kw),
        "headers['X-Trace']",
    ),
    ("header name with a space", lambda cls, kw: cls.kill("s", headers={"X Trace": "v"}, **kw), "headers"),
    (
        "idempotency key with a line break",
        lambda cls, kw: cls.create(idempotency_key=SECRET + "\n", **kw),
        "idempotency_key",
    ),
]


@pytest.mark.parametrize(("name", "call", "field"), UNSENDABLE, ids=[name for name, _, _ in UNSENDABLE])
async def test_a_value_no_request_can_carry_is_refused_by_name(
    sdk: Flavour, api: MockApi, name: str, call: Callable[[Any, dict[str, Any]], Any], field: str
) -> None:
    with pytest.raises(InvalidArgumentException) as refused:
        await sdk.call(call, sdk.cls, api.opts())
    assert type(refused.value) is InvalidArgumentException and refused.value.status_code is None
    assert refused.value.message.startswith(field), refused.value.message
    assert SECRET not in str(refused.value)  # a header value may be a secret: never repeated
    assert api.requests == []


async def test_a_key_from_the_environment_is_named_as_such_and_never_shown(
    sdk: Flavour, api: MockApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("E2B_API_KEY", "e2b_\x1b" + SECRET)
    opts = {k: v for k, v in api.opts().items() if k != "api_key"}
    with pytest.raises(InvalidArgumentException) as refused:
        await sdk.call(sdk.cls.kill, "s", **opts)
    assert refused.value.message.startswith("E2B_API_KEY holds")
    assert SECRET not in str(refused.value)
    assert api.requests == []


async def test_a_key_s_line_break_is_dropped_not_sent(sdk: Flavour, api: MockApi) -> None:
    api.on("DELETE", "/sandboxes/s", httpx.Response(204))
    assert await sdk.call(sdk.cls.kill, "s", **{**api.opts(), "api_key": SECRET + "\r\n"}) is True
    assert api.requests[-1].headers["X-API-Key"] == SECRET


async def test_with_block_kills_the_sandbox(sdk: Flavour, api: MockApi) -> None:
    api.on("POST", "/sandboxes", httpx.Response(201, json=WIRE_SANDBOX))
    api.on("DELETE", "/sandboxes/sbx-1", httpx.Response(204))
    sbx = await sdk.call(sdk.cls.create, **api.opts())
    if sdk.name == "sync":
        with sbx as inside:
            assert inside is sbx
    else:
        async with sbx as inside:
            assert inside is sbx
    assert [(r.method, r.url.path) for r in api.requests][-1] == ("DELETE", "/sandboxes/sbx-1")


async def test_debug_mode_answers_create_connect_kill_and_metrics_without_a_request(sdk: Flavour, api: MockApi) -> None:
    opts = {**api.opts(), "debug": True}
    sbx = await sdk.call(sdk.cls.create, **opts)
    assert sbx.sandbox_id == "debug_sandbox_id"
    assert await sdk.call(sbx.connect) is sbx
    assert await sdk.call(sbx.get_metrics) == []
    assert await sdk.call(sbx.kill) is True
    assert api.requests == []


@pytest.mark.parametrize("retries", [0, 1])
async def test_retries_is_the_caller_s(sdk: Flavour, api: MockApi, retries: int) -> None:
    busy = httpx.Response(503, json={"code": 503, "message": "busy"})
    api.on("DELETE", "/sandboxes/sbx-1", *[busy] * 5)
    with pytest.raises(ServiceBusyException):
        await sdk.call(sdk.cls.kill, "sbx-1", retries=retries, **api.opts())
    assert len(api.requests) == retries + 1


async def test_a_retrying_transport_passed_in_is_not_wrapped_again(sdk: Flavour, api: MockApi) -> None:
    busy = httpx.Response(503, json={"code": 503, "message": "busy"})
    api.on("DELETE", "/sandboxes/sbx-1", *[busy] * 20)
    factory = default_transport if sdk.name == "sync" else default_async_transport
    retrying = factory(retries=3, sleep=_no_sleep(sdk))
    retrying.inner = api.transport() if sdk.name == "sync" else _AsyncMock(api)
    opts = {**api.opts(), "transport": retrying}
    with pytest.raises(ServiceBusyException):
        await sdk.call(sdk.cls.kill, "sbx-1", **opts)
    assert len(api.requests) == 4  # one retry layer: the first request and its three retries
    with pytest.raises(InvalidArgumentException, match="retries= cannot change"):
        await sdk.call(sdk.cls.kill, "sbx-1", **{**opts, "retries": 1})


def _no_sleep(sdk: Flavour) -> Any:
    if sdk.name == "sync":
        return lambda seconds: None

    async def sleep(seconds: float) -> None:
        return None

    return sleep


class _AsyncMock(httpx.AsyncBaseTransport):
    def __init__(self, api: MockApi) -> None:
        self._api = api

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        return self._api.handle(request)


@pytest.fixture
def refusing_url() -> Iterator[str]:
    """A port bound for the test but never listened on: connections are refused, and no other test can take it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


async def test_a_refused_connection_is_a_connection_exception(sdk: Flavour, refusing_url: str) -> None:
    url = refusing_url
    with pytest.raises(ConnectionException, match="could not talk to the API at " + url) as caught:
        await sdk.call(sdk.cls.get_info, "sbx-1", api_key="k", api_url=url, retries=0)
    assert isinstance(caught.value, SandboxException)
    assert caught.value.status_code is None


def test_query_is_a_dataclass_with_the_released_fields() -> None:
    query = SandboxQuery(metadata={"a": "b"}, state=None, started_after=datetime.datetime(2025, 1, 1), template="t")
    assert (query.metadata, query.template) == ({"a": "b"}, "t")
