"""A sandbox's other ports: a request naming one goes, as HTTP/1.1, to 127.0.0.1:<port> inside that sandbox.

The server cannot reach that loopback (the sandbox's network namespace is its own): the sandbox's agent
connects there and passes the socket back (e2b_local_api/runtime/agent.py, "connect"). One connection a request,
framed with h11; the request body and the answer are streamed, never held whole. Refusals carry what E2B's
proxy answers: a port nothing accepts on is a 502, a missing or wrong `e2b-traffic-access-token` a 403, as JSON
with `sandboxId`, `message`, `code` (and `port`). Upgrades (WebSocket) are refused: they are not proxied here.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import socket
from typing import Any

import h11

from e2b_local_api.http.asgi import Receive, Scope, Send, send_json
from e2b_local_api.runtime.sandbox import SandboxError, SandboxRuntime

TRAFFIC_TOKEN_HEADER = b"e2b-traffic-access-token"
_NAME = TRAFFIC_TOKEN_HEADER.decode()
READ_BYTES = 64 * 1024
# Headers for one hop only (RFC 9110 7.6.1), and the forwarding ones that E2B's proxy (Go's ReverseProxy with
# Rewrite) drops as well; the routing headers and the traffic token go on, as they do there.
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"proxy-authenticate", b"proxy-authorization", b"te"}
    | {b"trailer", b"transfer-encoding", b"upgrade"}
)
_FORWARDING = frozenset({b"forwarded", b"x-forwarded-for", b"x-forwarded-host", b"x-forwarded-proto"})


def parse_port(raw: bytes) -> int | None:
    """`E2b-Sandbox-Port`'s port, or None unless it is a decimal from 1 to 65535."""
    if not raw.isdigit() or len(raw) > 5:
        return None
    port = int(raw)
    return port if 0 < port < 65536 else None


def traffic_refusal(sandbox_id: str, expected: str | None, headers: dict[bytes, bytes]) -> str | None:
    """Why a request to a port is refused for its traffic token (E2B's 403), or None: it may pass."""
    if expected is None:
        return None  # public traffic: no token is asked
    given = headers.get(TRAFFIC_TOKEN_HEADER)
    if not given:
        return f"sandbox {sandbox_id} takes traffic only with its traffic access token: the header {_NAME} is missing"
    if not hmac.compare_digest(given, expected.encode()):
        return f"sandbox {sandbox_id} takes traffic only with its traffic access token: the {_NAME} given is wrong"
    return None


async def refuse(send: Send, status: int, sandbox_id: str, message: str, port: int | None = None) -> None:
    """An answer shaped as E2B's proxy's JSON ones."""
    fields: dict[str, Any] = {"sandboxId": sandbox_id, "message": message, "code": status}
    if port is not None:
        fields["port"] = port
    await send_json(send, status, fields)


async def forward(
    scope: Scope, receive: Receive, send: Send, sandbox: SandboxRuntime, port: int, *, body_timeout: float
) -> None:
    """Send the request to the sandbox's `port` and stream its answer back. `body_timeout`: the longest the
    request body may stall (408), the longest the sandbox's server may leave it unread (502), and the longest
    the connect may take."""
    sandbox_id = sandbox.sandbox_id
    request = _upstream_request(scope, port)
    if isinstance(request, str):
        await refuse(send, 400, sandbox_id, request, port)
        return
    try:
        async with asyncio.timeout(body_timeout):
            sock = await sandbox.connect(port)
    except (SandboxError, TimeoutError) as error:
        reason = str(error) or f"no connection within {body_timeout:g} s"
        message = f"The sandbox {sandbox_id} is running but port {port} is not open ({reason})"
        await refuse(send, 502, sandbox_id, message, port)
        return
    exchange = _Exchange(sock, send, sandbox_id, port)
    try:
        await exchange.run(request, receive, body_timeout)
    finally:
        exchange.close()


def _upstream_request(scope: Scope, port: int) -> h11.Request | str:
    """The request as it goes to the sandbox, or why it cannot."""
    raw: list[tuple[bytes, bytes]] = list(scope.get("headers") or ())
    named = {token.strip().lower() for name, value in raw if name == b"connection" for token in value.split(b",")}
    if any(name == b"upgrade" for name, _ in raw) and b"upgrade" in named:
        return "protocol upgrades (WebSocket) are not proxied by the local server: plain HTTP requests only"
    headers = [(n, v) for n, v in raw if n not in _HOP_BY_HOP and n not in named and n not in _FORWARDING]
    if any(name == b"transfer-encoding" for name, _ in raw):
        headers.append((b"transfer-encoding", b"chunked"))  # the server took the body as chunked: so it goes on
    if not any(name == b"host" for name, _ in headers):
        headers.append((b"host", f"127.0.0.1:{port}".encode()))
    target = scope.get("raw_path") or scope.get("path", "/").encode()
    if scope.get("query_string"):
        target += b"?" + scope["query_string"]
    try:
        return h11.Request(method=scope.get("method", "GET"), target=target, headers=headers)
    except h11.LocalProtocolError as error:
        return f"the request cannot be sent on as HTTP/1.1: {error}"


class _Upstream(Exception):
    """The sandbox's server closed, reset or answered what is not HTTP/1.1."""


class _Unread(Exception):
    """The sandbox's server read none of the request body for the body timeout (nor answered, or the client
    left, unseen while the upload waited for room)."""


