"""The public routes: auth, validation, errors; in process (httpx over ASGI), bad input also over a real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from e2b_local_api import DEV_API_KEY, AuthConfig, create_app

from ..conftest import LiveServer

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(
        transport=transport,
        base_url="http://local",
        headers={"X-API-Key": DEV_API_KEY, "Content-Type": "application/json"},
    ) as client:
        yield client


async def _sandbox(client: httpx.AsyncClient) -> str:
    response = await client.post("/sandboxes", json={"templateID": "base"})
    assert response.status_code == 201
    sandbox_id: str = response.json()["sandboxID"]
    return sandbox_id


@pytest.mark.parametrize("key", [None, "", "wrong"])
async def test_api_key_is_required(client: httpx.AsyncClient, key: str | None) -> None:
    headers = {} if key is None else {"X-API-Key": key}
    client.headers.pop("X-API-Key")
    response = await client.get("/v2/sandboxes", headers=headers)
    assert response.status_code == 401
    assert set(response.json()) == {"code", "message"} and response.json()["code"] == 401


async def test_any_key_mode_accepts_non_empty_keys() -> None:
    app = create_app(AuthConfig(accept_any=True))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://l") as c:
        assert (await c.get("/v2/sandboxes", headers={"X-API-Key": "anything"})).status_code == 200
        assert (await c.get("/v2/sandboxes", headers={"X-API-Key": ""})).status_code == 401


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        ("/sandboxes", b"", "body is required"),
        ("/sandboxes", b"{", "Invalid JSON"),
        ("/sandboxes", b"{}", "templateID"),
        ("/sandboxes", b'{"templateID": "base", "timeout": "5"}', "timeout"),
        ("/sandboxes", b'{"templateID": "base", "timeout": -1}', "timeout"),
        ("/sandboxes", b'{"templateID": "base", "timeout": 2147483648}', "int32"),
        ("/sandboxes", b'{"templateID": "base", "autoPause": null}', "null"),
        ("/sandboxes", b'{"templateID": "base", "metadata": {"k": 1}}', "metadata"),
    ],
)
async def test_invalid_bodies_get_the_spec_400(client: httpx.AsyncClient, path: str, body: bytes, needle: str) -> None:
    response = await client.post(path, content=body)
    assert response.status_code == 400
    error = response.json()
    assert error["code"] == 400 and error["error_code"] == "invalid_request"
    assert needle in error["message"]


async def test_pause_body_is_optional_and_validated(client: httpx.AsyncClient) -> None:
    sid = await _sandbox(client)
    bad = await client.post(f"/sandboxes/{sid}/pause", json={"force": "yes"})
    assert bad.status_code == 400 and "force" in bad.json()["message"]
    assert (await client.post(f"/sandboxes/{sid}/pause")).json() == {"forced": False}
    again = await client.post(f"/sandboxes/{sid}/pause", json={})
    assert again.status_code == 409 and again.json()["error_code"] == "sandbox_already_paused"


async def test_connect_answers_201_on_resume_and_200_when_running(
    client: httpx.AsyncClient,
) -> None:
    sid = await _sandbox(client)
    body = {"timeout": 60, "memory": False}
    assert (await client.post(f"/sandboxes/{sid}/connect", json=body)).status_code == 200
    await client.post(f"/sandboxes/{sid}/pause")
    assert (await client.post(f"/sandboxes/{sid}/connect", json=body)).status_code == 201
    bad = await client.post(f"/sandboxes/{sid}/connect", json={"timeout": 1, "memory": "x"})
    assert bad.status_code == 400 and "memory" in bad.json()["message"]


async def test_list_query_validation_and_paging_header(client: httpx.AsyncClient) -> None:
    for _ in range(3):
        await _sandbox(client)
    first = await client.get("/v2/sandboxes", params={"limit": 2, "state": "running,paused"})
    assert len(first.json()) == 2 and first.headers["X-Next-Token"]
    rest = await client.get("/v2/sandboxes", params={"nextToken": first.headers["X-Next-Token"]})
    assert len(rest.json()) == 1 and "X-Next-Token" not in rest.headers
    bad_queries = ({"limit": 0}, {"limit": "x"}, {"state": "gone"}, {"state": ""}, {"state": ",,"})
    for params in bad_queries:
        response = await client.get("/v2/sandboxes", params=params)
        assert response.status_code == 400, params


async def test_unknown_query_parameters_are_ignored(client: httpx.AsyncClient) -> None:
    # The spec: "a client may send filters an older server does not know".
    await _sandbox(client)
    for path in ("/v2/sandboxes", "/snapshots", "/templates"):
        response = await client.get(path, params={"colour": "red"})
        assert response.status_code == 200, path
    assert len((await client.get("/v2/sandboxes", params={"colour": "red"})).json()) == 1


async def test_metadata_filter_is_a_url_encoded_query(client: httpx.AsyncClient) -> None:
    await client.post("/sandboxes", json={"templateID": "base", "metadata": {"user": "a&b"}})
    await client.post("/sandboxes", json={"templateID": "base", "metadata": {"user": "c"}})
    response = await client.get("/v2/sandboxes", params={"metadata": "user=a%26b"})
    assert [s["metadata"] for s in response.json()] == [{"user": "a&b"}]


async def test_not_found_and_kill(client: httpx.AsyncClient) -> None:
    sid = await _sandbox(client)
    assert (await client.delete(f"/sandboxes/{sid}")).status_code == 204
    missing = await client.get(f"/sandboxes/{sid}")
    assert missing.status_code == 404 and missing.json()["error_code"] == "sandbox_not_found"


async def test_405_lists_every_method_of_the_path(client: httpx.AsyncClient) -> None:
    response = await client.put("/sandboxes/x")
    assert response.status_code == 405
    assert response.headers["Allow"] == "DELETE, GET"


async def test_served_openapi_has_the_operations_and_no_controls(
    client: httpx.AsyncClient,
) -> None:
    doc = (await client.get("/openapi.json")).json()
    operations = {op["operationId"] for item in doc["paths"].values() for op in item.values()}
    assert operations == {
        "createSandbox",
        "createSandboxV2",
        "listSandboxes",
        "getSandbox",
        "killSandbox",
        "getSandboxMetrics",
        "setSandboxTimeout",
        "refreshSandbox",
        "connectSandbox",
        "connectSandboxV2",
        "pauseSandbox",
        "forkSandbox",
        "updateSandboxNetwork",
        "createSnapshot",
        "listSnapshots",
        "listTemplates",
        "deleteTemplate",
    }
    assert not any(path.startswith("/_local") for path in doc["paths"])
    pause = doc["paths"]["/sandboxes/{sandboxID}/pause"]["post"]
    assert pause["requestBody"]["required"] is False
    assert "422" not in pause["responses"]


# --- bad input over a real socket: the spec's 4xx `Error`, never a 500, and others still served ---

CREATE_CASES = [
    (b'{"templateID": ', "application/json", "Invalid JSON"),
    (b"[1, 2]", "application/json", "invalid request body"),
    (b'{"templateID": "base"}', "text/plain", "Content-Type must be application/json"),
    (b'{"templateID": "base"}', "application/x-www-form-urlencoded", "Content-Type must be application/json"),
    (b'{"templateID": "base"}', None, "Content-Type must be application/json"),
    (b'{"templateID": "base", "timeout": -5}', "application/json", "timeout"),
    (b'{"templateID": "base", "timeout": 99999999999}', "application/json", "int32"),
    (b'{"templateID": "base", "timeout": 1.5}', "application/json", "timeout"),
]


@pytest.mark.parametrize(("body", "content_type", "needle"), CREATE_CASES)
def test_bad_bodies_over_a_real_socket(live: LiveServer, body: bytes, content_type: str | None, needle: str) -> None:
    with live.api() as api:
        headers = {"Content-Type": content_type} if content_type else {}
        response = api.post("/sandboxes", content=body, headers=headers)
        assert response.status_code == 400, response.text
        assert response.json()["error_code"] == "invalid_request" and needle in response.json()["message"]
        assert api.get("/v2/sandboxes").json() == []  # nothing stored, and still answering


@pytest.mark.parametrize("timeout", [-1, 2**31, "60", None])
def test_out_of_range_timeouts_over_a_real_socket(live: LiveServer, timeout: object) -> None:
    with live.api() as api:
        sid = api.post("/sandboxes", json={"templateID": "base"}).json()["sandboxID"]
        for path in (f"/sandboxes/{sid}/timeout", f"/sandboxes/{sid}/connect"):
            response = api.post(path, json={"timeout": timeout})
            assert response.status_code == 400 and response.json()["code"] == 400, (path, response.text)


def test_unknown_fields_are_ignored_as_the_spec_allows(live: LiveServer) -> None:
    # The request schemas do not set additionalProperties: false, so an unknown
    # field is valid; it is neither stored nor echoed.
    with live.api() as api:
        created = api.post("/sandboxes", json={"templateID": "base", "colour": "red"})
        assert created.status_code == 201 and "colour" not in created.json()
        sid = created.json()["sandboxID"]
        assert api.post(f"/sandboxes/{sid}/pause", json={"colour": "red"}).json() == {"forced": False}
        assert "colour" not in api.get(f"/sandboxes/{sid}").json()


def test_unknown_paths_and_missing_keys_get_error_bodies(live: LiveServer) -> None:
    with live.api() as api:
        unknown = api.get("/nope")
        assert unknown.status_code == 404 and unknown.json() == {"code": 404, "message": "no such path: GET /nope"}
    keyless = live.control.get("/v2/sandboxes")
    assert keyless.status_code == 401 and keyless.json()["code"] == 401


# --- the operations of runtime v2.0.0 over a real socket -------------------------------------------------------------

EVERYTHING = {
    "templateID": "base",
    "timeout": 120,
    "autoPause": True,
    "autoResume": {"enabled": True},
    "secure": True,
    "allow_internet_access": False,
    "network": {
        "allowPublicTraffic": False,
        "allowOut": ["1.1.1.1", "*.example.com"],
        "denyOut": ["10.0.0.0/8"],
        "maskRequestHost": "${PORT}-x.example.com",
        "rules": {"api.example.com": [{"transform": {"headers": {"X-Key": "v"}}}]},
        "egressProxy": {"address": "proxy.example.com:1080", "username": "u", "password": "secret"},
    },
    "metadata": {"team": "a b"},
    "envVars": {"FOO": "bar"},
    "iam": {"tokens": {"aws": {"audience": "sts.amazonaws.com", "tokenType": "JWT-SVID"}}},
    "volumeMounts": [{"name": "vol1", "path": "/data"}],
}


@pytest.mark.parametrize("route", ["/sandboxes", "/v2/sandboxes"])
def test_every_create_field_is_kept_and_shown_back(live: LiveServer, route: str) -> None:
    with live.api() as api:
        created = api.post(route, json=EVERYTHING)
        assert created.status_code == 201, created.text
        sandbox = created.json()
        assert (sandbox["templateID"], sandbox["alias"], sandbox["clientID"]) == ("local-base", "base", "local")
        assert sandbox["envdVersion"] == "0.6.4" and sandbox["envdAccessToken"] and sandbox["domain"]
        assert sandbox["trafficAccessToken"]  # its URLs are not public
        detail = api.get(f"/sandboxes/{sandbox['sandboxID']}").json()
        assert (detail["cpuCount"], detail["memoryMB"], detail["diskSizeMB"]) == (2, 512, 1024)
        assert detail["allowInternetAccess"] is False and detail["metadata"] == {"team": "a b"}
        assert detail["lifecycle"] == {"onTimeout": "pause", "autoResume": True}
        assert detail["volumeMounts"] == [{"name": "vol1", "path": "/data"}]
        assert detail["network"] == {
            "allowPublicTraffic": False,
            "allowOut": ["1.1.1.1", "*.example.com"],
            "denyOut": ["10.0.0.0/8", "0.0.0.0/0"],  # allow_internet_access: false
            "maskRequestHost": "${PORT}-x.example.com",
            "rules": {"api.example.com": [{"transform": {"headers": {"X-Key": "v"}}}]},
            "egressProxy": {"address": "proxy.example.com:1080", "username": "u"},
        }
        assert "secret" not in api.get(f"/sandboxes/{sandbox['sandboxID']}").text
        (listed,) = api.get("/v2/sandboxes").json()
        assert listed["volumeMounts"] == detail["volumeMounts"] and listed["diskSizeMB"] == 1024
        record = live.record(sandbox["sandboxID"])
        assert (record["env_vars"], record["secure"], record["egress_proxy_password_set"]) == (
            {"FOO": "bar"},
            True,
            True,
        )
        assert record["iam_tokens"] == {"aws": {"audience": "sts.amazonaws.com", "tokenType": "JWT-SVID"}}


def test_a_plain_create_shows_the_defaults(live: LiveServer) -> None:
    with live.api() as api:
        sandbox = api.post("/v2/sandboxes", json={"templateID": "base", "metadata": {}, "envVars": {}}).json()
        assert "trafficAccessToken" not in sandbox
        detail = api.get(f"/sandboxes/{sandbox['sandboxID']}").json()
        assert detail["lifecycle"] == {"onTimeout": "kill", "autoResume": False}
        assert "network" not in detail and "allowInternetAccess" not in detail and "volumeMounts" not in detail


BAD_CREATES = [
    ({"templateID": "nope"}, 404, "template_not_found", "template 'nope'"),
    (
        {"templateID": "base", "autoPauseMemory": False, "autoResume": {"enabled": True}},
        400,
        "invalid_request",
        "autoPauseMemory",
    ),
    ({"templateID": "base", "network": {"denyOut": ["0.0.0.0/33"]}}, 400, "invalid_request", "network.denyOut"),
    ({"templateID": "base", "network": {"allowOut": ["bad host"]}}, 400, "invalid_request", "network.allowOut"),
    ({"templateID": "base", "autoResume": {"enabled": 1}}, 400, "invalid_request", "autoResume.enabled"),
    ({"templateID": "base", "volumeMounts": [{"name": "v"}]}, 400, "invalid_request", "volumeMounts.0.path"),
]


@pytest.mark.parametrize(("body", "status", "code", "named"), BAD_CREATES)
def test_refused_creates_change_nothing(
    live: LiveServer, body: dict[str, Any], status: int, code: str, named: str
) -> None:
    with live.api() as api:
        for route in ("/sandboxes", "/v2/sandboxes"):
            response = api.post(route, json=body)
            assert response.status_code == status, response.text
            assert response.json()["error_code"] == code and named in response.json()["message"]
        assert api.get("/v2/sandboxes").json() == [] and live.control.get("/_local/sandboxes").json() == []


def _sandbox_of(api: httpx.Client, **fields: Any) -> str:
    response = api.post("/sandboxes", json={"templateID": "base", **fields})
    assert response.status_code == 201, response.text
    sandbox_id: str = response.json()["sandboxID"]
    return sandbox_id


def test_fork_answers_one_running_sandbox_per_fork(live: LiveServer) -> None:
    with live.api() as api:
        sid = _sandbox_of(api, metadata={"m": "1"}, envVars={"E": "1"}, network={"denyOut": ["1.1.1.1"]})
        end_at = api.get(f"/sandboxes/{sid}").json()["endAt"]
        one = api.post(f"/sandboxes/{sid}/fork")
        assert one.status_code == 201 and len(one.json()) == 1
        forks = api.post(f"/sandboxes/{sid}/fork", json={"timeout": 60, "count": 3})
        assert forks.status_code == 201 and len(forks.json()) == 3
        for result in forks.json():
            assert set(result) == {"sandbox"}
            fork_id = result["sandbox"]["sandboxID"]
            detail = api.get(f"/sandboxes/{fork_id}").json()
            assert (detail["state"], detail["templateID"], detail["metadata"]) == ("running", "local-base", {"m": "1"})
            assert detail["network"]["denyOut"] == ["1.1.1.1"]
            assert live.record(fork_id)["env_vars"] == {"E": "1"} and live.record(fork_id)["forked_from"] == sid
        assert api.get(f"/sandboxes/{sid}").json()["endAt"] == end_at
        assert live.record(sid)["forks"] == 4 and len(api.get("/v2/sandboxes").json()) == 5


@pytest.mark.parametrize(
    ("body", "named"),
    [({"count": 21}, "count"), ({"count": 0}, "count"), ({"count": "2"}, "count"), ({"timeout": -1}, "timeout")],
)
def test_bad_forks_change_nothing(live: LiveServer, body: dict[str, Any], named: str) -> None:
    with live.api() as api:
        sid = _sandbox_of(api)
        response = api.post(f"/sandboxes/{sid}/fork", json=body)
        assert response.status_code == 400 and response.json()["error_code"] == "invalid_request"
        assert named in response.json()["message"]
        assert len(api.get("/v2/sandboxes").json()) == 1 and live.record(sid)["forks"] == 0


def test_a_paused_sandbox_is_a_409_for_fork_network_and_refresh(live: LiveServer) -> None:
    with live.api() as api:
        sid = _sandbox_of(api)
        api.post(f"/sandboxes/{sid}/pause")
        for method, path, body in (
            ("POST", "fork", {"count": 1}),
            ("PUT", "network", {"denyOut": ["0.0.0.0/0"]}),
            ("POST", "refreshes", {"duration": 60}),
        ):
            response = api.request(method, f"/sandboxes/{sid}/{path}", json=body)
            assert response.status_code == 409, path
            assert response.json()["error_code"] == "sandbox_not_running" and sid in response.json()["message"]
        assert len(api.get("/v2/sandboxes").json()) == 1 and "network" not in api.get(f"/sandboxes/{sid}").json()
        for method, path in (("POST", "fork"), ("PUT", "network"), ("POST", "refreshes")):
            missing = api.request(method, f"/sandboxes/nope/{path}", json={})
            assert missing.status_code == 404 and missing.json()["error_code"] == "sandbox_not_found", path


def test_a_network_update_replaces_the_egress_settings(live: LiveServer) -> None:
    with live.api() as api:
        sid = _sandbox_of(api, network={"allowPublicTraffic": False, "allowOut": ["1.1.1.1"], "denyOut": ["0.0.0.0/0"]})
        update = {"denyOut": ["10.0.0.0/8"], "egressProxy": {"address": "p.example.com:1080", "password": "pw"}}
        assert api.put(f"/sandboxes/{sid}/network", json=update).status_code == 204
        assert api.get(f"/sandboxes/{sid}").json()["network"] == {
            "allowPublicTraffic": False,
            "denyOut": ["10.0.0.0/8"],
            "egressProxy": {"address": "p.example.com:1080"},
        }
        assert api.put(f"/sandboxes/{sid}/network", json={"allow_internet_access": False}).status_code == 204
        assert api.get(f"/sandboxes/{sid}").json()["network"] == {"allowPublicTraffic": False, "denyOut": ["0.0.0.0/0"]}
        before = api.get(f"/sandboxes/{sid}").json()["network"]
        bad = api.put(f"/sandboxes/{sid}/network", json={"denyOut": ["example.com"]})
        assert bad.status_code == 400 and bad.json()["message"].startswith("denyOut: 'example.com'")
        assert api.get(f"/sandboxes/{sid}").json()["network"] == before


@pytest.mark.parametrize("route", ["/sandboxes/{}/connect", "/v2/sandboxes/{}/connect"])
def test_connect_resumes_with_memory_or_by_a_cold_boot(live: LiveServer, route: str) -> None:
    with live.api() as api:
        sid = _sandbox_of(api, timeout=300)
        end_at = api.get(f"/sandboxes/{sid}").json()["endAt"]
        running = api.post(route.format(sid), json={"timeout": 10})
        assert running.status_code == 200 and running.json()["sandboxID"] == sid
        assert api.get(f"/sandboxes/{sid}").json()["endAt"] == end_at  # only ever extended
        api.post(f"/sandboxes/{sid}/pause")
        assert api.post(route.format(sid), json={"timeout": 10}).status_code == 201
        assert (live.record(sid)["resumes"], live.record(sid)["reboots"]) == (1, 0)
        api.post(f"/sandboxes/{sid}/pause")
        assert api.post(route.format(sid), json={"timeout": 10, "memory": False}).status_code == 201
        assert (live.record(sid)["resumes"], live.record(sid)["reboots"]) == (2, 1)
        # The released SDK's `sbx.connect()` sends {}: accepted, the deadline left as it is.
        assert api.post(route.format(sid), json={}).status_code == 200
        missing = api.post(route.format("nope"), json={"timeout": 10})
        assert missing.status_code == 404 and missing.json()["error_code"] == "sandbox_not_found"


def test_refresh_keeps_a_sandbox_alive(live: LiveServer) -> None:
    with live.api() as api:
        sid = _sandbox_of(api, timeout=10)
        before = api.get(f"/sandboxes/{sid}").json()["endAt"]
        assert api.post(f"/sandboxes/{sid}/refreshes", json={"duration": 3600}).status_code == 204
        assert api.get(f"/sandboxes/{sid}").json()["endAt"] > before
        assert api.post(f"/sandboxes/{sid}/refreshes").status_code == 204  # the body is optional
        for duration in (3601, -1, "60"):
            bad = api.post(f"/sandboxes/{sid}/refreshes", json={"duration": duration})
            assert bad.status_code == 400 and "duration" in bad.json()["message"], duration
