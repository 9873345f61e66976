"""Routing by `E2b-Sandbox-Id`: envd's answers for unknown sandboxes, tokens and ports; the control plane untouched."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.local_api.sandboxes import Envd, RealServer, envelope, read_envelopes, real_server, wait_for


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


def test_create_reports_the_envd_version_served(server: RealServer) -> None:
    sandbox = server.create()
    assert sandbox["envdVersion"] == "0.6.4"
    assert sandbox["envdAccessToken"]


def test_unknown_sandbox_is_a_502_that_was_not_found(server: RealServer) -> None:
    response = httpx.post(
        f"{server.url}/process.Process/List",
        json={},
        headers={"E2b-Sandbox-Id": "inosuchsandbox", "E2b-Sandbox-Port": "49983", "X-Access-Token": "x"},
    )
    assert response.status_code == 502
    assert response.json()["code"] == "unavailable"
    assert "was not found" in response.json()["message"]


def test_killed_sandbox_was_not_found(server: RealServer) -> None:
    sandbox = server.create()
    envd = server.envd(sandbox)
    assert envd.unary("List", {}).status_code == 200
    assert server.api.delete(f"/sandboxes/{sandbox['sandboxID']}").status_code == 204
    response = envd.unary("List", {})
    assert response.status_code == 502 and "was not found" in response.json()["message"]


@pytest.mark.parametrize("token", [None, "", "wrong"])
def test_a_wrong_or_missing_access_token_is_unauthenticated(server: RealServer, token: str | None) -> None:
    sandbox = server.create()
    headers = {"E2b-Sandbox-Id": sandbox["sandboxID"], "E2b-Sandbox-Port": "49983"}
    if token is not None:
        headers["X-Access-Token"] = token
    response = httpx.post(f"{server.url}/process.Process/List", json={}, headers=headers)
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"


def test_the_api_key_is_not_asked_of_envd_and_the_token_opens_nothing_of_the_control_plane(
    server: RealServer,
) -> None:
    sandbox = server.create()
    envd = server.envd(sandbox)
    assert envd.unary("List", {}).status_code == 200  # no X-API-Key sent
    # Without E2b-Sandbox-Id the request is the control plane's, which wants its key.
    response = httpx.get(f"{server.url}/v2/sandboxes", headers={"X-Access-Token": sandbox["envdAccessToken"]})
    assert response.status_code == 401


@pytest.mark.parametrize("header", ["E2b-Sandbox-Id", "X-Access-Token", "E2b-Sandbox-Port"])
@pytest.mark.parametrize("service", ["/filesystem.Filesystem/ListDir", "/process.Process/List", "/envs"])
def test_a_routing_or_credential_header_sent_twice_is_refused(server: RealServer, header: str, service: str) -> None:
    """The red team's cross-sandbox call: the victim's id first, the attacker's id and token after. The router
    checked the token against the last id while the filesystem service acted on the first."""
    victim, attacker = server.create(), server.create()
    server.envd(victim).run("echo secret > ~/secret")
    first = {"E2b-Sandbox-Id": victim["sandboxID"], "X-Access-Token": victim["envdAccessToken"]}.get(header, "49983")
    headers = [(name, value) for name, value in server.envd(attacker).headers().items() if name != header]
    headers = [(header, first), *headers, (header, server.envd(attacker).headers()[header])]
    body = {"path": "/home/user"} if "ListDir" in service else {}
    if service == "/envs":
        response = httpx.get(f"{server.url}{service}", headers=headers)
    else:
        response = httpx.post(f"{server.url}{service}", json=body, headers=headers)
    assert response.status_code == 400, response.text
    assert response.json() == {"code": "invalid_argument", "message": f"the {header} header must be sent once"}
    assert server.envd(victim).run("cat ~/secret")[1] == b"secret\n"


def test_another_port_is_not_open(server: RealServer) -> None:
    sandbox = server.create()
    response = server.envd(sandbox).unary("List", {}, **{"E2b-Sandbox-Port": "8080"})
    assert response.status_code == 502
    assert "port 8080 is not open" in response.json()["message"]


def test_unknown_rpc_and_route(server: RealServer) -> None:
    envd = server.envd(server.create())
    response = httpx.post(f"{server.url}/process.Process/Nope", json={}, headers=envd.headers())
    assert response.status_code == 404
    response = httpx.get(f"{server.url}/nowhere", headers=envd.headers())
    assert response.status_code == 404
    assert "no envd endpoint" in response.json()["message"]


def test_malformed_json_is_invalid_argument(server: RealServer) -> None:
    envd = server.envd(server.create())
    response = httpx.post(
        f"{server.url}/process.Process/List",
        content=b"{not json",
        headers={**envd.headers(), "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_argument"


def test_an_oversized_unary_request_is_refused_without_being_kept(server: RealServer) -> None:
    envd = server.envd(server.create())

    def body() -> Iterator[bytes]:
        yield b'{"input":{"stdin":"'
        chunk = b"A" * (1 << 20)
        for _ in range(64):  # 64 MiB, above the 16 MiB cap; a real 1 GiB would only take longer
            yield chunk
        yield b'"}}'

    response = httpx.post(
        f"{server.url}/process.Process/SendInput",
        content=body(),
        headers={**envd.headers(), "Content-Type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 429, response.text  # resource_exhausted
    assert response.json()["code"] == "resource_exhausted"


def test_control_plane_still_served(server: RealServer, tmp_path: Path) -> None:
    assert server.api.get("/v2/sandboxes").status_code == 200


@pytest.mark.parametrize(
    "body",
    [b"\x00\x00\x00\x00\x10{}", b"\x00\x00\x00\x00\x02{x", b"\x07\x00"],
    ids=["truncated", "bad-json", "short-prefix"],
)
def test_a_malformed_stream_envelope_is_an_error_not_a_hang(server: RealServer, body: bytes) -> None:
    envd = server.envd(server.create())
    response = httpx.post(
        f"{server.url}/process.Process/Start",
        content=body,
        headers={**envd.headers(), "Content-Type": "application/connect+json"},
        timeout=30,
    )
    assert response.status_code == 200  # Connect streams carry their error in the end message
    # connectrpc calls an incomplete envelope "zero messages" (unimplemented); connect-go would say
    # invalid_argument. Either way an error, at once, and no process started.
    assert b'"error"' in response.content, response.content
    assert b"invalid_argument" in response.content or b"unimplemented" in response.content, response.content
    assert envd.call("List", {}) == {}


def test_one_sandbox_s_open_requests_are_bounded_and_others_still_answer() -> None:
    """A sandbox holding its most open requests (here 3 watches; the server's default is MAX_OPEN_REQUESTS)
    is refused a fourth, `resource_exhausted`, while another sandbox answers; one ended, it is served again."""
    with real_server(max_open_requests=3) as server, ExitStack() as watches:
        busy, other = server.create(), server.create()
        envd = server.envd(busy)
        opened = []
        for _ in range(3):
            events = watches.enter_context(_watch(envd))
            assert "start" in next(events)  # the request is being answered: it holds its place
            opened.append(events)
        refused = envd.unary("List", {})
        assert refused.status_code == 429, refused.text
        assert refused.json()["code"] == "resource_exhausted"
        assert "already has 3 envd requests open" in refused.json()["message"]
        assert server.envd(other).unary("List", {}).status_code == 200
        watches.close()  # the server sees each connection close and lets go of its place
        wait_for(lambda: envd.unary("List", {}).status_code == 200, "the sandbox to be served again")


@contextmanager
def _watch(envd: Envd) -> Iterator[Iterator[dict[str, Any]]]:
    with httpx.stream(
        "POST",
        f"{envd.url}/filesystem.Filesystem/WatchDir",
        content=envelope({"path": "/home/user"}),
        headers=envd.headers(**{"Content-Type": "application/connect+json"}),
        timeout=60,
    ) as response:
        assert response.status_code == 200, response.read()
        yield (message for _, message in read_envelopes(response.iter_raw()))
