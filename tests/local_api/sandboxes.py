"""A local server whose sandboxes run processes (bubblewrap), and a plain Connect client for envd.

The server runs in a thread of the test process on a free 127.0.0.1 port, as
`conftest.py`'s does, with a runtime whose state folder is the test's. The
client speaks Connect's JSON codec over httpx with nothing generated in the
way, so that tests see exactly what goes over the wire.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from e2b_local_api import DEV_API_KEY, create_app
from e2b_local_api.dataplane.routing import MAX_OPEN_REQUESTS, Router
from e2b_local_api.http.body_limit import DEFAULT_BODY_TIMEOUT
from e2b_local_api.http.http_protocol import server_config
from e2b_local_api.runtime import isolation
from e2b_local_api.runtime.registry import Runtimes

from tests.local_api.conftest import free_socket, serving, url_of

ENVD_PORT = "49983"


@dataclass
class RealServer:
    url: str
    runtimes: Runtimes
    api: httpx.Client

    def create(self, **body: Any) -> dict[str, Any]:
        response = self.api.post("/sandboxes", json={"templateID": "base", **body})
        assert response.status_code == 201, response.text
        sandbox: dict[str, Any] = response.json()
        return sandbox

    def envd(self, sandbox: dict[str, Any]) -> Envd:
        return Envd(self.url, sandbox["sandboxID"], sandbox["envdAccessToken"])


@contextmanager
def real_server(
    found: isolation.Isolation | None = None,
    *,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    max_open_requests: int = MAX_OPEN_REQUESTS,
) -> Iterator[RealServer]:
    """The server's state is its own temporary folder (under the system's, which the sandboxes' root can
    traverse, unlike pytest's), removed when the server stops. `found`: the probe's answer, unless given;
    `body_timeout`: the server's `--body-timeout`; `max_open_requests`: the router's, per sandbox."""
    found = found or isolation.probe()
    if not found.available:
        pytest.skip(f"sandboxes cannot run processes on this machine: {found.reason}")
    runtimes = Runtimes(found)
    app = create_app(runtimes=runtimes, body_timeout=body_timeout)
    sock = free_socket()
    router = Router(app, runtimes, body_timeout=body_timeout, max_open_requests=max_open_requests)
    with serving(server_config(router, log_level="critical"), sock):
        url = url_of(sock)
        try:
            with httpx.Client(base_url=url, headers={"X-API-Key": DEV_API_KEY}, timeout=30, verify=False) as api:
                yield RealServer(url, runtimes, api)
        finally:
            runtimes.close_soon()  # as the CLI's server does on its exit signal: open streams end


def envelope(message: dict[str, Any], flags: int = 0) -> bytes:
    data = json.dumps(message).encode()
    return struct.pack(">BI", flags, len(data)) + data


def read_envelopes(chunks: Iterator[bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while len(buffer) >= 5:
            flags, size = struct.unpack(">BI", buffer[:5])
            if len(buffer) < 5 + size:
                break
            yield flags, json.loads(buffer[5 : 5 + size])
            buffer = buffer[5 + size :]


class StreamEnded(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = error.get("message", "")


@dataclass
class Envd:
    url: str
    sandbox_id: str
    token: str

    def headers(self, **extra: str) -> dict[str, str]:
        return {
            "E2b-Sandbox-Id": self.sandbox_id,
            "E2b-Sandbox-Port": ENVD_PORT,
            "X-Access-Token": self.token,
            "Connect-Protocol-Version": "1",
            **extra,
        }

    def unary(self, method: str, body: dict[str, Any], **headers: str) -> httpx.Response:
        return httpx.post(
            f"{self.url}/process.Process/{method}",
            json=body,
            headers=self.headers(**headers),
            timeout=30,
        )

    def call(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.unary(method, body)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        return answer

    @contextmanager
    def stream(self, method: str, body: dict[str, Any], **headers: str) -> Iterator[Iterator[dict[str, Any]]]:
        """The events of a server stream; raises StreamEnded with the stream's error, if it has one."""
        with httpx.stream(
            "POST",
            f"{self.url}/process.Process/{method}",
            content=envelope(body),
            headers=self.headers(**{"Content-Type": "application/connect+json", **headers}),
            timeout=60,
        ) as response:
            assert response.status_code == 200, response.read()

            def events() -> Iterator[dict[str, Any]]:
                for flags, message in read_envelopes(response.iter_raw()):
                    if flags & 2:
                        if "error" in message:
                            raise StreamEnded(message["error"])
                        return
                    yield message["event"]

            yield events()

    def run(self, command: str, *, user: str | None = None, **request: Any) -> tuple[int, bytes, bytes, dict[str, Any]]:
        """`bash -l -c command` to its end, as `user` (envd's Basic user; its default if None): pid, stdout,
        stderr, the end event."""
        body = {"process": {"cmd": "/bin/bash", "args": ["-l", "-c", command]}, "stdin": False, **request}
        headers = {} if user is None else {"Authorization": "Basic " + base64.b64encode(f"{user}:".encode()).decode()}
        out, err = b"", b""
        with self.stream("Start", body, **headers) as events:
            pid = int(next(events)["start"]["pid"])
            for event in events:
                data = event.get("data", {})
                out += decode(data.get("stdout", ""))
                err += decode(data.get("stderr", ""))
                if "end" in event:
                    return pid, out, err, event["end"]
        raise AssertionError("the stream ended without an end event")


