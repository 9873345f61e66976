"""The server as an ordinary user, as most people run it: its sandboxes' users, files and networks.

The server runs as nobody (`tests/local_api/unprivileged_host.py`), by the host's python3. Its networked
sandboxes get their own network when slirp4netns can open /dev/net/tun as that user (Debian's udev makes it
0666; `.ci/run` sets that where an image has 0600); elsewhere they share the host's, and the network tests
skip saying so, in the server's own words.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from e2b_local_api import DEV_API_KEY

from tests.local_api import unprivileged_host
from tests.local_api.conftest import free_socket
from tests.local_api.sandboxes import (
    Envd,
    StreamEnded,
    answers,
    datagrams_to_the_host_loopback,
    host_address,
    wait_for,
)


@dataclass
class Server:
    url: str
    port: int
    state: Path
    start_line: str
    api: httpx.Client

    def envd(self, **body: object) -> Envd:
        answer = self.api.post("/sandboxes", json={"templateID": "base", **body})
        assert answer.status_code == 201, answer.text
        return Envd(self.url, answer.json()["sandboxID"], answer.json()["envdAccessToken"])

    def own_networks(self) -> None:
        """Skip unless networked sandboxes get their own network here."""
        if "own network through slirp4netns" not in self.start_line:
            pytest.skip(
                f"an unprivileged server's networked sandboxes share the host's network here: {self.start_line}"
            )


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    if (why := unprivileged_host.unavailable()) is not None:
        pytest.skip(why)
    state = Path(tempfile.mkdtemp(prefix="e2b-unprivileged-"))  # not pytest's folder: nobody cannot reach it
    os.chown(state, unprivileged_host.NOBODY, unprivileged_host.NOBODY)
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()  # the server binds it again at once; a port taken meanwhile fails the start, not the test's claim
    flags = ("--port", str(port), "--state", str(state), "--log-level", "warning")
    command = unprivileged_host.server_command(*flags, forbid_namespaces=False)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        assert process.stderr is not None
        start_line = process.stderr.readline()  # said before it serves
        if "cannot run processes here" in start_line:
            pytest.skip(f"bubblewrap does not run as an ordinary user here: {start_line}")
        wait_for(lambda: answers(url) or process.poll() is not None, "the server to answer")
        assert process.poll() is None, start_line + process.stderr.read()
        assert "sandboxes run in bubblewrap as uid 1000" in start_line, start_line
        with httpx.Client(base_url=url, headers={"X-API-Key": DEV_API_KEY}, timeout=30) as api:
            yield Server(url, port, state, start_line, api)
    finally:
        process.terminate()
        process.wait(timeout=30)
        subprocess.run(["rm", "-rf", str(state)], check=False)


def test_commands_run_as_user_and_root_is_refused(server: Server) -> None:
    envd = server.envd()
    _, out, err, end = envd.run("id -u; id -un; echo hi > ~/made; pwd")
    assert end.get("exitCode") is None, err
    assert out.decode().split() == ["1000", "user", "/home/user"]
    made = next(server.state.rglob("home/user/made")).stat()
    assert made.st_uid == unprivileged_host.NOBODY  # the server's own uid outside: it has no other
    with pytest.raises(StreamEnded) as refused:
        envd.run("true", user="root")
    assert refused.value.code == "unauthenticated" and "user 'root' is not available" in refused.value.message


def test_a_sandbox_without_internet_access_has_only_its_loopback(server: Server) -> None:
    _, out, _, _ = server.envd(allow_internet_access=False).run("grep -c : /proc/net/dev")
    assert out == b"1\n"


def test_a_networked_sandbox_has_its_own_network_without_the_host_loopback(server: Server) -> None:
    server.own_networks()
    _, out, _, _ = server.envd().run(
        "grep -o tap0 /proc/net/dev; "
        f"for to in 127.0.0.1/{server.port} 10.0.2.2/{server.port} 10.0.2.3/53; do"
        "  (exec 3<>/dev/tcp/$to) 2>/dev/null && echo reached || echo unreachable; done; "
        "tc qdisc show dev tap0 | grep -o '^qdisc htb'; tc qdisc del dev tap0 root 2>/dev/null || echo tc-refused"
    )
    # The server's port, on the sandbox's loopback and on slirp4netns's way to the host's: out of reach;
    # slirp4netns's DNS: reached; tap0's queue (the server's guard, seen by the sandbox's own tc): not its to remove.
    assert out.decode().splitlines() == ["tap0", "unreachable", "unreachable", "reached", "qdisc htb", "tc-refused"]


def test_a_datagram_to_the_host_loopback_never_leaves_by_tap0(server: Server) -> None:
    server.own_networks()
    address = host_address()
    if address is None:
        pytest.skip("this host has no address but loopback: no witness datagram to send after them")
    assert datagrams_to_the_host_loopback(server.envd(), address) == []
