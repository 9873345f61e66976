"""`e2b-local-api` in a process of its own, as users run it: for the data-plane conformance, benchmark and stress.

A process (not a thread of the test) so that its resident memory can be read,
it can be sent SIGTERM, and the processes of its sandboxes can be told from the
test's own: they are its descendants in /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.local_api.conftest import free_socket

START_TIMEOUT = 60.0


@dataclass
class ServerProcess:
    url: str
    process: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss(self) -> int:
        """The server's resident memory in bytes (its own process, not its sandboxes')."""
        return resident_bytes(self.pid)

    def descendants(self) -> set[int]:
        return descendants(self.pid)


def resident_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def children_map() -> dict[int, list[int]]:
    """Parent pid -> child pids, from /proc (a process that ends meanwhile is skipped)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields follow the last ')'.
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    return children


def descendants(pid: int) -> set[int]:
    tree = children_map()
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int]) -> set[int]:
    """Those of `pids` that still run (a zombie has ended: it only waits for its parent to read its status)."""
    living = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            living.add(pid)
    return living


def start_server(*extra: str) -> ServerProcess:
    """A server on a free port of 127.0.0.1, answering once this returns; `extra`: its own arguments.

    Its state is its own private temporary folder (the sandboxes' users must traverse every folder
    above it: pytest's are closed to them), removed when it exits.
    """
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()  # the server binds it again at once; nothing else here picks ports this way meanwhile
    env = {k: v for k, v in os.environ.items() if not k.startswith("E2B_")}
    command = [sys.executable, "-m", "e2b_local_api", "--port", str(port), "--log-level", "warning", *extra]
    process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            httpx.get(f"{url}/health", timeout=2)
            return ServerProcess(url, process)
        except httpx.HTTPError:
            if process.poll() is not None:
                raise RuntimeError(f"e2b-local-api exited {process.returncode} before answering") from None
            if time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"e2b-local-api did not answer within {START_TIMEOUT} s") from None
            time.sleep(0.05)


def stop_server(server: ServerProcess, timeout: float = 30.0) -> int:
    """SIGTERM, then SIGKILL if it is still there after `timeout`; its exit status."""
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    return server.process.returncode


@contextmanager
def running_server(*extra: str) -> Iterator[ServerProcess]:
    server = start_server(*extra)
    try:
        yield server
    finally:
        stop_server(server)
