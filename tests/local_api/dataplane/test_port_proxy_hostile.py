"""A sandbox's other ports against what the sandbox may send: malformed answers, a tampered agent, a stalled port.

The server inside the sandbox answers raw bytes chosen by path (UPSTREAM); the agent's tampering is played by
replacing the server's side of its requests. Deadlines bound only a failure.
"""

from __future__ import annotations

import array
import asyncio
import base64
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from e2b_local_api.runtime.agent_client import AgentClient, AgentError

from tests.local_api.dataplane.test_port_proxy import create, port_headers
from tests.local_api.sandboxes import RealServer, envelope, read_envelopes, real_server, wait_for

PORT = 8100
# Each connection's request head is read, then the bytes CANNED names for its path are sent and it is closed
# (/deaf: no answer, no body read; /endless: a body that never ends; /head: the head it read). On PORT + 1: a
# listener that never accepts, its backlog filled by the script itself.
UPSTREAM = r"""
import socket, sys, threading
PORT = int(sys.argv[1])
CANNED = {
    b"/both": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n",
    b"/ok": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    b"/switch": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\nraw bytes",
    b"/huge": b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n",
    b"/status": b"HTTP/1.1 2000 \x1b[31mred\r\n\r\n",
    b"/short": b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
    b"/continues": b"HTTP/1.1 100 Continue\r\n\r\n" * 5000 + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
}
full = socket.socket()
full.bind(("127.0.0.1", PORT + 1))
full.listen(0)
for _ in range(4):  # a backlog of 0 still queues one; the rest wait for an accept that never comes
    s = socket.socket(); s.setblocking(False); s.connect_ex(("127.0.0.1", PORT + 1))
def serve(conn):
    head = b""
    while b"\r\n\r\n" not in head and (chunk := conn.recv(65536)):
        head += chunk
    path = head.split(b" ")[1] if head.count(b" ") > 1 else b"/"
    if path == b"/deaf":  # reads no body and never answers
        threading.Event().wait()
    if path == b"/endless":  # a chunked body that never ends, as fast as it is read
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        try:
            while True:
                conn.sendall(b"10000\r\n" + b"e" * 65536 + b"\r\n")
        except OSError:
            return
    elif path == b"/head":  # the request's head as it arrived, for its body
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(head), head))
    else:
        conn.sendall(CANNED.get(path, CANNED[b"/ok"]))
    conn.close()
listener = socket.create_server(("127.0.0.1", PORT))
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


def upstream(server: RealServer) -> dict[str, Any]:
    sandbox = create(server, timeout=600)  # not timed out while a test waits
    script = base64.b64encode(UPSTREAM.encode()).decode()
    command = f"echo {script} | base64 -d > /tmp/up.py && (python3 /tmp/up.py {PORT} >/dev/null 2>&1 &)"
    assert server.envd(sandbox).run(command)[3].get("exitCode", 0) == 0
    wait_for(
        lambda: httpx.get(f"{server.url}/ok", headers=port_headers(sandbox, PORT), timeout=30).status_code == 200,
        "the sandbox's server to answer",
    )
    return sandbox


def test_an_answer_framed_both_chunked_and_by_length_comes_back_whole(server: RealServer) -> None:
    """h11 reads it as chunked (RFC 9112 6.3): its Content-Length must not go on beside another framing."""
    sandbox = upstream(server)
    response = httpx.get(f"{server.url}/both", headers=port_headers(sandbox, PORT), timeout=30)
    assert response.status_code == 200 and response.content == b"0123456789"
    assert "content-length" not in response.headers or response.headers["content-length"] == "10"


def test_a_tampered_agent_passing_what_is_no_socket_is_a_502_and_its_descriptor_closed(
    server: RealServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = upstream(server)
    runtime = server.runtimes.get(sandbox["sandboxID"]).runtime  # type: ignore[union-attr]
    read, write = os.pipe()

    async def tampered(message: dict[str, Any], fds: Any = ()) -> dict[str, Any]:
        return {"id": 1, "connected": message["port"], "fds": [os.dup(read)]}

    agent = runtime._agent
    assert agent is not None
    try:
        with monkeypatch.context() as patched:
            patched.setattr(agent, "request", tampered)
            response = httpx.get(server.url, headers=port_headers(sandbox, PORT), timeout=30)
    finally:
        os.close(read)
    try:
        assert response.status_code == 502, response.text
        assert "passed something other than a TCP connection" in response.json()["message"]
        with pytest.raises(BrokenPipeError):  # no read end is left open anywhere
            os.write(write, b"x")
    finally:
        os.close(write)


def test_connects_to_a_full_backlog_are_sent_to_the_agent_one_at_a_time(server: RealServer) -> None:
    """The agent waits up to a second for each such connect on its one loop: forty queued there would stall a
    command's start for forty seconds; the server sends one at a time. The deadline bounds only a failure."""
    sandbox = upstream(server)
    stalled = 40
    answers: list[int] = []

    def hit() -> None:
        answers.append(httpx.get(server.url, headers=port_headers(sandbox, PORT + 1), timeout=120).status_code)

    threads = [threading.Thread(target=hit) for _ in range(stalled)]
    for thread in threads:
        thread.start()
    agent = server.runtimes.get(sandbox["sandboxID"]).runtime._agent  # type: ignore[union-attr]
    assert agent is not None
    wait_for(lambda: agent._pending, "a connect sent to the agent")
    ran = httpx.Client(timeout=15)
    try:
        with ran.stream(
            "POST",
            f"{server.url}/process.Process/Start",
            content=envelope({"process": {"cmd": "/bin/true", "args": []}}),
            headers={**server.envd(sandbox).headers(), "Content-Type": "application/connect+json"},
        ) as started:
            assert started.status_code == 200
            assert "start" in next(read_envelopes(started.iter_raw()))[1]["event"]
    finally:
        ran.close()
        for thread in threads:
            thread.join()
    assert set(answers) == {502}


