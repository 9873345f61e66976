"""A networked sandbox's own network namespace, connected to the outside by slirp4netns (user-mode NAT).

Sharing the host's network namespace gave a sandbox the host's loopback: this server (whose
development API key is public) and every other local service. With slirp4netns the sandbox has
its own namespace: a `tap0` at 10.0.2.100 whose traffic slirp4netns, a process of the server's,
sends from the host's own sockets, with the host's loopback cut off (`--disable-host-loopback`)
and DNS at 10.0.2.3. It ends when the server closes its `--exit-fd` pipe: at the sandbox's kill,
or when the server itself ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import time

from e2b_local_api.runtime.exits import helper_words

__all__ = ["RESOLV_CONF", "Link", "LinkError", "argv", "attach", "attach_blocking", "read_info"]

RESOLV_CONF = "nameserver 10.0.2.3\n"  # slirp4netns's DNS, which asks the host's resolvers
_MTU = 65520  # slirp4netns's recommended maximum: fewer, larger packets through the user-mode stack


def argv(slirp: str, pid: int, ready_fd: int, exit_fd: int) -> list[str]:
    """slirp4netns for the network namespace of host pid `pid`: configured, loopback cut off, in its own sandbox."""
    return [
        slirp, "--configure", f"--mtu={_MTU}", "--disable-host-loopback", "--enable-sandbox", "--enable-seccomp",
        "--ready-fd", str(ready_fd), "--exit-fd", str(exit_fd), str(pid), "tap0",
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


async def attach(slirp: str, pid: int, timeout: float) -> Link:
    """Connect the network namespace of host pid `pid`, once slirp4netns says it is configured."""
    ready_r, ready_w = os.pipe()
    exit_r, exit_w = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *argv(slirp, pid, ready_w, exit_r),
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
        return link
    link.close()
    with contextlib.suppress(ProcessLookupError):  # it may have failed and been reaped already
        process.kill()
    detail = await helper_words(process)
    await process.wait()
    raise LinkError(late or detail or f"slirp4netns exited {process.returncode}")


def attach_blocking(slirp: str, pid: int, timeout: float) -> str | None:
    """`attach`, then its end, for the start-up probe (no event loop runs yet): None if it worked, else why not."""

    async def attach_and_end() -> None:
        link = await attach(slirp, pid, timeout)
        link.close()
        await link.wait()

    try:
        asyncio.run(attach_and_end())
    except LinkError as error:
        return str(error)
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
