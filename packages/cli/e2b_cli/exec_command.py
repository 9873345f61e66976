"""`e2b sandbox exec`: one command in a sandbox, its output streamed here, its exit status ours.

The command runs with no time limit; its stdout and stderr are written to
ours as they come, byte for byte (binary output included). A piped stdin (a
file or a pipe, never a terminal) is forwarded in chunks and then closed, so
that `cat` and the like end. The SDK is imported by the caller
(`e2b_cli.sandbox`): nothing here loads it. `sbx` is an `e2b.Sandbox`, used
through the released SDK's sync data-plane names and one hook of this SDK's
(`_pass_bytes`, the output undecoded).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from e2b_cli.attach_terminal import keep_alive
from e2b_cli.stdio import OutputError
from e2b_cli.terminal import on_fatal_signal, sdk_name

__all__ = [
    "ALIVE_AHEAD",
    "CHUNK",
    "command_line",
    "exit_status",
    "kill_quietly",
    "run_background",
    "run_foreground",
    "stdin_is_piped",
]

CHUNK = 64 * 1024  # bytes per stdin request
NO_LIMIT = 0  # the SDK's `timeout=0`: the command may run as long as it likes
# While a command runs, the sandbox's deadline is kept at least this far ahead (refreshed every third of it):
# a command may outlast the sandbox's own timeout, and the sandbox outlives the command by this at most.
ALIVE_AHEAD = 30
OUT_OF_RANGE = 255  # a status a process cannot have, reported as shells report `exit -1`


def command_line(argv: Sequence[str]) -> str:
    """The shell line to run: one argument as it is (`"ls | wc -l"`), several quoted one by one."""
    return argv[0] if len(argv) == 1 else shlex.join(argv)


def stdin_is_piped() -> bool:
    """Whether stdin is a pipe, a file or a socket: data to forward, not a terminal or nothing."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # closed, or replaced (tests, embedding)
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


# Go's names for Linux's signals (syscall's signal table), which envd reports as "signal: NAME". Linux's
# numbers, written out: the sandbox is Linux whatever system the CLI runs on (SIGUSR1 is 30 on macOS).
GO_SIGNAL_NAMES: dict[str, int] = {
    "hangup": 1,
    "interrupt": 2,
    "quit": 3,
    "illegal instruction": 4,
    "trace/breakpoint trap": 5,
    "aborted": 6,
    "bus error": 7,
    "floating point exception": 8,
    "killed": 9,
    "user defined signal 1": 10,
    "segmentation fault": 11,
    "user defined signal 2": 12,
    "broken pipe": 13,
    "alarm clock": 14,
    "terminated": 15,
    "stack fault": 16,
    "child exited": 17,
    "continued": 18,
    "stopped (signal)": 19,
    "stopped": 20,
    "stopped (tty input)": 21,
    "stopped (tty output)": 22,
    "urgent i/o condition": 23,
    "cpu time limit exceeded": 24,
    "file size limit exceeded": 25,
    "virtual timer expired": 26,
    "profiling timer expired": 27,
    "window changed": 28,
    "i/o possible": 29,
    "power failure": 30,
    "bad system call": 31,
}
# Go names a signal its table lacks (the real-time ones, 32-64) by number: "signal: signal 40".
_NUMBERED = re.compile(r"signal (\d+)")


def signal_number(reason: str | None) -> int | None:
    """The signal envd's reason names (Go's `os.ProcessState` text), or None when it names none.

    "signal: killed", "signal: aborted (core dumped)", "signal: signal 40".
    """
    text = (reason or "").strip().lower()
    if not text.startswith("signal: "):
        return None
    name = text.removeprefix("signal: ").removesuffix(" (core dumped)").strip()
    numbered = _NUMBERED.fullmatch(name)
    number = int(numbered.group(1)) if numbered else GO_SIGNAL_NAMES.get(name)
    # A shell's 128+N must stay a status (at most 255).
    return number if number is not None and 0 < number < 128 else None


def exit_status(exit_code: int, error: str | None = None) -> int:
    """The process's exit status for a command's: 0-255 as is; a signal's death as a shell says it (128+N)."""
    if 0 <= exit_code <= 255:
        return exit_code
    # envd reports a process killed by a signal as -1 and Go's text for it, e.g. "signal: killed".
    number = signal_number(error)
    return 128 + number if number is not None else OUT_OF_RANGE


