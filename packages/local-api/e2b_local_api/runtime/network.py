"""A networked sandbox's own network namespace, connected to the outside by slirp4netns (user-mode NAT).

Sharing the host's network namespace gave a sandbox the host's loopback: this server (whose
development API key is public) and every other local service. With slirp4netns the sandbox has
its own namespace: a `tap0` at 10.0.2.100 whose traffic slirp4netns, a process of the server's,
sends from the host's own sockets, with the host's loopback cut off (`--disable-host-loopback`)
and DNS at 10.0.2.3; packets to a loopback address never leave by `tap0` (`guard`). It ends when
the server closes its `--exit-fd` pipe: at the sandbox's kill, or when the server itself ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import time

from e2b_local_api.runtime.exits import helper_words

__all__ = ["RESOLV_CONF", "GuardError", "Link", "LinkError", "argv", "attach", "attach_blocking", "read_info"]

RESOLV_CONF = "nameserver 10.0.2.3\n"  # slirp4netns's DNS, which asks the host's resolvers
_MTU = 65520  # slirp4netns's recommended maximum: fewer, larger packets through the user-mode stack
# nsenter's way into an unprivileged server's own user namespace, as the server's uid (root there).
_OWN_USER_NAMESPACE = ("--user", "--preserve-credentials")


def argv(slirp: str, pid: int, ready_fd: int, exit_fd: int, *, unprivileged: bool = False) -> list[str]:
    """slirp4netns for the network namespace of host pid `pid`: configured, loopback cut off, in its own sandbox.

    `unprivileged`: the namespace belongs to a user namespace the (unprivileged) server made, where slirp4netns
    runs (its own sandbox needs root there: `--userns-path` would move only its child, which opens tap0).
    """
    first, namespace = [], [str(pid)]
    if unprivileged:
        first = ["nsenter", *_OWN_USER_NAMESPACE, f"--target={pid}", "--"]
        namespace = ["--netns-type=path", f"/proc/{pid}/ns/net"]
    return [
        *first,
        slirp, "--configure", f"--mtu={_MTU}", "--disable-host-loopback", "--enable-sandbox", "--enable-seccomp",
        "--ready-fd", str(ready_fd), "--exit-fd", str(exit_fd), *namespace, "tap0",
    ]  # fmt: skip


class Link:
    """A running slirp4netns: `close()` ends it (it exits when its exit pipe closes)."""

    def __init__(self, process: asyncio.subprocess.Process, exit_fd: int) -> None:
        self.process = process
        self._exit_fd: int | None = exit_fd

    def close(self) -> None:
        if self._exit_fd is not None:
            os.close(self._exit_fd)
            self._exit_fd = None

    async def wait(self) -> None:
        await self.process.wait()


class LinkError(Exception):
    """slirp4netns did not connect the namespace; the message has its own words."""


class GuardError(LinkError):
    """slirp4netns connected the namespace, but its loopback guard could not be set: tc's words."""


# slirp4netns sends whatever reaches tap0 from a host socket, to the address the packet names: a datagram
# to 127.0.0.1 that leaves by tap0 (a socket bound to it: SO_BINDTODEVICE or IP_PKTINFO, no privilege
# needed) reached the host's loopback services. So tap0's queue, set by the server before any command runs
# (the sandbox's root has no CAP_NET_ADMIN to change it), sends every packet to a loopback address to a
# class whose queue holds nothing: dropped. The rest go to a class whose rate no link reaches. It uses only
# what the kernels seen here carry: htb, u32 and pfifo (no prio or drr queue, no tc actions).
_GUARD = """\
qdisc add dev tap0 root handle 1: htb default 1
class add dev tap0 parent 1: classid 1:1 htb rate 100gbit quantum 200000
class add dev tap0 parent 1: classid 1:2 htb rate 8bit quantum 1500
qdisc add dev tap0 parent 1:2 handle 2: pfifo limit 0
filter add dev tap0 parent 1: protocol ip prio 1 u32 match ip dst 127.0.0.0/8 classid 1:2
filter add dev tap0 parent 1: protocol ipv6 prio 2 u32 match ip6 dst ::1/128 classid 1:2
"""
GUARD_CLASS = "1:2"  # where the dropped packets are counted (`tc -s class show dev tap0`)


