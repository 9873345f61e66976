"""e2b._interruptible: Ctrl-C ends a sync SDK call at once, with a traceback that ends at the SDK's method.

Ctrl-C is sent once the server has the whole request (the server tells the
test), never after a guessed delay; the server then holds its answer for
longer than any bound here.
"""

from __future__ import annotations

import _thread
import contextvars
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import e2b
import httpx
import pytest
from e2b import Sandbox
from e2b._interruptible import abandoned, run_interruptibly

# The Ctrl-C sent here must do what a terminal's does, however the suite was started.
pytestmark = pytest.mark.usefixtures("default_signals", "clean_env")

E2B_DIR = Path(e2b.__file__).resolve().parent
BOUND = 10.0  # seconds: a failure bound only; the call ends within a fraction of one
REQUEST_TIMEOUT = 60  # what the call would wait for without the fix

CALLS = {
    "pause": "Sandbox.pause('sbx-1', **opts)",
    "get_info": "Sandbox('sbx-1', connection_config=ConnectionConfig(**opts)).get_info()",
    "create": "Sandbox.create(**opts)",
    "list": "Sandbox.list(**opts).next_items()",
}
SCRIPT = """\
import sys
import httpx
from e2b import ConnectionConfig, Sandbox
opts = dict(api_key="k", api_url=sys.argv[1], request_timeout={timeout})
if sys.argv[2] == "httpx":
    opts["transport"] = httpx.HTTPTransport()
{call}
"""


def read_request(connection: socket.socket) -> bytes:
    """One whole request: its head, then as much body as its Content-Length says."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            raise AssertionError(f"the client closed the connection mid-request: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    while length and len(body) < int(length.group(1)):
        body += connection.recv(65536)
    return head


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.settimeout(BOUND * 3)  # a client that never connects fails the test, not hangs it
        yield sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


def frames(stderr: str) -> list[str]:
    return re.findall(r'(?m)^  File "(.+)", line \d+, in ', stderr)


@pytest.mark.parametrize(
    ("call", "stack"),
    [("pause", "pyqwest"), ("get_info", "pyqwest"), ("create", "pyqwest"), ("list", "pyqwest"), ("pause", "httpx")],
)
def test_ctrl_c_ends_a_sync_call_at_once_with_a_short_traceback(
    tmp_path: Path, listening: socket.socket, call: str, stack: str
) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT.format(timeout=REQUEST_TIMEOUT, call=CALLS[call]))
    proc = subprocess.Popen(
        [sys.executable, str(script), url_of(listening), stack],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        connection, _ = listening.accept()
        with connection:
            read_request(connection)  # the server has it all and holds its answer: the call waits
            proc.send_signal(signal.SIGINT)
            try:
                _, err = proc.communicate(timeout=BOUND)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the call was still waiting {BOUND} s after Ctrl-C (its timeout: {REQUEST_TIMEOUT} s)")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGINT, err  # an uncaught KeyboardInterrupt, as Python ends on one
    assert err.rstrip().splitlines()[-1] == "KeyboardInterrupt", err
    assert "During handling" not in err, err
    # The user's line, then the SDK's own frames only: no httpx, pyqwest, threading or contextlib.
    shown = frames(err)
    assert shown[0] == str(script), err
    assert all(Path(frame).resolve().is_relative_to(E2B_DIR) for frame in shown[1:]), err
    assert len(shown) <= 4, err


class HoldingServer:
    """Answers each request on 127.0.0.1 with `answer`, once `release` is set; records the request lines.

    `received` is set when the first request has arrived whole.
    """

    def __init__(self, sock: socket.socket, answer: bytes) -> None:
        self.sock = sock
        self.answer = answer
        self.requests: list[str] = []
        self.received = threading.Event()
        self.release = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return  # the test closed the socket
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            while True:
                try:
                    head = read_request(connection)
                except (AssertionError, OSError):
                    return  # the client is gone
                self.requests.append(head.split(b"\r\n", 1)[0].decode())
                self.received.set()
                if not self.release.wait(BOUND * 3):
                    return
                connection.sendall(self.answer)


BUSY = json.dumps({"code": 503, "message": "busy", "error_code": "busy"}).encode()
BUSY_ANSWER = b"HTTP/1.1 503 X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(BUSY), BUSY)
NO_CONTENT = b"HTTP/1.1 204 X\r\ncontent-length: 0\r\n\r\n"


def _idle_workers() -> int:
    from e2b import _interruptible

    return len(_interruptible._idle)


def _interrupt_main_when(event: threading.Event) -> None:
    def send() -> None:
        if event.wait(BOUND * 3):
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    threading.Thread(target=send, daemon=True).start()


@pytest.mark.usefixtures("no_gc")
@pytest.mark.parametrize("stack", ["pyqwest", "httpx"])
def test_an_interrupted_call_sends_nothing_more_and_the_next_call_works(
    listening: socket.socket, sleeps: list[float], stack: str
) -> None:
    """The abandoned exchange's busy answer is not retried; the caller goes on, as a REPL user would."""
    server = HoldingServer(listening, BUSY_ANSWER)
    idle_before = _idle_workers()
    transport = httpx.HTTPTransport() if stack == "httpx" else None
    opts: dict[str, Any] = {
        "api_key": "k",
        "api_url": url_of(listening),
        "request_timeout": REQUEST_TIMEOUT,
        "transport": transport,
    }
    _interrupt_main_when(server.received)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt) as raised:
        Sandbox.kill("sbx-1", **opts)
    assert time.monotonic() - started < BOUND
    # From this test's frame on, only the SDK's: the traceback is the SDK call's, not httpx's.
    tb: TracebackType | None = raised.value.__traceback__
    shown = []
    while tb is not None:
        shown.append(Path(tb.tb_frame.f_code.co_filename).resolve())
        tb = tb.tb_next
    assert shown[0] == Path(__file__).resolve()
    assert all(frame.is_relative_to(E2B_DIR) for frame in shown[1:]), shown

    # The server answers the abandoned request "busy", which the SDK would retry; its worker
    # drops the answer and comes back idle without sending anything more.
    server.release.set()
    deadline = time.monotonic() + BOUND
    while _idle_workers() < max(idle_before, 1) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _idle_workers() >= max(idle_before, 1), "the abandoned exchange did not end"
    server.answer = NO_CONTENT
    assert Sandbox.kill("sbx-2", **opts) is True
    assert server.requests == ["DELETE /sandboxes/sbx-1 HTTP/1.1", "DELETE /sandboxes/sbx-2 HTTP/1.1"]
    if transport is not None:
        transport.close()


