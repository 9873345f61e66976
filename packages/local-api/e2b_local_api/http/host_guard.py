"""Answer only requests addressed to this server: a `Host` it serves, else `421`.

A `Host` is served when it names the server by an address (`127.0.0.1`, `localhost`, `[::1]`, the
`--host`, or the connection's own address) with the connection's port: the defence against DNS
rebinding, on every route.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/http/host_guard.py".
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from e2b_local_api.http.errors import ApiError, error_response

__all__ = ["LOOPBACK_NAMES", "HostGuardMiddleware", "host_refusal"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_DEFAULT_PORT = {"http": 80, "https": 443}


def _as_host_name(address: str) -> str:
    """An address as a `Host` header names it: IPv6 literals in brackets, lower case."""
    address = address.lower()
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def _split(host: str, scheme: str) -> tuple[str, int | None]:
    """`name:port` (or `[v6]:port`, or a bare name meaning the scheme's port) split; port None if invalid."""
    host = host.lower()
    if host.startswith("["):
        name, bracket, rest = host.partition("]")
        name += bracket
    else:
        name, colon, port = host.partition(":")
        rest = colon + port
    if not rest:
        return name, _DEFAULT_PORT.get(scheme)
    port = rest.removeprefix(":")
    if not rest.startswith(":") or not port.isascii() or not port.isdigit():
        return name, None
    return name, int(port)


def host_refusal(
    hosts: list[str], served: tuple[str, int | None] | None, bind_host: str, scheme: str
) -> ApiError | None:
    """Why a request with these `Host` values is refused, or None.

    `served` is the connection's local address (ASGI `scope["server"]`), `bind_host` the `--host`.
    """
    if len(hosts) != 1:
        got = "none" if not hosts else f"{len(hosts)}"
        return ApiError(421, f"misdirected request: exactly one Host header is needed, got {got}")
    if served is None or served[1] is None:
        return None  # not a TCP socket (a Unix socket): no name to check against
    local_address, port = served
    names = list(dict.fromkeys([*LOOPBACK_NAMES, _as_host_name(bind_host), _as_host_name(local_address)]))
    name, requested_port = _split(hosts[0], scheme)
    if name in names and requested_port == port:
        return None
    shown = hosts[0] if len(hosts[0]) <= 100 else hosts[0][:100] + "..."
    expected = ", ".join(f"{known}:{port}" for known in names)
    return ApiError(421, f"misdirected request: this server answers to Host {expected}; not {shown!r}")


class HostGuardMiddleware:
    def __init__(self, app: ASGIApp, bind_host: str = "127.0.0.1") -> None:
        self.app = app
        self.bind_host = bind_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            hosts = [value.decode("latin-1") for name, value in scope["headers"] if name.lower() == b"host"]
            refusal = host_refusal(hosts, scope.get("server"), self.bind_host, scope.get("scheme", "http"))
            if refusal is not None:
                await error_response(refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)
