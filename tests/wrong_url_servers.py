"""Real servers on 127.0.0.1 that answer 404s which are not the API's, for the SDK and CLI tests.

`local_api()` is the local API server (`e2b-local-api`) in a thread: reached under
a wrong path prefix (`/v1`), it answers its JSON "no such path" 404 without an
`error_code`. `html_404_server()` is a plain web server that answers every
request with an HTML 404 page, as a web server or a proxy does. Each records the
paths it was asked for.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from e2b_local_api import create_app
from e2b_local_api.http.http_protocol import server_config

from tests.local_api.conftest import serving

PAGE = b"<!doctype html><html><body><h1>404 Not Found</h1></body></html>"


@contextmanager
def local_api() -> Iterator[str]:
    """The local API server's root URL (http://127.0.0.1:PORT), until the block ends."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    with serving(server_config(create_app(), log_level="critical"), sock):
        yield f"http://127.0.0.1:{port}"


class _Html404(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        self.server.paths.append(f"{self.command} {self.path}")  # type: ignore[attr-defined]
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    do_GET = do_POST = do_DELETE = do_PUT = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: the test reads `paths`


@contextmanager
def html_404_server() -> Iterator[tuple[str, list[str]]]:
    """A web server's URL and the requests it received (`METHOD PATH`), until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Html404)
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.paths  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