class _Exchange:
    """One request and its answer over one connection to the sandbox."""

    def __init__(self, sock: socket.socket, send: Send, sandbox_id: str, port: int) -> None:
        self._sock = sock
        self._send = send
        self._sandbox_id = sandbox_id
        self._port = port
        self._conn = h11.Connection(h11.CLIENT)
        self._writer: asyncio.StreamWriter | None = None
        self._reader: asyncio.StreamReader | None = None
        self.started = False

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        else:
            self._sock.close()

    async def run(self, request: h11.Request, receive: Receive, body_timeout: float) -> None:
        self._reader, self._writer = await asyncio.open_connection(sock=self._sock, limit=READ_BYTES)
        self._writer.write(self._conn.send(request))
        upload = asyncio.create_task(self._upload(receive, body_timeout))
        relay = asyncio.create_task(self._relay())
        try:
            await asyncio.wait({upload, relay}, return_when=asyncio.FIRST_COMPLETED)
            if not relay.done():
                stalled = upload.exception() if not upload.cancelled() else None
                if isinstance(stalled, (OSError, _Upstream)) and not isinstance(stalled, TimeoutError):
                    # The sandbox stopped reading the body (TimeoutError is an OSError too: not that one): what it
                    # answers still goes back.
                    await relay
                    return
                relay.cancel()  # the client left, or its body stalled
                with contextlib.suppress(asyncio.CancelledError):
                    await relay
                if isinstance(stalled, TimeoutError) and not self.started:
                    message = f"request body stalled: no bytes received for {body_timeout:g} s"
                    await refuse(self._send, 408, self._sandbox_id, message, self._port)
                elif isinstance(stalled, _Unread) and not self.started:
                    message = (
                        f"The sandbox {self._sandbox_id}'s server on port {self._port} gave no valid answer: {stalled}"
                    )
                    await refuse(self._send, 502, self._sandbox_id, message, self._port)
                return
            relay.result()
        except _Upstream as error:
            if not self.started:
                message = f"The sandbox {self._sandbox_id}'s server on port {self._port} gave no valid answer: {error}"
                await refuse(self._send, 502, self._sandbox_id, message, self._port)
            # else: the answer is cut short; uvicorn closes the connection, so the client sees it was
        finally:
            for task in (upload, relay):  # also when this request itself is cancelled (the server's shutdown)
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def _upload(self, receive: Receive, body_timeout: float) -> None:
        """The request body, chunk by chunk as it arrives; then wait for the client to leave (returns)."""
        assert self._writer is not None
        while True:
            async with asyncio.timeout(body_timeout):  # idle: a moving upload is never cut
                message = await receive()
            if message["type"] == "http.disconnect":
                return
            if body := message.get("body", b""):
                self._write(h11.Data(data=body))
            if not message.get("more_body", False):
                self._write(h11.EndOfMessage())
                await self._drain(body_timeout)
                break
            await self._drain(body_timeout)
        while (await receive())["type"] != "http.disconnect":
            pass

    async def _drain(self, body_timeout: float) -> None:
        # Waiting for room, the upload does not see the client leave: a sandbox's server that neither reads nor
        # answers would hold the request (and its open-request place) for good.
        assert self._writer is not None
        try:
            async with asyncio.timeout(body_timeout):
                await self._writer.drain()
        except TimeoutError:
            raise _Unread(f"it read none of the request body for {body_timeout:g} s") from None

    def _write(self, event: h11.Data | h11.EndOfMessage) -> None:
        assert self._writer is not None
        try:
            data = self._conn.send(event)
        except h11.LocalProtocolError as error:
            raise _Upstream(f"the request body does not match its framing: {error}") from None
        if data:
            self._writer.write(data)

    async def _relay(self) -> None:
        response = await self._next_event()
        if not isinstance(response, h11.Response):
            raise _Upstream(f"expected a response, got {type(response).__name__}")
        await self._send(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": _response_headers(response.headers),
            }
        )
        self.started = True
        while True:
            # Not bounded in time: a stream may idle for long (server-sent events); the client's leaving ends it.
            event = await self._next_event()
            if isinstance(event, h11.Data):
                await self._send({"type": "http.response.body", "body": bytes(event.data), "more_body": True})
            elif isinstance(event, h11.EndOfMessage):
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            else:
                raise _Upstream(f"unexpected {type(event).__name__} in the answer's body")

    async def _next_event(self) -> Any:
        assert self._reader is not None
        while True:
            try:
                event = self._conn.next_event()
            except h11.RemoteProtocolError as error:
                raise _Upstream(str(error)) from None
            if event is h11.NEED_DATA:
                try:
                    data = await self._reader.read(READ_BYTES)
                except OSError as error:
                    raise _Upstream(f"the connection failed: {error.strerror or error}") from None
                try:
                    self._conn.receive_data(data)
                except h11.RemoteProtocolError as error:
                    raise _Upstream(str(error)) from None
                continue
            if isinstance(event, h11.InformationalResponse):
                continue  # 100 Continue and the like: the final answer follows
            if isinstance(event, h11.ConnectionClosed):
                raise _Upstream("the connection was closed before the answer was complete")
            return event


def _response_headers(headers: Any) -> list[tuple[bytes, bytes]]:
    pairs = [(bytes(name), bytes(value)) for name, value in headers]
    named = {token.strip().lower() for name, value in pairs if name == b"connection" for token in value.split(b",")}
    if any(name == b"transfer-encoding" for name, _ in pairs):
        # h11 read the body as chunked (RFC 9112 6.3): a Content-Length beside it is not the body's, and the
        # client would be told a length the body does not have.
        named.add(b"content-length")
    return [(n, v) for n, v in pairs if n not in _HOP_BY_HOP and n not in named]
