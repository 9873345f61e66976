"""A live local API on a free port, shared by the tests of this folder and its subfolders.

uvicorn runs in a thread of the test process on a socket bound to port 0, so
the tests go through real HTTP (the SDK's transports, schemathesis' requests)
and no port is guessed. Each test starts from a reset server.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from e2b_local_api import DEV_API_KEY, create_app
from e2b_local_api.http.http_protocol import server_config


@dataclass
class LiveServer:
    url: str
    api_key: str
    control: httpx.Client  # talks to /_local/

    def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = self.control.get("/_local/stats").json()
        return stats

    def received(self, operation: str) -> int:
        return int(self.stats()["received"].get(operation, 0))

    def settings(self, **values: Any) -> None:
        self.control.patch("/_local/settings", json=values).raise_for_status()

    def flags(self, sandbox_id: str, **values: Any) -> dict[str, Any]:
        response = self.control.patch(f"/_local/sandboxes/{sandbox_id}", json=values)
        response.raise_for_status()
        record: dict[str, Any] = response.json()
        return record

    def record(self, sandbox_id: str) -> dict[str, Any]:
        record: dict[str, Any] = self.control.get(f"/_local/sandboxes/{sandbox_id}").json()
        return record

    def fault(self, kind: str, **params: Any) -> None:
        self.control.post("/_local/faults", json={"kind": kind, **params}).raise_for_status()

    def api(self) -> httpx.Client:
        # verify=False: plain HTTP anyway, and it skips loading the CA bundle,
        # which costs a few hundred milliseconds per client.
        return httpx.Client(base_url=self.url, headers={"X-API-Key": self.api_key}, timeout=10, verify=False)


@pytest.fixture(scope="session")
def live_server_url() -> Iterator[str]:
    sock = free_socket()
    with serving(server_config(create_app(), log_level="critical"), sock):
        yield url_of(sock)


def free_socket() -> socket.socket:
    """A socket bound to a free 127.0.0.1 port, kept open so no other test can take the port."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


def control_client(url: str) -> httpx.Client:
    """A client for `/_local/`: JSON (a form post is refused), one connection per request.

    A pooled connection left idle may be closed by the server's keep-alive
    timer just as the client reuses it: the request then meets a reset instead
    of an answer (seen once, on a loaded machine, at the `live` fixture's
    reset). With `Connection: close` the server closes each connection after
    its answer and the client never reuses one, whatever the timings.
    """
    headers = {"Content-Type": "application/json", "Connection": "close"}
    # verify=False: plain HTTP anyway, and it skips loading the CA bundle.
    return httpx.Client(base_url=url, timeout=10, verify=False, headers=headers)


@contextmanager
def serving(config: uvicorn.Config, sock: socket.socket) -> Iterator[uvicorn.Server]:
    """uvicorn with `config` on `sock`, in a thread, until the block ends."""
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("local API did not start")
        time.sleep(0.01)
    try:
        yield server
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()


@pytest.fixture(scope="session")
def live_server(live_server_url: str) -> Iterator[LiveServer]:
    with control_client(live_server_url) as control:
        yield LiveServer(live_server_url, DEV_API_KEY, control)


@pytest.fixture
def live(live_server: LiveServer) -> LiveServer:
    live_server.control.post("/_local/reset").raise_for_status()
    return live_server
