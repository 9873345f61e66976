"""One server, one port: requests naming a sandbox go to its envd, the rest to the control plane.

The released SDK, given `E2B_SANDBOX_URL`, sends every envd call to that URL
with `E2b-Sandbox-Id` (and `E2b-Sandbox-Port: 49983`, `X-Access-Token`). Such a
request never meets the control plane's `X-API-Key` check; it is answered as
E2B's proxy would: an unknown, killed or paused sandbox is a 502 whose message
says it "was not found" (Connect `unavailable`), and envd's own token check
follows (401, `unauthenticated`). Another port's requests go on to
port_proxy.py, after its traffic-token check.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from e2b_local_api.dataplane.body_timeout import connect_body_timeout, http_body_timeout
from e2b_local_api.dataplane.codecs import envd_codecs, envd_compressions
from e2b_local_api.dataplane.current import current_sandbox
from e2b_local_api.dataplane.files_http import files_http_app
from e2b_local_api.dataplane.filesystem import filesystem_asgi_app
from e2b_local_api.dataplane.port_proxy import forward, parse_port, refuse, traffic_refusal
from e2b_local_api.dataplane.process_service import ProcessService
from e2b_local_api.dataplane.sandbox_view import SANDBOX_ID_HEADER, Lookup, SandboxGone, SandboxView
from e2b_local_api.http.asgi import Receive, Scope, Send, send_json
from e2b_local_api.http.body_limit import DEFAULT_BODY_TIMEOUT
from e2b_local_api.runtime.registry import Entry, Runtimes
from e2b_local_api.runtime.sandbox import SandboxRuntime
from e2b_local_api.wire.envd.process.process_connect import ProcessASGIApplication

Headers = dict[bytes, bytes]
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]  # the envd apps type scope and channels each their own way

ENVD_PORT = 49983
SANDBOX_HEADER = b"e2b-sandbox-id"
PORT_HEADER = b"e2b-sandbox-port"
TOKEN_HEADER = b"x-access-token"
MAX_UNARY_BYTES = 16 << 20  # a Connect message larger than this is refused (resource_exhausted)
# Each open request holds a descriptor of the server's (its connection): one sandbox's idle streams (a red team
# held 21,000 StreamInputs) would use them all and stall every other sandbox. Its processes (256 at most) each
# with a stream and a StreamInput, and its watchers, fit in this with room to spare.
MAX_OPEN_REQUESTS = 1024


def envd_apps(runtimes: Runtimes, body_timeout: float = DEFAULT_BODY_TIMEOUT) -> list[tuple[str, ASGIApp]]:
    """envd's applications by path prefix, first match wins: processes, files, then the plain HTTP endpoints.

    Each bounds a stalled request body by `body_timeout` its own way:
    packages/local-api/e2b_local_api/dataplane/body_timeout.py.
    """
    process = ProcessASGIApplication(
        ProcessService(), read_max_bytes=MAX_UNARY_BYTES, codecs=envd_codecs(), compressions=envd_compressions()
    )
    lookup = lookup_in(runtimes)
    filesystem = filesystem_asgi_app(lookup)
    runtimes.on_kill(filesystem.forget_sandbox)  # a killed sandbox's watchers close with it

    def running() -> list[SandboxView]:
        return [entry.runtime for entry in runtimes.entries() if entry.runtime.state == "running"]

    files = files_http_app(lookup, signed_candidates=running)  # /files, /health, /envs, /metrics
    return [
        ("/process.Process/", connect_body_timeout(process, body_timeout)),
        ("/filesystem.Filesystem/", connect_body_timeout(filesystem, body_timeout)),
        ("/", http_body_timeout(files, body_timeout)),
    ]


def lookup_in(runtimes: Runtimes) -> Lookup:
    """The filesystem apps' lookup: the running or paused sandbox a request's `E2b-Sandbox-Id` names."""

    def lookup(headers: Mapping[str, str]) -> SandboxView:
        sandbox_id = headers.get(SANDBOX_ID_HEADER, "")
        entry = runtimes.get(sandbox_id) if sandbox_id else None
        if entry is None or entry.runtime.ended:
            raise SandboxGone(sandbox_id)
        return entry.runtime

    return lookup


class Router:
    def __init__(
        self,
        control_plane: ASGIApp,
        runtimes: Runtimes,
        apps: list[tuple[str, ASGIApp]] | None = None,
        *,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        max_open_requests: int = MAX_OPEN_REQUESTS,
    ) -> None:
        """`body_timeout`: the server's `--body-timeout`, for envd's default `apps`; `max_open_requests`: how
        many envd requests one sandbox may have open at once (more are `resource_exhausted`)."""
        self.control_plane = control_plane
        self.runtimes = runtimes
        self.apps = apps if apps is not None else envd_apps(runtimes, body_timeout)
        self.max_open_requests = max_open_requests
        self.body_timeout = body_timeout
        self._open: dict[str, int] = {}  # sandbox id -> its envd requests being answered

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.control_plane(scope, receive, send)
            return
        raw = scope.get("headers") or ()
        headers = dict(raw)
        sandbox_id = headers.get(SANDBOX_HEADER)
        if sandbox_id is not None and (repeated := _repeated(raw)):
            # The services read a header's first value, this router its last: one value or none, so that
            # the sandbox whose token was checked is the one every part of the request acts on.
            await _refuse(send, 400, "invalid_argument", f"the {repeated} header must be sent once")
            return
        if sandbox_id is None:
            if scope.get("path") == "/files" and b"signature=" in scope.get("query_string", b""):
                # download_url/upload_url: the bare server URL, the sandbox known by the signature alone
                await self.apps[-1][1](scope, receive, send)
                return
            await self.control_plane(scope, receive, send)
            return
        await self._envd(scope, receive, send, sandbox_id.decode(errors="replace"), headers)

    async def _envd(
        self, scope: Scope, receive: Receive, send: Send, sandbox_id: str, headers: dict[bytes, bytes]
    ) -> None:
        port = headers.get(PORT_HEADER, str(ENVD_PORT).encode())
        entry = self.runtimes.get(sandbox_id)
        if not self.runtimes.isolation.available:
            await _refuse(
                send,
                502,
                "unavailable",
                f"sandbox {sandbox_id} runs no processes on this server: {self.runtimes.isolation.describe()}",
            )
            return
        if entry is None:
            await _refuse(send, 502, "unavailable", f"The sandbox {sandbox_id} was not found")
            return
        if entry.runtime.frozen:
            await _refuse(
                send,
                502,
                "unavailable",
                f"The sandbox {sandbox_id} was not found: it is paused, connect to it to resume it",
            )
            return
        if port != str(ENVD_PORT).encode():
            await self._port(scope, receive, send, entry, sandbox_id, port, headers)
            return
        path = scope.get("path", "")
        if not (
            path == "/files" and b"signature=" in scope.get("query_string", b"")
        ):  # signed URLs carry their own proof
            if headers.get(TOKEN_HEADER, b"").decode(errors="replace") != entry.token:
                await _refuse(
                    send,
                    401,
                    "unauthenticated",
                    "unauthorized access: a wrong or missing X-Access-Token "
                    "(use the envdAccessToken of the sandbox's create or connect answer)",
                )
                return
        with self._counted(sandbox_id) as open_now:
            if open_now is not None:
                await _refuse(send, 429, "resource_exhausted", _too_many(sandbox_id, open_now))
                return
            await self._dispatch(scope, receive, send, entry.runtime, path)

    async def _port(
        self, scope: Scope, receive: Receive, send: Send, entry: Entry, sandbox_id: str, raw: bytes, headers: Headers
    ) -> None:
        """A request to another of the sandbox's ports: its traffic token checked as E2B's proxy does (envd's
        token is envd's own business), then proxied (port_proxy.py)."""
        port = parse_port(raw)
        if port is None:
            message = f"E2b-Sandbox-Port must be a port number from 1 to 65535, not {raw.decode(errors='replace')!r}"
            await _refuse(send, 400, "invalid_argument", message)
            return
        if (why := traffic_refusal(sandbox_id, entry.traffic_token, headers)) is not None:
            await refuse(send, 403, sandbox_id, why)
            return
        if entry.runtime.shares_host_network:
            # 127.0.0.1 there is the host's loopback: this server and every local service, not the sandbox's own.
            reason = "it runs without isolation" if entry.runtime.unisolated else "it shares the host's network"
            message = (
                f"The sandbox {sandbox_id}'s port {port} is not proxied: {reason}, so its 127.0.0.1 is the "
                "host's (run the server with bubblewrap, and slirp4netns for a networked sandbox)"
            )
            await refuse(send, 502, sandbox_id, message, port)
            return
        with self._counted(sandbox_id) as open_now:
            if open_now is not None:
                await refuse(send, 429, sandbox_id, _too_many(sandbox_id, open_now), port)
                return
            await forward(scope, receive, send, entry.runtime, port, body_timeout=self.body_timeout)

    @contextmanager
    def _counted(self, sandbox_id: str) -> Iterator[int | None]:
        """Holds one of the sandbox's open-request places while the block runs; yields None, or, when every
        place is taken, how many are (the block must refuse the request)."""
        open_now = self._open.get(sandbox_id, 0)
        if open_now >= self.max_open_requests:
            yield open_now
            return
        self._open[sandbox_id] = open_now + 1
        try:
            yield None
        finally:
            if (left := self._open[sandbox_id] - 1) > 0:
                self._open[sandbox_id] = left
            else:
                del self._open[sandbox_id]

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send, sandbox: SandboxRuntime, path: str) -> None:
        for prefix, app in self.apps:
            if path.startswith(prefix):
                token = current_sandbox.set(sandbox)
                try:
                    await app(scope, receive, send)
                finally:
                    current_sandbox.reset(token)
                return
        await _refuse(send, 404, "unimplemented", f"envd has no route {scope.get('method', '')} {path}")


def _too_many(sandbox_id: str, open_now: int) -> str:
    return (
        f"sandbox {sandbox_id} already has {open_now} envd requests open, the most one sandbox may: "
        "end some first (a background command's handle.disconnect(), a watch's stop(), a request to its ports)"
    )


_ROUTING_HEADERS = {SANDBOX_HEADER: "E2b-Sandbox-Id", PORT_HEADER: "E2b-Sandbox-Port", TOKEN_HEADER: "X-Access-Token"}


def _repeated(headers: Any) -> str | None:
    """The first routing or credential header a request sends more than once, by name; None if none is."""
    seen: set[bytes] = set()
    for name, _ in headers:
        if name in _ROUTING_HEADERS:
            if name in seen:
                return _ROUTING_HEADERS[name]
            seen.add(name)
    return None


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    """An answer both a Connect client (code, message) and a plain HTTP one (message) read."""
    await send_json(send, status, {"code": code, "message": message})
