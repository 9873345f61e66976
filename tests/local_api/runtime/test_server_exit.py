"""The server's end is its sandboxes' end: after SIGKILL or SIGTERM no sandbox process is left, with or without
isolation (bubblewrap's namespace ends them; without it, the agent, their subreaper, does)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from e2b_local_api import DEV_API_KEY
from e2b_local_api.runtime import isolation

from tests.local_api import unprivileged_host
from tests.local_api.conftest import free_socket
from tests.local_api.sandboxes import Envd, answers, wait_for

MARKER = "e2b-exit-test-sleep"  # the sleeps' argv[0]: easy to find in /proc, impossible to confuse


def survivors(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    url: str
    start_line: str  # what it said of its sandboxes before serving

    @property
    def own_networks(self) -> bool:
        """Whether its networked sandboxes get their own network (slirp4netns, its children), in its own words."""
        return "own network through slirp4netns" in self.start_line


@pytest.fixture(params=["bubblewrap", "bubblewrap-unprivileged", "--no-isolation", "--no-isolation-unprivileged"])
def server_process(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    """The server as a process of its own. Unprivileged: as nobody; without isolation, where bubblewrap is refused
    its namespaces (tests/local_api/unprivileged_host.py)."""
    unisolated = request.param.startswith("--no-isolation")
    unprivileged = request.param.endswith("-unprivileged")
    found = isolation.without_isolation() if unisolated else isolation.probe()
    if not found.available:
        pytest.skip(f"sandboxes cannot run processes on this machine: {found.reason}")
    if unprivileged and (why := unprivileged_host.unavailable()) is not None:
        pytest.skip(why)
    state = Path(tempfile.mkdtemp(prefix="e2b-exit-test-"))
    if unprivileged:
        os.chown(state, unprivileged_host.NOBODY, unprivileged_host.NOBODY)
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()  # the server binds it again at once; a port taken meanwhile fails the start, not the test's claim
    flags = ["--port", str(port), "--state", str(state), "--log-level", "warning"]
    flags += ["--no-isolation"] if unisolated else []
    command = [sys.executable, "-m", "e2b_local_api", *flags]
    if unprivileged:
        command = unprivileged_host.server_command(*flags, forbid_namespaces=unisolated)
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        assert server.stderr is not None
        start_line = server.stderr.readline().decode(errors="replace")  # said before it serves
        wait_for(lambda: answers(url) or server.poll() is not None, "the server to answer")
        assert server.poll() is None, start_line + server.stderr.read().decode(errors="replace")
        if unprivileged:  # the host's view: the server really is nobody
            assert f"Uid:\t{unprivileged_host.NOBODY}\t" in Path(f"/proc/{server.pid}/status").read_text()
        yield ServerProcess(server, url, start_line)
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
        subprocess.run(["rm", "-rf", str(state)], check=False)


def start_sleepers(url: str, tag: str) -> None:
    api = httpx.Client(base_url=url, headers={"X-API-Key": DEV_API_KEY}, timeout=30)
    for n in range(2):
        sandbox = api.post("/sandboxes", json={"templateID": "base", "timeout": 300}).json()
        envd = Envd(url, sandbox["sandboxID"], sandbox["envdAccessToken"])
        # One in the command's group, one that left for its own session, one double-forked (an orphan).
        name = f"{MARKER}.{tag}{n}"
        envd.run(
            f"(exec -a {name} sleep 300) >/dev/null 2>&1 & setsid bash -c 'exec -a {name} sleep 300' >/dev/null 2>&1 & "
            f"(bash -c '(exec -a {name} sleep 300) &' >/dev/null 2>&1 &)"
        )
    wait_for(lambda: len(survivors(f"{MARKER}.{tag}")) == 6, "the sleeps to run")
    # The second paused: its processes stopped must end all the same.
    assert api.post(f"/sandboxes/{sandbox['sandboxID']}/pause", json={}).status_code == 200


@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_no_process_survives_the_server(server_process: ServerProcess, signal_number: int) -> None:
    server, url = server_process.process, server_process.url
    # Each run's own name: runs of the other parameters may be sleeping on other workers at the same time.
    tag = f"{signal.Signals(signal_number).name.lower()}-{server.pid}-"
    start_sleepers(url, tag)
    # The networked sandboxes' slirp4netns, where they have their own network: the server's children.
    links = [pid for pid in survivors("slirp4netns") if _child_of(pid, server.pid)]
    assert len(links) == (2 if server_process.own_networks else 0)
    # bubblewrap, or without it the agents: the server's other children.
    helpers = [pid for pid in _children(server.pid) if pid not in links]
    assert len(helpers) == 2
    server.send_signal(signal_number)
    server.wait(timeout=30)
    wait_for(lambda: not survivors(f"{MARKER}.{tag}"), "every sandbox process to end with the server")
    # Nor the sandboxes' bubblewrap and agents, nor their slirp4netns (their exit pipe closed with the server).
    wait_for(lambda: not [pid for pid in helpers if _alive(pid)], "the sandboxes' bubblewrap or agents to end")
    wait_for(lambda: not set(links) & set(survivors("slirp4netns")), "the sandboxes' slirp4netns to end")


def _children(parent: int) -> list[int]:
    return [int(pid) for pid in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]


def _alive(pid: int) -> bool:
    """Running, or stopped: not gone and not a zombie (which runs nothing, and waits for its parent)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _child_of(pid: int, parent: int) -> bool:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) == parent
    except OSError:
        return False
