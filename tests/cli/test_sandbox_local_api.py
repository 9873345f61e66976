"""`e2b sandbox pause` as a real subprocess against the local API server (`e2b-local-api`).

The server runs on a free 127.0.0.1 port for the module; its `/_local/` control
surface makes a guest agent unresponsive, the node busy, or the API answer a
successful pause with the older 204. Skipped, with the reason, when the
`e2b-local-api` or `e2b` console script is not installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from e2b_cli.errors import ExitStatus

from tests.cli.local_api_process import DEV_KEY, E2B, NEEDS_SCRIPTS, serving

pytestmark = NEEDS_SCRIPTS


@dataclass
class LocalApi:
    url: str
    control: httpx.Client

    def reset(self) -> None:
        self.control.post("/_local/reset").raise_for_status()

    def create(self) -> str:
        # Ten minutes, not the API's 15 s default, which a test of several CLI runs can outlast on a loaded machine.
        body = {"templateID": "base", "timeout": 600}
        response = self.control.post("/sandboxes", json=body, headers={"X-API-Key": DEV_KEY})
        response.raise_for_status()
        sandbox_id: str = response.json()["sandboxID"]
        return sandbox_id

    def flag(self, sandbox_id: str, **flags: bool) -> None:
        self.control.patch(f"/_local/sandboxes/{sandbox_id}", json=flags).raise_for_status()

    def settings(self, **settings: Any) -> None:
        self.control.patch("/_local/settings", json=settings).raise_for_status()

    def record(self, sandbox_id: str) -> dict[str, Any]:
        response = self.control.get(f"/_local/sandboxes/{sandbox_id}")
        response.raise_for_status()
        record: dict[str, Any] = response.json()
        return record

    def e2b(self, *args: str, api_key: str | None = DEV_KEY) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("E2B_")}
        env |= {"E2B_API_URL": self.url, "NO_COLOR": "1"}
        if api_key is not None:
            env["E2B_API_KEY"] = api_key
        assert E2B is not None
        return subprocess.run([E2B, *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture(scope="module")
def server() -> Iterator[LocalApi]:
    with serving() as (url, control):
        yield LocalApi(url, control)


@pytest.fixture
def api(server: LocalApi) -> LocalApi:
    server.reset()
    return server


def assert_one_line_failure(proc: subprocess.CompletedProcess[str], status: int, lines: int = 1) -> None:
    assert proc.returncode == status, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == lines, proc.stderr


def test_pause_default(api: LocalApi) -> None:
    sid = api.create()
    proc = api.e2b("sandbox", "pause", sid)
    assert proc.returncode == ExitStatus.OK, proc.stderr
    assert proc.stdout == f"Paused sandbox {sid}.\n"
    assert proc.stderr == ""
    record = api.record(sid)
    assert record["state"] == "paused"
    assert record["snapshot"] == "memory"


@pytest.mark.parametrize("flag", ["--force", "-f"])
def test_pause_forced_reported(api: LocalApi, flag: str) -> None:
    sid = api.create()
    api.flag(sid, agent_unresponsive=True)
    proc = api.e2b("sandbox", "pause", sid, flag)
    assert proc.returncode == ExitStatus.OK, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"Paused sandbox {sid}."
    assert "forced" in lines[1] and f"e2b sandbox connect {sid} --on-resume reboot" in lines[1]
    assert api.record(sid)["forced_pauses"] == 1


def test_pause_force_on_healthy_sandbox(api: LocalApi) -> None:
    sid = api.create()
    proc = api.e2b("sandbox", "pause", sid, "--force", "--json")
    assert proc.returncode == ExitStatus.OK, proc.stderr
    assert '"forced": true' in proc.stdout


@pytest.mark.slow
def test_pause_forced_requested_but_not_forced_joins_pause_in_flight(api: LocalApi) -> None:
    # A normal pause is in flight (slowed down); a forced one joins it and is told forced=false.
    sid = api.create()
    api.settings(pause_seconds=6)
    answers: list[httpx.Response] = []

    def normal_pause() -> None:
        answers.append(api.control.post(f"/sandboxes/{sid}/pause", headers={"X-API-Key": DEV_KEY}, timeout=30))

    first = threading.Thread(target=normal_pause)
    first.start()
    deadline = time.monotonic() + 10
    while not api.record(sid)["pausing"] and time.monotonic() < deadline:
        time.sleep(0.05)
    forced = api.e2b("sandbox", "pause", sid, "--force")
    first.join()
    assert answers[0].status_code == 200
    assert forced.returncode == ExitStatus.OK, forced.stderr
    assert forced.stdout.splitlines() == [
        f"Paused sandbox {sid}.",
        "The API did not report a forced snapshot: it took a normal one.",
    ]
    assert api.record(sid)["forced_pauses"] == 0


def test_pause_forced_requested_older_api_204(api: LocalApi) -> None:
    sid = api.create()
    api.settings(legacy_pause_204=True)
    proc = api.e2b("sandbox", "pause", sid, "-f")
    assert proc.returncode == ExitStatus.OK, proc.stderr
    assert proc.stdout.splitlines()[0] == f"Paused sandbox {sid}."
    assert "--on-resume reboot" not in proc.stdout


def test_pause_already_paused(api: LocalApi) -> None:
    sid = api.create()
    assert api.e2b("sandbox", "pause", sid).returncode == ExitStatus.OK
    proc = api.e2b("sandbox", "pause", sid)
    assert proc.returncode == ExitStatus.OK
    assert proc.stdout == f"Sandbox {sid} was already paused.\n"


def test_pause_refused_agent_unresponsive(api: LocalApi) -> None:
    sid = api.create()
    api.flag(sid, agent_unresponsive=True)
    proc = api.e2b("sandbox", "pause", sid)
    assert_one_line_failure(proc, ExitStatus.FAILED)
    assert proc.stderr == (
        "pause refused, the sandbox keeps running: the sandbox's guest agent did not answer the health check\n"
    )
    assert api.record(sid)["state"] == "running"


@pytest.mark.parametrize("force", [False, True])
def test_pause_refused_node_busy(api: LocalApi, force: bool) -> None:
    sid = api.create()
    api.flag(sid, node_busy=True)
    proc = api.e2b("sandbox", "pause", sid, *(["--force"] if force else []))
    assert_one_line_failure(proc, ExitStatus.FAILED)
    reason = "the sandbox's node is too busy to take the snapshot"
    assert proc.stderr == f"pause refused, the sandbox keeps running: {reason}\n"


def test_pause_refused_unpinnable_force(api: LocalApi) -> None:
    sid = api.create()
    api.flag(sid, unpinnable=True)
    proc = api.e2b("sandbox", "pause", sid, "--force")
    assert_one_line_failure(proc, ExitStatus.FAILED)
    assert proc.stderr.startswith("pause refused, the sandbox keeps running: ")


def test_pause_unknown_sandbox(api: LocalApi) -> None:
    proc = api.e2b("sandbox", "pause", "sbx_does_not_exist")
    assert_one_line_failure(proc, ExitStatus.FAILED, lines=2)
    assert proc.stderr.splitlines()[0] == "Error: sandbox 'sbx_does_not_exist' not found"


def test_pause_missing_key(api: LocalApi) -> None:
    sid = api.create()
    proc = api.e2b("sandbox", "pause", sid, api_key=None)
    assert_one_line_failure(proc, ExitStatus.USAGE, lines=2)
    assert proc.stderr.splitlines()[0] == "Error: no API key."
    assert api.record(sid)["state"] == "running"


def test_pause_invalid_key(api: LocalApi) -> None:
    sid = api.create()
    proc = api.e2b("sandbox", "pause", sid, api_key="wrong")
    assert_one_line_failure(proc, ExitStatus.FAILED, lines=2)
    assert "invalid API key" in proc.stderr


def test_resume_after_forced_pause_with_reboot(api: LocalApi) -> None:
    sid = api.create()
    assert api.e2b("sandbox", "pause", sid, "-f").returncode == ExitStatus.OK
    proc = api.e2b("sandbox", "connect", sid, "--on-resume", "reboot")
    assert proc.returncode == ExitStatus.OK, proc.stderr
    record = api.record(sid)
    assert record["state"] == "running" and record["reboots"] == 1
    assert '"state": "running"' in api.e2b("sandbox", "info", sid, "--json").stdout
    listed = api.e2b("sandbox", "list", "--state", "running", "--json")
    assert sid in listed.stdout
    assert api.e2b("sandbox", "timeout", sid, "600").returncode == ExitStatus.OK
    assert api.e2b("sandbox", "kill", sid).returncode == ExitStatus.OK
    assert api.e2b("sandbox", "kill", sid).returncode == ExitStatus.FAILED


@pytest.mark.parametrize("args", [["sandbox", "list", "--json"], ["sandbox", "list"], ["sandbox", "create", "--json"]])
def test_output_into_a_closed_pipe_exits_quietly(api: LocalApi, args: list[str]) -> None:
    api.create()
    read_end, write_end = os.pipe()
    os.close(read_end)  # `e2b sandbox list --json | head -0`
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("E2B_")}
        env |= {"E2B_API_URL": api.url, "E2B_API_KEY": DEV_KEY}
        assert E2B is not None
        proc = subprocess.run([E2B, *args], stdout=write_end, stderr=subprocess.PIPE, text=True, env=env, timeout=60)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (ExitStatus.CLOSED_PIPE, "")


def test_busy_api_retries_announced_unless_quiet(api: LocalApi) -> None:
    sid = api.create()
    for args, announced in ((["sandbox", "info", sid], 2), (["--quiet", "sandbox", "info", sid], 0)):
        busy = {"kind": "busy", "count": 2, "operation": "getSandbox"}
        api.control.post("/_local/faults", json=busy).raise_for_status()
        proc = api.e2b(*args)
        assert proc.returncode == ExitStatus.OK, proc.stderr
        lines = proc.stderr.splitlines()
        assert len(lines) == announced, proc.stderr
        assert all(line.startswith("busy (503), retrying in ") for line in lines)
        assert sid in proc.stdout


SLOW_TIMEOUT = 2.0


@pytest.mark.parametrize("share", [0.6, 0.9])
def test_slow_healthy_pause_within_the_request_timeout_succeeds(api: LocalApi, share: float) -> None:
    sid = api.create()
    api.settings(pause_seconds=SLOW_TIMEOUT * share)
    proc = api.e2b("sandbox", "pause", sid, "--request-timeout", f"{SLOW_TIMEOUT:g}")
    assert proc.returncode == ExitStatus.OK, proc.stderr
    assert proc.stdout == f"Paused sandbox {sid}.\n"
    assert api.record(sid)["state"] == "paused"


def test_pause_longer_than_the_request_timeout_gives_up_at_it_and_says_so(api: LocalApi) -> None:
    sid = api.create()
    api.settings(pause_seconds=SLOW_TIMEOUT * 1.5)
    proc = api.e2b("sandbox", "pause", sid, "--request-timeout", f"{SLOW_TIMEOUT:g}")
    assert_one_line_failure(proc, ExitStatus.NO_ANSWER, lines=2)
    match = re.search(r"gave up after (\d+\.\d) s", proc.stderr)
    assert match is not None, proc.stderr
    # The time it really waited and the timeout it really used: the whole of it, not half.
    assert SLOW_TIMEOUT * 0.95 <= float(match.group(1)) < SLOW_TIMEOUT * 1.3
    assert f"(now {SLOW_TIMEOUT:g} s;" in proc.stderr
