"""`e2b_local_api.http.control_guard`: a browser page cannot drive `/_local/` (real socket)."""

from __future__ import annotations

import pytest

from ..conftest import LiveServer


def _sandbox(live: LiveServer) -> str:
    with live.api() as api:
        sandbox_id: str = api.post("/sandboxes", json={"templateID": "base"}).json()["sandboxID"]
    return sandbox_id


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", b"{}"),  # a form or fetch() with a string body, no preflight
        ("application/x-www-form-urlencoded", b"a=b"),
        ("multipart/form-data; boundary=x", b"--x--"),
        (None, b""),  # fetch(url, {method: "POST", mode: "no-cors"})
    ],
)
def test_changes_need_a_json_content_type(live: LiveServer, content_type: str | None, body: bytes) -> None:
    sandbox_id = _sandbox(live)
    headers = {"Content-Type": content_type} if content_type else {}
    live.control.headers.pop("Content-Type")
    try:
        response = live.control.post("/_local/reset", content=body, headers=headers)
    finally:
        live.control.headers["Content-Type"] = "application/json"
    assert response.status_code == 415
    assert response.json()["code"] == 415 and "application/json" in response.json()["message"]
    assert [r["sandboxID"] for r in live.control.get("/_local/sandboxes").json()] == [sandbox_id]


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_cross_origin_requests_are_refused(live: LiveServer, headers: dict[str, str]) -> None:
    sandbox_id = _sandbox(live)
    flagged = live.control.patch(f"/_local/sandboxes/{sandbox_id}", json={"node_busy": True}, headers=headers)
    assert flagged.status_code == 403 and flagged.json()["code"] == 403
    assert live.control.get("/_local/stats", headers=headers).status_code == 403
    assert live.record(sandbox_id)["node_busy"] is False


def test_same_origin_and_tools_are_served(live: LiveServer) -> None:
    host = live.url.removeprefix("http://")
    same = {"Origin": live.url, "Host": host, "Sec-Fetch-Site": "same-origin"}
    assert live.control.post("/_local/reset", headers=same).status_code == 204
    assert live.control.post("/_local/reset").status_code == 204  # curl and httpx send no Origin
    assert live.control.get("/_local/health").json() == {"ok": True}


def test_the_public_api_is_not_affected(live: LiveServer) -> None:
    with live.api() as api:
        assert api.get("/v2/sandboxes", headers={"Origin": "https://app.example"}).status_code == 200
