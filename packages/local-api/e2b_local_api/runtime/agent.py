"""The agent: the first process of a sandbox (pid 1 of its namespaces), which starts its commands.

Runs inside bubblewrap as `python3 -I -S -c <this file's source> FD`, standard
library only. It reads requests on the SOCK_SEQPACKET socket FD (one JSON
message each, a spawn's stdio passed as SCM_RIGHTS), forks and execs commands
as the asked user, reaps every process of the namespace and reports its own
children's exits. Output never passes through it: the server holds the other
ends of the pipes or the terminal.
"""

from __future__ import annotations

import array
import errno
import fcntl
import json
import os
import select
import signal
import socket
import struct
import sys
import termios
from collections.abc import Sequence
from typing import Any

MAX_MESSAGE = 1 << 20
MAX_FDS = 3


def _send(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    sock.sendmsg([json.dumps(message).encode()], ancillary)


def _spawn(request: dict[str, Any], fds: list[int]) -> int:
    cwd = request["cwd"]
    if not os.path.isdir(cwd):
        raise OSError(errno.ENOENT, f"cwd '{cwd}' does not exist")
    # The child reports an exec failure on this pipe; a successful exec closes it.
    failure_r, failure_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        try:
            _exec_child(request, fds)
        except BaseException as error:
            os.write(failure_w, str(error).encode()[:4000])
        os._exit(127)
    os.close(failure_w)
    failure = b""
    while chunk := os.read(failure_r, 4096):
        failure += chunk
    os.close(failure_r)
    if failure:
        os.waitpid(pid, 0)
        raise OSError(errno.EINVAL, failure.decode(errors="replace"))
    return pid


def _exec_child(request: dict[str, Any], fds: list[int]) -> None:
    for number in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.setsid()  # its own session and process group: signals go to the group
    if request.get("pty"):
        (tty,) = fds
        stdio: tuple[int, ...] = (tty, tty, tty)
        fcntl.ioctl(tty, termios.TIOCSCTTY, 0)
    else:
        stdio = tuple(fds)
    for target, fd in enumerate(stdio):
        os.dup2(fd, target, inheritable=True)
    os.closerange(3, 65536)
    os.setgroups(request["groups"])
    os.setgid(request["gid"])
    os.setuid(request["uid"])
    os.chdir(request["cwd"])
    argv = request["argv"]
    os.execvpe(argv[0], argv, request["env"])


def _signal(request: dict[str, Any]) -> None:
    pid, number = request["pid"], request["signal"]
    try:
        os.kill(-pid, number)  # the process's group, which it leads (setsid)
    except ProcessLookupError:
        os.kill(pid, number)  # it left its group: the process alone


def _handle(sock: socket.socket, children: set[int], message: bytes, fds: list[int]) -> None:
    request = json.loads(message)
    reply = {"id": request["id"]}
    back: list[int] = []
    try:
        op = request["op"]
        if op == "spawn":
            size = request.get("pty")
            if size:
                # The terminal is opened here, on the sandbox's own devpts: /dev/pts/N inside is the process's tty.
                master, slave = os.openpty()
                fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
                back, fds = [master], [*fds, slave]
            pid = _spawn(request, fds[-1:] if size else fds)
            children.add(pid)
            reply["pid"] = pid
        elif op == "signal":
            if request["pid"] not in children:
                raise ProcessLookupError(errno.ESRCH, f"the agent has no process {request['pid']}")
            _signal(request)
        elif op != "ping":
            raise ValueError(f"unknown operation {op!r}")
    except OSError as error:
        reply["error"] = error.strerror or str(error)
    except (KeyError, TypeError, ValueError) as error:
        reply["error"] = f"bad request: {error}"
    finally:
        for fd in fds:
            os.close(fd)
    try:
        _send(sock, reply, back if "pid" in reply else ())
    finally:
        for fd in back:
            os.close(fd)


def _reap(sock: socket.socket, children: set[int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in children:
            children.discard(pid)
            _send(sock, {"exit": pid, "status": status})


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    _send(sock, {"ready": os.getpid()})
    while True:
        readable, _, _ = select.select([sock.fileno(), wake_r], [], [])
        if wake_r in readable:
            try:
                os.read(wake_r, 512)
            except BlockingIOError:
                pass
            _reap(sock, children)
        if sock.fileno() in readable:
            message, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(MAX_FDS * 4))
            if not message:
                return  # the server went away: the namespace ends with its first process
            fds: list[int] = []
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.extend(int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, len(data) - 3, 4))
            _handle(sock, children, message, fds)


if __name__ == "__main__":
    main()
