"""Faults on demand, observed on a real socket (the live server)."""

from __future__ import annotations

import time

import httpx
import pytest

from ..conftest import LiveServer


def _sandbox(api: httpx.Client) -> str:
    sandbox_id: str = api.post("/sandboxes", json={"templateID": "base"}).json()["sandboxID"]
    return sandbox_id


def test_busy_is_a_plain_503_for_the_next_n_requests(live: LiveServer) -> None:
    live.fault("busy", count=2, operation="listSandboxes", retry_after=1)
    with live.api() as api:
        first, second, third = (api.get("/v2/sandboxes") for _ in range(3))
        assert api.post("/sandboxes", json={"templateID": "base"}).status_code == 201
    assert (first.status_code, second.status_code, third.status_code) == (503, 503, 200)
    assert first.json() == {"code": 503, "message": "the service is busy, retry later"}
    assert first.headers["Retry-After"] == "1"
    assert live.control.get("/_local/faults").json() == []


def test_trickle_sends_the_real_body_slowly(live: LiveServer) -> None:
    live.fault("trickle", operation="listSandboxes", chunk_size=1, delay=0.5)
    started = time.monotonic()  # before the request: the one pause always falls after it
    with live.api() as api, api.stream("GET", "/v2/sandboxes") as response:
        body = response.read()
    # Not the count of reads (under load the kernel may hand both one-byte sends over in one), nor
    # a time from the headers (the test may run late to see them): the pause is never shorter.
    assert body == b"[]"
    assert time.monotonic() - started >= 0.5


def test_stall_pauses_mid_body(live: LiveServer) -> None:
    with live.api() as api:
        sandbox_id = _sandbox(api)
        live.fault("stall", operation="getSandbox", after_bytes=10, delay=0.3)
        started = time.monotonic()
        response = api.get(f"/sandboxes/{sandbox_id}")
    assert time.monotonic() - started >= 0.3
    assert response.json()["sandboxID"] == sandbox_id


def test_oversize_pads_with_whitespace_and_stays_valid_json(live: LiveServer) -> None:
    live.fault("oversize", operation="listSandboxes", size=100_000)
    with live.api() as api:
        response = api.get("/v2/sandboxes")
    assert len(response.content) == 100_002
    assert response.json() == []


def test_drop_cuts_the_connection_mid_body(live: LiveServer) -> None:
    with live.api() as api:
        sandbox_id = _sandbox(api)
        live.flags(sandbox_id, agent_unresponsive=True)
        live.fault("drop", operation="pauseSandbox", after_bytes=5)
        with pytest.raises(httpx.RemoteProtocolError):
            api.post(f"/sandboxes/{sandbox_id}/pause")
    assert live.stats()["answered"]["pauseSandbox"] == {"503": 1}
