"""`e2b sandbox list` filters, `metrics` and `snapshot` as real subprocesses against the local API server.

The server (`e2b-local-api`) runs on a free 127.0.0.1 port for the module and
is reset before each test; sandboxes are created through its public API with
the metadata a test needs. Nothing waits on a clock: the server's first metric
sample is taken at the second a sandbox starts. Skipped, with the reason, when
the `e2b-local-api` or `e2b` console script is not installed.

(test_sandbox_local_api.py holds the pause commands; it also runs against the
real upstream's spec shape, which these calls are not part of.)
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import subprocess
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
    client: httpx.Client

    def reset(self) -> None:
        self.client.post("/_local/reset").raise_for_status()

    def create(self, **metadata: str) -> str:
        # Ten minutes, not the API's 15 s default: a test of several CLI runs outlasted that on a loaded machine,
        # and its "running" sandbox timed out under it.
        body: dict[str, Any] = {"templateID": "base", "metadata": metadata, "timeout": 600}
        response = self.client.post("/sandboxes", json=body, headers={"X-API-Key": DEV_KEY})
        response.raise_for_status()
        sandbox_id: str = response.json()["sandboxID"]
        return sandbox_id

    def started_at(self, sandbox_id: str) -> datetime.datetime:
        response = self.client.get(f"/sandboxes/{sandbox_id}", headers={"X-API-Key": DEV_KEY})
        response.raise_for_status()
        return datetime.datetime.fromisoformat(response.json()["startedAt"])

    def e2b(self, *args: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("E2B_")}
        env |= {"E2B_API_URL": url or self.url, "E2B_API_KEY": DEV_KEY, "NO_COLOR": "1"}
        assert E2B is not None
        return subprocess.run([E2B, *args], capture_output=True, text=True, env=env, timeout=60)

    def json(self, *args: str) -> Any:
        proc = self.e2b(*args, "--json")
        assert proc.returncode == ExitStatus.OK, (proc.stdout, proc.stderr)
        assert proc.stderr == ""
        return json.loads(proc.stdout)

    def ids(self, *args: str) -> list[str]:
        return [s["sandbox_id"] for s in self.json("sandbox", "list", *args)]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalApi]:
    with serving() as (url, control):
        yield LocalApi(url, control)


@pytest.fixture
def api(server: LocalApi) -> LocalApi:
    server.reset()
    return server


def assert_failure(proc: subprocess.CompletedProcess[str], status: int, first_line: str) -> None:
    assert proc.returncode == status, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[0] == first_line, proc.stderr
    assert len(proc.stderr.splitlines()) == 2, proc.stderr


# --- list filters --------------------------------------------------------------------------


def test_list_state_filter_repeated_or_as_a_comma_list(api: LocalApi) -> None:
    running, paused = api.create(), api.create()
    assert api.e2b("sandbox", "pause", paused).returncode == ExitStatus.OK
    assert api.ids("--state", "paused") == [paused]
    assert api.ids("--state", "running") == [running]
    both = set(api.ids("--state", "running,paused"))
    assert both == set(api.ids("--state", "running", "--state", "paused")) == {running, paused}
    assert [s["state"] for s in api.json("sandbox", "list", "--state", "paused")] == ["paused"]


def test_list_metadata_pairs_must_all_match(api: LocalApi) -> None:
    qa_web = api.create(team="qa", app="web")
    qa_api = api.create(team="qa", app="api")
    api.create(team="dev", app="web")
    assert set(api.ids("--metadata", "team=qa")) == {qa_web, qa_api}
    assert api.ids("--metadata", "team=qa", "--metadata", "app=web") == [qa_web]
    assert api.ids("--metadata", "team=ops") == []
    table = api.e2b("sandbox", "list", "--metadata", "team=qa", "--metadata", "app=api")
    assert table.returncode == ExitStatus.OK, table.stderr
    assert qa_api in table.stdout and qa_web not in table.stdout and "app=api" in table.stdout


def test_list_template_filter(api: LocalApi) -> None:
    sid = api.create()
    template_id = api.json("sandbox", "info", sid)["template_id"]
    assert api.ids("--template", "base") == [sid]  # the alias
    assert api.ids("--template", template_id) == [sid]  # the id
    assert api.ids("--template", "no-such-template") == []


def test_list_started_after_and_order(api: LocalApi) -> None:
    first, second, third = api.create(), api.create(), api.create()
    times = {sid: api.started_at(sid) for sid in (first, second, third)}
    newest_first = sorted(times, key=lambda sid: times[sid], reverse=True)
    assert api.ids() == newest_first == api.ids("--order", "desc")
    assert api.ids("--order", "asc") == newest_first[::-1]
    # At or after the second's start: the second and those after it, whatever the clock's resolution.
    since = times[second].astimezone(datetime.UTC).isoformat()
    expected = {sid for sid, at in times.items() if at >= times[second]}
    assert set(api.ids("--started-after", since)) == expected and second in expected
    assert api.ids("--started-after", "2000-01-01") == newest_first  # a date alone, UTC
    later = (max(times.values()) + datetime.timedelta(hours=1)).astimezone(datetime.UTC)
    assert api.ids("--started-after", later.strftime("%Y-%m-%d %H:%M:%SZ")) == []  # as the tables print times


def test_list_limit_and_filters_together(api: LocalApi) -> None:
    for _ in range(3):
        api.create(team="qa")
    api.create(team="dev")
    assert len(api.ids("--metadata", "team=qa", "--limit", "2")) == 2
    oldest = api.ids("--metadata", "team=qa", "--order", "asc", "--limit", "1")
    assert oldest == api.ids("--metadata", "team=qa", "--order", "asc")[:1]


@pytest.mark.parametrize(
    "args",
    [
        ["--state", "gone"],
        ["--started-after", "yesterday"],
        ["--metadata", "team"],
        ["--order", "newest"],
        ["--limit", "0"],
    ],
)
def test_list_bad_filters_are_usage_errors(api: LocalApi, args: list[str]) -> None:
    proc = api.e2b("sandbox", "list", *args)
    assert proc.returncode == ExitStatus.USAGE, proc.stderr
    assert proc.stdout == "" and "Usage: e2b sandbox list" in proc.stderr
    as_json = api.e2b("sandbox", "list", *args, "--json")
    assert as_json.returncode == ExitStatus.USAGE
    assert json.loads(as_json.stdout)["error"]["status"] is None


# --- metrics -------------------------------------------------------------------------------


def test_metrics_table_and_json(api: LocalApi) -> None:
    sid = api.create()
    samples = api.json("sandbox", "metrics", sid)
    assert samples, "a new sandbox has its first sample"
    for sample in samples:
        assert set(sample) == {
            "timestamp",
            "cpu_count",
            "cpu_used_pct",
            "mem_used",
            "mem_total",
            "mem_cache",
            "disk_used",
            "disk_total",
        }
        assert 0 <= sample["mem_used"] <= sample["mem_total"] and 0 <= sample["disk_used"] <= sample["disk_total"]
        assert 0 <= sample["cpu_used_pct"] <= 100
        assert datetime.datetime.fromisoformat(sample["timestamp"]).utcoffset() == datetime.timedelta(0)
    table = api.e2b("sandbox", "metrics", sid)
    assert table.returncode == ExitStatus.OK, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split()[:3] == ["TIME", "CPUS", "CPU"]
    first = datetime.datetime.fromisoformat(samples[0]["timestamp"]).strftime("%Y-%m-%d %H:%M:%SZ")
    assert lines[2].startswith(first) and "MiB /" in lines[2]


def test_metrics_interval(api: LocalApi) -> None:
    sid = api.create()
    first = datetime.datetime.fromisoformat(api.json("sandbox", "metrics", sid)[0]["timestamp"])
    before = (first - datetime.timedelta(hours=1)).isoformat()
    assert api.json("sandbox", "metrics", sid, "--end", before) == []
    assert api.e2b("sandbox", "metrics", sid, "--end", before).stdout == "No metrics.\n"
    at_first = api.json("sandbox", "metrics", sid, "--start", first.isoformat(), "--end", first.isoformat())
    assert [s["timestamp"] for s in at_first] == [first.isoformat()]


def test_metrics_unknown_sandbox(api: LocalApi) -> None:
    proc = api.e2b("sandbox", "metrics", "sbx_does_not_exist")
    assert_failure(proc, ExitStatus.FAILED, "Error: sandbox 'sbx_does_not_exist' not found")
    as_json = api.e2b("sandbox", "metrics", "sbx_does_not_exist", "--json")
    assert as_json.returncode == ExitStatus.FAILED
    assert json.loads(as_json.stdout)["error"]["status"] == 404


def test_metrics_start_after_end_is_a_usage_error(api: LocalApi) -> None:
    sid = api.create()
    proc = api.e2b("sandbox", "metrics", sid, "--start", "2025-01-02T00:00:01Z", "--end", "2025-01-02")
    assert proc.returncode == ExitStatus.USAGE and "--start" in proc.stderr


# --- snapshots -----------------------------------------------------------------------------


def test_snapshot_create_list_delete(api: LocalApi) -> None:
    sid = api.create()
    created = api.e2b("sandbox", "snapshot", "create", sid)
    assert created.returncode == ExitStatus.OK, created.stderr
    snapshot_id = created.stdout.strip()
    assert created.stdout == f"{snapshot_id}\n" and snapshot_id
    listed = api.e2b("sandbox", "snapshot", "list")
    assert listed.returncode == ExitStatus.OK, listed.stderr
    assert listed.stdout.splitlines()[0].split() == ["SNAPSHOT", "ID", "NAMES"] and snapshot_id in listed.stdout
    assert [s["snapshot_id"] for s in api.json("sandbox", "snapshot", "list", "--sandbox", sid)] == [snapshot_id]
    deleted = api.e2b("sandbox", "snapshot", "delete", snapshot_id)
    assert (deleted.returncode, deleted.stdout) == (ExitStatus.OK, f"Deleted snapshot {snapshot_id}.\n")
    assert api.json("sandbox", "snapshot", "list") == []
    assert api.e2b("sandbox", "snapshot", "list").stdout == "No snapshots.\n"
    again = api.e2b("sandbox", "snapshot", "delete", snapshot_id)
    assert_failure(again, ExitStatus.FAILED, f"Error: snapshot {snapshot_id!r} not found")
    assert "e2b sandbox snapshot list" in again.stderr


def test_snapshot_create_named_filesystem_json(api: LocalApi) -> None:
    sid = api.create()
    taken = api.json("sandbox", "snapshot", "create", sid, "--name", "ready", "--mode", "filesystem")
    assert set(taken) == {"snapshot_id", "names"}
    assert any("ready" in name for name in taken["names"]), taken
    by_name = api.json("sandbox", "snapshot", "list", "--name", "ready")
    assert [s["snapshot_id"] for s in by_name] == [taken["snapshot_id"]]
    assert api.json("sandbox", "snapshot", "list", "--name", "other") == []
    assert api.json("sandbox", "info", sid)["state"] == "running"  # a snapshot does not stop the sandbox


def test_snapshot_delete_a_named_snapshot(api: LocalApi) -> None:
    # A named snapshot's id holds "/" and ":" (team/name:tag): it must travel as one path segment.
    taken = api.json("sandbox", "snapshot", "create", api.create(), "--name", "named")
    deleted = api.e2b("sandbox", "snapshot", "delete", taken["snapshot_id"], "--json")
    assert deleted.returncode == ExitStatus.OK, (deleted.stdout, deleted.stderr)
    assert json.loads(deleted.stdout) == {"snapshot_id": taken["snapshot_id"], "deleted": True}
    assert api.json("sandbox", "snapshot", "list") == []


def test_snapshot_outlives_its_sandbox_and_starts_new_ones(api: LocalApi) -> None:
    sid = api.create()
    snapshot_id = api.json("sandbox", "snapshot", "create", sid)["snapshot_id"]
    assert api.e2b("sandbox", "kill", sid).returncode == ExitStatus.OK
    assert [s["snapshot_id"] for s in api.json("sandbox", "snapshot", "list")] == [snapshot_id]
    started = api.e2b("sandbox", "create", snapshot_id)
    assert started.returncode == ExitStatus.OK, started.stderr
    assert api.json("sandbox", "info", started.stdout.strip())["state"] == "running"


def test_snapshot_list_limit(api: LocalApi) -> None:
    sid = api.create()
    for _ in range(3):
        assert api.e2b("sandbox", "snapshot", "create", sid).returncode == ExitStatus.OK
    assert len(api.json("sandbox", "snapshot", "list")) == 3
    assert len(api.json("sandbox", "snapshot", "list", "--limit", "2")) == 2


def test_snapshot_of_an_unknown_sandbox(api: LocalApi) -> None:
    proc = api.e2b("sandbox", "snapshot", "create", "sbx_does_not_exist")
    assert_failure(proc, ExitStatus.FAILED, "Error: sandbox 'sbx_does_not_exist' not found")
    unknown_delete = api.e2b("sandbox", "snapshot", "delete", "snap_does_not_exist", "--json")
    assert unknown_delete.returncode == ExitStatus.FAILED
    assert json.loads(unknown_delete.stdout)["error"]["message"] == "snapshot 'snap_does_not_exist' not found"


# --- no API to answer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["sandbox", "list", "--state", "running", "--order", "asc"],
        ["sandbox", "metrics", "sbx_1"],
        ["sandbox", "snapshot", "create", "sbx_1"],
        ["sandbox", "snapshot", "list"],
        ["sandbox", "snapshot", "delete", "snap_1"],
    ],
)
def test_no_server_is_no_answer(server: LocalApi, args: list[str]) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))  # bound and never listening: refused, and no other test can take the port
        closed = f"http://127.0.0.1:{held.getsockname()[1]}"
        proc = server.e2b(*args, url=closed)
        as_json = server.e2b(*args, "--json", url=closed)
    assert proc.returncode == ExitStatus.NO_ANSWER, proc.stderr
    first, hint = proc.stderr.splitlines()
    assert first.startswith(f"Error: could not reach the API at {closed}: ")
    assert "network" in hint
    assert as_json.returncode == ExitStatus.NO_ANSWER
    assert json.loads(as_json.stdout)["error"]["status"] is None