def test_an_agent_s_refusal_carrying_descriptors_leaves_none_open() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    read, write = os.pipe()

    async def run() -> None:
        client = AgentClient(ours, lambda pid, status: None)
        asking = asyncio.create_task(client.request({"op": "connect", "port": 1}))
        theirs.setblocking(False)
        await asyncio.get_running_loop().sock_recv(theirs, 1 << 16)

        theirs.sendmsg(
            [b'{"id": 1, "error": "no"}'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [read]))]
        )
        with pytest.raises(AgentError):
            await asyncio.wait_for(asking, 30)
        client.close()

    try:
        asyncio.run(run())
        os.close(read)
        with pytest.raises(BrokenPipeError):
            os.write(write, b"x")
    finally:
        os.close(write)
        theirs.close()


def test_a_request_framed_both_chunked_and_by_length_never_reaches_the_sandbox(server: RealServer) -> None:
    """Sent on with both, the sandbox's server could read another length than ours, and the rest as a second
    request: the server refuses it first (http_protocol.py)."""
    sandbox = upstream(server)
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as client:
        head = f"POST /head HTTP/1.1\r\nHost: x\r\nE2b-Sandbox-Id: {sandbox['sandboxID']}\r\n"
        head += f"E2b-Sandbox-Port: {PORT}\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        client.sendall(head.encode() + b"5\r\nhello\r\n0\r\n\r\n")
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert b"both Content-Length and Transfer-Encoding" in answer


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))  # the server runs in this process


def test_clients_leaving_endless_answers_leave_no_descriptor_open(server: RealServer) -> None:
    sandbox = upstream(server)
    with httpx.Client(timeout=30) as warm:  # the first request's descriptors that stay (the loop's, a pool's)
        with warm.stream("GET", f"{server.url}/endless", headers=port_headers(sandbox, PORT)) as response:
            next(response.iter_raw())
    before = open_descriptors()
    for _ in range(20):
        with httpx.Client(timeout=30) as client:
            with client.stream("GET", f"{server.url}/endless", headers=port_headers(sandbox, PORT)) as response:
                assert response.status_code == 200
                next(response.iter_raw())
    wait_for(lambda: open_descriptors() <= before, f"the server's descriptors back to {before}")


@pytest.mark.parametrize("path", ["/switch", "/huge", "/status"])
def test_an_answer_that_is_no_plain_http_answer_is_a_502_its_words_escaped(server: RealServer, path: str) -> None:
    sandbox = upstream(server)
    response = httpx.get(f"{server.url}{path}", headers=port_headers(sandbox, PORT), timeout=30)
    assert response.status_code == 502, response.text
    assert "gave no valid answer" in response.json()["message"] and "\x1b" not in response.text


def test_an_answer_cut_short_is_cut_short_for_the_client_too(server: RealServer) -> None:
    sandbox = upstream(server)
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"{server.url}/short", headers=port_headers(sandbox, PORT), timeout=30)


def test_informational_answers_before_the_final_one_are_passed_over(server: RealServer) -> None:
    sandbox = upstream(server)
    response = httpx.get(f"{server.url}/continues", headers=port_headers(sandbox, PORT), timeout=30)
    assert response.status_code == 200 and response.content == b"ok"


def test_a_client_leaving_a_body_the_sandbox_does_not_read_gives_its_place_back() -> None:
    """The sandbox's server neither reads the body nor answers: the upload waits for room, not for the client.
    Its one open-request place (the only one here) must come back once the client has left."""
    with real_server(body_timeout=1.0, max_open_requests=1) as server:
        sandbox = upstream(server)
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as client:
            head = f"POST /deaf HTTP/1.1\r\nHost: x\r\nE2b-Sandbox-Id: {sandbox['sandboxID']}\r\n"
            client.sendall(f"{head}E2b-Sandbox-Port: {PORT}\r\nContent-Length: {1 << 30}\r\n\r\n".encode())
            client.settimeout(5)
            with pytest.raises(OSError):  # a timeout: every buffer on the way is full (or the server ended it)
                while True:
                    client.send(b"x" * (1 << 20))
        wait_for(
            lambda: httpx.get(f"{server.url}/ok", headers=port_headers(sandbox, PORT), timeout=30).status_code == 200,
            "the place given back",
        )