def decode(text: str) -> bytes:
    return base64.b64decode(text)


def alive_named(name: str) -> list[int]:
    """Host pids of the living processes (not zombies) whose argv[0] is `name` (`exec -a NAME ...`)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv0 = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0]
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argv0 == name.encode() and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """`condition()`'s first truthy value, polled until `timeout` (generous: the machine is shared)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def answers(url: str) -> bool:
    """Whether a local server at `url` answers HTTP at all (any status): it is up."""
    try:
        return httpx.get(f"{url}/health-of-control-plane", timeout=1).status_code > 0
    except httpx.HTTPError:
        return False


def host_address() -> str | None:
    """An address of this host that is not loopback (the way out a networked sandbox has), if it has one."""
    try:
        words = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return next((w for w in words if "." in w and not w.startswith("127.")), None)


def datagrams_to_the_host_loopback(envd: Envd, address: str) -> list[bytes]:
    """What reached the host's loopback of two datagrams a sandbox sends to 127.0.0.1 out by its tap0: one from a
    socket bound to it (SO_BINDTODEVICE), one naming it (IP_PKTINFO), both unprivileged.

    slirp4netns handles tap0's packets in order, so once a third datagram, sent after them to `address` (the
    host's outside address) has arrived, either of them would have too: nothing here waits on a clock.
    """
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as target,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as witness,
    ):
        target.bind(("127.0.0.1", 0))
        witness.bind((address, 0))
        port = target.getsockname()[1]
        script = (
            "import socket, struct\n"
            "bound = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "bound.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b'tap0')\n"
            f"bound.sendto(b'bound', ('127.0.0.1', {port}))\n"
            "info = struct.pack('I4s4s', socket.if_nametoindex('tap0'), bytes(4), socket.inet_aton('127.0.0.1'))\n"
            "other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            # IP_PKTINFO is 8 on Linux (Python names it from 3.12 only).
            f"other.sendmsg([b'pktinfo'], [(socket.IPPROTO_IP, 8, info)], 0, ('127.0.0.1', {port}))\n"
            f"other.sendto(b'witness', ('{address}', {witness.getsockname()[1]}))\n"
        )
        _, _, err, end = envd.run(f'python3 -c "{script}"')
        assert end.get("exitCode") is None, err  # all three sent, as far as the sandbox can tell
        witness.settimeout(30)
        assert witness.recv(64) == b"witness"
        target.setblocking(False)
        arrived = []
        while True:
            try:
                arrived.append(target.recv(64))
            except BlockingIOError:
                return arrived
