"""What a sandbox's processes see and reach: their own pids, files, users and (no) network; and without isolation
(`--no-isolation`), the host's, with only the kill of their tree enforced."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from e2b_local_api.runtime.isolation import Isolation, Mode, resolv_conf, sandbox_argv, without_isolation
from e2b_local_api.runtime.layout import BOUND
from e2b_local_api.runtime.network import GUARD_CLASS

from tests.local_api.sandboxes import (
    Envd,
    RealServer,
    StreamEnded,
    alive_named,
    datagrams_to_the_host_loopback,
    host_address,
    real_server,
    wait_for,
)

DEADLINE = 20.0


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


def test_own_pid_namespace(server: RealServer) -> None:
    envd = server.envd(server.create())
    _, out, _, _ = envd.run("cat /proc/1/comm; ls /proc | grep -c '^[0-9]'")
    first, count = out.decode().splitlines()
    assert first.startswith("python3")  # pid 1 is the sandbox's agent, not the host's init
    assert int(count) <= 4  # the agent, bash, ls, grep: nothing of the host


def test_paths_are_the_sandbox_paths_and_host_files_are_out_of_sight(server: RealServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    envd = server.envd(server.create())
    _, out, _, _ = envd.run(
        "cd ~ && realpath .; ls /root 2>&1 | head -1; test -e /work && echo host-work-visible; "
        "cat /etc/hostname; grep -c . /etc/passwd; touch /usr/x 2>/dev/null || echo usr-read-only"
    )
    lines = out.decode().splitlines()
    assert lines[0] == "/home/user"
    assert "Permission denied" in lines[1]  # user cannot read root's home
    assert "host-work-visible" not in lines
    assert lines[2] == "e2b.local" and int(lines[3]) == 3 and lines[-1] == "usr-read-only"


def as_root(envd: Envd, script: str) -> str:
    """`script` run as root inside, its stdout and stderr together."""
    _, out, err, _ = envd.run(script, user="root")
    return (out + err).decode()


def test_root_inside_is_not_root_outside(server: RealServer) -> None:
    if not server.runtimes.isolation.has_root:
        pytest.skip("an unprivileged server has no root inside its sandboxes")
    text = as_root(
        server.envd(server.create()),
        "id -u; mount -o remount,rw /usr 2>&1 || echo refused; "
        "mount -o remount,bind,rw /usr 2>/dev/null || echo bind-refused; "
        "umount /tmp 2>/dev/null || echo umount-refused; "
        "f=/proc/sys/kernel/printk_ratelimit; v=$(cat $f); (echo $v > $f) 2>/dev/null || echo sysctl-refused",
    )
    assert text.startswith("0\n")
    for refused in ("refused", "bind-refused", "umount-refused", "sysctl-refused"):
        assert f"{refused}\n" in text, text


def test_no_network_without_internet_access(server: RealServer) -> None:
    envd = server.envd(server.create(allow_internet_access=False))
    _, out, _, _ = envd.run("ls /sys/class/net 2>/dev/null | tr '\\n' ' '; cat /proc/net/dev | grep -c ':'")
    # Only the loopback device: nothing leaves the sandbox (and the server's port is out of reach).
    assert out.decode().split()[-1] == "1"
    _, out, _, _ = envd.run(
        f"exec 3<>/dev/tcp/127.0.0.1/{server.url.rsplit(':', 1)[1]} && echo reached || echo unreachable"
    )
    assert out == b"unreachable\n"


def test_one_sandbox_cannot_see_or_signal_another(server: RealServer) -> None:
    a, b = server.envd(server.create()), server.envd(server.create())
    with b.stream("Start", {"process": {"cmd": "/bin/sleep", "args": ["300"]}, "stdin": False}) as events:
        pid_in_b = int(next(events)["start"]["pid"])
        _, out, _, _ = a.run(f"pgrep -c sleep || true; kill -9 {pid_in_b} 2>&1 || echo cannot")
        assert out.decode().splitlines()[0] == "0"
        # The pid names a process of a's own namespace, if any: b's sleep is out of reach.
        assert pid_in_b in [int(p["pid"]) for p in b.call("List", {})["processes"]]
        b.call("SendSignal", {"process": {"pid": pid_in_b}, "signal": "SIGNAL_SIGKILL"})


def test_a_networked_sandbox_reaches_out_but_not_the_host_loopback(server: RealServer) -> None:
    found = server.runtimes.isolation
    if found.slirp is None:
        pytest.skip(f"networked sandboxes share the host's network here: {found.shared_network_reason}")
    address = host_address()
    if address is None:
        pytest.skip("this host has no address but loopback: nothing outside for a sandbox to reach")
    port = server.url.rsplit(":", 1)[1]
    with socket.create_server((address, 0)) as outside:
        outside_port = outside.getsockname()[1]
        answered = threading.Thread(target=lambda: outside.accept()[0].close(), daemon=True)
        answered.start()
        envd = server.envd(server.create())
        _, out, _, _ = envd.run(
            f"for to in 127.0.0.1/{port} 10.0.2.2/{port} {address}/{outside_port}; do"
            f" (exec 3<>/dev/tcp/$to) 2>/dev/null && echo reached || echo unreachable; done; cat /etc/resolv.conf"
        )
        answered.join(DEADLINE)
    lines = out.decode().splitlines()
    # The server's port, on the sandbox's own loopback and on slirp4netns's host gateway: out of reach;
    # the host on its outside address: reached through the user-mode NAT.
    assert lines[:3] == ["unreachable", "unreachable", "reached"], lines
    assert not answered.is_alive()
    assert lines[3:] == ["nameserver 10.0.2.3"]


def test_the_server_says_how_networked_sandboxes_reach_out() -> None:
    shared = Isolation(Mode.MAPPED_ROOT, "/usr/bin/bwrap", "/usr/bin/python3", shared_network_reason="install it")
    own = Isolation(Mode.MAPPED_ROOT, "/usr/bin/bwrap", "/usr/bin/python3", slirp="/usr/bin/slirp4netns")
    assert "share the host's network, its loopback (this server) included: install it" in shared.describe()
    assert "their own network through slirp4netns" in own.describe()
    # Their own network namespace from the start (slirp4netns connects it); the host's when shared.
    for box, unshared in ((own, True), (shared, False)):
        argv = sandbox_argv(box, dict.fromkeys(BOUND, 9), network=True, agent_source="", agent_fd=3)
        assert ("--unshare-net" in argv) is unshared
    assert resolv_conf(own, networked=True) == "nameserver 10.0.2.3\n"
    assert resolv_conf(own, networked=False) == resolv_conf(shared, networked=False) == "nameserver 127.0.0.1\n"


def test_root_inside_cannot_send_loopback_traffic_out_through_slirp4netns(server: RealServer) -> None:
    """slirp4netns opens a host socket for whatever reaches tap0: root inside must not be able to route 127.0.0.1 there.

    The attack (a red-team finding): let loopback addresses leave (route_localnet), take 127.0.0.1 out of the
    local table, route it to slirp4netns's gateway; or write frames to tap0 directly. Both need capabilities
    over the sandbox's network namespace that its root no longer has.
    """
    if server.runtimes.isolation.slirp is None or not server.runtimes.isolation.has_root:
        pytest.skip("no root inside, or networked sandboxes do not go through slirp4netns here")
    port = server.url.rsplit(":", 1)[1]
    text = as_root(
        server.envd(server.create()),
        "(echo 1 > /proc/sys/net/ipv4/conf/all/route_localnet) 2>/dev/null || echo sysctl-refused; "
        "ip route del local 127.0.0.1 dev lo table local 2>/dev/null || echo route-refused; "
        "ip route add 127.0.0.1/32 via 10.0.2.2 dev tap0 2>/dev/null || echo route-refused; "
        "python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)' 2>/dev/null || echo raw-refused; "
        "tc qdisc del dev tap0 root 2>/dev/null || echo tc-refused; "
        f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached || echo unreachable",
    )
    expected = ["sysctl-refused", "route-refused", "route-refused", "raw-refused", "tc-refused", "unreachable"]
    assert text.split() == expected, text


def test_a_socket_bound_to_tap0_holds_no_tcp_conversation_with_the_host_loopback(server: RealServer) -> None:
    """Bound to `tap0` (no privilege needed since Linux 5.7), a socket's packets to 127.0.0.1 leave by it and
    slirp4netns opens the host's side; the answer comes back from a loopback address on `tap0`, which the
    sandbox's kernel drops (its root cannot allow it: no CAP_NET_ADMIN), so no TCP connection completes.
    (Nor does its first packet leave: tap0's queue drops it; the next test sees that.)"""
    if server.runtimes.isolation.slirp is None:
        pytest.skip("networked sandboxes do not go through slirp4netns here")
    with socket.create_server(("127.0.0.1", 0)) as host:
        script = (
            "import socket; s = socket.socket(); s.settimeout(3); "
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b'tap0')\n"
            f"try: s.connect(('127.0.0.1', {host.getsockname()[1]})); print('connected')\n"
            "except OSError as error: print(type(error).__name__)"
        )
        _, out, _, _ = server.envd(server.create()).run(f'python3 -c "{script}"')
    assert out.decode().split() == ["TimeoutError"], out


