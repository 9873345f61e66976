"""The agent: the first process of a sandbox (pid 1 of its namespaces), which starts its commands.

Runs inside bubblewrap as `python3 -I -S -c <this file's source> FD`, standard library only, or
with `--no-isolation` as the server's child (`... FD host`): then it is its commands' subreaper
and, when the server goes, ends every descendant itself (no namespace ends them with it). It
reads requests on the SOCK_SEQPACKET socket FD (one JSON message each, a spawn's stdio passed
as SCM_RIGHTS), forks and execs commands as the asked user, reaps every process of its tree and
reports its own children's exits; a connect hands back a TCP socket to one of the sandbox's own
ports. Neither output nor traffic passes through it: the server holds the other ends.
The server also uses its process-tree functions.
"""

from __future__ import annotations

import array
import contextlib
import errno
import fcntl
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import termios
import time
from collections.abc import Callable, Sequence
from typing import Any

MAX_MESSAGE = 1 << 20
_ID_FIRST = re.compile(rb'\{"id": *(\d{1,18})[,}]')
MAX_FDS = 3
HOST = "host"  # the mode word: no namespace of its own
# prctl(2) options (linux/prctl.h)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
END_SECONDS = 10.0  # a process that takes longer to die (stuck in the kernel: D state) is left to it
# A connect to loopback is settled at once (accepted, queued or refused); only a listener whose backlog is full
# leaves it pending, and the agent's loop, which answers every other request, waits no longer than this for it.
CONNECT_SECONDS = 1.0


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
            _exec_child(request, fds, failure_w)
        except BaseException as error:
            with contextlib.suppress(BaseException):
                os.write(failure_w, str(error).encode()[:4000])
        finally:
            os._exit(127)  # never back into the agent's loop, whatever failed
    os.close(failure_w)
    failure = b""
    while chunk := os.read(failure_r, 4096):
        failure += chunk
    os.close(failure_r)
    if failure:
        os.waitpid(pid, 0)
        raise OSError(errno.EINVAL, failure.decode(errors="replace"))
    return pid


def _exec_child(request: dict[str, Any], fds: list[int], failure_w: int) -> None:
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
    # Every inherited fd but the failure pipe, which the exec closes (O_CLOEXEC) or a failure is written to.
    os.closerange(3, failure_w)
    os.closerange(failure_w + 1, 65536)
    if request["uid"] is not None:  # None: no user switching (--no-isolation), the server's own uid
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


