"""A sandbox's other ports through the local server: real sandboxes, a real HTTP server inside each.

Each test starts `python3` (the host's, bound read-only) serving HTTP on a port of a sandbox through envd,
then polls through the server until it answers; the polls' deadlines bound only a failure.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from e2b_local_api.runtime.isolation import without_isolation

from tests.local_api.sandboxes import RealServer, real_server, wait_for

PORT = 8000
# GET echoes the request as JSON (and /big?n=N streams N bytes, /bad answers what is not HTTP, /hold sends a
# head and one chunk, then waits); POST echoes the body it read (chunked or not). argv: port, marker.
SERVER = r"""
import http.server, json, sys, time
PORT, MARKER = int(sys.argv[1]), sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def reply(self, body, kind="application/json"):
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Upstream", MARKER)
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        if self.path.startswith("/big"):
            size = int(self.path.split("=")[1])
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            block = bytes(range(256)) * 1024
            while size:
                self.wfile.write(block[:min(size, len(block))])
                size -= min(size, len(block))
        elif self.path == "/bad":
            self.wfile.write(b"NOT HTTP AT ALL\r\n\r\n")
            self.close_connection = True
        elif self.path == "/hold":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"5\r\nheld.\r\n")
            self.wfile.flush()
            time.sleep(600)
        else:
            seen = {"marker": MARKER, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
            self.reply(json.dumps(seen).encode())
    def do_POST(self):
        body = b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                body += self.rfile.read(size)
                self.rfile.readline()
                if size == 0:
                    break
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.reply(body, "application/octet-stream")
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
"""


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


def create(server: RealServer, **body: Any) -> dict[str, Any]:
    """A sandbox of its own network namespace whatever the machine has (no network: its loopback only)."""
    return server.create(allow_internet_access=False, **body)


def port_headers(sandbox: dict[str, Any], port: int | str = PORT, **extra: str) -> dict[str, str]:
    return {"E2b-Sandbox-Id": sandbox["sandboxID"], "E2b-Sandbox-Port": str(port), **extra}


def serve(server: RealServer, sandbox: dict[str, Any], marker: str, port: int = PORT, **headers: str) -> None:
    """Start the HTTP server in `sandbox` on `port` (in the background), and wait until it answers through us."""
    script = base64.b64encode(SERVER.encode()).decode()
    command = f"echo {script} | base64 -d > /tmp/serve.py && (python3 /tmp/serve.py {port} {marker} >/dev/null 2>&1 &)"
    assert server.envd(sandbox).run(command)[3].get("exitCode", 0) == 0

    def answers() -> bool:
        return httpx.get(server.url, headers=port_headers(sandbox, port, **headers), timeout=30).status_code == 200

    wait_for(answers, f"the server on port {port} to answer")


def test_a_get_reaches_the_sandbox_s_port_with_its_path_query_and_headers(server: RealServer) -> None:
    sandbox = create(server)
    serve(server, sandbox, "alpha")
    response = httpx.get(
        f"{server.url}/some/path?x=1&y=%20",
        headers=port_headers(sandbox, **{"X-Custom": "kept", "Connection": "keep-alive, X-Hop", "X-Hop": "dropped"}),
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert response.headers["X-Upstream"] == "alpha"  # the answer's headers come back
    seen = response.json()
    assert seen["path"] == "/some/path?x=1&y=%20"
    assert seen["headers"]["x-custom"] == "kept"
    # As E2B's proxy does: the routing headers go on, hop-by-hop ones (and those Connection names) do not.
    assert seen["headers"]["e2b-sandbox-id"] == sandbox["sandboxID"]
    assert "x-hop" not in seen["headers"] and "keep-alive" not in seen["headers"].get("connection", "")


def test_a_networked_sandbox_of_its_own_network_is_reached_too(server: RealServer) -> None:
    """With slirp4netns a networked sandbox's loopback is its own as well; without it, it is the host's: refused."""
    sandbox = server.create()
    if server.runtimes.isolation.slirp is None:
        response = httpx.get(server.url, headers=port_headers(sandbox), timeout=30)
        assert response.status_code == 502 and "it shares the host's network" in response.json()["message"]
        return
    serve(server, sandbox, "networked")
    assert httpx.get(server.url, headers=port_headers(sandbox), timeout=30).json()["marker"] == "networked"


def test_a_post_body_streamed_in_chunks_comes_back_whole(server: RealServer) -> None:
    sandbox = create(server)
    serve(server, sandbox, "beta")
    chunks = [bytes([n]) * 65536 for n in range(40)]  # 2.5 MiB, chunked: its length is not told ahead

    def body() -> Iterator[bytes]:
        yield from chunks

    response = httpx.post(server.url, content=body(), headers=port_headers(sandbox), timeout=60)
    assert response.status_code == 200 and response.content == b"".join(chunks)
    sized = httpx.post(server.url, content=b"with a length", headers=port_headers(sandbox), timeout=30)
    assert sized.content == b"with a length"


def test_a_large_answer_is_streamed_back(server: RealServer) -> None:
    sandbox = create(server)
    serve(server, sandbox, "gamma")
    size = 24 * 1024 * 1024
    digest, received = hashlib.sha256(), 0
    with httpx.stream("GET", f"{server.url}/big?n={size}", headers=port_headers(sandbox), timeout=60) as response:
        assert response.status_code == 200
        for chunk in response.iter_raw():
            digest.update(chunk)
            received += len(chunk)
    block = bytes(range(256)) * 1024
    expected = hashlib.sha256(block * (size // len(block))).hexdigest()
    assert received == size and digest.hexdigest() == expected


def test_a_port_nothing_listens_on_is_a_502_saying_it_is_not_open(server: RealServer) -> None:
    sandbox = create(server)
    response = httpx.get(server.url, headers=port_headers(sandbox, 8001), timeout=30)
    assert response.status_code == 502
    answer = response.json()
    assert answer["sandboxId"] == sandbox["sandboxID"] and answer["port"] == 8001 and answer["code"] == 502
    assert "port 8001 is not open" in answer["message"]


@pytest.mark.parametrize("port", ["0", "65536", "http", "-1", "+80", "8000.5", "123456"])
def test_a_port_header_that_is_no_port_is_a_400(server: RealServer, port: str) -> None:
    sandbox = create(server)
    response = httpx.get(server.url, headers=port_headers(sandbox, port), timeout=30)
    assert response.status_code == 400, response.text
    assert "E2b-Sandbox-Port must be a port number from 1 to 65535" in response.json()["message"]


def test_each_sandbox_has_its_own_loopback(server: RealServer) -> None:
    """The same port in another sandbox is not the first one's server: naming B never reaches A."""
    first, second = create(server), create(server)
    serve(server, first, "first")
    refused = httpx.get(server.url, headers=port_headers(second), timeout=30)
    assert refused.status_code == 502 and "is not open" in refused.json()["message"]
    serve(server, second, "second")
    for sandbox, marker in ((first, "first"), (second, "second")):
        assert httpx.get(server.url, headers=port_headers(sandbox), timeout=30).json()["marker"] == marker


def test_a_sandbox_without_public_traffic_asks_for_its_traffic_token(server: RealServer) -> None:
    sandbox = create(server, network={"allowPublicTraffic": False})
    token = sandbox["trafficAccessToken"]
    assert token
    serve(server, sandbox, "secured", **{"e2b-traffic-access-token": token})
    missing = httpx.get(server.url, headers=port_headers(sandbox), timeout=30)
    wrong = httpx.get(server.url, headers=port_headers(sandbox, **{"e2b-traffic-access-token": "x"}), timeout=30)
    for response, word in ((missing, "missing"), (wrong, "wrong")):
        assert response.status_code == 403, response.text
        assert response.json()["sandboxId"] == sandbox["sandboxID"] and word in response.json()["message"]
    # envd's own port is not asked for it: its access token guards it.
    assert server.envd(sandbox).unary("List", {}).status_code == 200


def test_a_paused_or_killed_sandbox_gets_the_existing_answers(server: RealServer) -> None:
    sandbox = create(server)
    serve(server, sandbox, "delta")
    sandbox_id = sandbox["sandboxID"]
    assert server.api.post(f"/sandboxes/{sandbox_id}/pause", json={}).status_code == 200
    paused = httpx.get(server.url, headers=port_headers(sandbox), timeout=30)
    assert paused.status_code == 502 and "paused" in paused.json()["message"]
    assert server.api.delete(f"/sandboxes/{sandbox_id}").status_code == 204
    killed = httpx.get(server.url, headers=port_headers(sandbox), timeout=30)
    assert killed.status_code == 502 and "was not found" in killed.json()["message"]


def test_an_answer_that_is_not_http_is_a_502(server: RealServer) -> None:
    sandbox = create(server)
    serve(server, sandbox, "epsilon")
    response = httpx.get(f"{server.url}/bad", headers=port_headers(sandbox), timeout=30)
    assert response.status_code == 502
    assert "gave no valid answer" in response.json()["message"]
    assert httpx.get(server.url, headers=port_headers(sandbox), timeout=30).status_code == 200  # still served


def test_an_upgrade_is_refused(server: RealServer) -> None:
    sandbox = create(server)
    headers = port_headers(sandbox, Connection="Upgrade", Upgrade="websocket")
    response = httpx.get(server.url, headers=headers, timeout=30)
    assert response.status_code == 400 and "WebSocket" in response.json()["message"]


def test_proxied_requests_count_among_the_sandbox_s_open_requests() -> None:
    with real_server(max_open_requests=2) as server:
        sandbox = create(server)
        serve(server, sandbox, "zeta")
        with (
            httpx.stream("GET", f"{server.url}/hold", headers=port_headers(sandbox), timeout=60) as first,
            httpx.stream("GET", f"{server.url}/hold", headers=port_headers(sandbox), timeout=60) as second,
        ):
            readers = [held.iter_raw() for held in (first, second)]  # kept: a reader dropped closes its stream
            for reader in readers:
                assert next(reader) == b"held."  # answered and still open: it holds its place
            refused = httpx.get(server.url, headers=port_headers(sandbox), timeout=30)
            assert refused.status_code == 429 and "already has 2" in refused.json()["message"]
            assert server.envd(sandbox).unary("List", {}).status_code == 429  # envd's calls share the places
        wait_for(
            lambda: httpx.get(server.url, headers=port_headers(sandbox), timeout=30).status_code == 200,
            "the places to be given back once the held requests ended",
        )


def test_a_request_body_that_stalls_is_a_408() -> None:
    """Its body stops (here for good, until the answer) after 3 of its 10 bytes: after the server's body timeout
    (1 s here) the request is answered 408 and its place given back; the sandbox's server was waiting for it."""
    with real_server(body_timeout=1.0) as server:
        sandbox = create(server)
        serve(server, sandbox, "eta")
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=60) as client:
            head = f"POST / HTTP/1.1\r\nHost: x\r\nE2b-Sandbox-Id: {sandbox['sandboxID']}\r\n"
            client.sendall(f"{head}E2b-Sandbox-Port: {PORT}\r\nContent-Length: 10\r\n\r\nabc".encode())
            answer = b""
            while b"\r\n\r\n" not in answer and (chunk := client.recv(65536)):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert httpx.post(server.url, content=b"after", headers=port_headers(sandbox), timeout=30).content == b"after"


def test_without_isolation_ports_are_not_proxied() -> None:
    """There, a sandbox's 127.0.0.1 is the host's: the server itself and every local service."""
    with real_server(without_isolation()) as server:
        sandbox = server.create()
        response = httpx.get(server.url, headers=port_headers(sandbox, server.url.rsplit(":", 1)[1]), timeout=30)
        assert response.status_code == 502
        assert "not proxied: it runs without isolation" in response.json()["message"]
        assert json.loads(response.text)["sandboxId"] == sandbox["sandboxID"]