def test_a_datagram_to_the_host_loopback_never_leaves_by_tap0(server: RealServer) -> None:
    """A socket bound to tap0 (SO_BINDTODEVICE) or sending by it (IP_PKTINFO), both unprivileged, sends its
    datagrams to 127.0.0.1 out by tap0, where slirp4netns would deliver them to the host's loopback: the queue
    the server sets on tap0 drops them. slirp4netns handles tap0's packets in order, so once the datagram sent
    after them to the host's outside address has arrived, any of them would have too."""
    found = server.runtimes.isolation
    if found.slirp is None:
        pytest.skip("networked sandboxes do not go through slirp4netns here")
    if found.guard is None:
        pytest.skip(f"no loopback guard here: {found.unguarded_reason}")
    address = host_address()
    if address is None:
        pytest.skip("this host has no address but loopback: no witness datagram to send after them")
    sandbox = server.create()
    assert datagrams_to_the_host_loopback(server.envd(sandbox), address) == []
    entry = server.runtimes.get(sandbox["sandboxID"])
    assert entry is not None and entry.runtime.agent_pid is not None
    nsenter, tc = found.guard
    shown = subprocess.run(
        [nsenter, f"--target={entry.runtime.agent_pid}", "--net", "--", tc, "-s", "class", "show", "dev", "tap0"],
        capture_output=True, text=True, check=True, timeout=DEADLINE,
    ).stdout  # fmt: skip
    dropped = shown.split(f"class htb {GUARD_CLASS} ", 1)[1].split("dropped ", 1)[1].split(",", 1)[0]
    assert int(dropped) >= 2, shown


