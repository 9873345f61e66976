"""How a process ended, in envd's words: its `end` event's exit code, status and error.

envd reports Go's `os.ProcessState`: "exit status N" for an exit, "signal: NAME"
for a signal (exit code -1, `exited` false), the same text as the error unless
the process exited 0. The names are Go's, not the C library's (`killed`, not
`Killed`).
"""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass

# Go's syscall signal names on Linux (syscall/zerrors_linux_amd64.go's signal table).
_NAMES: dict[int, str] = {
    signal.SIGHUP: "hangup",
    signal.SIGINT: "interrupt",
    signal.SIGQUIT: "quit",
    signal.SIGILL: "illegal instruction",
    signal.SIGTRAP: "trace/breakpoint trap",
    signal.SIGABRT: "aborted",
    signal.SIGBUS: "bus error",
    signal.SIGFPE: "floating point exception",
    signal.SIGKILL: "killed",
    signal.SIGUSR1: "user defined signal 1",
    signal.SIGSEGV: "segmentation fault",
    signal.SIGUSR2: "user defined signal 2",
    signal.SIGPIPE: "broken pipe",
    signal.SIGALRM: "alarm clock",
    signal.SIGTERM: "terminated",
    signal.SIGCHLD: "child exited",
    signal.SIGCONT: "continued",
    signal.SIGSTOP: "stopped (signal)",
    signal.SIGTSTP: "stopped",
    signal.SIGTTIN: "stopped (tty input)",
    signal.SIGTTOU: "stopped (tty output)",
    signal.SIGURG: "urgent I/O condition",
    signal.SIGXCPU: "CPU time limit exceeded",
    signal.SIGXFSZ: "file size limit exceeded",
    signal.SIGVTALRM: "virtual timer expired",
    signal.SIGPROF: "profiling timer expired",
    signal.SIGWINCH: "window changed",
    signal.SIGIO: "I/O possible",
    signal.SIGPWR: "power failure",
    signal.SIGSYS: "bad system call",
}


@dataclass(frozen=True)
class Exit:
    exit_code: int
    exited: bool
    status: str
    error: str | None


def from_wait_status(status: int) -> Exit:
    """An `os.waitpid` status as envd's end event describes it."""
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
        text = f"exit status {code}"
        return Exit(code, True, text, None if code == 0 else text)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        text = "signal: " + _NAMES.get(number, f"signal {number}")
        if os.WCOREDUMP(status):
            text += " (core dumped)"
        return Exit(-1, False, text, text)
    return Exit(-1, False, f"unknown wait status {status:#x}", f"unknown wait status {status:#x}")


async def helper_words(process: asyncio.subprocess.Process) -> str:
    """What a helper the server started (bubblewrap, slirp4netns) wrote on stderr as it failed; a second at most."""
    if process.stderr is None:
        return ""
    try:
        said = await asyncio.wait_for(process.stderr.read(4000), 1)
    except TimeoutError:
        return ""
    return said.decode(errors="replace").strip()
