"""The public routes: auth, validation, errors; in process (httpx over ASGI), bad input also over a real socket."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from e2b_local_api import DEV_API_KEY, AuthConfig, create_app

from .conftest import LiveServer

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
        ("/sandboxes", b'{"templateID": "b", "timeout": "5"}', "timeout"),
        ("/sandboxes", b'{"templateID": "b", "timeout": -1}', "timeout"),
        ("/sandboxes", b'{"templateID": "b", "timeout": 2147483648}', "int32"),
        ("/sandboxes", b'{"templateID": "b", "autoPause": null}', "null"),
        ("/sandboxes", b'{"templateID": "b", "metadata": {"k": 1}}', "metadata"),
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
    body = {"timeout": 60, "on_resume": "reboot"}
    assert (await client.post(f"/sandboxes/{sid}/connect", json=body)).status_code == 200
    await client.post(f"/sandboxes/{sid}/pause")
    assert (await client.post(f"/sandboxes/{sid}/connect", json=body)).status_code == 201
    bad = await client.post(f"/sandboxes/{sid}/connect", json={"timeout": 1, "on_resume": "x"})
    assert bad.status_code == 400


async def test_list_query_validation_and_paging_header(client: httpx.AsyncClient) -> None:
    for _ in range(3):
        await _sandbox(client)
    first = await client.get("/v2/sandboxes", params={"limit": 2, "state": "running,paused"})
    assert len(first.json()) == 2 and first.headers["X-Next-Token"]
    rest = await client.get("/v2/sandboxes", params={"nextToken": first.headers["X-Next-Token"]})
    assert len(rest.json()) == 1 and "X-Next-Token" not in rest.headers
    bad_queries = ({"limit": 0}, {"limit": "x"}, {"state": "gone"}, {"state": ""}, {"state": ",,"}, {"colour": "red"})
    for params in bad_queries:
        response = await client.get("/v2/sandboxes", params=params)
        assert response.status_code == 400, params


async def test_metadata_filter_is_a_url_encoded_query(client: httpx.AsyncClient) -> None:
    await client.post("/sandboxes", json={"templateID": "b", "metadata": {"user": "a&b"}})
    await client.post("/sandboxes", json={"templateID": "b", "metadata": {"user": "c"}})
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
        "listSandboxes",
        "getSandbox",
        "killSandbox",
        "setSandboxTimeout",
        "connectSandbox",
        "pauseSandbox",
    }
    assert not any(path.startswith("/_local") for path in doc["paths"])
    pause = doc["paths"]["/sandboxes/{sandboxID}/pause"]["post"]
    assert pause["requestBody"]["required"] is False
    assert "422" not in pause["responses"]


# --- bad input over a real socket: the spec's 4xx `Error`, never a 500, and others still served ---

CREATE_CASES = [
    (b'{"templateID": ', "application/json", "Invalid JSON"),
    (b"[1, 2]", "application/json", "invalid request body"),
    (b'{"templateID": "b"}', "text/plain", "Content-Type must be application/json"),
    (b'{"templateID": "b"}', "application/x-www-form-urlencoded", "Content-Type must be application/json"),
    (b'{"templateID": "b"}', None, "Content-Type must be application/json"),
    (b'{"templateID": "b", "timeout": -5}', "application/json", "timeout"),
    (b'{"templateID": "b", "timeout": 99999999999}', "application/json", "int32"),
    (b'{"templateID": "b", "timeout": 1.5}', "application/json", "timeout"),
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
        sid = api.post("/sandboxes", json={"templateID": "b"}).json()["sandboxID"]
        for path in (f"/sandboxes/{sid}/timeout", f"/sandboxes/{sid}/connect"):
            response = api.post(path, json={"timeout": timeout})
            assert response.status_code == 400 and response.json()["code"] == 400, (path, response.text)


def test_unknown_fields_are_ignored_as_the_spec_allows(live: LiveServer) -> None:
    # The request schemas do not set additionalProperties: false, so an unknown
    # field is valid; it is neither stored nor echoed.
    with live.api() as api:
        created = api.post("/sandboxes", json={"templateID": "b", "colour": "red"})
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