async def guard(tools: tuple[str, str], pid: int, timeout: float, *, unprivileged: bool = False) -> None:
    """Set `_GUARD` on tap0 in the network namespace of host pid `pid`; `tools`: nsenter and tc."""
    nsenter, tc = tools
    joined = [*_OWN_USER_NAMESPACE, "--net"] if unprivileged else ["--net"]
    try:
        process = await asyncio.create_subprocess_exec(
            nsenter, f"--target={pid}", *joined, "--", tc, "-batch", "-",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
    except OSError as error:
        raise GuardError(f"tc does not start: {error}") from None
    try:
        _, said = await asyncio.wait_for(process.communicate(_GUARD.encode()), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise GuardError(f"tc did not set tap0's queue within {timeout:g} s") from None
    if process.returncode != 0:
        words = said.decode(errors="replace").strip() or f"exit status {process.returncode}"
        raise GuardError(f"tc could not set tap0's queue ({words})")


async def attach(
    slirp: str, pid: int, timeout: float, guarded_by: tuple[str, str] | None = None, *, unprivileged: bool = False
) -> Link:
    """Connect the network namespace of host pid `pid`, once slirp4netns says it is configured, and set its
    loopback guard with `guarded_by` (nsenter and tc), if given, before it is used. `unprivileged`: see `argv`."""
    ready_r, ready_w = os.pipe()
    exit_r, exit_w = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *argv(slirp, pid, ready_w, exit_r, unprivileged=unprivileged),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(ready_w, exit_r),
            start_new_session=True,
        )
    except OSError as error:
        for fd in (ready_r, ready_w, exit_r, exit_w):
            os.close(fd)
        raise LinkError(f"slirp4netns does not start: {error}") from None
    os.close(ready_w)
    os.close(exit_r)
    link = Link(process, exit_w)
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[bytes] = loop.create_future()

    def on_ready() -> None:
        if not ready.done():
            ready.set_result(os.read(ready_r, 1))

    loop.add_reader(ready_r, on_ready)
    late = ""
    try:
        said = await asyncio.wait_for(ready, timeout)
    except TimeoutError:
        said, late = b"", f"slirp4netns did not say it was ready within {timeout:g} s"
    finally:
        loop.remove_reader(ready_r)
        os.close(ready_r)
    if said == b"1":
        if guarded_by is None:
            return link
        try:
            await guard(guarded_by, pid, timeout, unprivileged=unprivileged)
        except GuardError:
            link.close()
            await process.wait()
            raise
        return link
    link.close()
    with contextlib.suppress(ProcessLookupError):  # it may have failed and been reaped already
        process.kill()
    detail = await helper_words(process)
    await process.wait()
    raise LinkError(late or detail or f"slirp4netns exited {process.returncode}")


def attach_blocking(
    slirp: str, pid: int, timeout: float, guarded_by: tuple[str, str] | None = None, *, unprivileged: bool = False
) -> LinkError | None:
    """`attach`, then its end, for the start-up probe (no event loop runs yet): None if it worked, else why not
    (a GuardError: connected, but not guarded)."""

    async def attach_and_end() -> None:
        link = await attach(slirp, pid, timeout, guarded_by, unprivileged=unprivileged)
        link.close()
        await link.wait()

    try:
        asyncio.run(attach_and_end())
    except LinkError as error:
        return error
    return None


def read_info(fd: int, timeout: float) -> int | None:
    """The host pid of bubblewrap's child, from what its `--info-fd` writes (a JSON object)."""
    data = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        data += chunk
        try:
            pid = json.loads(data)["child-pid"]
        except ValueError:
            continue
        return int(pid)