def test_off_the_main_thread_the_exchange_runs_in_place() -> None:
    seen: list[int] = []

    def exchange() -> httpx.Response:
        seen.append(threading.get_ident())
        return httpx.Response(204)

    def call() -> None:
        seen.append(threading.get_ident())
        run_interruptibly(exchange)

    caller = threading.Thread(target=call)
    caller.start()
    caller.join(BOUND)
    assert len(seen) == 2 and seen[0] == seen[1]


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_on_the_main_thread_a_reused_worker_runs_it_with_sigint_blocked_and_the_callers_context() -> None:
    assert threading.current_thread() is threading.main_thread()  # pytest and its xdist workers run tests there
    variable: contextvars.ContextVar[str] = contextvars.ContextVar("variable")
    variable.set("the caller's")
    seen: list[tuple[int, bool, str]] = []

    def exchange() -> httpx.Response:
        blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
        seen.append((threading.get_ident(), blocked, variable.get()))
        return httpx.Response(204)

    assert run_interruptibly(exchange).status_code == 204
    assert run_interruptibly(exchange).status_code == 204
    (first, blocked, value), (second, _, _) = seen
    assert first != threading.get_ident() and blocked and value == "the caller's"
    assert second == first  # the worker waited for the next exchange: no thread per call
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the caller's own mask is untouched


def test_the_exchanges_exception_is_raised_as_itself() -> None:
    failure = httpx.ConnectError("refused")

    def exchange() -> httpx.Response:
        raise failure

    with pytest.raises(httpx.ConnectError) as raised:
        run_interruptibly(exchange)
    assert raised.value is failure


@pytest.mark.usefixtures("no_gc")
def test_an_exchange_the_caller_left_knows_it_was_abandoned() -> None:
    """A step of many waits (a stream drained on the worker) asks `abandoned()` before each, to stop for no one."""
    seen: list[bool] = []
    started, release, ended = threading.Event(), threading.Event(), threading.Event()

    def exchange() -> httpx.Response:
        seen.append(abandoned())
        started.set()
        release.wait(BOUND)
        seen.append(abandoned())
        ended.set()
        return httpx.Response(204)

    def interrupt() -> None:
        started.wait(BOUND)
        _thread.interrupt_main()  # a Ctrl-C, as the main thread's handler takes it

    threading.Thread(target=interrupt).start()
    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(exchange)
    release.set()
    assert ended.wait(BOUND)
    assert seen == [False, True]
    assert not abandoned()  # the caller's thread runs no exchange
