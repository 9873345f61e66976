"""`e2b_local_api.http.host_guard`: a request naming another host gets a 421 (DNS rebinding), over real sockets."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from e2b_local_api import create_app
from e2b_local_api.control.auth import AuthConfig
from e2b_local_api.http.host_guard import host_refusal
from e2b_local_api.http.http_protocol import server_config

from ..conftest import LiveServer, free_socket, serving, url_of
from ..raw_http import connect, read_response


def _port(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def _sandboxes(live: LiveServer) -> list[str]:
    return [r["sandboxID"] for r in live.control.get("/_local/sandboxes").json()]


def _assert_misdirected(response: httpx.Response, host: str) -> None:
    assert response.status_code == 421
    body = response.json()
    assert set(body) == {"code", "message"} and body["code"] == 421
    assert body["message"].startswith("misdirected request: this server answers to Host 127.0.0.1:")
    assert repr(host) in body["message"]


def test_a_rebound_page_cannot_reset_the_server(live: LiveServer) -> None:
    # The request: every header as a browser sends it after DNS rebinding.
    with live.api() as api:
        api.post("/sandboxes", json={"templateID": "base"}).raise_for_status()
    before = _sandboxes(live)
    evil = f"evil.example:{_port(live.url)}"
    headers = {"Host": evil, "Origin": f"http://{evil}", "Sec-Fetch-Site": "same-origin"}
    response = live.control.post("/_local/reset", json={}, headers=headers)
    _assert_misdirected(response, evil)
    assert _sandboxes(live) == before and len(before) == 1


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v2/sandboxes"),
        ("POST", "/sandboxes"),
        ("GET", "/sandboxes/abc"),
        ("GET", "/openapi.json"),
        ("GET", "/_local/health"),
        ("PATCH", "/_local/settings"),
        ("GET", "/no/such/path"),
    ],
)
def test_every_route_refuses_another_host(live: LiveServer, method: str, path: str) -> None:
    evil = f"evil.example:{_port(live.url)}"
    with live.api() as api:
        response = api.request(method, path, json={"templateID": "base"}, headers={"Host": evil})
    _assert_misdirected(response, evil)
    assert _sandboxes(live) == []


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",  # no port: port 80
        "127.0.0.1",
        "127.0.0.1:1",
        "127.0.0.1:{port}.evil.example",
        "localhost.:{port}",
        "127.0.0.1.nip.io:{port}",
        "[::1]:{port}x",
        "127.0.0.1:+{port}",
        "",
    ],
)
def test_near_misses_are_refused(live: LiveServer, host: str) -> None:
    host = host.format(port=_port(live.url))
    with live.api() as api:
        _assert_misdirected(api.get("/v2/sandboxes", headers={"Host": host}), host)


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LocalHost", "[::1]"])
def test_the_addresses_it_serves_are_answered(live: LiveServer, name: str) -> None:
    with live.api() as api:
        response = api.get("/v2/sandboxes", headers={"Host": f"{name}:{_port(live.url)}"})
    assert response.status_code == 200 and response.json() == []


def test_a_request_without_a_host_is_refused(live: LiveServer) -> None:
    # HTTP/1.0 lets the header out; HTTP/1.1 requires it (h11 refuses it there).
    with connect(live.url) as sock:
        sock.sendall(f"GET /v2/sandboxes HTTP/1.0\r\nX-API-Key: {live.api_key}\r\n\r\n".encode())
        response = read_response(sock)
    assert response.status == 421
    assert response.json() == {
        "code": 421,
        "message": "misdirected request: exactly one Host header is needed, got none",
    }


@pytest.fixture(scope="module")
def any_key_url() -> Iterator[str]:
    """`--any-api-key`, served as `--host my-box.test` would be (bound to 127.0.0.1 here)."""
    sock = free_socket()
    app = create_app(AuthConfig(accept_any=True), host="my-box.test")
    with serving(server_config(app, log_level="critical"), sock):
        yield url_of(sock)


def test_any_api_key_does_not_open_the_api_to_a_rebound_page(any_key_url: str) -> None:
    evil = f"evil.example:{_port(any_key_url)}"
    headers = {"X-API-Key": "anything", "Origin": f"http://{evil}", "Sec-Fetch-Site": "same-origin"}
    response = httpx.get(f"{any_key_url}/v2/sandboxes", headers={**headers, "Host": evil}, verify=False)
    _assert_misdirected(response, evil)
    assert httpx.get(f"{any_key_url}/v2/sandboxes", headers={"X-API-Key": "x"}, verify=False).status_code == 200


def test_the_host_it_was_started_with_is_answered(any_key_url: str) -> None:
    host = f"my-box.test:{_port(any_key_url)}"
    response = httpx.get(f"{any_key_url}/v2/sandboxes", headers={"X-API-Key": "x", "Host": host}, verify=False)
    assert response.status_code == 200


def test_an_ipv6_server_answers_to_its_bracketed_address() -> None:
    sock = socket.socket(socket.AF_INET6)
    try:
        sock.bind(("::1", 0))
    except OSError as exc:
        sock.close()
        pytest.skip(f"no IPv6 loopback here: {exc}")
    port = sock.getsockname()[1]
    with serving(server_config(create_app(host="::1"), log_level="critical"), sock):
        url = f"http://[::1]:{port}"
        assert httpx.get(f"{url}/_local/health", verify=False).json() == {"ok": True}  # Host: [::1]:PORT
        evil = f"evil.example:{port}"
        _assert_misdirected(httpx.get(f"{url}/_local/health", headers={"Host": evil}, verify=False), evil)


@pytest.mark.parametrize(
    ("bind_host", "server", "host", "refused"),
    [
        ("::1", ("::1", 3000), "[::1]:3000", False),
        ("0.0.0.0", ("192.0.2.7", 3000), "192.0.2.7:3000", False),  # the address the connection reached
        ("0.0.0.0", ("192.0.2.7", 3000), "192.0.2.8:3000", True),
        ("127.0.0.1", ("127.0.0.1", 80), "localhost", False),  # no port: the scheme's
        ("127.0.0.1", ("127.0.0.1", 3000), "[::1", True),
        ("127.0.0.1", None, "anything", False),  # a Unix socket: no address to name
    ],
)
def test_host_refusal(bind_host: str, server: tuple[str, int] | None, host: str, refused: bool) -> None:
    refusal = host_refusal([host], server, bind_host, "http")
    assert (refusal is not None) is refused
    if refusal is not None:
        assert refusal.status == 421


def test_two_host_headers_are_refused() -> None:
    refusal = host_refusal(["127.0.0.1:3000", "evil.example:3000"], ("127.0.0.1", 3000), "127.0.0.1", "http")
    assert refusal is not None and refusal.message.endswith("got 2")