# --- --no-isolation: plain processes of the server, every create says so -------------------------------------------


@pytest.fixture(scope="module")
def unisolated() -> Iterator[RealServer]:
    with real_server(without_isolation()) as running:
        yield running


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _tree_of(server: RealServer, sandbox: dict[str, object]) -> list[int]:
    entry = server.runtimes.get(str(sandbox["sandboxID"]))
    assert entry is not None
    return entry.runtime.members()


def test_without_isolation_the_start_line_and_each_create_say_so(
    unisolated: RealServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "NOT isolated (--no-isolation)" in unisolated.runtimes.isolation.describe()
    response = unisolated.api.post("/sandboxes", json={"templateID": "base", "allow_internet_access": False})
    assert response.status_code == 201, response.text
    assert response.headers["X-E2B-Local-Isolation"] == "none"
    warning = capsys.readouterr().err
    assert f"sandbox {response.json()['sandboxID']} is NOT isolated" in warning
    assert "allow_internet_access=False (or a deny of 0.0.0.0/0) is NOT enforced" in warning
    assert ("the host's ROOT" in warning) is (os.geteuid() == 0)
    fork = unisolated.api.post(f"/sandboxes/{response.json()['sandboxID']}/fork", json={})
    assert fork.status_code == 201 and fork.headers["X-E2B-Local-Isolation"] == "none"


def test_an_isolated_create_adds_no_isolation_header(server: RealServer) -> None:
    response = server.api.post("/sandboxes", json={"templateID": "base"})
    assert response.status_code == 201 and "X-E2B-Local-Isolation" not in response.headers


def test_without_isolation_commands_run_in_the_sandbox_folder_as_the_server(unisolated: RealServer) -> None:
    sandbox = unisolated.create()
    envd = unisolated.envd(sandbox)
    home = unisolated.runtimes.state / "sandboxes" / sandbox["sandboxID"] / "home" / "user"
    _, out, err, end = envd.run("echo out; echo err >&2; pwd; echo $HOME; id -u")
    assert end["status"] == "exit status 0"
    assert err == b"err\n"
    assert out.decode().splitlines() == ["out", str(home), str(home), str(os.geteuid())]
    # No user switching: root is asked for, the server's uid runs it, in root's folder of the sandbox.
    _, out, _, _ = envd.run("id -u; pwd", user="root")
    assert out.decode().splitlines() == [str(os.geteuid()), str(home.parent.parent / "root")]
    # A cwd under a folder of the sandbox is that folder; any other path is the host's.
    for cwd, host in (("/tmp", home.parent.parent / "tmp"), ("/usr", Path("/usr"))):
        with envd.stream("Start", {"process": {"cmd": "/bin/pwd", "cwd": cwd}, "stdin": False}) as events:
            out = b"".join(base64.b64decode(e["data"]["stdout"]) for e in events if "stdout" in e.get("data", {}))
        assert out.decode().strip() == str(host)


def test_without_isolation_files_written_through_envd_are_seen_by_commands(unisolated: RealServer) -> None:
    envd = unisolated.envd(unisolated.create())
    uploaded = httpx.post(
        f"{envd.url}/files",
        params={"path": "notes/a.txt"},
        content=b"from the files API",
        headers={**envd.headers(), "Content-Type": "application/octet-stream"},
    )
    assert uploaded.status_code == 200, uploaded.text
    _, out, _, _ = envd.run("cat notes/a.txt && echo from a command > notes/b.txt")
    assert out == b"from the files API"
    read = httpx.get(f"{envd.url}/files", params={"path": "/home/user/notes/b.txt"}, headers=envd.headers())
    assert read.status_code == 200 and read.content == b"from a command\n"


def test_without_isolation_output_streams_as_it_comes(unisolated: RealServer) -> None:
    envd = unisolated.envd(unisolated.create())
    body = {"process": {"cmd": "/bin/bash", "args": ["-c", "echo one; read -r line; echo $line"]}, "stdin": True}
    with envd.stream("Start", body) as events:
        pid = int(next(events)["start"]["pid"])
        first = next(e for e in events if "data" in e)
        assert first["data"]["stdout"] == "b25lCg=="  # "one\n", before the command ends: it waits for its input
        envd.call("SendInput", {"process": {"pid": pid}, "input": {"stdin": "dHdvCg=="}})  # "two\n"
        second = next(e for e in events if "data" in e)
        assert second["data"]["stdout"] == "dHdvCg=="
        assert next(e for e in events if "end" in e)["end"]["status"] == "exit status 0"


def test_without_isolation_a_terminal_works(unisolated: RealServer) -> None:
    envd = unisolated.envd(unisolated.create())
    body = {
        "process": {"cmd": "/bin/bash", "args": ["-c", "stty size; tty"], "envs": {"TERM": "xterm"}},
        "pty": {"size": {"cols": 80, "rows": 24}},
    }
    output = b""
    with envd.stream("Start", body) as events:
        for event in events:
            output += base64.b64decode(event.get("data", {}).get("pty", ""))
            if "end" in event:
                break
    size, tty = output.split(b"\r\n")[:2]
    assert size == b"24 80" and tty.startswith(b"/dev/pts/")


SPREAD = (
    # One command's group, one that left for its own session, one double-forked: the last two are orphans
    # the agent (their subreaper) adopts, found by walking its descendants.
    "(exec -a {name} sleep 1000) >/dev/null 2>&1 & "
    "setsid bash -c 'exec -a {name} sleep 1000' >/dev/null 2>&1 & "
    "(bash -c '(exec -a {name} sleep 1000) &' >/dev/null 2>&1 &)"
)


def test_without_isolation_pause_freezes_the_tree_and_resume_continues_it(unisolated: RealServer) -> None:
    sandbox = unisolated.create()
    name = f"e2b-noiso-pause-{sandbox['sandboxID']}"
    unisolated.envd(sandbox).run(SPREAD.format(name=name))
    sleeps = wait_for(lambda: len(alive_named(name)) == 3 and alive_named(name), "the three sleeps")
    agent_pid = _tree_of(unisolated, sandbox)[0]
    assert set(sleeps) <= set(_tree_of(unisolated, sandbox))  # the orphans too: adopted by the agent
    assert unisolated.api.post(f"/sandboxes/{sandbox['sandboxID']}/pause", json={}).status_code == 200
    assert {_state(pid) for pid in sleeps} == {"T"}
    assert _state(agent_pid) != "T"  # it stays awake to end the frozen tree should the server die
    assert unisolated.api.post(f"/sandboxes/{sandbox['sandboxID']}/connect", json={"timeout": 60}).status_code == 201
    wait_for(lambda: {_state(pid) for pid in sleeps} == {"S"}, "the sleeps to continue")
    assert unisolated.api.delete(f"/sandboxes/{sandbox['sandboxID']}").status_code == 204


def test_without_isolation_kill_leaves_no_process(unisolated: RealServer) -> None:
    sandbox = unisolated.create()
    name = f"e2b-noiso-kill-{sandbox['sandboxID']}"
    envd = unisolated.envd(sandbox)
    envd.run(SPREAD.format(name=name))
    wait_for(lambda: len(alive_named(name)) == 3, "the three sleeps")
    tree = _tree_of(unisolated, sandbox)
    body = {"process": {"cmd": "/bin/bash", "args": ["-c", f"exec -a {name} sleep 1000"]}, "stdin": False}
    with pytest.raises(StreamEnded) as ended, envd.stream("Start", body) as events:
        next(events)
        wait_for(lambda: len(alive_named(name)) == 4, "the fourth sleep, followed by a stream")
        assert unisolated.api.delete(f"/sandboxes/{sandbox['sandboxID']}").status_code == 204
        list(events)
    assert ended.value.code == "unavailable"
    wait_for(
        lambda: not alive_named(name) and not any(_alive(pid) for pid in tree), "every process of the sandbox to end"
    )


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
