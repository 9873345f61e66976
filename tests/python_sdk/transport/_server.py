"""A raw-socket HTTP/1.1 test server on 127.0.0.1 with exact control over timing.

Each path is a behaviour (trickle, stall, drop mid-body, gzip, oversized,
...). Written on bare sockets so that chunk boundaries and pauses are what
the test says, not what a framework's buffering decides.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

REFUSAL = json.dumps(
    {"code": 503, "message": "pause refused: guest agent unhealthy", "error_code": "sandbox_pause_refused"}
).encode()
BUSY = json.dumps({"code": 503, "message": "busy", "error_code": "busy"}).encode()
DEEP = b"[" * 4000 + b"]" * 4000
BOMB_SIZE = 8_000_000
# A stall or a silence without `?stall=` (the SDK's own paths take no query): longer than any deadline a test
# sets, so that a call that waited for it would miss its test's bound by far; close() ends every wait at once.
STALL = "60"
BOMB = gzip.compress(b" " * BOMB_SIZE, 9)

Writer = Callable[[socket.socket, dict[str, list[str]]], bool]


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _whole(status: int, body: bytes, ctype: str = "application/json", **extra: str) -> Writer:
    def write(sock: socket.socket, _q: dict[str, list[str]]) -> bool:
        headers = {"content-type": ctype, "content-length": str(len(body)), **extra}
        sock.sendall(_head(status, headers) + body)
        return True

    return write


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class TestServer:
    """Threaded; counts requests per path and live connections.

    With `idle_close` set, a request on a connection idle at least that many
    seconds is never answered and its connection is closed: what a client
    meets when its request crosses the server's idle close on the wire, made
    deterministic (the server sends no close the client could see first).
    `crossed` counts them.
    """

    __test__ = False

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.hits: Counter[str] = Counter()
        self.bodies: list[bytes] = []
        self.live = 0
        self.accepted = 0
        self.idle_close: float | None = None
        self.crossed = 0
        self.partial_sent = threading.Event()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._keys: Counter[str] = Counter()
        self.routes: dict[str, Writer] = {
            "/ok": _whole(200, b"ok", "text/plain"),
            "/refusal": _whole(503, REFUSAL),
            "/refusal-gzip": _whole(503, gzip.compress(REFUSAL), "application/json", **{"content-encoding": "gzip"}),
            "/busy": _whole(503, BUSY),
            "/plain503": _whole(503, REFUSAL, "text/plain"),
            "/deep": _whole(503, DEEP),
            "/bomb": _whole(503, BOMB, "application/json", **{"content-encoding": "gzip"}),
            "/big": self._big,
            "/trickle": self._trickle,
            "/stall": self._stall,
            "/drop": self._drop,
            "/flaky": self._flaky,
            "/silent": self._silent,
            # The SDK's own paths, for calls made through `Sandbox`.
            "/sandboxes/stalled/pause": self._stall,
            "/sandboxes/silent": self._silent,
        }
        threading.Thread(target=self._accept, daemon=True).start()

    # behaviours -----------------------------------------------------------

    def _big(self, sock: socket.socket, q: dict[str, list[str]]) -> bool:
        size = int(q.get("size", ["200000"])[0])
        sock.sendall(_head(503, {"content-type": "application/json", "transfer-encoding": "chunked"}))
        piece = b"x" * 16384
        sent = 0
        while sent < size:
            part = piece[: min(len(piece), size - sent)]
            sock.sendall(_chunk(part))
            sent += len(part)
        sock.sendall(b"0\r\n\r\n")
        return True

    def _trickle(self, sock: socket.socket, q: dict[str, list[str]]) -> bool:
        delay = float(q.get("delay", ["0.01"])[0])
        status = int(q.get("status", ["503"])[0])
        sock.sendall(_head(status, {"content-type": "application/json", "transfer-encoding": "chunked"}))
        for i in range(len(REFUSAL)):
            sock.sendall(_chunk(REFUSAL[i : i + 1]))
            if self._stop.wait(delay):
                return False
        sock.sendall(b"0\r\n\r\n")
        return True

    def _stall(self, sock: socket.socket, q: dict[str, list[str]]) -> bool:
        stall = float(q.get("stall", [STALL])[0])
        headers = {"content-type": "application/json", "content-length": str(len(REFUSAL))}
        sock.sendall(_head(503, headers) + REFUSAL[:10])
        self.partial_sent.set()
        self._stop.wait(stall)
        return False

    def _silent(self, _sock: socket.socket, q: dict[str, list[str]]) -> bool:
        """Reads the request and never answers."""
        self._stop.wait(float(q.get("stall", [STALL])[0]))
        return False

    def _drop(self, sock: socket.socket, _q: dict[str, list[str]]) -> bool:
        headers = {"content-type": "application/json", "content-length": str(len(REFUSAL))}
        sock.sendall(_head(503, headers) + REFUSAL[:20])
        return False

    def _flaky(self, sock: socket.socket, q: dict[str, list[str]]) -> bool:
        key, n = q["key"][0], int(q.get("n", ["1"])[0])
        with self._lock:
            self._keys[key] += 1
            busy = self._keys[key] <= n
        return (_whole(503, BUSY) if busy else _whole(200, b"ok", "text/plain"))(sock, q)

    # plumbing -------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            # Many small writes: without this, Nagle + delayed ACK add 40 ms.
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self.live += 1
                self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _read_request(self, buf: bytearray, conn: socket.socket) -> tuple[str, bytes] | None:
        while b"\r\n\r\n" not in buf:
            data = conn.recv(65536)
            if not data:
                return None
            buf += data
        head, _, rest = bytes(buf).partition(b"\r\n\r\n")
        buf[:] = rest
        lines = head.decode("latin-1").split("\r\n")
        target = lines[0].split(" ")[1]
        headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
        body = b""
        if "content-length" in headers:
            need = int(headers["content-length"])
            while len(buf) < need:
                data = conn.recv(65536)
                if not data:
                    return None
                buf += data
            body, buf[:] = bytes(buf[:need]), buf[need:]
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                while b"\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return None
                    buf += data
                size_line, _, _ = bytes(buf).partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                need = len(size_line) + 2 + size + 2
                while len(buf) < need:
                    data = conn.recv(65536)
                    if not data:
                        return None
                    buf += data
                body += bytes(buf[len(size_line) + 2 : len(size_line) + 2 + size])
                buf[:] = buf[need:]
                if size == 0:
                    break
        return target, body

    def _serve(self, conn: socket.socket) -> None:
        buf = bytearray()
        idle_since: float | None = None  # the end of the last answer on this connection
        try:
            while not self._stop.is_set():
                request = self._read_request(buf, conn)
                if request is None:
                    return
                if self._crosses_idle_close(idle_since):
                    return
                target, body = request
                parts = urlsplit(target)
                with self._lock:
                    self.hits[parts.path] += 1
                    self.bodies.append(body)
                if not self.routes[parts.path](conn, parse_qs(parts.query)):
                    return
                idle_since = time.monotonic()
        except OSError:
            return
        finally:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
            with self._lock:
                self.live -= 1

    def _crosses_idle_close(self, idle_since: float | None) -> bool:
        if self.idle_close is None or idle_since is None or time.monotonic() - idle_since < self.idle_close:
            return False
        with self._lock:
            self.crossed += 1
        return True

    def wait_live(self, at_most: int, timeout: float = 3.0) -> int:
        end = time.monotonic() + timeout
        while self.live > at_most and time.monotonic() < end:
            time.sleep(0.01)
        return self.live

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
