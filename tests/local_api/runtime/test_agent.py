"""The agent as the server's plain child (`--no-isolation`): nothing it started outlives it, orphans included,
and no bad message ends it.

Each test runs the agent's own source as the server does (`python3 -I -S -c SOURCE FD host`), asks it for a
command over its socket, and counts, by name in /proc, what is left once the server's side goes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2b_local_api.runtime import agent
from e2b_local_api.runtime.isolation import sandbox_argv, without_isolation

from tests.local_api.sandboxes import alive_named, wait_for

SOURCE = Path(agent.__file__).read_text()
# A command's group, its own session, a double fork, and a loop that keeps forking: all must end.
SPREAD = (
    "(exec -a {name} sleep 1000) & setsid bash -c 'exec -a {name} sleep 1000' & "
    "(bash -c '(exec -a {name} sleep 1000) &' &); "
    "while true; do (exec -a {name} sleep 1000) & sleep 0.01; done"
)


def agent_argv(fd: int, source: str = SOURCE) -> list[str]:
    found = without_isolation()
    if not found.available:
        pytest.skip(found.reason)
    return sandbox_argv(found, {}, network=True, agent_source=source, agent_fd=fd)  # no folders bound


def spawn(sock: socket.socket, command: str) -> int:
    """Start `bash -c command` through the agent's protocol, its stdio /dev/null; its pid."""
    request = {
        "id": 1, "op": "spawn", "argv": ["/bin/bash", "-c", command], "env": {"PATH": "/usr/bin:/bin"},
        "cwd": "/tmp", "uid": None, "gid": None, "groups": [], "pty": None,
    }  # fmt: skip
    null = os.open(os.devnull, os.O_RDWR)
    try:
        socket.send_fds(sock, [json.dumps(request).encode()], [null, null, null])
    finally:
        os.close(null)
    while True:
        message = json.loads(sock.recv(1 << 16))
        if message.get("id") == 1:
            assert "error" not in message, message
            return int(message["pid"])


@pytest.fixture
def name(request: pytest.FixtureRequest) -> str:
    return f"e2b-agent-test-{request.node.name}-{os.getpid()}"


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    yield ours, theirs
    ours.close()
    theirs.close()


def test_the_agent_ends_every_descendant_when_its_socket_closes(name: str, pair: tuple[socket.socket, ...]) -> None:
    ours, theirs = pair
    process = subprocess.Popen(agent_argv(theirs.fileno()), pass_fds=(theirs.fileno(),), start_new_session=True)
    try:
        theirs.close()
        assert "ready" in json.loads(ours.recv(1 << 16))
        spawn(ours, SPREAD.format(name=name))
        wait_for(lambda: len(alive_named(name)) >= 5, "the sleeps and the forking loop's")
        assert set(alive_named(name)) <= set(agent.descendants(process.pid))  # orphans adopted, not lost to init
        ours.close()  # the server's side goes
        assert process.wait(timeout=30) == 0
        assert alive_named(name) == []
    finally:
        process.kill()
        process.wait()


def test_the_agent_ends_every_descendant_when_the_server_dies(name: str, pair: tuple[socket.socket, ...]) -> None:
    """The death signal alone: the socket stays open here (this test holds its other end), the agent's parent
    (a stand-in server) is killed, and the agent must notice by the signal the kernel sends it."""
    ours, theirs = pair
    fd = theirs.fileno()
    stand_in = (
        "import subprocess, sys; "
        f"agent = subprocess.Popen({agent_argv(fd)!r}, pass_fds=({fd},), start_new_session=True); "
        "print(agent.pid, flush=True); sys.stdin.read()"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", stand_in], pass_fds=(fd,), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert server.stdout is not None
        agent_pid = int(server.stdout.readline())
        theirs.close()
        assert "ready" in json.loads(ours.recv(1 << 16))
        spawn(ours, SPREAD.format(name=name))
        wait_for(lambda: len(alive_named(name)) >= 5, "the sleeps and the forking loop's")
        server.send_signal(signal.SIGKILL)
        server.wait()
        wait_for(lambda: not alive_named(name), "every process the agent started to end")
        wait_for(lambda: agent_pid not in [int(e) for e in os.listdir("/proc") if e.isdigit()] or not _alive(agent_pid),
                 "the agent to exit")  # fmt: skip
    finally:
        server.kill()
        server.wait()


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _commands(pids: list[int]) -> list[bytes]:
    try:
        return [Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] for pid in pids]
    except OSError:
        return []


