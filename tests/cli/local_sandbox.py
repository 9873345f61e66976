"""`e2b` run with a stand-in sandbox whose terminal is a local bash on a real pty.

`python -m tests.cli.local_sandbox sandbox connect ID` is the console script
(`e2b_cli.launcher.run`: worker thread, signal hooks) with `e2b.Sandbox`
replaced by `LocalSandbox`: the released SDK's sync `pty` calls (`create`,
`send_stdin`, `resize`, `kill`, the handle's `wait(on_pty=)`) over a local
`bash` in a pseudo-terminal. It exercises this side of a terminal session
(raw mode, keys, resizes, its end, the restore) in a real terminal, whatever
state the SDK's data plane is in; the sandbox side is tested against the
local server (tests/cli/test_sandbox_exec_local_api.py).
"""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import sys
import termios
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import e2b

PROMPT = "local$ "


@dataclass
class _Size:
    rows: int
    cols: int


class _Exit(Exception):
    """Stands in for `e2b.CommandExitException` where the SDK has no data plane yet."""

    def __init__(self, exit_code: int) -> None:
        super().__init__(f"exited with {exit_code}")
        self.exit_code = exit_code
        self.error = None


def _set_size(fd: int, size: Any) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size.rows, size.cols, 0, 0))


class _Terminal:
    def __init__(self, size: Any, cwd: str | None, envs: Mapping[str, str] | None) -> None:
        env = {**os.environ, "PS1": PROMPT, "TERM": "xterm", **(envs or {})}
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: a bash of its own on the pty
            # The launcher's worker blocks the signals its main thread handles; a shell must get them.
            signal.pthread_sigmask(signal.SIG_SETMASK, set())
            os.chdir(cwd or "/")
            os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
        _set_size(self.fd, size)

    def wait(self, on_pty: Callable[[bytes], object] | None = None) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # EIO: the shell and everything on its pty are gone
                break
            if not data:
                break
            if on_pty is not None:
                on_pty(data)
        _, status = os.waitpid(self.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        os.close(self.fd)
        if code != 0:
            exited: Any = e2b.CommandExitException
            raise exited(code) if exited is _Exit else exited(stderr="", stdout="", exit_code=code, error=None)


class _Pty:
    def __init__(self) -> None:
        self.terminals: dict[int, _Terminal] = {}

    def create(self, size: Any, user: str | None = None, cwd: str | None = None, **options: Any) -> _Terminal:
        terminal = _Terminal(size, cwd, options.get("envs"))
        self.terminals[terminal.pid] = terminal
        return terminal

    def send_stdin(self, pid: int, data: bytes) -> None:
        os.write(self.terminals[pid].fd, data)

    def resize(self, pid: int, size: Any) -> None:
        _set_size(self.terminals[pid].fd, size)  # the kernel sends the shell its SIGWINCH

    def kill(self, pid: int) -> bool:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            return False
        return True


class LocalSandbox:
    """What `e2b sandbox connect` and `create` call of `e2b.Sandbox`, with a local terminal."""

    sandbox_id = "sbx_local"

    def __init__(self) -> None:
        self.pty = _Pty()

    @classmethod
    def connect(cls, *_args: Any, **_options: Any) -> LocalSandbox:
        return cls()

    @classmethod
    def create(cls, *_args: Any, **_options: Any) -> LocalSandbox:
        return cls()

    def set_timeout(self, _timeout: int, **_options: Any) -> None:
        pass

    def kill(self, **_options: Any) -> bool:
        return True


def main() -> None:
    if not hasattr(e2b, "PtySize"):  # the SDK's data plane is not there yet: its two names, stood in for
        vars(e2b).update(PtySize=_Size, CommandExitException=_Exit)
    vars(e2b).update(Sandbox=LocalSandbox)
    from e2b_cli.launcher import run

    sys.argv[0] = "e2b"
    run()


if __name__ == "__main__":
    main()
