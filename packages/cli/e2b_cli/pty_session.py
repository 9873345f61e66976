"""An interactive terminal on a sandbox: a remote pty wired to this terminal in raw mode.

Keys go to the pty as they are typed (Ctrl-C and Ctrl-D included: they are
the remote shell's to act on); its output is written here as it comes; a
resize of the window is passed on. The session ends when the remote shell
does (`exit`, Ctrl-D), or when the sandbox has not answered for the
connection's request timeout (`SandboxSilent`: after a quiet spell the
sandbox is asked whether it is there); this terminal is put back as it was
whatever ended it (`e2b_cli.terminal`).
"""

from __future__ import annotations

import inspect
import os
import select
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

from e2b import SandboxNotRunningException, TimeoutException
from e2b._exceptions import connect_code

from e2b_cli.errors import NoAnswer
from e2b_cli.terminal import on_fatal_signal, raw_terminal, sdk_name, window_size

__all__ = ["QUIET_BEFORE_ASKING", "SandboxSilent", "open_terminal"]

NO_LIMIT = 0  # the terminal stays open as long as the user keeps it
READ_SIZE = 64 * 1024
# Seconds without a word from the sandbox (output, an answer) before it is asked whether it is there.
QUIET_BEFORE_ASKING = 10.0


class SandboxSilent(NoAnswer):
    """The sandbox did not answer for the request timeout: the session was given up (exit status 3)."""

    def __init__(self, sandbox_id: str, silent_for: float) -> None:
        super().__init__(
            f"the sandbox did not answer for {silent_for:.0f} s: closed the terminal.",
            f"Check the network, then run `e2b sandbox connect {sandbox_id}` again (its shell may still be running).",
        )


class _Heard:
    """When the sandbox last gave a sign of life, and how long a silence is borne (None: for ever)."""

    def __init__(self, sbx: Any) -> None:
        config = getattr(sbx, "connection_config", None)
        self.limit: float | None = getattr(config, "request_timeout", None) if config is not None else None
        self.last = time.monotonic()
        self.gave_up = False

    def now(self) -> None:
        self.last = time.monotonic()

    def silent_for(self) -> float:
        return time.monotonic() - self.last

    def ask_in(self) -> float | None:
        """Seconds until the sandbox is to be asked whether it is there; None: never."""
        if self.limit is None:
            return None
        return max(0.0, self.last + min(QUIET_BEFORE_ASKING, self.limit) - time.monotonic())

    def given_up(self, sbx: Any, error: BaseException) -> BaseException:
        """`SandboxSilent` for a request of the session that had no answer within the limit; else `error`."""
        # Not a sandbox that ended under the call (killed, paused): that one is said as such.
        ended = isinstance(error, SandboxNotRunningException) or connect_code(error) == "canceled"
        if isinstance(error, TimeoutException) and not ended:
            self.gave_up = True
            return SandboxSilent(sbx.sandbox_id, self.silent_for())
        return error


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def open_terminal(sbx: Any, *, user: str | None, cwd: str | None, envs: Mapping[str, str] | None) -> None:
    """Run a login shell in a pty of `sbx` on this terminal until it exits."""
    CommandExitException = sdk_name("CommandExitException")
    PtySize = sdk_name("PtySize")

    fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
    sys.stdout.flush()
    heard = _Heard(sbx)
    wake_read, wake_write = os.pipe()
    resized = threading.Event()
    ended = threading.Event()
    failures: list[BaseException] = []
    # The pipe wakes the loop below; the lock keeps a late writer off its closed (maybe reused) descriptor.
    pipe_lock = threading.Lock()
    pipe_open = [True]

    def wake(blocking: bool = True) -> None:
        if pipe_lock.acquire(blocking):
            try:
                if pipe_open[0]:
                    os.write(wake_write, b"!")
            finally:
                pipe_lock.release()

    def on_resize() -> None:  # from a signal handler: note it, the loop below sends it
        resized.set()
        wake(blocking=False)  # the handler may have interrupted this thread holding the lock

    def show(data: bytes | str) -> None:
        heard.now()
        _write_all(fd_out, data.encode() if isinstance(data, str) else data)

    try:
        with raw_terminal(fd_in, on_resize):
            rows, cols = window_size(fd_out)
            handle, wait_options = _start(sbx, PtySize(rows=rows, cols=cols), show, user=user, cwd=cwd, envs=envs)

            def pump() -> None:
                try:
                    handle.wait(**wait_options)
                except CommandExitException:
                    pass  # the shell's own status (`exit 3`): the session ended as the user asked
                except BaseException as error:
                    failures.append(error)
                finally:
                    ended.set()
                    wake()

            output = threading.Thread(target=pump, name="e2b-pty-output", daemon=True)
            output.start()
            try:
                with on_fatal_signal(lambda: sbx.pty.kill(handle.pid)):
                    _relay(sbx, handle.pid, fd_in, fd_out, wake_read, resized, ended, heard)
            except BaseException as error:
                given_up = heard.given_up(sbx, error)
                if given_up is error:
                    raise
                raise given_up from None
            finally:
                # We are leaving first (an error, closed stdin): end the shell too, unless nobody answers.
                if not ended.is_set() and not heard.gave_up:
                    try:
                        sbx.pty.kill(handle.pid)
                    except Exception:
                        pass
                    output.join(5)
    finally:
        with pipe_lock:
            pipe_open[0] = False
            os.close(wake_read)
            os.close(wake_write)
    if failures:
        raise heard.given_up(sbx, failures[0])