def test_descendants_follow_the_parent_chain() -> None:
    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 1000 & sleep 1000 & wait"], start_new_session=True)
    try:
        # A child is listed from its fork, and runs the shell's command line until it execs `sleep`: wait for both.
        wait_for(lambda: _commands(agent.descendants(shell.pid)) == [b"sleep", b"sleep"], "two sleeps, found")
        assert agent.end_descendants(shell.pid) == []
        assert shell.wait(timeout=30) == 0  # its children ended (killed), so its `wait` returned
    finally:
        shell.kill()
        shell.wait()


def test_a_bad_message_is_answered_or_dropped_and_the_agent_goes_on(pair: tuple[socket.socket, ...]) -> None:
    """Garbage, a message that is no request, one cut short at the agent's limit (4 KiB here, so that a send
    buffer of any size holds it) and one whose fields are wrong: each is refused, the agent serves the next."""
    ours, theirs = pair
    small = SOURCE.replace("MAX_MESSAGE = 1 << 20\n", "MAX_MESSAGE = 1 << 12\n")
    assert small != SOURCE
    process = subprocess.Popen(
        agent_argv(theirs.fileno(), small), pass_fds=(theirs.fileno(),), start_new_session=True, stderr=subprocess.PIPE
    )
    try:
        theirs.close()
        assert "ready" in json.loads(ours.recv(1 << 16))
        null = os.open(os.devnull, os.O_RDWR)
        try:
            socket.send_fds(ours, [b"\xffnot json"], [null])  # its fd is closed, not leaked
        finally:
            os.close(null)
        ours.send(b"[1, 2]")
        ours.send(json.dumps({"id": 7, "op": "spawn", "argv": ["/bin/true", "a" * 8192]}).encode())
        ours.send(json.dumps({"id": 8, "op": "spawn", "pty": 5}).encode())
        ours.send(json.dumps({"id": 9, "op": "ping"}).encode())
        # Answers come in order: the two dropped messages got none.
        answers = [json.loads(ours.recv(1 << 16)) for _ in range(3)]
        assert [a["id"] for a in answers] == [7, 8, 9]
        assert "longer than the agent's 4096 bytes" in answers[0]["error"]
        assert answers[1]["error"].startswith("bad request")
        assert "error" not in answers[2]
        ours.close()
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        dropped = process.stderr.read().decode().splitlines()
        assert len(dropped) == 2 and "undecodable request" in dropped[0] and "JSON object" in dropped[1]
    finally:
        process.kill()
        process.wait()


def test_connect_passes_back_a_connected_socket_and_refuses_a_closed_port(pair: tuple[socket.socket, ...]) -> None:
    """The agent's `connect` opens 127.0.0.1:port where it runs (here the host's loopback: no namespace) and
    passes the socket back; a port nothing accepts on and a port that is no port are refused, the agent goes on."""
    ours, theirs = pair
    listener = socket.create_server(("127.0.0.1", 0))
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()  # nothing accepts there now
    process = subprocess.Popen(agent_argv(theirs.fileno()), pass_fds=(theirs.fileno(),), start_new_session=True)
    try:
        theirs.close()
        assert "ready" in json.loads(ours.recv(1 << 16))
        ours.send(json.dumps({"id": 1, "op": "connect", "port": listener.getsockname()[1]}).encode())
        message, fds, _, _ = socket.recv_fds(ours, 1 << 16, 4)
        assert json.loads(message) == {"id": 1, "connected": listener.getsockname()[1]} and len(fds) == 1
        with socket.socket(fileno=fds[0]) as connected, listener.accept()[0] as accepted:
            connected.setblocking(True)
            connected.sendall(b"through the agent")
            assert accepted.recv(100) == b"through the agent"
        for request_id, port in ((2, closed_port), (3, 0), (4, "80")):
            ours.send(json.dumps({"id": request_id, "op": "connect", "port": port}).encode())
            message, fds, _, _ = socket.recv_fds(ours, 1 << 16, 4)
            answer = json.loads(message)
            assert answer["id"] == request_id and fds == [], answer
            assert ("refused" in answer["error"]) if request_id == 2 else answer["error"].startswith("bad request")
        ours.send(json.dumps({"id": 5, "op": "ping"}).encode())
        assert json.loads(ours.recv(1 << 16)) == {"id": 5}
    finally:
        listener.close()
        process.kill()
        process.wait()