def _connect(port: object) -> int:
    """A TCP socket connected to 127.0.0.1:`port` of the sandbox's own network, as a descriptor to pass on."""
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise ValueError(f"a port must be an integer from 1 to 65535, not {port!r}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        status = sock.connect_ex(("127.0.0.1", port))
        if status == errno.EINPROGRESS:
            _, writable, _ = select.select([], [sock], [], CONNECT_SECONDS)
            if not writable:
                raise OSError(errno.ETIMEDOUT, f"port {port} did not accept within {CONNECT_SECONDS:g} s")
            status = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if status != 0:
            raise OSError(status, os.strerror(status))
        return sock.detach()
    finally:
        sock.close()


def _parse(message: bytes, cut: str) -> tuple[dict[str, Any] | None, int | None, str]:
    """The request, or None with the id it names (None: none found) and why it cannot be served (`cut`: why
    the kernel cut the message short, if it did). The client puts the id first: a message cut short at
    MAX_MESSAGE still names the request to answer."""
    if not cut:
        try:
            request = json.loads(message)
        except (ValueError, RecursionError) as error:
            request, reason = None, f"undecodable request: {error}"
        else:
            if isinstance(request, dict) and isinstance(request.get("id"), int):
                return request, request["id"], ""
            reason = "a request must be a JSON object with an integer id"
    else:
        reason = cut
    found = _ID_FIRST.match(message)
    return None, int(found[1]) if found else None, reason


def _handle(sock: socket.socket, children: set[int], message: bytes, fds: list[int], cut: str = "") -> None:
    request, request_id, reason = _parse(message, cut)
    if request is None:
        # One bad message must not end the agent (pid 1: the whole sandbox would go with it).
        for fd in fds:
            os.close(fd)
        if request_id is None:
            print(f"e2b agent: a message dropped: {reason}", file=sys.stderr, flush=True)
        else:
            _send(sock, {"id": request_id, "error": reason})
        return
    reply: dict[str, Any] = {"id": request_id}
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
        elif op == "connect":
            back = [_connect(request["port"])]
            reply["connected"] = request["port"]
        elif op != "ping":
            raise ValueError(f"unknown operation {op!r}")
    except OSError as error:
        reply["error"] = error.strerror or str(error)
    except Exception as error:  # whatever a malformed request raises: it is refused, the agent goes on
        reply["error"] = f"bad request: {error}"
    finally:
        for fd in fds:
            os.close(fd)
    try:
        _send(sock, reply, back if "error" not in reply else ())
    finally:
        for fd in back:
            os.close(fd)


def _cut(flags: int) -> str:
    if flags & socket.MSG_TRUNC:
        return f"request longer than the agent's {MAX_MESSAGE} bytes, cut short"
    if flags & socket.MSG_CTRUNC:
        return f"request with more than {MAX_FDS} file descriptors, some lost"
    return ""


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


# --- the process tree, found by parent pid in /proc (the server uses these too) ------------------------------------


def _stat(pid: int) -> tuple[bytes, int] | None:
    """A process's state letter and parent pid; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def descendants(root: int) -> list[int]:
    """Every process whose chain of parents leads to `root` (zombies included), parents before children."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                children.setdefault(found[1], []).append(int(entry))
    tree: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            tree.append(child)
            todo.append(child)
    return tree


def is_stopped(pid: int) -> bool:
    """Stopped, or dead already: either way it runs (and forks) no more."""
    found = _stat(pid)
    return found is None or found[0] in (b"T", b"t", b"Z", b"X")


def _alive(pid: int) -> bool:
    found = _stat(pid)
    return found is not None and found[0] not in (b"Z", b"X")


def stop_all(members: Callable[[], list[int]], passes: int = 50) -> None:
    """SIGSTOP every member, again until a pass finds none running: a process forked before its parent stopped
    appears in a later pass, and a pass that finds every member stopped means none can fork any more."""
    stopped: set[int] = set()
    for _ in range(passes):
        running = [pid for pid in members() if pid not in stopped or not is_stopped(pid)]
        if not running:
            return
        for pid in running:
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                continue
            stopped.add(pid)
        time.sleep(0.001)


def end_descendants(root: int, reap: Callable[[], None] = lambda: None) -> list[int]:
    """Freeze every descendant of `root`, then SIGKILL them, pass after pass until none is alive (or
    END_SECONDS passed: those are returned). Killing a running tree would let a fork slip between the read
    of /proc and the kill; a frozen one forks no more. `root` must be their subreaper (or their namespace's
    pid 1) for orphans to stay findable; `reap`: root's own way to collect its dead children, if it is us."""
    deadline = time.monotonic() + END_SECONDS
    while True:
        reap()
        alive = [pid for pid in descendants(root) if _alive(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        stop_all(lambda: descendants(root))
        for pid in descendants(root):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        time.sleep(0.001)


def _watch_host(libc_prctl: Callable[..., int]) -> int:
    """As the server's child (no namespace): become the subreaper of every process started here, so that
    `setsid`'d and double-forked ones stay in reach, and be told when the server dies. Returns the server's
    pid, or -1 if it is already gone."""
    parent = os.getppid()
    for option, value in ((PR_SET_CHILD_SUBREAPER, 1), (PR_SET_PDEATHSIG, int(signal.SIGHUP))):
        if libc_prctl(option, value, 0, 0, 0) != 0:
            raise OSError(f"prctl({option}) failed: the agent could not keep its commands in reach")
    # The server may have died before the death signal was asked for: then its pid is no longer our parent.
    return parent if os.getppid() == parent else -1


def _reap_quietly() -> None:
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    host = sys.argv[2:] == [HOST]
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    server = -1
    if host:
        import ctypes  # only here: inside bubblewrap the namespace does this work

        signal.signal(signal.SIGHUP, lambda *_: None)  # the server's death signal: the loop checks who died
        server = _watch_host(ctypes.CDLL(None, use_errno=True).prctl)
        if server == -1:
            return
    try:
        _serve(sock, wake_r, server)
    finally:
        if host:
            # Whatever ended the loop (the socket's end, the server's death, an error), nothing started
            # here may outlive it: no namespace takes the commands along with the agent.
            end_descendants(os.getpid(), _reap_quietly)


def _serve(sock: socket.socket, wake_r: int, server: int) -> None:
    children: set[int] = set()
    _send(sock, {"ready": os.getpid()})
    while True:
        readable, _, _ = select.select([sock.fileno(), wake_r], [], [])
        if wake_r in readable:
            try:
                os.read(wake_r, 512)
            except BlockingIOError:
                pass
            if server != -1 and os.getppid() != server:
                return  # the server died (the death signal woke us): its socket may not have closed yet
            _reap(sock, children)
        if sock.fileno() in readable:
            message, ancillary, flags, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(MAX_FDS * 4))
            if not message:
                return  # the server went away: the namespace ends with its first process (without one: `main`)
            fds: list[int] = []
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.extend(int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, len(data) - 3, 4))
            _handle(sock, children, message, fds, _cut(flags))


if __name__ == "__main__":
    main()