def run_foreground(
    sbx: Any,
    cmd: str,
    *,
    envs: Mapping[str, str] | None,
    user: str | None,
    cwd: str | None,
    piped: bool,
) -> int:
    """Run `cmd` until it ends, streaming its output; return the exit status it ended with."""
    CommandExitException = sdk_name("CommandExitException")

    handle = sbx.commands.run(
        cmd,
        background=True,
        envs=dict(envs) if envs else None,
        user=user,
        cwd=cwd,
        timeout=NO_LIMIT,
        **_stdin_option(piped),
        retain_output=False,
    )
    handle._pass_bytes()  # the SDK's text would turn bytes that are not UTF-8 into U+FFFD
    failures: list[BaseException] = []
    ended = threading.Event()
    refresher = threading.Thread(target=keep_alive, args=(sbx, ALIVE_AHEAD, ended), name="e2b-keep-alive", daemon=True)
    refresher.start()
    with on_fatal_signal(lambda: kill_quietly(sbx, handle.pid)):
        if piped:
            forwarding = (sbx, handle.pid, ended, failures)
            threading.Thread(target=_forward_in_background, args=forwarding, daemon=True).start()
        try:
            result = handle.wait(on_stdout=_writer(sys.stdout), on_stderr=_writer(sys.stderr))
            status = exit_status(result.exit_code, result.error)
        except CommandExitException as exited:
            status = exit_status(exited.exit_code, exited.error)
        except (BrokenPipeError, OutputError):
            # Our reader went away, or stdout or stderr cannot take more (a full disk, `2>&-`):
            # the command's output has nowhere to go, and it must not run on unseen.
            kill_quietly(sbx, handle.pid)
            raise
        finally:
            ended.set()
    if failures:  # stdin could not be forwarded (the command was killed for it): that is the failure to show
        raise failures[0]
    return status


def run_background(
    sbx: Any,
    cmd: str,
    *,
    envs: Mapping[str, str] | None,
    user: str | None,
    cwd: str | None,
    piped: bool,
) -> int:
    """Start `cmd` and leave it running (after forwarding a piped stdin); return its pid."""
    handle = sbx.commands.run(
        cmd,
        background=True,
        envs=dict(envs) if envs else None,
        user=user,
        cwd=cwd,
        timeout=NO_LIMIT,
        **_stdin_option(piped),
        retain_output=False,
    )
    try:
        if piped:
            with on_fatal_signal(lambda: kill_quietly(sbx, handle.pid)):
                forward_stdin(sbx, handle.pid)
    finally:
        handle.disconnect()
    return int(handle.pid)


def _stdin_option(piped: bool) -> dict[str, Any]:
    # Left out unless forwarded: the SDK's default (no stdin) works with every envd version.
    return {"stdin": True} if piped else {}


def forward_stdin(sbx: Any, pid: int) -> None:
    """Send our stdin to the command `pid` chunk by chunk, then close its stdin (EOF)."""
    from e2b import NotFoundException

    fd = sys.stdin.fileno()
    try:
        while chunk := os.read(fd, CHUNK):
            sbx.commands.send_stdin(pid, chunk)
        sbx.commands.close_stdin(pid)
    except NotFoundException:
        # Not an error of ours: `head -1` stops reading and exits; say it, as the rest was not delivered.
        sys.stderr.write("e2b: the command exited before it read all of its input.\n")


# After a failed stdin request, how long the command gets to show that it ended (it stopped reading: `head`).
ENDING_GRACE = 5.0


def _forward_in_background(sbx: Any, pid: int, ended: threading.Event, failures: list[BaseException]) -> None:
    try:
        forward_stdin(sbx, pid)
    except Exception as error:
        # A command that exits without reading all of its input (`head -c 10`) makes the next
        # request fail, in a way that depends on the envd: its end says it was that.
        if ended.wait(ENDING_GRACE):
            sys.stderr.write("e2b: the command exited before it read all of its input.\n")
            return
        failures.append(error)  # it would wait for input forever: end it, then say why
        kill_quietly(sbx, pid)


def _writer(stream: Any) -> Callable[[bytes], None]:
    """Write a command's bytes to `stream`'s binary buffer, flushed so that stdout and stderr interleave as sent."""
    stream.flush()  # whatever text went before goes first
    buffer = stream.buffer

    def write(data: bytes) -> None:
        buffer.write(data)
        buffer.flush()

    return write


def kill_quietly(sbx: Any, pid: int) -> None:
    try:
        sbx.commands.kill(pid, request_timeout=5)
    except Exception:  # best effort: the process may be gone, the sandbox too
        pass
