"""The `e2b-local-api` command."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from e2b_local_api.cli import auth_config, parse_args
from e2b_local_api.control.auth import DEV_API_KEY

from tests.local_api import unprivileged_host
from tests.local_api.sandboxes import ENVD_PORT, Envd, answers, wait_for


def test_defaults() -> None:
    args = parse_args([])
    assert (args.host, args.port) == ("127.0.0.1", 3000)
    assert not args.no_isolation and parse_args(["--no-isolation"]).no_isolation
    assert auth_config(args).keys == frozenset({DEV_API_KEY})


def test_keys_are_repeatable() -> None:
    config = auth_config(parse_args(["--api-key", "a", "--api-key", "b"]))
    assert config.keys == frozenset({"a", "b"}) and not config.accept_any
    assert auth_config(parse_args(["--any-api-key"])).accept_any


def test_serves_on_the_given_port() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "e2b_local_api", "--port", str(port), "--api-key", "k"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/v2/sandboxes", headers={"X-API-Key": "k"})
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
        assert response.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_limits_are_options() -> None:
    args = parse_args(
        ["--header-timeout", "0.5", "--keep-alive-timeout", "3", "--body-timeout", "2", "--max-body-bytes", "100"]
    )
    assert (args.header_timeout, args.keep_alive_timeout, args.body_timeout, args.max_body_bytes) == (0.5, 3, 2, 100)


@pytest.mark.parametrize("option", ["--header-timeout", "--keep-alive-timeout", "--body-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_timeouts_must_be_positive(option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args([option, value])
    assert exited.value.code == 2
    assert "must be a positive number of seconds" in capsys.readouterr().err


@contextmanager
def serving_cli(
    *flags: str, path: str | None = None, unprivileged: bool = False, descriptors: int | None = None
) -> Iterator[tuple[str, str]]:
    """`e2b-local-api FLAGS` answering: its URL and its start line. `path`: its PATH; `unprivileged`: run as
    nobody where user namespaces are refused (`unprivileged_host.py`); `descriptors`: its soft NOFILE limit."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    flags = ("--port", str(port), "--log-level", "warning", *flags)
    command = [sys.executable, "-m", "e2b_local_api", *flags]
    if unprivileged:
        command = unprivileged_host.server_command(*flags)
    env = {**os.environ, "PATH": path} if path is not None else None
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    limit = None if descriptors is None else (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, hard)))
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, preexec_fn=limit
    )
    try:
        assert process.stderr is not None
        start_line = process.stderr.readline()  # said before it serves
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: answers(url) or process.poll() is not None, "the server to answer")
        assert process.poll() is None, start_line + process.stderr.read()
        yield url, start_line
    finally:
        process.terminate()
        process.wait(timeout=30)


def assert_data_plane_refused(url: str) -> None:
    headers = {"X-API-Key": DEV_API_KEY}
    sandbox = httpx.post(f"{url}/sandboxes", json={"templateID": "base"}, headers=headers).json()
    refused = httpx.post(
        f"{url}/process.Process/List",
        json={},
        headers={"E2b-Sandbox-Id": sandbox["sandboxID"], "E2b-Sandbox-Port": ENVD_PORT},
    )
    assert refused.status_code == 502
    assert "data-plane calls are refused" in refused.json()["message"]
    assert "--no-isolation" in refused.json()["message"]


def test_without_bubblewrap_the_start_line_and_the_refusal_name_no_isolation() -> None:
    # No bwrap on PATH: what a host without bubblewrap looks like to the probe.
    with serving_cli(path="/nonexistent") as (url, start_line):
        assert "bubblewrap (bwrap) is not installed" in start_line and "--no-isolation" in start_line
        assert_data_plane_refused(url)


def test_where_bubblewrap_fails_the_start_line_says_why_and_calls_are_refused() -> None:
    # Installed, but refused its namespaces (as in a container's seccomp profile), the server not root.
    if (why := unprivileged_host.unavailable()) is not None:
        pytest.skip(why)
    with serving_cli(unprivileged=True) as (url, start_line):
        assert "bubblewrap cannot create namespaces here (bwrap: Creating new namespace failed" in start_line
        assert "--no-isolation" in start_line
        assert_data_plane_refused(url)


def test_no_isolation_is_said_at_start() -> None:
    with serving_cli("--no-isolation", path="/nonexistent") as (_, start_line):
        assert start_line.startswith("e2b-local-api: WARNING: sandboxes are NOT isolated (--no-isolation)")


def test_an_unprivileged_server_without_isolation_runs_commands_as_its_own_user() -> None:
    if (why := unprivileged_host.unavailable()) is not None:
        pytest.skip(why)
    state = Path(tempfile.mkdtemp(prefix="e2b-unprivileged-"))  # not pytest's folder: nobody cannot reach it
    os.chown(state, unprivileged_host.NOBODY, unprivileged_host.NOBODY)
    try:
        with serving_cli("--no-isolation", "--state", str(state), unprivileged=True) as (url, start_line):
            assert f"commands run as this server's user (uid {unprivileged_host.NOBODY})" in start_line
            headers = {"X-API-Key": DEV_API_KEY}
            sandbox = httpx.post(f"{url}/sandboxes", json={"templateID": "base"}, headers=headers).json()
            envd = Envd(url, sandbox["sandboxID"], sandbox["envdAccessToken"])
            # No user switching, and no way to root: both users are the server's.
            assert envd.run("id -u; touch made")[1] == b"65534\n"
            assert envd.run("id -u", user="root")[1] == b"65534\n"
            made = next(state.rglob("home/user/made")).stat()
            assert (made.st_uid, made.st_gid) == (unprivileged_host.NOBODY, unprivileged_host.NOBODY)
    finally:
        subprocess.run(["rm", "-rf", str(state)], check=False)


def test_the_server_lifts_its_descriptor_limit_to_the_hard_one() -> None:
    """Every connection holds a descriptor: a server started with a soft limit of 256 (Debian's shells give
    1024) would refuse connections long before one sandbox's MAX_OPEN_REQUESTS."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.skip(f"the hard limit on descriptors here is {hard}: nothing to lift")
    with serving_cli("--no-isolation", descriptors=256) as (url, _):
        port = url.rsplit(":", 1)[1]
        pid = next(
            int(entry)
            for entry in os.listdir("/proc")
            if entry.isdigit() and _cmdline(int(entry))[-1:] == ["--no-isolation"] and port in _cmdline(int(entry))
        )
        limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
        soft, hard_seen = next(line for line in limits if line.startswith("Max open files")).split()[3:5]
        assert soft == hard_seen and soft != "256"


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().split("\0")[:-1]
    except OSError:
        return []
