"""Raw HTTP/1.1 over a socket, for requests no HTTP client would send."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def host(url: str) -> str:
    """The `Host` header line for `url`: the server answers 421 to any other name."""
    return f"Host: {urlsplit(url).netloc}\r\n"


def connect(url: str, timeout: float = 10) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=timeout)


def read_response(sock: socket.socket) -> RawResponse:
    """One response; the server closes or sends Content-Length, as this server always does."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before the headers: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length", "-1"))
    while length < 0 or len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return RawResponse(status, headers, body if length < 0 else body[:length])


def request(url: str, raw: bytes) -> RawResponse:
    with connect(url) as sock:
        sock.sendall(raw)
        return read_response(sock)