def _start(
    sbx: Any, size: Any, show: Any, *, user: str | None, cwd: str | None, envs: Mapping[str, str] | None
) -> tuple[Any, dict[str, Any]]:
    """The pty's handle, and how to wait on it so that its output reaches `show`.

    The released sync SDK's `pty.create` takes no `on_data` (output comes to
    `wait(on_pty=...)`); the async one, and a twin derived from it, do.
    """
    options: dict[str, Any] = {"user": user, "cwd": cwd, "envs": dict(envs) if envs else None, "timeout": NO_LIMIT}
    if "on_data" in inspect.signature(sbx.pty.create).parameters:
        return sbx.pty.create(size, on_data=show, **options), {}
    return sbx.pty.create(size, **options), {"on_pty": show}


def _relay(
    sbx: Any,
    pid: int,
    fd_in: int,
    fd_out: int,
    wake: int,
    resized: threading.Event,
    ended: threading.Event,
    heard: _Heard,
) -> None:
    """Send keys and resizes to the pty `pid` until its shell ends (`ended`) or our stdin closes.

    After a quiet spell the pty is sent the window's size, unchanged: a request that its sandbox
    answers (the pty is not resized, so nothing is signalled), or that times out at the limit.
    """
    from e2b import NotFoundException

    PtySize = sdk_name("PtySize")

    def send_size() -> None:
        rows, cols = window_size(fd_out)
        sbx.pty.resize(pid, PtySize(rows=rows, cols=cols))  # within the connection's timeout, `heard.limit`
        heard.now()

    while not ended.is_set():
        ready, _, _ = select.select([fd_in, wake], [], [], heard.ask_in())
        if not ready and not ended.is_set():
            send_size()  # is anybody there?
        if wake in ready:
            os.read(wake, 512)
            if resized.is_set() and not ended.is_set():
                resized.clear()
                send_size()
        if fd_in in ready and not ended.is_set():
            keys = os.read(fd_in, READ_SIZE)
            if not keys:
                return  # our stdin closed: nobody is left to type
            try:
                sbx.pty.send_stdin(pid, keys)
                heard.now()
            except NotFoundException:
                if not ended.wait(5):  # the shell just exited: its stream ends in a moment
                    raise
