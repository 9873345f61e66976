"""The client ends a stream at its own deadlines: `timeout` for the whole stream, `request_timeout` for its start.

envd ends a stream at `Connect-Timeout-Ms`, but a network that goes silent (a
proxy or NAT that stops forwarding without closing) leaves no end to read: the
SDK must end it itself, as 2.x did with httpx's read timeout. The silence is
real: a TCP proxy on 127.0.0.1 that stops forwarding (`FreezingProxy`), and a
socket that listens and never answers (`black_hole`). Each call is bounded by
30 s in the test, far beyond its 1 s deadline, so that a hang fails the test
instead of stalling it, and no assertion depends on how close to 1 s it ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator

import pytest
from e2b import ConnectionConfig, PtySize, Sandbox, TimeoutException

from tests.gc_window import no_collection
from tests.signal_dispositions import default_dispositions

from ._envd_server import EnvdServer
from .conftest import sandbox as async_sandbox

LOOP = "while true; do echo tick; sleep 0.2; done"
# A failure bound, not a measure: each call here ends at its 1 s deadline.
BOUND = 30


class FreezingProxy:
    """A TCP proxy to `target`; once `freeze()` is called it forwards nothing more, and closes nothing."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("http://").split(":")
        self._target = (host, int(port))
        self._frozen = threading.Event()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._sockets.append(self._listener)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self) -> None:
        self._frozen.set()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            self._sockets += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if self._frozen.is_set():
                    self._closed.wait()  # silent until the test ends: the bytes are never passed on
                    return
                sink.sendall(data)

    def close(self) -> None:
        self._closed.set()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@pytest.fixture
def proxy(envd: EnvdServer) -> Iterator[FreezingProxy]:
    frozen = FreezingProxy(envd.url)
    yield frozen
    frozen.close()


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A URL whose socket completes TCP handshakes (the kernel's backlog) and never answers."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()  # resets the connections still waiting: no step stays behind the test


def sync_sandbox(url: str) -> Sandbox:
    config = ConnectionConfig(api_key="e2b_test", api_url=url, request_timeout=30)
    return Sandbox(
        "sbxtest", connection_config=config, envd_version="0.6.4", envd_access_token="token", sandbox_domain="e2b.app"
    )


def ends_in_time(call: Callable[[], object], *, on_thread: bool = False) -> BaseException | None:
    """What `call()` raised (None: it returned), failing the test if it is still running after BOUND seconds.

    `on_thread=False` calls it on the main thread (the SDK's worker-and-slices path), where a hang
    is ended by a Ctrl-C at BOUND (the SDK ends a sync call within a second of one); otherwise it
    runs on a thread of its own (the in-place path), which is left behind.
    """
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    if on_thread:
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(BOUND)
        assert outcome, f"still running after {BOUND} s"
        return outcome[0]
    main = threading.main_thread().ident
    assert main is not None and threading.current_thread() is threading.main_thread()
    watchdog = threading.Timer(BOUND, signal.pthread_kill, (main, signal.SIGINT))
    # SIGINT must raise here however the suite was started, and land in this thread's code, not in a gc callback.
    with default_dispositions(), no_collection():
        watchdog.start()
        try:
            run()
            watchdog.cancel()
            # A Ctrl-C sent as the call ended is raised by the join at the latest: here, not in the next test.
            watchdog.join()
        except KeyboardInterrupt as late:
            outcome[:] = [late]
    assert not isinstance(outcome[0], KeyboardInterrupt), f"still running after {BOUND} s"
    return outcome[0]


@pytest.mark.parametrize("on_thread", [False, True], ids=["main-thread", "other-thread"])
def test_sync_run_ends_at_its_timeout_when_the_network_goes_silent(proxy: FreezingProxy, on_thread: bool) -> None:
    sbx = sync_sandbox(proxy.url)
    error = ends_in_time(
        lambda: sbx.commands.run(LOOP, timeout=1, on_stdout=lambda _: proxy.freeze()), on_thread=on_thread
    )
    assert isinstance(error, TimeoutException) and "timeout (1 s)" in str(error), error


@pytest.mark.parametrize("on_thread", [False, True], ids=["main-thread", "other-thread"])
def test_sync_background_wait_ends_at_its_timeout_when_the_network_goes_silent(
    proxy: FreezingProxy, on_thread: bool
) -> None:
    sbx = sync_sandbox(proxy.url)

    def background() -> None:
        handle = sbx.commands.run(LOOP, background=True, timeout=1)
        for _ in handle:  # one piece of output, then the network goes silent
            proxy.freeze()
            break
        handle.wait()  # no callbacks: the drain's one step on the worker

    error = ends_in_time(background, on_thread=on_thread)
    assert isinstance(error, TimeoutException) and "timeout (1 s)" in str(error), error


def test_sync_connect_and_terminal_end_at_their_timeout_when_the_network_goes_silent(
    envd: EnvdServer, proxy: FreezingProxy
) -> None:
    direct = sync_sandbox(envd.url)
    running = direct.commands.run(LOOP, background=True, timeout=0)
    try:
        sbx = sync_sandbox(proxy.url)

        def connect() -> None:
            sbx.commands.connect(running.pid, timeout=1, on_stdout=lambda _: proxy.freeze()).wait()

        error = ends_in_time(connect)
        assert isinstance(error, TimeoutException) and "timeout (1 s)" in str(error), error
    finally:
        running.kill()

    frozen = FreezingProxy(envd.url)
    try:
        terminal = sync_sandbox(frozen.url)

        def pty() -> None:
            # The shell's prompt is the first output: the network goes silent after it.
            terminal.pty.create(PtySize(24, 80), on_data=lambda _: frozen.freeze(), timeout=1).wait()

        error = ends_in_time(pty)
        assert isinstance(error, TimeoutException) and "timeout (1 s)" in str(error), error
    finally:
        frozen.close()


@pytest.mark.anyio
async def test_async_run_and_wait_end_at_their_timeout_when_the_network_goes_silent(proxy: FreezingProxy) -> None:
    sbx = async_sandbox(proxy)  # type: ignore[arg-type]  # it reads only `url`
    with pytest.raises(TimeoutException, match=r"timeout \(1 s\)"):
        await asyncio.wait_for(sbx.commands.run(LOOP, timeout=1, on_stdout=lambda _: proxy.freeze()), BOUND)


@pytest.mark.parametrize("on_thread", [False, True], ids=["main-thread", "other-thread"])
@pytest.mark.parametrize("what", ["run", "quiet run", "connect", "pty"])
def test_sync_start_is_bounded_by_request_timeout(black_hole: str, what: str, on_thread: bool) -> None:
    sbx = sync_sandbox(black_hole)
    # timeout=0: no limit on the stream, so that only request_timeout can end the wait for the start.
    calls: dict[str, Callable[[], object]] = {
        "run": lambda: sbx.commands.run("echo hi", timeout=0, request_timeout=1, on_stdout=print),
        "quiet run": lambda: sbx.commands.run("echo hi", timeout=0, request_timeout=1),
        "connect": lambda: sbx.commands.connect(1, timeout=0, request_timeout=1),
        "pty": lambda: sbx.pty.create(PtySize(24, 80), on_data=print, timeout=0, request_timeout=1),
    }
    error = ends_in_time(calls[what], on_thread=on_thread)
    assert isinstance(error, TimeoutException) and "request_timeout (1 s)" in str(error), error
