"""A stand-in sandbox (a folder laid out like one) and the envd apps serving it on a free port.

The runtime's real sandbox object has the same attributes (`SandboxView`);
here its state is set by the test, and its pause or kill wakes the apps'
waiters on the server's event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
import uvicorn
from connectrpc.codec import proto_json_codec
from e2b_local_api.dataplane.files_http import files_http_app
from e2b_local_api.dataplane.filesystem import filesystem_asgi_app
from e2b_local_api.dataplane.sandbox_view import SANDBOX_ID_HEADER, SandboxGone
from e2b_local_api.wire.envd.filesystem.filesystem_connect import FilesystemClientSync

from ..conftest import free_socket, serving, url_of

PASSWD = "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n"
GROUP = "root:x:0:\nuser:x:1000:\n"


@dataclass
class StandInSandbox:
    sandbox_id: str
    root: Path
    access_token: str | None = None
    env_vars: Mapping[str, str] = field(default_factory=dict)
    secure: bool = False
    id_offset: int = 0  # host ids are the sandbox's own (a runtime with mapped ids shifts them)
    processes: list[int] = field(default_factory=list)
    _state: Literal["running", "paused", "gone"] = "running"
    _waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def state(self) -> Literal["running", "paused", "gone"]:
        return self._state

    def set_state(self, state: Literal["running", "paused", "gone"]) -> None:
        with self._lock:
            self._state = state
            waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def wait_not_running(self) -> None:
        event = asyncio.Event()
        with self._lock:
            if self._state != "running":
                return
            self._waiters.append((asyncio.get_running_loop(), event))
        await event.wait()

    def pids(self) -> list[int]:
        return list(self.processes)

    def host(self, sandbox_path: str) -> Path:
        return self.root / sandbox_path.lstrip("/")


def make_sandbox_folder(root: Path) -> None:
    for name in ("home/user", "root", "tmp", "etc"):
        (root / name).mkdir(parents=True, exist_ok=True)
    (root / "etc" / "passwd").write_text(PASSWD)
    (root / "etc" / "group").write_text(GROUP)


class Sandboxes:
    """The stand-in runtime: sandboxes by id, and the lookup the apps are given."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.by_id: dict[str, StandInSandbox] = {}

    def create(self, sandbox_id: str, **options: Any) -> StandInSandbox:
        root = self.base / sandbox_id
        make_sandbox_folder(root)
        sandbox = StandInSandbox(sandbox_id, root, **options)
        self.by_id[sandbox_id] = sandbox
        return sandbox

    def lookup(self, headers: Mapping[str, str]) -> StandInSandbox:
        sandbox_id = headers.get(SANDBOX_ID_HEADER, "")
        sandbox = self.by_id.get(sandbox_id)
        if sandbox is None or sandbox.state == "gone":
            raise SandboxGone(sandbox_id)
        return sandbox


def envd_app(sandboxes: Sandboxes) -> Any:
    """Both apps on one ASGI callable, split by path as the router will."""
    connect = filesystem_asgi_app(sandboxes.lookup)
    files = files_http_app(sandboxes.lookup, lambda: [s for s in sandboxes.by_id.values() if s.state == "running"])

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/filesystem.Filesystem/"):
            await connect(scope, receive, send)
        else:
            await files(scope, receive, send)

    return app


@dataclass
class Envd:
    url: str
    sandboxes: Sandboxes

    def http(self, sandbox: StandInSandbox, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"E2b-Sandbox-Id": sandbox.sandbox_id, **headers}, timeout=30)

    def rpc(self) -> FilesystemClientSync:
        return FilesystemClientSync(self.url, codec=proto_json_codec(), send_compression=None, accept_compression=())


@pytest.fixture(scope="module")
def envd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Envd]:
    sandboxes = Sandboxes(tmp_path_factory.mktemp("sandboxes"))
    sock = free_socket()
    config = uvicorn.Config(envd_app(sandboxes), log_level="critical", lifespan="off")
    with serving(config, sock):
        yield Envd(url_of(sock), sandboxes)


_counter = iter(range(1_000_000))


@pytest.fixture
def sandbox(envd: Envd) -> Iterator[StandInSandbox]:
    sandbox = envd.sandboxes.create(f"sbx{next(_counter)}")
    yield sandbox
    sandbox.set_state("gone")  # ends the streams it left open


def headers_for(sandbox: StandInSandbox, user: str | None = None) -> dict[str, str]:
    headers = {"E2b-Sandbox-Id": sandbox.sandbox_id}
    if user is not None:
        import base64

        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:".encode()).decode()
    return headers
